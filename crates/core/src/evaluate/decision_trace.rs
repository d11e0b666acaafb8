//! What one decision did, step by step, as the stages returned it:
//! [`crate::evaluate::explain`] renders it into an [`Explanation`]. The
//! admission path asks for no trace, so it pays nothing for one.

use super::stage_list::unexplained;
use crate::explain::Explanation;
use crate::request::AdmissionRequest;
use crate::request::outcome::Outcome;
use crate::stage::StageTrace;

/// The decision's record.
#[derive(Default)]
pub(super) struct Trace<'r> {
    /// Whether the caller asked for the record: the stages keep theirs
    /// only then.
    pub(super) wanted: bool,
    /// Allowed before any stage ran: not a write, not an object, or a
    /// kind no stage acts on (its warnings are the outcome's).
    pub(super) not_acted_on: bool,
    /// Each stage's decisions, in the order the stages decided, with the
    /// stage's place in the list.
    pub(super) stages: Vec<(usize, Box<dyn StageTrace + 'r>)>,
}

impl Trace<'_> {
    /// An empty record, kept only when `wanted`.
    pub(super) fn new(wanted: bool) -> Self {
        Self {
            wanted,
            ..Self::default()
        }
    }

    /// The explanation of `outcome`, the decision on `request` this trace
    /// records. Every reader of an explanation shows the outcome's warnings
    /// beside it, so a note never repeats one: a kind the policy warns of
    /// gets its warning only.
    pub(super) fn render(self, request: &AdmissionRequest, outcome: &Outcome) -> Explanation {
        let mut parts = unexplained();
        let mut notes = Vec::new();
        if self.not_acted_on {
            if !request.is_write() {
                notes.push(format!(
                    "{} requests are allowed unchanged",
                    request.operation
                ));
            } else if outcome.warnings.is_empty() {
                notes.push(format!(
                    "no propagation rule applies to a {}: allowed unchanged",
                    request.kind.kind
                ));
            }
        }
        for (at, trace) in self.stages {
            parts[at] = trace.render(request, &mut notes);
        }
        Explanation::new(parts, notes)
    }
}
