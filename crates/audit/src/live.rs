//! A live cluster's audit (`policy-runner audit --cluster`), judged a page
//! at a time: each object is judged as its page arrives, and the page is
//! dropped. What stays is what the report and `--fix` need: per object its
//! identity, its parent and its verdict, the whole object and the detail
//! only for an object that fails (or is under one that fails, so `--fix`
//! can judge it again after its parent's write), and each possible parent's
//! view ([`Parents`]) for the look-ups of the objects listed after it. The
//! caller lists parents' kinds first ([`crate::tree::rank`]); a parent not
//! listed (yet) is asked of the cluster ([`LiveSource`]).

use std::cell::RefCell;
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::Value;

use crate::audit_error::AuditError;
use crate::dump_answers::{Answers, LiveSource, Recorder, decoded};
use crate::origin::Origin;
use crate::report::{
    AuditSettings, Audited, Evaluation, Report, Status, evaluate_object, reference,
};
use crate::tree::{self, Identity, Tree};

/// The objects a look-up can ask for, as listed: compact JSON without
/// `metadata.managedFields` and `status`, which no policy field mask names.
#[derive(Default)]
pub struct Parents {
    views: BTreeMap<Identity, View>,
}

/// One possible parent, and what each projection asked so far answered.
struct View {
    api_version: String,
    json: Box<[u8]>,
    answers: RefCell<Answers>,
}

impl Parents {
    /// Keeps `object` when a look-up can ask for its kind; an object
    /// written since replaces the one listed.
    pub fn keep(&mut self, object: &Value) {
        let identity = Identity::of(object);
        if !tree::may_be_parent(&identity, object) {
            return;
        }
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        self.views.insert(
            identity,
            View {
                api_version,
                json: view(object),
                answers: RefCell::default(),
            },
        );
    }
}

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
        let view = self.parents.views.get(&Identity::of_ref(object));
        let Some(view) = view.filter(|view| view.api_version == object.api_version) else {
            return self.live.get(object, projection);
        };
        decoded(&view.answers, projection, || &view.json)
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
/// it: by its hash, and, for the rare identity whose hash another already
/// has, by the identity itself.
#[derive(Default)]
struct Seen {
    by_hash: HashMap<u64, usize>,
    collided: BTreeMap<Identity, usize>,
}

impl Seen {
    fn hash(identity: &Identity) -> u64 {
        // Fixed keys: the same run, the same table.
        let mut hasher = DefaultHasher::new();
        identity.hash(&mut hasher);
        hasher.finish()
    }

    fn get(&self, objects: &[Audited], identity: &Identity) -> Option<usize> {
        match self.by_hash.get(&Self::hash(identity)) {
            Some(&i) if objects[i].identity == *identity => Some(i),
            Some(_) => self.collided.get(identity).copied(),
            None => None,
        }
    }

    fn insert(&mut self, identity: &Identity, index: usize) {
        match self.by_hash.entry(Self::hash(identity)) {
            Entry::Vacant(entry) => {
                entry.insert(index);
            }
            Entry::Occupied(_) => {
                self.collided.insert(identity.clone(), index);
            }
        }
    }
}

/// One policy's audit of a live cluster, fed a page at a time.
pub struct LiveAudit<'a> {
    settings: &'a AuditSettings,
    live: &'a dyn LiveSource,
    full: bool,
    objects: Vec<Audited>,
    parent: Vec<Option<usize>>,
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

    /// Judges one listed object; an object listed twice is refused, naming
    /// both lists.
    pub fn judge(
        &mut self,
        parents: &Parents,
        origin: Origin,
        object: &Value,
    ) -> Result<(), AuditError> {
        let identity = Identity::of(object);
        if let Some(first) = self.seen.get(&self.objects, &identity) {
            return Err(AuditError::Duplicate {
                origin,
                first: self.objects[first].origin.clone(),
                object: Box::new(reference(object)),
            });
        }
        let mut evaluation = evaluate(object, self.settings, parents, self.live);
        let parent = tree::parent_of(object, &identity, &|id| self.seen.get(&self.objects, id));
        let status = Status::of(evaluation.as_ref());
        let fails = matches!(status, Status::Deviates | Status::Rejected);
        // `--fix` judges the children of what it writes again: they stay
        // whole under an object that fails.
        let whole = self.full || fails || parent.is_some_and(|p| self.objects[p].whole);
        if !(self.full || fails) {
            evaluation = None;
        }
        self.seen.insert(&identity, self.objects.len());
        self.parent.push(parent);
        self.objects.push(Audited {
            origin,
            reference: reference(object),
            identity,
            object: if whole { object.clone() } else { Value::Null },
            whole,
            status,
            evaluation: evaluation.map(Box::new),
        });
        Ok(())
    }

    /// The report: every object judged, and the tree over them.
    pub fn finish(self) -> Report {
        drop(self.seen);
        let identities: Vec<&Identity> = self.objects.iter().map(|o| &o.identity).collect();
        let tree = Tree::of_parents(self.parent, &identities);
        Report {
            objects: self.objects,
            tree,
        }
    }
}
