//! What a request reads of the cluster, read before anything is decided:
//! each object once, through the union of the masks its readers need.
//!
//! Two stages can read one object. A topology-owned control plane that is
//! also an infrastructure tag target (an AWSManagedControlPlane) reads its
//! Cluster's topology for the CAPI rules and its labels for its tags. Every
//! reader names the object it will read and what of it; [`Reads::read`]
//! looks each object up once, through the union of its readers' masks, and
//! the stages then take their answers from here ([`Reads::take`]) without
//! calling the host. policy-server answers from a 5 s cache, but every
//! look-up still crosses the host boundary and is decoded again in a fresh
//! instance.
//!
//! An object is the same object at the same `apiVersion` only: a reader's
//! mask names paths of its version.

use crate::json::projection::Projection;
use crate::request::lookup::{Lookup, LookupError, ObjectRef};
use serde_json::Value;

/// One reader's need: the object and what of it the reader reads
/// (`crate::stage::Stage::first`, `then`).
pub(crate) type Need<'n> = (&'n ObjectRef, &'n Projection<'static>);

/// The answers to a request's look-ups, each object read once.
#[derive(Default)]
pub(crate) struct Reads {
    objects: Vec<Read>,
}

/// One object read, and how many readers are still to take it.
struct Read {
    reference: ObjectRef,
    answer: Result<Value, LookupError>,
    readers: usize,
}

impl Reads {
    /// Looks up every object `needs` names, once per object: an object two
    /// needs name is read through the union of their masks (an object only
    /// one need names, through its own mask, as given). A later call, for
    /// what the first answers name, reads its own objects.
    pub(crate) fn read(&mut self, lookup: &dyn Lookup, needs: &[Need<'_>]) {
        for (i, (reference, projection)) in needs.iter().enumerate() {
            if needs[..i].iter().any(|(other, _)| other == reference) {
                continue; // read with its first need
            }
            let others: Vec<_> = (needs[i + 1..].iter())
                .filter(|(other, _)| other == reference)
                .collect();
            let answer = if others.is_empty() {
                lookup.get(reference, projection)
            } else {
                let mut union = (*projection).clone();
                for (_, theirs) in &others {
                    union.unite(theirs);
                }
                lookup.get(reference, &union)
            };
            self.objects.push(Read {
                reference: (*reference).clone(),
                answer,
                readers: 1 + others.len(),
            });
        }
    }

    /// The object read for `reference`, if it was read and found: what a
    /// later read needs to know (the ClusterClass a Cluster names), left in
    /// place for its readers.
    pub(crate) fn peek(&self, reference: &ObjectRef) -> Option<&Value> {
        let read = self
            .objects
            .iter()
            .find(|read| read.reference == *reference)?;
        read.answer.as_ref().ok()
    }

    /// The answer read for `reference`, handed to one of its readers: moved
    /// to the last of them, copied to the others. An object no need named
    /// was never looked up, and is answered with a failure that says so.
    pub(crate) fn take(&mut self, reference: &ObjectRef) -> Result<Value, LookupError> {
        let Some(at) = (self.objects.iter()).position(|read| read.reference == *reference) else {
            return Err(LookupError::Failed(format!(
                "{reference} was not read before the decision (a defect in the policy: please \
                 report it)"
            )));
        };
        let read = &mut self.objects[at];
        read.readers -= 1;
        if read.readers > 0 {
            read.answer.clone()
        } else {
            self.objects.swap_remove(at).answer
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::lookup::MapLookup;
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
        let lookup = MapLookup::default().with_object(cluster());
        let reference = ObjectRef::of(&cluster());
        let mut reads = Reads::default();
        reads.read(
            &lookup,
            &[(&reference, &class_ref()), (&reference, &labels())],
        );
        assert_eq!(lookup.requests().len(), 1, "read before any reader asks");
        let peeked = reads.peek(&reference).cloned();
        let first = reads.take(&reference).unwrap();
        let second = reads.take(&reference).unwrap();
        assert_eq!(first, second);
        assert_eq!(Some(first.clone()), peeked);
        assert_eq!(first["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(
            first["spec"]["topology"],
            json!({"classRef": {"name": "cc"}})
        );
        let masks: Vec<Vec<String>> = (lookup.field_masks().into_iter())
            .map(|masks| masks.into_iter().collect())
            .collect();
        assert_eq!(masks, [["metadata.labels", "spec.topology.classRef"]]);
        // Both readers answered: a third is told it was never read, and
        // the host is not asked again.
        assert!(
            matches!(reads.take(&reference), Err(LookupError::Failed(m)) if m.contains("not read"))
        );
        assert_eq!(lookup.requests().len(), 1);
    }

    #[test]
    fn a_failure_answers_every_reader() {
        let reference = ObjectRef::of(&cluster());
        let failed = LookupError::Failed("forbidden".into());
        let lookup = MapLookup::default().with_error(reference.clone(), failed.clone());
        let mut reads = Reads::default();
        reads.read(
            &lookup,
            &[(&reference, &class_ref()), (&reference, &labels())],
        );
        assert_eq!(reads.peek(&reference), None);
        assert_eq!(reads.take(&reference), Err(failed.clone()));
        assert_eq!(reads.take(&reference), Err(failed));
        assert_eq!(lookup.requests().len(), 1);
    }

    #[test]
    fn another_version_is_another_object_and_a_later_read_is_its_own() {
        let lookup = MapLookup::default().with_object(cluster());
        let reference = ObjectRef::of(&cluster());
        let older = ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            ..reference.clone()
        };
        let mut reads = Reads::default();
        reads.read(&lookup, &[(&reference, &class_ref()), (&older, &labels())]);
        reads.read(&lookup, &[(&reference, &labels())]);
        assert_eq!(lookup.requests().len(), 3);
        assert_eq!(reads.take(&older), Err(LookupError::NotFound));
        let first = reads.take(&reference).unwrap();
        assert_eq!(first["metadata"].get("labels"), None, "its own mask");
        let second = reads.take(&reference).unwrap();
        assert_eq!(second["metadata"]["labels"], json!({"team": "a"}));
    }
}
