//! Why each label, annotation and tag did or did not flow.
//!
//! The record [`crate::evaluate::explain`] renders from the trace the
//! decision returns when asked for one; the admission path asks for none,
//! so it pays nothing. The policy, the runner's `explain` command and the
//! web page all call the same functions: there is one core, no fork.
//!
//! An explanation is the notes that concern the whole object and one part
//! per stage, in the stages' order: each stage says what its part holds,
//! as JSON members and as text (`ExplanationPart`). Nothing here knows a
//! stage.

use crate::request::lookup::ObjectRef;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// Everything the policy decided about one object, key by key: its JSON
/// is each part's members, in the stages' order, then `notes`.
#[derive(Debug)]
pub struct Explanation {
    /// Each stage's part, in the order the stages decide; a stage that did
    /// not run keeps its empty part, so the explanation's shape is the
    /// same for every object.
    parts: Vec<Box<dyn ExplanationPart>>,
    /// Decisions that concern the whole object (no rule, parent not found,
    /// adopted, ...), in the order they were made.
    pub(crate) notes: Vec<String>,
}

/// A stage's part of an [`Explanation`] (`Any`: the tests read a part by
/// its type).
pub(crate) trait ExplanationPart: fmt::Debug + std::any::Any {
    /// Its members of the explanation's JSON object, in order.
    fn members(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)>;

    /// Writes it as text, line by line; `brief` leaves out what only
    /// `--verbose` lists, and says how much it left out.
    fn write_text(&self, brief: bool, out: &mut dyn fmt::Write) -> fmt::Result;

    /// Words again, for the text of a request whose evaluation made
    /// `requests`, a note another stage wrote that this part contradicts.
    fn revise_notes(&self, _kind: &str, _requests: &[ObjectRef], _notes: &mut [String]) {}

    /// The label and annotation keys it says CAPI syncs to a Node, if it
    /// says any ([`Explanation::synced_to_node`]).
    fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        None
    }
}

impl Explanation {
    /// An explanation of `parts`, one a stage at the stage's place in the
    /// list, and `notes`.
    pub(crate) fn new(parts: Vec<Box<dyn ExplanationPart>>, notes: Vec<String>) -> Self {
        Self { parts, notes }
    }

    /// Each stage's part, in the stages' order: the tests read a part by
    /// its type (`tests/support`).
    #[cfg(test)]
    pub(crate) fn parts(&self) -> &[Box<dyn ExplanationPart>] {
        &self.parts
    }

    /// The label and annotation keys CAPI syncs from a Machine to its
    /// Node, as the Machine is stored; `None` for any other object.
    pub fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        (self.parts.iter()).find_map(|part| part.synced_to_node())
    }

    /// The explanation as text for one request of `kind` whose evaluation
    /// made `requests`: unless `verbose`, each part leaves out what only
    /// `--verbose` lists. A note a part contradicts is worded again
    /// (`ExplanationPart::revise_notes`).
    pub fn text(&self, kind: &str, requests: &[ObjectRef], verbose: bool) -> String {
        let mut notes = self.notes.clone();
        for part in &self.parts {
            part.revise_notes(kind, requests, &mut notes);
        }
        let mut out = String::new();
        self.write(&notes, !verbose, &mut out)
            .expect("writing to a String does not fail");
        out
    }

    fn write(&self, notes: &[String], brief: bool, out: &mut dyn fmt::Write) -> fmt::Result {
        for note in notes {
            writeln!(out, "note: {note}")?;
        }
        for part in &self.parts {
            part.write_text(brief, out)?;
        }
        Ok(())
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(&self.notes, false, f)
    }
}

impl Serialize for Explanation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for part in &self.parts {
            for (key, value) in part.members() {
                map.serialize_entry(key, value)?;
            }
        }
        map.serialize_entry("notes", &self.notes)?;
        map.end()
    }
}
