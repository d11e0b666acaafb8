//! The changes a capability wants to make, as data.
//!
//! Capabilities never edit the object while deciding: they compute a [`Plan`]
//! over a borrowed object (so nothing is cloned unless something changes), and
//! [`crate::wire`] applies it once to the owned object. A plan lists only real
//! differences, so an empty plan means "the object already complies", and the
//! same plan can later be rendered as a list of deviations instead of applied.
//!
//! A plan is a list of typed `Edit`s: a change to a string map
//! (`MapEdit`: labels, annotations, tags) or to one field
//! (`FieldEdit`: a CAPI in-place field, or one entry of a keyed list).
//! Each kind is applied here and rendered in `deviations`, once.

use crate::json::fields::{Path, StringMap};
pub(crate) use crate::json::keyed_list::EntryKey;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

mod apply;
mod overlay;

/// One change of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Keys of a string map added, corrected or removed.
    Map(MapEdit),
    /// One field (or one keyed-list entry) set to a value.
    Field(FieldEdit),
}

impl From<MapEdit> for Edit {
    fn from(edit: MapEdit) -> Self {
        Edit::Map(edit)
    }
}

impl From<FieldEdit> for Edit {
    fn from(edit: FieldEdit) -> Self {
        Edit::Field(edit)
    }
}

impl Edit {
    /// Where the edit writes, e.g. `spec.template.metadata.labels` or
    /// `spec.readinessGates[conditionType="X"]`; the order of reports.
    pub(crate) fn target(&self) -> String {
        match self {
            Edit::Map(edit) => edit.path.dotted(),
            Edit::Field(edit) => edit.target(),
        }
    }

    /// The path of the map or field the edit writes (a keyed list's, for
    /// one of its entries).
    pub(crate) fn path(&self) -> &Path {
        match self {
            Edit::Map(edit) => &edit.path,
            Edit::Field(edit) => &edit.path,
        }
    }

    /// Whether the edit changes nothing.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Edit::Map(edit) => edit.is_empty(),
            Edit::Field(_) => false,
        }
    }
}

/// One field set to a value: the whole field, or, for a keyed list
/// (`readinessGates`, `taints`), the one entry with the given key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldEdit {
    /// Where the field lives, e.g. `["spec", "deletion", "nodeDrainTimeoutSeconds"]`.
    pub(crate) path: Path,
    /// For a keyed list: the key of the entry; the edit replaces that entry,
    /// or appends it when the list has none, and leaves the others.
    pub(crate) entry: Option<EntryKey>,
    /// The value the field (or entry) must hold; `Value::Null` for a whole
    /// field: the field goes (a tag list left with none of its entries).
    pub(crate) value: Value,
    /// What it held; `None` when absent. Recorded when the decision is made,
    /// for the renderers.
    pub(crate) was: Option<Value>,
    /// Where the value comes from, e.g. `MachineDeployment default/md-0
    /// (cluster.x-k8s.io/v1beta2) spec.template.spec.minReadySeconds`.
    pub(crate) source: String,
}

impl FieldEdit {
    /// The field's path, with the entry's key for a keyed list.
    pub(crate) fn target(&self) -> String {
        field_target(&self.path, self.entry.as_ref())
    }
}

/// A field's path as reports name it, with a keyed-list entry's key:
/// `spec.readinessGates[conditionType="X"]`.
pub(crate) fn field_target(path: &Path, entry: Option<&EntryKey>) -> String {
    let path = path.dotted();
    match entry {
        Some(key) => format!("{path}{key}"),
        None => path,
    }
}

/// Changes to one string map of the object (labels, annotations, tags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MapEdit {
    /// Where the map lives, e.g. `["spec", "template", "metadata", "labels"]`.
    pub path: Path,
    /// Keys to add or correct, with the value they must have: always a
    /// string. Held as the object holds a map, so that a map the object
    /// lacks (a new tag field) moves into it whole rather than being built
    /// a second time.
    pub set: Map<String, Value>,
    /// For each key of `set` the map already holds, the value it replaces
    /// (a correction); a key of `set` missing here is added. Recorded when
    /// the decision is made, so the renderers (explanations, validate-mode
    /// reports) never compare the maps again.
    pub(crate) replaced: BTreeMap<String, String>,
    /// Keys to remove (only ever keys the policy owns), each with why it
    /// goes ("stale", "invalid: key-too-long"), for deviation reports.
    pub(crate) remove: BTreeMap<String, String>,
    /// Remove the whole map when it ends up empty (`spec.cloudTags` is absent,
    /// not `{}`, when there are no tags).
    pub(crate) drop_when_empty: bool,
}

