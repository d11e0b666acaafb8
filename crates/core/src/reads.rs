//! What a request reads of the cluster: each object once, with the union of
//! the masks its readers need.
//!
//! Two stages can read one object. A topology-owned control plane that is
//! also an infrastructure tag target (an AWSManagedControlPlane) reads its
//! Cluster's topology for the CAPI rules and its labels for its tags. Before
//! the first look-up every reader names the object it will read and what of
//! it ([`Reads::want`]); a wanted object is then looked up once, when its
//! first reader asks, through the union of its readers' masks, and every
//! reader is answered from that one answer. policy-server answers from a
//! 5 s cache, but every look-up still crosses the host boundary and is
//! decoded again in a fresh instance.
//!
//! An object is the same object at the same `apiVersion` only: a reader's
//! mask names paths of its version.

use crate::lookup::{Lookup, LookupError, ObjectRef};
use crate::projection::Projection;
use serde_json::Value;
use std::cell::RefCell;

/// A [`Lookup`] that answers each wanted object from one look-up.
pub struct Reads<'l> {
    lookup: &'l dyn Lookup,
    wanted: RefCell<Vec<Wanted>>,
}

/// One wanted object.
struct Wanted {
    reference: ObjectRef,
    /// The union of its readers' masks.
    projection: Projection<'static>,
    /// How many readers are still to ask: the last one is handed the answer
    /// itself, the others a copy.
    readers: usize,
    /// The answer, once the first reader has asked.
    answer: Option<Result<Value, LookupError>>,
}

impl<'l> Reads<'l> {
    /// Nothing wanted yet: every look-up goes to `lookup` as asked.
    pub fn new(lookup: &'l dyn Lookup) -> Self {
        Self {
            lookup,
            wanted: RefCell::new(Vec::new()),
        }
    }

    /// A reader will read `projection` of `reference`.
    pub fn want(&mut self, reference: &ObjectRef, projection: &Projection<'static>) {
        let wanted = self.wanted.get_mut();
        match wanted.iter_mut().find(|w| w.reference == *reference) {
            Some(object) => {
                object.projection.unite(projection);
                object.readers += 1;
            }
            None => wanted.push(Wanted {
                reference: reference.clone(),
                projection: projection.clone(),
                readers: 1,
                answer: None,
            }),
        }
    }
}

impl Lookup for Reads<'_> {
    fn get(
        &self,
        reference: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let mut wanted = self.wanted.borrow_mut();
        let at = wanted.iter().position(|w| w.reference == *reference);
        // A reader no one announced, or one asking for more than it
        // announced once the object was read, is answered on its own.
        let Some(at) = at.filter(|at| {
            let object = &wanted[*at];
            object.answer.is_none() || object.projection.covers(projection)
        }) else {
            drop(wanted);
            return self.lookup.get(reference, projection);
        };
        let object = &mut wanted[at];
        if object.answer.is_none() {
            object.projection.unite(projection);
            object.answer = Some(self.lookup.get(reference, &object.projection));
        }
        object.readers = object.readers.saturating_sub(1);
        if object.readers == 0 {
            let object = wanted.remove(at);
            object.answer.expect("answered above")
        } else {
            object.answer.clone().expect("answered above")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::MapLookup;
    use serde_json::json;

    fn cluster() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c", "namespace": "ns", "labels": {"team": "a"}},
            "spec": {"topology": {"classRef": {"name": "cc"}, "version": "v1.33.0"}}
        })
    }

    fn labels() -> Projection<'static> {
        Projection::of(&[&["metadata", "labels"]])
    }

    fn class_ref() -> Projection<'static> {
        Projection::of(&[&["spec", "topology", "classRef"]])
    }

    #[test]
    fn two_readers_of_one_object_share_one_look_up() {
        let lookup = MapLookup::new().with_object(cluster());
        let reference = ObjectRef::of(&cluster());
        let mut reads = Reads::new(&lookup);
        reads.want(&reference, &class_ref());
        reads.want(&reference, &labels());
        let first = reads.get(&reference, &class_ref()).unwrap();
        let second = reads.get(&reference, &labels()).unwrap();
        assert_eq!(first, second);
        assert_eq!(first["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(
            first["spec"]["topology"],
            json!({"classRef": {"name": "cc"}})
        );
        let masks: Vec<Vec<String>> = (lookup.field_masks().into_iter())
            .map(|masks| masks.into_iter().collect())
            .collect();
        assert_eq!(masks, [["metadata.labels", "spec.topology.classRef"]]);
        // Both readers answered: a third look-up is the host's again.
        reads.get(&reference, &labels()).unwrap();
        assert_eq!(lookup.requests().len(), 2);
    }

    #[test]
    fn a_failure_answers_every_reader() {
        let reference = ObjectRef::of(&cluster());
        let failed = LookupError::Failed("forbidden".into());
        let lookup = MapLookup::new().with_error(reference.clone(), failed.clone());
        let mut reads = Reads::new(&lookup);
        reads.want(&reference, &class_ref());
        reads.want(&reference, &labels());
        assert_eq!(reads.get(&reference, &class_ref()), Err(failed.clone()));
        assert_eq!(reads.get(&reference, &labels()), Err(failed));
        assert_eq!(lookup.requests().len(), 1);
    }

    #[test]
    fn another_version_or_an_unannounced_mask_is_its_own_look_up() {
        let lookup = MapLookup::new().with_object(cluster());
        let reference = ObjectRef::of(&cluster());
        let older = ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            ..reference.clone()
        };
        let mut reads = Reads::new(&lookup);
        reads.want(&reference, &class_ref());
        reads.want(&reference, &class_ref());
        assert_eq!(reads.get(&older, &labels()), Err(LookupError::NotFound));
        reads.get(&reference, &class_ref()).unwrap();
        let more = reads.get(&reference, &labels()).unwrap();
        assert_eq!(more["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(lookup.requests().len(), 3);
    }
}
