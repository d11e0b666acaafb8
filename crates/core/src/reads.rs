//! What a request reads of the cluster: each object once, with the union of
//! the masks its readers need.
//!
//! Two stages can read one object. A topology-owned control plane that is
//! also an infrastructure tag target (an AWSManagedControlPlane) reads its
//! Cluster's topology for the CAPI rules and its labels for its tags. Before
//! the first look-up every reader names the object it will read and what of
//! it ([`Reads::new`]); an object two readers name is then looked up once,
//! when the first asks, through the union of their masks, and both are
//! answered from that one answer. policy-server answers from a 5 s cache,
//! but every look-up still crosses the host boundary and is decoded again
//! in a fresh instance.
//!
//! An object is the same object at the same `apiVersion` only: a reader's
//! mask names paths of its version.

use crate::lookup::{Lookup, LookupError, ObjectRef};
use crate::projection::Projection;
use serde_json::Value;
use std::cell::RefCell;

/// A [`Lookup`] that answers each object two readers want from one
/// look-up.
pub struct Reads<'l> {
    lookup: &'l dyn Lookup,
    shared: RefCell<Vec<Shared>>,
}

/// An object two or more readers want.
struct Shared {
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
    /// Look-ups through `lookup`, where `readers` says what each reader of
    /// the request will read: the object and its mask. An object only one
    /// reader wants costs nothing here (its look-up goes to `lookup` as
    /// asked); policy-server builds all of this again for every request.
    pub fn new(lookup: &'l dyn Lookup, readers: &[(&ObjectRef, &Projection<'static>)]) -> Self {
        let mut shared: Vec<Shared> = Vec::new();
        for (i, (reference, projection)) in readers.iter().enumerate() {
            let same = |(other, _): &&(&ObjectRef, &Projection<'static>)| other == reference;
            if readers[..i].iter().any(|reader| same(&reader)) {
                continue; // counted with its first reader
            }
            let others: Vec<_> = readers[i + 1..].iter().filter(same).collect();
            if others.is_empty() {
                continue;
            }
            let mut union = (*projection).clone();
            for (_, theirs) in &others {
                union.unite(theirs);
            }
            shared.push(Shared {
                reference: (*reference).clone(),
                projection: union,
                readers: 1 + others.len(),
                answer: None,
            });
        }
        Self {
            lookup,
            shared: RefCell::new(shared),
        }
    }
}

impl Lookup for Reads<'_> {
    fn get(
        &self,
        reference: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let mut shared = self.shared.borrow_mut();
        // One no reader announced, or one asking for more than announced,
        // is answered on its own.
        let at = shared.iter().position(|object| {
            object.reference == *reference && object.projection.covers(projection)
        });
        let Some(at) = at else {
            drop(shared);
            return self.lookup.get(reference, projection);
        };
        let object = &mut shared[at];
        let answer = match &object.answer {
            Some(answer) => answer,
            None => object
                .answer
                .insert(self.lookup.get(reference, &object.projection)),
        };
        object.readers -= 1;
        if object.readers > 0 {
            answer.clone()
        } else {
            let object = shared.remove(at);
            object.answer.expect("answered above")
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
        let reads = Reads::new(
            &lookup,
            &[(&reference, &class_ref()), (&reference, &labels())],
        );
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
        let reads = Reads::new(
            &lookup,
            &[(&reference, &class_ref()), (&reference, &labels())],
        );
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
        let reads = Reads::new(
            &lookup,
            &[(&reference, &class_ref()), (&reference, &class_ref())],
        );
        assert_eq!(reads.get(&older, &labels()), Err(LookupError::NotFound));
        reads.get(&reference, &class_ref()).unwrap();
        let more = reads.get(&reference, &labels()).unwrap();
        assert_eq!(more["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(lookup.requests().len(), 3);
    }
}