impl MapEdit {
    /// The edit that turns `current` into a map holding `desired` for the keys
    /// in `desired` (other keys untouched). Only differing keys are recorded.
    pub(crate) fn upsert<'d, K: AsRef<str>>(
        path: &'static [&'static str],
        current: &StringMap<'_>,
        desired: impl IntoIterator<Item = (K, &'d str)>,
    ) -> Self {
        let mut edit = Self::new(path);
        // Gathered first, then built in one pass (sorted if they do not
        // come sorted, the last of equal keys kept, as repeated inserts
        // would) instead of a search per key.
        let mut set = Vec::new();
        for (key, value) in desired {
            if edit.must_set(current, key.as_ref(), value) {
                set.push((key.as_ref().to_owned(), Value::from(value)));
            }
        }
        edit.set = set.into_iter().collect();
        edit
    }

    /// The keys `set` sets, with their values.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.set.iter()).map(|(key, value)| (key.as_str(), value.as_str().unwrap_or_default()))
    }

    /// Whether `current` must get `value` at `key`: it holds another value
    /// (a correction, recorded with the value it replaces) or none.
    fn must_set(&mut self, current: &StringMap<'_>, key: &str, value: &str) -> bool {
        match current.get(key) {
            Some(held) if *held == value => false,
            Some(held) => {
                self.replaced.insert(key.to_owned(), (*held).to_owned());
                true
            }
            None => true,
        }
    }

    /// [`MapEdit::upsert`] for desired entries that come sorted by key,
    /// each key once, as owned strings (the transform's tags): moved into
    /// the map they become, built once.
    ///
    /// Tag keys share long prefixes, so the comparisons are the cost. A
    /// map built from a list sorts it and compares neighbours for repeats:
    /// two comparisons a key. Up to one node of the map's tree, the keys
    /// are inserted from the last instead, each then sorting first: one
    /// comparison a key. Past that, inserting at the front splits nodes
    /// half empty, and the list is built in bulk.
    pub(crate) fn upsert_sorted(
        path: Path,
        current: &StringMap<'_>,
        desired: Vec<(String, String)>,
    ) -> Self {
        /// The keys of one node of `BTreeMap`'s tree (its `CAPACITY`).
        const ONE_NODE: usize = 11;
        let mut edit = Self::at(path);
        let one_node = desired.len() <= ONE_NODE;
        let set = (desired.into_iter())
            .filter(|(key, value)| current.is_empty() || edit.must_set(current, key, value))
            .map(|(key, value)| (key, Value::String(value)));
        let map = if one_node {
            let mut map = Map::new();
            for (key, value) in set.rev() {
                map.insert(key, value);
            }
            map
        } else {
            set.collect()
        };
        edit.set = map;
        edit
    }

    /// An edit of the map at `path` that changes nothing yet.
    pub(crate) fn new(path: &'static [&'static str]) -> Self {
        Self::at(Path::Static(path))
    }

    /// [`MapEdit::new`] at a [`Path`].
    pub(crate) fn at(path: Path) -> Self {
        Self {
            path,
            set: Map::new(),
            replaced: BTreeMap::new(),
            remove: BTreeMap::new(),
            drop_when_empty: false,
        }
    }

    /// What the edit does to `key` of `set`: added, or corrected from the
    /// value it replaces.
    pub(crate) fn change_of(&self, key: &str) -> Change<'_> {
        match self.replaced.get(key) {
            Some(was) => Change::Corrected { was },
            None => Change::Added,
        }
    }

    /// True when applying the edit would change nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty() && self.remove.is_empty() && !self.drop_when_empty
    }
}

/// What an edit does to one key it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change<'a> {
    /// The map did not hold the key.
    Added,
    /// The map held the key with another value.
    Corrected {
        /// The value it held.
        was: &'a str,
    },
}

impl Change<'_> {
    /// `added` or `corrected`, as explanations name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Corrected { .. } => "corrected",
        }
    }
}

/// Every change one evaluation wants, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Edits: at most one per map path, one per field or list entry.
    pub(crate) edits: Vec<Edit>,
}

impl Plan {
    /// Adds an edit unless it changes nothing.
    pub(crate) fn push(&mut self, edit: impl Into<Edit>) {
        let edit = edit.into();
        if !edit.is_empty() {
            self.edits.push(edit);
        }
    }

    /// The map edits, in plan order.
    pub(crate) fn map_edits(&self) -> impl Iterator<Item = &MapEdit> {
        self.edits.iter().filter_map(|edit| match edit {
            Edit::Map(edit) => Some(edit),
            Edit::Field(_) => None,
        })
    }

    /// True when the object already complies.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LABELS: &[&str] = &["spec", "template", "metadata", "labels"];

