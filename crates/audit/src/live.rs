//! A live cluster's audit (`policy-runner audit --cluster`), judged a page
//! at a time: each object is judged as its page arrives, and the page is
//! dropped. What stays is what the report and `--fix` need: per object its
//! identity, its parent and its verdict, the whole object and the detail
//! only for an object that fails (or is under one that fails, so `--fix`
//! can judge it again after its parent's write), and each possible parent's
//! view ([`Parents`]) for the look-ups of the objects listed after it. The
//! caller lists parents' kinds first ([`crate::tree::rank`]); a parent not
//! listed (yet) is asked of the cluster ([`LiveSource`]).

mod parents;

use std::cell::RefCell;
use std::sync::Arc;

use hashbrown::HashTable;
use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::Value;

pub use parents::{KeptPaths, Parents, lookups_of};

use crate::audit_error::AuditError;
use crate::compact::Json;
use crate::dump_answers::{LiveSource, Recorder};
use crate::report::{
    AuditSettings, Audited, Evaluation, Kept, Listed, Report, Status, evaluate_object, reference,
};
use crate::tree::{self, Identity, Tree};

/// What a look-up can read of `object`, as compact JSON: all of it but
/// `metadata.managedFields` and `status`, which no policy field mask names.
pub fn view(object: &Value) -> Box<[u8]> {
    let mut view = object.clone();
    if let Some(fields) = view.as_object_mut() {
        fields.remove("status");
    }
    if let Some(metadata) = view["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    let json = serde_json::to_vec(&view).expect("JSON values always serialise");
    json.into_boxed_slice()
}

/// The look-ups of one policy's live audit: refused as policy-server
/// refuses them, else answered from [`Parents`] at the version listed, else
/// asked of the cluster (which converts another version).
struct LiveLookup<'a> {
    parents: &'a Parents,
    live: &'a dyn LiveSource,
}

impl Lookup for LiveLookup<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        if let Some(refusal) = self.live.refusal(object) {
            return Err(LookupError::Denied(refusal));
        }
        match self.parents.answer(object, projection) {
            Some(answer) => answer,
            None => self.live.get(object, projection),
        }
    }
}

/// Evaluates `object` against `parents`, as listed or (`--fix`) as read
/// after a write: `None` when the policy does not act on its kind.
pub fn evaluate(
    object: &Value,
    settings: &AuditSettings,
    parents: &Parents,
    live: &dyn LiveSource,
) -> Option<Evaluation> {
    let request = AdmissionRequest::for_object("UPDATE", object.clone());
    if !request.acted_on() {
        return None;
    }
    let lookup = LiveLookup { parents, live };
    let recorder = Recorder {
        lookup: &lookup,
        listed_at: None,
        records: RefCell::default(),
    };
    Some(evaluate_object(&request, settings, recorder))
}

/// The objects judged so far, found by identity without a second copy of
/// it: a table of their places in the report, hashed by the identity kept
/// there (4 bytes an object, where a map keyed by identity would hold a
/// second copy of each).
#[derive(Default)]
struct Seen {
    places: HashTable<u32>,
}

impl Seen {
    fn get(&self, objects: &[Audited], identity: &Identity) -> Option<usize> {
        let found = (self.places).find(tree::place_hash(identity), |&i| {
            objects[i as usize].identity == *identity
        });
        found.map(|&i| i as usize)
    }

    /// Adds `objects`' last object, which [`Seen::get`] did not find.
    fn insert_last(&mut self, objects: &[Audited]) {
        let last = objects.last().expect("an object was just added");
        let place = tree::narrow(objects.len() - 1);
        (self.places).insert_unique(tree::place_hash(&last.identity), place, |&i| {
            tree::place_hash(&objects[i as usize].identity)
        });
    }
}

/// One policy's audit of a live cluster, fed a page at a time.
pub struct LiveAudit<'a> {
    settings: &'a AuditSettings,
    live: &'a dyn LiveSource,
    full: bool,
    objects: Vec<Audited>,
    /// Each object's parent ([`tree::NO_PARENT`]: none judged).
    parent: Vec<u32>,
    seen: Seen,
}

impl<'a> LiveAudit<'a> {
    /// An audit by `settings`, asking `live` what [`Parents`] cannot
    /// answer; `full` keeps every object whole, with its detail.
    pub fn new(settings: &'a AuditSettings, live: &'a dyn LiveSource, full: bool) -> Self {
        LiveAudit {
            settings,
            live,
            full,
            objects: Vec::new(),
            parent: Vec::new(),
            seen: Seen::default(),
        }
    }

