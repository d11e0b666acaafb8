//! The possible parents a live audit keeps for the look-ups of the objects
//! listed after them: of each, what the policies' look-ups of its kind
//! read ([`KeptPaths`]: the masks the stages declare), as compact JSON.
//! A cluster holds many more parents than distinct views (the Machines of
//! a MachineSet, the XRs of a team carry the same labels and annotations),
//! so each distinct view is kept once.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use hashbrown::HashTable;
use metadata_propagation_core::evaluate::{DeclaredLookup, declared_lookups};
use metadata_propagation_core::lookup::{LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::GroupVersionKind;
use serde_json::Value;

use crate::report::AuditSettings;
use crate::tree::{self, Identity};

/// The paths the policies' look-ups read of a kind's objects, each kept
/// whole: the union of the masks of the look-ups that name the kind.
pub struct KeptPaths {
    projection: Projection<'static>,
    /// The masks, none under another one (which keeps it whole).
    masks: BTreeSet<String>,
}

impl KeptPaths {
    /// What the look-ups `declared` read of objects of `group` and `kind`;
    /// `None` when none names the kind.
    pub fn of(declared: &[DeclaredLookup], group: &str, kind: &str) -> Option<KeptPaths> {
        let mut projection = Projection::default();
        let mut named = false;
        for lookup in declared.iter().filter(|d| d.names(group, kind)) {
            projection.unite(&lookup.projection);
            named = true;
        }
        let masks = projection.field_masks();
        named.then_some(KeptPaths { projection, masks })
    }

    /// The masks, none under another one ([`Projection::field_masks`]):
    /// pruning an object by them keeps all that any mask they cover reads.
    pub fn masks(&self) -> &BTreeSet<String> {
        &self.masks
    }

    /// Whether every path of `masks` is kept.
    pub fn covers(&self, masks: &BTreeSet<String>) -> bool {
        (masks.iter()).all(|mask| (self.masks.iter()).any(|kept| mask == kept || under(mask, kept)))
    }
}

/// Whether dot path `path` lies under `outer`.
fn under(path: &str, outer: &str) -> bool {
    path.len() > outer.len() && path.starts_with(outer) && path[outer.len()..].starts_with('.')
}

/// The objects a look-up can ask for, as listed: of each, what the
/// policies' look-ups of its kind read, decoded through a look-up's
/// projection when asked (a parent is asked by each of its children, and
/// decoding a small view is cheap beside keeping every projection's answer
/// for every parent of a cluster). A look-up that reads anything else is
/// asked of the cluster.
#[derive(Default)]
pub struct Parents {
    /// The parents, in the order kept, [`CHUNK`] to a chunk: the table
    /// grows by a chunk, never by moving or doubling what it holds.
    table: Vec<Vec<Parent>>,
    /// Where each parent is in `table`, hashed by its identity: 4 bytes a
    /// parent (and a byte of control) beside its 56 in `table`, where a map
    /// from identity to view would hold up to twice as many places as
    /// parents, and both tables while it doubles.
    places: HashTable<u32>,
    /// Each distinct view once.
    distinct: HashSet<Arc<[u8]>>,
    /// What the policies may look up.
    declared: Vec<DeclaredLookup>,
    /// What is kept of each apiVersion and kind, worked out from
    /// `declared` once (`None`: no look-up names the kind).
    shapes: HashMap<(String, String), Option<Arc<Shape>>>,
}

/// What is kept of the objects of one apiVersion and kind.
struct Shape {
    api_version: String,
    kept: KeptPaths,
}

/// One possible parent: its identity and what is kept of it.
struct Parent {
    identity: Identity,
    shape: Arc<Shape>,
    json: Arc<[u8]>,
}

/// Parents to a chunk of [`Parents::table`] (56 KiB).
const CHUNK: usize = 1024;

impl Parents {
    /// Parents kept for the look-ups `declared`: the policies' look-ups of
    /// the kinds an audit lists, under their settings
    /// ([`metadata_propagation_core::evaluate::declared_lookups`]).
    pub fn of_lookups(declared: Vec<DeclaredLookup>) -> Self {
        Parents {
            declared,
            ..Parents::default()
        }
    }

    /// Parents kept for what the policies of `settings` may look up when
    /// they judge objects of `kinds`.
    pub fn for_kinds<'s>(
        settings: impl IntoIterator<Item = &'s AuditSettings>,
        kinds: &[GroupVersionKind],
    ) -> Self {
        Parents::of_lookups(lookups_of(settings, kinds))
    }

    /// Keeps `object` when a look-up can ask for its kind: what those
    /// look-ups read of it. An object written since replaces the one
    /// listed.
    pub fn keep(&mut self, object: &Value) {
        let identity = Identity::of(object);
        if !tree::may_be_parent(&identity, object) {
            return;
        }
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let Some(shape) = self.shape_of(api_version, &identity) else {
            return;
        };
        let whole = serde_json::to_vec(object).expect("JSON values always serialise");
        let Ok(view) = shape.kept.projection.decode(&whole) else {
            return; // asked of the cluster, which says what is wrong
        };
        let json = serde_json::to_vec(&view).expect("JSON values always serialise");
        let json = match self.distinct.get(json.as_slice()) {
            Some(known) => Arc::clone(known),
            None => {
                let new: Arc<[u8]> = Arc::from(json);
                self.distinct.insert(Arc::clone(&new));
                new
            }
        };
        let parent = Parent {
            identity,
            shape,
            json,
        };
        let Some(place) = self.place(&parent.identity) else {
            self.push(parent);
            return;
        };
        let replaced = std::mem::replace(&mut self.table[place / CHUNK][place % CHUNK], parent);
        // Its view stays while another parent shares it.
        if Arc::strong_count(&replaced.json) == 2 {
            self.distinct.remove(&replaced.json);
        }
    }

    /// Where the parent `identity` is in `table`.
    fn place(&self, identity: &Identity) -> Option<usize> {
        let table = &self.table;
        let found = (self.places).find(tree::place_hash(identity), |&i| {
            let i = i as usize;
            table[i / CHUNK][i % CHUNK].identity == *identity
        });
        found.map(|&i| i as usize)
    }

    /// Adds `parent`, which [`Parents::place`] did not find.
    fn push(&mut self, parent: Parent) {
        if self.table.last().is_none_or(|chunk| chunk.len() == CHUNK) {
            self.table.push(Vec::with_capacity(CHUNK));
        }
        let place = (self.table.len() - 1) * CHUNK + self.table.last().map_or(0, Vec::len);
        let hashed = tree::place_hash(&parent.identity);
        self.table
            .last_mut()
            .expect("a chunk was just made")
            .push(parent);
        let chunks = &self.table;
        (self.places).insert_unique(hashed, tree::narrow(place), |&i| {
            let i = i as usize;
            tree::place_hash(&chunks[i / CHUNK][i % CHUNK].identity)
        });
    }

    /// The answer to a look-up of `object` through `projection` from its
    /// view as listed; `None` when it was not listed at that apiVersion or
    /// the look-up reads outside what is kept.
    pub fn answer(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Option<Result<Value, LookupError>> {
        let place = self.place(&Identity::of_ref(object))?;
        let view = &self.table[place / CHUNK][place % CHUNK];
        let shape = &view.shape;
        if shape.api_version != object.api_version || !shape.kept.covers(&projection.field_masks())
        {
            return None;
        }
        Some((projection.decode(&view.json)).map_err(|e| LookupError::Failed(e.to_string())))
    }

    /// What the policies may look up.
    pub fn declared(&self) -> &[DeclaredLookup] {
        &self.declared
    }

    /// What is kept of objects of `api_version` and `identity`'s kind, if
    /// anything.
    fn shape_of(&mut self, api_version: &str, identity: &Identity) -> Option<Arc<Shape>> {
        let key = (api_version.to_owned(), identity.kind().to_owned());
        if let Some(shape) = self.shapes.get(&key) {
            return shape.clone();
        }
        let kept = KeptPaths::of(&self.declared, identity.group(), identity.kind());
        let shape = kept.map(|kept| {
            let api_version = api_version.to_owned();
            Arc::new(Shape { api_version, kept })
        });
        self.shapes.insert(key, shape.clone());
        shape
    }
}

/// What the policies of `settings` may look up when they judge objects of
/// `kinds`.
pub fn lookups_of<'s>(
    settings: impl IntoIterator<Item = &'s AuditSettings>,
    kinds: &[GroupVersionKind],
) -> Vec<DeclaredLookup> {
    let mut declared = Vec::new();
    for settings in settings {
        for kind in kinds {
            declared.extend(declared_lookups(kind, &settings.validate));
        }
    }
    declared
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn machine_set(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"template": {"metadata": {"labels": labels}}}})
    }

    #[test]
    fn siblings_share_a_view_and_a_parent_written_again_answers_as_written() {
        let machine = GroupVersionKind {
            group: "cluster.x-k8s.io".into(),
            version: "v1beta2".into(),
            kind: "Machine".into(),
        };
        let settings = AuditSettings::from_json(b"{}").unwrap();
        let mut parents = Parents::for_kinds([&settings], &[machine]);
        let labels = Projection::of(&[&["spec", "template", "metadata", "labels"]]);
        let answer = |parents: &Parents, name: &str| {
            let reference = ObjectRef::of(&machine_set(name, json!({})));
            let answer = parents.answer(&reference, &labels).unwrap().unwrap();
            answer["spec"]["template"]["metadata"]["labels"].clone()
        };
        for name in ["a", "b"] {
            parents.keep(&machine_set(name, json!({"pool": "1"})));
        }
        assert_eq!(parents.distinct.len(), 1);
        parents.keep(&machine_set("a", json!({"pool": "2"})));
        assert_eq!(parents.distinct.len(), 2);
        assert_eq!(answer(&parents, "a"), json!({"pool": "2"}));
        assert_eq!(answer(&parents, "b"), json!({"pool": "1"}));
        // The view no parent holds any longer is dropped.
        parents.keep(&machine_set("b", json!({"pool": "2"})));
        assert_eq!(parents.distinct.len(), 1);
        assert_eq!(answer(&parents, "b"), json!({"pool": "2"}));
        assert_eq!(parents.table.iter().map(Vec::len).sum::<usize>(), 2);
    }
}