    /// An edit of the map at `LABELS` setting `set` and removing `remove`
    /// (each "stale").
    fn edit(set: &[(&str, &str)], remove: &[&str], drop_when_empty: bool) -> MapEdit {
        MapEdit {
            set: set
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(*v)))
                .collect(),
            remove: remove
                .iter()
                .map(|k| (k.to_string(), "stale".to_owned()))
                .collect(),
            drop_when_empty,
            ..MapEdit::new(LABELS)
        }
    }

    #[test]
    fn upsert_records_only_differences_and_what_each_replaces() {
        let current: StringMap = [("a", "1"), ("b", "2"), ("mine", "x")].into();
        let desired: BTreeMap<&str, &str> = [("a", "1"), ("b", "3"), ("c", "4")].into();
        let e = MapEdit::upsert(LABELS, &current, desired.iter().map(|(k, v)| (*k, *v)));
        let mut expected = edit(&[("b", "3"), ("c", "4")], &[], false);
        expected.replaced.insert("b".into(), "2".into());
        assert_eq!(e, expected);
        assert_eq!(e.change_of("b"), Change::Corrected { was: "2" });
        assert_eq!(e.change_of("c"), Change::Added);
        // The same edit from sorted owned entries, against a map that holds
        // some of its keys and against an empty one.
        let owned = || {
            desired
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            MapEdit::upsert_sorted(Path::Static(LABELS), &current, owned()),
            expected
        );
        let empty = StringMap::new();
        assert_eq!(
            MapEdit::upsert_sorted(Path::Static(LABELS), &empty, owned()),
            MapEdit::upsert(LABELS, &empty, desired.iter().map(|(k, v)| (*k, *v)))
        );
    }

    #[test]
    fn apply_creates_missing_maps_and_keeps_siblings() {
        let mut obj =
            json!({"spec": {"replicas": 3, "template": {"spec": {"version": "v1.30.0"}}}});
        let mut plan = Plan::default();
        plan.push(edit(&[("env", "prod")], &[], false));
        plan.apply(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 3, "template": {
                "metadata": {"labels": {"env": "prod"}},
                "spec": {"version": "v1.30.0"}}}})
        );
    }

    #[test]
    fn apply_replaces_null_maps() {
        let mut obj = json!({"spec": {"template": {"metadata": {"labels": null}}}});
        let mut plan = Plan::default();
        plan.push(edit(&[("env", "prod")], &[], false));
        plan.apply(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"template": {"metadata": {"labels": {"env": "prod"}}}}})
        );
    }

    #[test]
    fn apply_drops_map_that_ends_up_empty() {
        let mut obj = json!({"spec": {"template": {"metadata": {"labels": {"old": "1"}, "x": 1}}}});
        let mut plan = Plan::default();
        plan.push(edit(&[], &["old"], true));
        plan.apply(&mut obj);
        assert_eq!(obj, json!({"spec": {"template": {"metadata": {"x": 1}}}}));
    }

    #[test]
    fn apply_removal_on_absent_map_creates_nothing() {
        let mut obj = json!({"spec": {}});
        let mut plan = Plan::default();
        plan.push(edit(&[], &["old"], true));
        plan.apply(&mut obj);
        assert_eq!(obj, json!({"spec": {}}));
    }

    fn field(path: &'static [&'static str], entry: Option<EntryKey>, value: Value) -> FieldEdit {
        FieldEdit {
            path: Path::Static(path),
            entry,
            value,
            was: None,
            source: "test".into(),
        }
    }

    #[test]
    fn field_edit_sets_the_field_and_creates_its_parents() {
        let mut obj = json!({"spec": {"template": {"spec": {"version": "v1.31.0"}}}});
        let mut plan = Plan::default();
        plan.push(field(
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
            None,
            json!(300),
        ));
        plan.apply(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"template": {"spec": {"version": "v1.31.0",
                "deletion": {"nodeDrainTimeoutSeconds": 300}}}}})
        );
    }

    #[test]
    fn keyed_entry_edit_replaces_in_place_or_appends_and_keeps_other_entries() {
        let keys: &[&'static str] = &["key", "effect"];
        let mut obj = json!({"spec": {"taints": [
            {"key": "a", "effect": "NoSchedule", "value": "old"},
            {"key": "mine", "effect": "NoExecute"}]}});
        let corrected = json!({"key": "a", "effect": "NoSchedule", "value": "new"});
        let added = json!({"key": "b", "effect": "NoSchedule"});
        let mut plan = Plan::default();
        plan.push(field(
            &["spec", "taints"],
            Some(EntryKey::of(keys, &corrected)),
            corrected.clone(),
        ));
        plan.push(field(
            &["spec", "taints"],
            Some(EntryKey::of(keys, &added)),
            added.clone(),
        ));
        plan.apply(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"taints": [corrected, {"key": "mine", "effect": "NoExecute"}, added]}})
        );
        assert_eq!(
            plan.edits[0].target(),
            "spec.taints[key=\"a\",effect=\"NoSchedule\"]"
        );
    }

    #[test]
    fn push_ignores_empty_edits() {
        let mut plan = Plan::default();
        plan.push(edit(&[], &[], false));
        assert!(plan.is_empty());
    }
}
