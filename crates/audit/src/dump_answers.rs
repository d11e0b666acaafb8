//! The look-ups of an audit, answered from the audited objects themselves
//! (and, behind a live cluster, by the cluster for what was not listed),
//! each one recorded for the report.

use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use serde_json::Value;

use crate::tree::Identity;

/// The dump as the policy's look-ups see it: answered as `MapLookup`
/// answers (the object keyed by its own apiVersion, kind, namespace and
/// name; its JSON decoded through the look-up's projection, so a rule
/// reading a path it did not project fails here too), without copying the
/// dump. A parent is asked for by every child (a Cluster by its control
/// plane, MachineDeployments and MachinePools, a MachineSet by each
/// Machine), so each object is serialized once, when first asked for, and
/// each projection of it decoded once.
pub(crate) struct Dump<'a> {
    objects: Vec<&'a Value>,
    index: BTreeMap<ObjectRef, usize>,
    json: Vec<OnceCell<Vec<u8>>>,
    answers: Vec<RefCell<Answers>>,
    /// The apiVersion each object is listed at.
    versions: BTreeMap<Identity, String>,
}

/// What a look-up of one object answered for each projection asked so far.
pub(crate) type Answers = Vec<(Projection<'static>, Result<Value, LookupError>)>;

impl<'a> Dump<'a> {
    pub(crate) fn new(objects: Vec<&'a Value>) -> Self {
        let index = objects
            .iter()
            .enumerate()
            .map(|(i, object)| (ObjectRef::of(object), i))
            .collect();
        let versions = objects
            .iter()
            .map(|object| {
                let at = object["apiVersion"].as_str().unwrap_or_default().to_owned();
                (Identity::of(object), at)
            })
            .collect();
        Dump {
            index,
            json: objects.iter().map(|_| OnceCell::new()).collect(),
            answers: objects.iter().map(|_| RefCell::default()).collect(),
            objects,
            versions,
        }
    }
}

impl Lookup for Dump<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let Some(&i) = self.index.get(object) else {
            return Err(LookupError::NotFound);
        };
        decoded(&self.answers[i], projection, || {
            self.json[i].get_or_init(|| serde_json::to_vec(self.objects[i]).unwrap_or_default())
        })
    }
}

/// What `projection` reads of one object: answered once per projection,
/// decoded from the object's `json` the first time.
pub(crate) fn decoded<'j>(
    answers: &RefCell<Answers>,
    projection: &Projection<'static>,
    json: impl FnOnce() -> &'j [u8],
) -> Result<Value, LookupError> {
    let mut answers = answers.borrow_mut();
    if let Some((_, answer)) = answers.iter().find(|(p, _)| p == projection) {
        return answer.clone();
    }
    let answer = projection
        .decode(json())
        .map_err(|e| LookupError::Failed(e.to_string()));
    answers.push((projection.clone(), answer.clone()));
    answer
}

/// A live cluster behind an audit (`policy-runner audit --cluster`): what
/// the listed objects cannot answer, and which kinds the policy may read.
pub trait LiveSource {
    /// The host's refusal when the policy may not read `object`'s kind (its
    /// `contextAwareResources` do not grant it); asked before any answer,
    /// listed or not, as policy-server asks it before it reads.
    fn refusal(&self, object: &ObjectRef) -> Option<String>;

    /// An object that was not listed, read from the cluster with the field
    /// masks of `projection`, and decoded through it.
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError>;
}

/// One look-up an evaluation made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupRecord {
    /// The object asked for.
    pub reference: ObjectRef,
    /// The field masks sent with it (what the policy reads of it).
    pub field_masks: BTreeSet<String>,
    /// What the dump answered.
    pub answer: Answer,
}

/// What the dump answered to one look-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The object, from the dump.
    Found,
    /// Not in the dump at that apiVersion. `in_dump_at`: the apiVersion the
    /// dump does list it at, if another; an API server would answer with it
    /// converted, which the audit cannot do.
    NotFound {
        /// The apiVersion the dump lists the object at.
        in_dump_at: Option<String>,
    },
    /// The dump's object could not be read for the policy.
    Failed(String),
}

/// A [`Lookup`] (the dump, or a live audit's parents) that records every
/// request.
pub(crate) struct Recorder<'a> {
    pub(crate) lookup: &'a dyn Lookup,
    /// The apiVersion each object of a dump is listed at, to say where a
    /// look-up at another version would have found it (`None` behind a
    /// live cluster, which converts).
    pub(crate) listed_at: Option<&'a BTreeMap<Identity, String>>,
    pub(crate) records: RefCell<Vec<LookupRecord>>,
}

impl<'a> Recorder<'a> {
    /// Records the look-ups `dump` answers.
    pub(crate) fn of_dump(dump: &'a Dump<'a>) -> Self {
        Recorder {
            lookup: dump,
            listed_at: Some(&dump.versions),
            records: RefCell::default(),
        }
    }
}

impl Lookup for Recorder<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let answer = self.lookup.get(object, projection);
        let recorded = match &answer {
            Ok(_) => Answer::Found,
            // An API server converts an object listed at another version;
            // a dump cannot.
            Err(LookupError::NotFound) => Answer::NotFound {
                in_dump_at: self
                    .listed_at
                    .and_then(|versions| versions.get(&Identity::of_ref(object)))
                    .filter(|&at| *at != object.api_version)
                    .cloned(),
            },
            Err(LookupError::Denied(message) | LookupError::Failed(message)) => {
                Answer::Failed(message.clone())
            }
        };
        self.records.borrow_mut().push(LookupRecord {
            reference: object.clone(),
            field_masks: projection.field_masks(),
            answer: recorded,
        });
        answer
    }
}
