//! The parents as the policy looks them up: [`Parents`] answers as a
//! `MapLookup` holding them would, sharing the unedited fixtures' answers
//! across executions.

use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use serde_json::Value;
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeSet;

use crate::fixtures::FIXTURES;
use crate::node::Node;

/// The key a look-up finds a parent by, computed from the parent itself as
/// `MapLookup::with_object` computes it.
pub fn key_of(object: &Node) -> ObjectRef {
    let text = |path: &[&str]| object.text(path).unwrap_or_default().to_owned();
    ObjectRef {
        api_version: text(&["apiVersion"]),
        kind: text(&["kind"]),
        name: text(&["metadata", "name"]),
        namespace: object.text(&["metadata", "namespace"]).map(str::to_owned),
    }
}

/// What a look-up of a parent answered for each projection asked so far,
/// keyed by the projection's field masks: `Projection` has no equality (its
/// children are a list, in the order the paths were given), and two
/// projections with the same masks decode the same.
pub type Answers = Vec<(BTreeSet<String>, Result<Value, LookupError>)>;

/// The answer for `projection`: from `answers`, else as `MapLookup`
/// answers, the parent's JSON (as the host sends it) decoded through the
/// projection (so a rule reading a path it did not project fails here
/// too), and kept in `answers`.
fn answer(
    answers: &mut Answers,
    projection: &Projection,
    json: &[u8],
) -> Result<Value, LookupError> {
    let masks = projection.field_masks();
    if let Some((_, answer)) = answers.iter().find(|(m, _)| *m == masks) {
        return answer.clone();
    }
    let answer = projection
        .decode(json)
        .map_err(|e| LookupError::Failed(e.to_string()));
    answers.push((masks, answer.clone()));
    answer
}

/// A parent in one execution: a fixture, or a fixture the input edited; or
/// one the host cannot find or cannot read (an infrastructure object's
/// Cluster, a managed resource's XR), or one the policy may not read.
enum Parent {
    Unedited(usize),
    Missing,
    Unavailable(ObjectRef),
    Denied(ObjectRef),
    Edited {
        object: Node<'static>,
        key: ObjectRef,
        json: OnceCell<Vec<u8>>,
        answers: RefCell<Answers>,
    },
}

/// The parents, answered as a `MapLookup` holding them answers: the last
/// parent with the requested key; none: NotFound.
pub struct Parents(Vec<Parent>);

impl Parents {
    /// The fixture parents as the input left them (in fixture order): an
    /// unedited one shares the fixture's key, JSON and answers.
    pub fn new(parents: Vec<Node<'static>>) -> Self {
        Parents(
            parents
                .into_iter()
                .enumerate()
                .map(|(i, parent)| match parent {
                    Node::Shared(_) => Parent::Unedited(i),
                    object => Parent::Edited {
                        key: key_of(&object),
                        object,
                        json: OnceCell::new(),
                        answers: RefCell::default(),
                    },
                })
                .collect(),
        )
    }
}

/// How the host answers a look-up of one parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// With the parent (as the input left it).
    Found,
    /// NotFound.
    Missing,
    /// An error other than NotFound (the API server unavailable).
    Unavailable,
    /// The policy may not read the kind (not in its
    /// `contextAwareResources`).
    Denied,
}

impl Parents {
    /// Makes the parents `answer` picks answer as it says.
    pub fn answer(&mut self, answer: impl Fn(&ObjectRef) -> Answer) {
        let fixtures = &*FIXTURES;
        for parent in &mut self.0 {
            let key = match parent {
                Parent::Unedited(i) => &fixtures.keys[*i],
                Parent::Edited { key, .. } => key,
                Parent::Missing | Parent::Unavailable(_) | Parent::Denied(_) => continue,
            };
            match answer(key) {
                Answer::Found => {}
                Answer::Missing => *parent = Parent::Missing,
                Answer::Unavailable => *parent = Parent::Unavailable(key.clone()),
                Answer::Denied => *parent = Parent::Denied(key.clone()),
            }
        }
    }
}

impl Lookup for Parents {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let fixtures = &*FIXTURES;
        let found = self.0.iter().rev().find(|parent| match parent {
            Parent::Unedited(i) => fixtures.keys[*i] == *object,
            Parent::Edited { key, .. } | Parent::Unavailable(key) | Parent::Denied(key) => {
                key == object
            }
            Parent::Missing => false,
        });
        match found.ok_or(LookupError::NotFound)? {
            Parent::Missing => Err(LookupError::NotFound),
            Parent::Unavailable(_) => Err(LookupError::Failed(
                "the server is currently unable to handle the request".to_owned(),
            )),
            Parent::Denied(_) => Err(LookupError::Denied(
                "Policy has not been granted access to this resource".to_owned(),
            )),
            Parent::Unedited(i) => {
                let mut answers = fixtures.answers[*i].lock().unwrap();
                answer(&mut answers, projection, &fixtures.json[*i])
            }
            Parent::Edited {
                object,
                json,
                answers,
                ..
            } => {
                let json = json.get_or_init(|| {
                    let mut json = Vec::new();
                    object.write_json(&mut json);
                    json
                });
                answer(&mut answers.borrow_mut(), projection, json)
            }
        }
    }
}
