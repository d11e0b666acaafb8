//! The changes a capability wants to make, as data.
//!
//! Capabilities never edit the object while deciding: they compute a [`Plan`]
//! over a borrowed object (so nothing is cloned unless something changes), and
//! the edge applies it once to the owned object. A plan lists only real
//! differences, so an empty plan means "the object already complies", and the
//! same plan can later be rendered as a list of deviations instead of applied.

use crate::fields::StringMap;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Changes to one string map of the object (labels, annotations, tags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEdit {
    /// Where the map lives, e.g. `["spec", "template", "metadata", "labels"]`.
    pub path: &'static [&'static str],
    /// Keys to add or correct, with the value they must have.
    pub set: BTreeMap<String, String>,
    /// For each key of `set` the map already holds, the value it replaces
    /// (a correction); a key of `set` missing here is added. Recorded when
    /// the decision is made, so the renderers (explanations, validate-mode
    /// reports) never compare the maps again.
    pub replaced: BTreeMap<String, String>,
    /// Keys to remove (only ever keys the policy owns), each with why it
    /// goes ("stale", "invalid: key-too-long"), for deviation reports.
    pub remove: BTreeMap<String, String>,
    /// Remove the whole map when it ends up empty (`spec.cloudTags` is absent,
    /// not `{}`, when there are no tags).
    pub drop_when_empty: bool,
}

impl MapEdit {
    /// The edit that turns `current` into a map holding `desired` for the keys
    /// in `desired` (other keys untouched). Only differing keys are recorded.
    pub fn upsert<'d>(
        path: &'static [&'static str],
        current: &StringMap<'_>,
        desired: impl IntoIterator<Item = (&'d str, &'d str)>,
    ) -> Self {
        let mut edit = Self::new(path);
        for (key, value) in desired {
            match current.get(key) {
                Some(held) if *held == value => continue,
                Some(held) => {
                    edit.replaced.insert(key.to_owned(), (*held).to_owned());
                }
                None => {}
            }
            edit.set.insert(key.to_owned(), value.to_owned());
        }
        edit
    }

    /// An edit of the map at `path` that changes nothing yet.
    pub fn new(path: &'static [&'static str]) -> Self {
        Self {
            path,
            set: BTreeMap::new(),
            replaced: BTreeMap::new(),
            remove: BTreeMap::new(),
            drop_when_empty: false,
        }
    }

    /// What the edit does to `key` of `set`: added, or corrected from the
    /// value it replaces.
    pub fn change_of(&self, key: &str) -> Change<'_> {
        match self.replaced.get(key) {
            Some(was) => Change::Corrected { was },
            None => Change::Added,
        }
    }

    /// True when applying the edit would change nothing.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.remove.is_empty() && !self.drop_when_empty
    }
}

/// What an edit does to one key it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change<'a> {
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
    pub fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Corrected { .. } => "corrected",
        }
    }
}

/// Every change one evaluation wants, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Edits, at most one per map path.
    pub edits: Vec<MapEdit>,
}

impl Plan {
    /// Adds an edit unless it changes nothing.
    pub fn push(&mut self, edit: MapEdit) {
        if !edit.is_empty() {
            self.edits.push(edit);
        }
    }

    /// True when the object already complies.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Applies the plan to `object`, creating missing maps on the way and
    /// leaving every field the plan does not name untouched.
    ///
    /// Capabilities build plans only after reading the same paths with
    /// [`crate::fields`], which rejects non-object intermediates, so the only
    /// non-object values met here are absent or `null` ones.
    pub fn apply(&self, object: &mut Value) {
        self.clone().apply_owned(object);
    }

    /// [`Plan::apply`], moving the plan's keys and values into the object
    /// instead of copying them (the edge's path, once per request).
    pub fn apply_owned(self, object: &mut Value) {
        for edit in self.edits {
            apply_edit(object, edit);
        }
    }
}

fn apply_edit(object: &mut Value, edit: MapEdit) {
    let Some((last, parents)) = edit.path.split_last() else {
        return;
    };
    // Removals alone never create anything: with no map there is nothing to remove.
    let create = !edit.set.is_empty();
    let mut current = object;
    for segment in parents {
        let Some(map) = as_object_mut(current, create) else {
            return;
        };
        current = if create {
            map.entry(*segment)
                .or_insert_with(|| Value::Object(Map::new()))
        } else {
            match map.get_mut(*segment) {
                Some(next) => next,
                None => return,
            }
        };
    }
    let Some(parent) = as_object_mut(current, create) else {
        return;
    };
    if !create && !parent.contains_key(*last) {
        return;
    }
    let target = parent
        .entry(*last)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(map) = as_object_mut(target, create) {
        for key in edit.remove.keys() {
            map.remove(key);
        }
        for (key, value) in edit.set {
            map.insert(key, Value::String(value));
        }
        if edit.drop_when_empty && map.is_empty() {
            parent.remove(*last);
        }
    }
}

/// The object behind `value`; with `create`, an explicit `null` becomes an
/// empty object.
fn as_object_mut(value: &mut Value, create: bool) -> Option<&mut Map<String, Value>> {
    if create && value.is_null() {
        *value = Value::Object(Map::new());
    }
    value.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LABELS: &[&str] = &["spec", "template", "metadata", "labels"];

    fn edit(set: &[(&str, &str)], remove: &[&str], drop_when_empty: bool) -> MapEdit {
        MapEdit {
            set: set
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            remove: remove
                .iter()
                .map(|k| (k.to_string(), "stale".to_string()))
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

    #[test]
    fn push_ignores_empty_edits() {
        let mut plan = Plan::default();
        plan.push(edit(&[], &[], false));
        assert!(plan.is_empty());
    }
}