    /// Judges one object of the list `listed`; an object listed twice is
    /// refused, naming both lists.
    pub fn judge(
        &mut self,
        parents: &Parents,
        listed: &Arc<Listed>,
        object: &Value,
    ) -> Result<(), AuditError> {
        let identity = Identity::of(object);
        if let Some(first) = self.seen.get(&self.objects, &identity) {
            return Err(AuditError::Duplicate {
                origin: listed.origin.clone(),
                first: self.objects[first].origin().clone(),
                object: Box::new(reference(object)),
            });
        }
        let mut evaluation = evaluate(object, self.settings, parents, self.live);
        let parent = tree::parent_of(object, &identity, &|id| self.seen.get(&self.objects, id));
        let status = Status::of(evaluation.as_ref());
        let fails = matches!(status, Status::Deviates | Status::Rejected);
        // `--fix` judges the children of what it writes again: they stay
        // whole under an object that fails.
        let whole = self.full || fails || parent.is_some_and(|p| self.objects[p].whole());
        if !(self.full || fails) {
            evaluation = None;
        }
        // Kept until the report: only what it prints, compactly.
        let detail = evaluation.as_mut().and_then(|e| e.detail.as_mut());
        if let Some(detail) = detail {
            detail.explanation.compact();
        }
        self.parent
            .push(parent.map_or(tree::NO_PARENT, tree::narrow));
        let object = whole.then(|| Kept::Compact(Json::of(object)));
        let audited = Audited::new(Arc::clone(listed), identity, object, status, evaluation);
        self.objects.push(audited);
        self.seen.insert_last(&self.objects);
        Ok(())
    }

    /// Makes room for `n` more objects, exactly: a page's worth at a time,
    /// so that a report of 100,000 objects is not one of 131,072 places.
    pub fn expect(&mut self, n: usize) {
        self.objects.reserve_exact(n);
        self.parent.reserve_exact(n);
    }

    /// The report: every object judged, and the tree over them.
    pub fn finish(self) -> Report {
        drop(self.seen);
        let objects = &self.objects;
        let tree = Tree::of_parents(self.parent, &|i| &objects[i].identity);
        Report {
            objects: self.objects,
            tree,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use metadata_propagation_core::request::GroupVersionKind;
    use serde_json::json;

    use super::*;

    /// A cluster that answers every read with the same object, counting
    /// the reads.
    struct Counted {
        reads: Cell<usize>,
        answer: Value,
    }

    impl LiveSource for Counted {
        fn refusal(&self, _: &ObjectRef) -> Option<String> {
            None
        }

        fn get(
            &self,
            _: &ObjectRef,
            projection: &Projection<'static>,
        ) -> Result<Value, LookupError> {
            self.reads.set(self.reads.get() + 1);
            let json = serde_json::to_vec(&self.answer).unwrap();
            projection
                .decode(&json)
                .map_err(|e| LookupError::Failed(e.to_string()))
        }
    }

    #[test]
    fn a_parent_is_answered_from_its_view_unless_the_look_up_reads_outside_it() {
        let machine_set = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
            "metadata": {"name": "ms", "namespace": "default", "uid": "u-1",
                         "labels": {"a": "1"}, "ownerReferences": [{"kind": "MachineDeployment"}]},
            "spec": {"template": {"metadata": {"labels": {"b": "2"}}}},
            "status": {"replicas": 3}});
        let settings = AuditSettings::from_json(b"{}").unwrap();
        let machine = GroupVersionKind {
            group: "cluster.x-k8s.io".into(),
            version: "v1beta2".into(),
            kind: "Machine".into(),
        };
        let mut parents = Parents::for_kinds([&settings], &[machine]);
        parents.keep(&machine_set);
        let live = Counted {
            reads: Cell::new(0),
            answer: machine_set.clone(),
        };
        let lookup = LiveLookup {
            parents: &parents,
            live: &live,
        };
        let reference = ObjectRef::of(&machine_set);
        let read = |paths: &[&[&'static str]]| lookup.get(&reference, &Projection::of(paths));

        // What a Machine's rule reads of its MachineSet: the view.
        let labels = read(&[&["spec", "template", "metadata", "labels"]]);
        assert_eq!(
            labels.unwrap(),
            json!({"spec": {"template": {"metadata": {"labels": {"b": "2"}}}}})
        );
        assert_eq!(live.reads.get(), 0, "answered from the view");

        // No look-up of a MachineSet reads its own labels or its uid: the
        // view keeps neither, and the cluster answers, with the object's
        // own.
        assert_eq!(
            read(&[&["metadata", "labels"]]).unwrap(),
            json!({"metadata": {"labels": {"a": "1"}}})
        );
        assert_eq!(
            read(&[&["metadata", "uid"]]).unwrap(),
            json!({"metadata": {"uid": "u-1"}})
        );
        assert_eq!(live.reads.get(), 2);
    }
}
