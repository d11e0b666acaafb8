//! Reading parent objects from the cluster, behind a trait.
//!
//! The decision logic only ever sees [`Lookup`]: in the wasm module it is
//! answered by Kubewarden's `kubernetes/get_resource` host capability (the
//! policy crate's `HostLookup`, the one implementation that calls the
//! host), in tests and tools by an in-memory map ([`MapLookup`]). No global
//! test doubles, no `#[cfg(test)]` swaps.

use crate::json::projection::Projection;
pub use crate::kube::object_ref::ObjectRef;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// Why a look-up produced no object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The object does not exist (yet, or any more).
    NotFound,
    /// The policy may not read the object's kind: it is not in the
    /// `contextAwareResources` of the policy's definition. A retry does
    /// not help; changing the definition does.
    Denied(String),
    /// The host could not answer: RBAC, API server, undecodable payload.
    /// Worth a retry.
    Failed(String),
}

/// Reads objects from the cluster.
pub trait Lookup {
    /// The object named by `object`, as JSON, holding only the paths of
    /// `projection` (the rest is never decoded).
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError>;
}

/// [`Lookup`] answered from memory; records every request so tests can
/// assert how many look-ups an evaluation made. Answers go through the
/// projection like the host's, so a rule reading a path it did not project
/// fails in tests too. `MapLookup::default()` is an empty one: every
/// object is NotFound.
#[derive(Debug, Default)]
pub struct MapLookup {
    answers: BTreeMap<ObjectRef, Result<Value, LookupError>>,
    requests: RefCell<Vec<(ObjectRef, BTreeSet<String>)>>,
}

impl MapLookup {
    /// Adds an object, keyed by its own apiVersion, kind, name and namespace.
    pub fn with_object(mut self, object: Value) -> Self {
        self.answers.insert(ObjectRef::of(&object), Ok(object));
        self
    }
}

impl Lookup for MapLookup {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        self.requests
            .borrow_mut()
            .push((object.clone(), projection.field_masks()));
        let found = self.answers.get(object).cloned();
        let whole = found.unwrap_or(Err(LookupError::NotFound))?;
        let bytes = serde_json::to_vec(&whole).map_err(|e| LookupError::Failed(e.to_string()))?;
        projection
            .decode(&bytes)
            .map_err(|e| LookupError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What the tests ask of a look-up: here, where the fields are in reach.
    impl MapLookup {
        /// Makes the look-up of `object` fail with `error`.
        pub(crate) fn with_error(mut self, object: ObjectRef, error: LookupError) -> Self {
            self.answers.insert(object, Err(error));
            self
        }

        /// Every request made so far, in order.
        pub(crate) fn requests(&self) -> Vec<ObjectRef> {
            self.requests
                .borrow()
                .iter()
                .map(|(r, _)| r.clone())
                .collect()
        }

        /// The field masks of every request made so far, in order: what
        /// the wasm module's host look-up would send.
        pub(crate) fn field_masks(&self) -> Vec<BTreeSet<String>> {
            self.requests
                .borrow()
                .iter()
                .map(|(_, m)| m.clone())
                .collect()
        }
    }

    #[test]
    fn map_lookup_records_requests_and_answers_not_found() {
        let lookup = MapLookup::default().with_object(serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
            "metadata": {"name": "ms", "namespace": "default"}}));
        let hit = ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            kind: "MachineSet".into(),
            name: "ms".into(),
            namespace: Some("default".into()),
        };
        let miss = ObjectRef {
            name: "other".into(),
            ..hit.clone()
        };
        let all = Projection::of(&[&[]]);
        assert!(lookup.get(&hit, &all).is_ok());
        assert_eq!(lookup.get(&miss, &all), Err(LookupError::NotFound));
        assert_eq!(lookup.requests(), [hit, miss]);
    }
}
