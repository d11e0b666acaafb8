//! The look-ups of an audit, answered from the audited objects themselves
//! (and, behind a live cluster, by the cluster for what was not listed),
//! each one recorded for the report.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use serde_json::Value;

use crate::report::{Answer, LiveSource, LookupRecord};
use crate::tree::Identity;

/// The dump as the policy's look-ups see it: answered as `MapLookup`
/// answers (the object keyed by its own apiVersion, kind, namespace and
/// name; its JSON decoded through the look-up's projection, so a rule
/// reading a path it did not project fails here too), without copying the
/// dump. A parent is asked for by every child (a Cluster by its control
/// plane, MachineDeployments and MachinePools, a MachineSet by each
/// Machine), so each object is serialized once, when first asked for, and
/// each projection of it decoded once. Behind a live cluster, what was not
/// listed is asked of it, and a kind the policy may not read is refused
/// first.
pub(crate) struct Dump<'a> {
    objects: Vec<&'a Value>,
    index: BTreeMap<ObjectRef, usize>,
    json: Vec<OnceCell<Vec<u8>>>,
    answers: Vec<RefCell<Answers>>,
    /// The apiVersion each object is listed at.
    versions: BTreeMap<Identity, String>,
    live: Option<&'a dyn LiveSource>,
}

/// What a look-up of one object answered for each projection asked so far.
type Answers = Vec<(Projection<'static>, Result<Value, LookupError>)>;

impl<'a> Dump<'a> {
    pub(crate) fn new(objects: Vec<&'a Value>, live: Option<&'a dyn LiveSource>) -> Self {
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
            live,
        }
    }
}

impl Lookup for Dump<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        if let Some(refusal) = self.live.and_then(|live| live.refusal(object)) {
            return Err(LookupError::Denied(refusal));
        }
        let Some(&i) = self.index.get(object) else {
            return match self.live {
                Some(live) => live.get(object, projection),
                None => Err(LookupError::NotFound),
            };
        };
        let mut answers = self.answers[i].borrow_mut();
        if let Some((_, answer)) = answers.iter().find(|(p, _)| p == projection) {
            return answer.clone();
        }
        let json =
            self.json[i].get_or_init(|| serde_json::to_vec(self.objects[i]).unwrap_or_default());
        let answer = projection
            .decode(json)
            .map_err(|e| LookupError::Failed(e.to_string()));
        answers.push((projection.clone(), answer.clone()));
        answer
    }
}

/// [`Lookup`] over the dump that records every request.
pub(crate) struct Recorder<'a> {
    pub(crate) dump: &'a Dump<'a>,
    pub(crate) records: RefCell<Vec<LookupRecord>>,
}

impl Lookup for Recorder<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let answer = self.dump.get(object, projection);
        let recorded = match &answer {
            Ok(_) => Answer::Found,
            // An API server converts an object listed at another version;
            // a dump cannot.
            Err(LookupError::NotFound) => Answer::NotFound {
                in_dump_at: self
                    .dump
                    .versions
                    .get(&Identity::of_ref(object))
                    .filter(|&at| *at != object.api_version && self.dump.live.is_none())
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
