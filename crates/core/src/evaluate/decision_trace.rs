//! What one decision did, step by step, as the stages returned it:
//! [`crate::evaluate::explain`] renders it into an [`Explanation`]. The
//! admission path asks for no trace, so it pays nothing for one.

use crate::explain::Explanation;
use crate::outcome::Outcome;
use crate::request::AdmissionRequest;
use crate::{capi, tags};

/// The decision's record.
#[derive(Default)]
pub(super) struct Trace<'r> {
    /// Whether the caller asked for the record: the stages keep theirs
    /// only then.
    pub(super) wanted: bool,
    /// Set when the request was allowed before any stage ran.
    pub(super) passed: Option<Passed>,
    /// The CAPI stage's decisions.
    pub(super) capi: Option<capi::Trace<'r>>,
    /// The tags stage's decisions (or, for an adopted object whose tag
    /// field could not be read, that it was left as submitted).
    pub(super) tags: Option<tags::Trace<'r>>,
}

/// Why a request was allowed before any stage ran; its warnings are the
/// outcome's.
pub(super) enum Passed {
    /// Not a write, not an object, or a kind no rule acts on.
    NotActedOn,
    /// A kind outside Cluster API's groups without a composite resource's
    /// shape.
    NotAComposite,
    /// An object of a managed-resource family the settings turn on that
    /// has no tag field.
    Untagged,
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
        let mut explanation = Explanation::default();
        if let Some(Passed::NotActedOn) = self.passed {
            if !request.is_write() {
                explanation.notes.push(format!(
                    "{} requests are allowed unchanged",
                    request.operation
                ));
            } else if outcome.warnings.is_empty() {
                explanation.notes.push(format!(
                    "no propagation rule applies to a {}: allowed unchanged",
                    request.kind.kind
                ));
            }
        }
        if let Some(Passed::Untagged) = self.passed {
            explanation.notes.push(format!(
                "{} ({}) is of a managed-resource family cloudTags.managedResources turns on, \
                 but has no tag field in the catalogue or the settings: allowed unchanged",
                request.kind.kind, request.kind.group
            ));
        }
        if let Some(trace) = self.capi {
            capi::render(trace, &request.object, &mut explanation);
        }
        if let Some(trace) = self.tags {
            tags::render(trace, request, &mut explanation);
        }
        explanation
    }
}
