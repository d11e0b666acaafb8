//! What one evaluation decided, independent of how it reaches the host.

use crate::request::plan::Plan;
use std::collections::BTreeMap;

/// The decision on a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed; the plan lists the changes to make (empty: allowed unchanged).
    Allow(Plan),
    /// Rejected with a message for the user.
    Reject {
        /// What is wrong and how to fix it.
        message: String,
        /// HTTP-style status code (400 bad object, 500 infrastructure).
        code: u16,
    },
}

/// A decision plus what is reported next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Allow (with changes) or reject.
    pub verdict: Verdict,
    /// Admission warnings, in a stable order.
    pub warnings: Vec<String>,
    /// Audit annotations (sorted by key).
    pub audit_annotations: BTreeMap<String, String>,
    /// Validate mode: the plan it refused to apply, from which its
    /// rejection (or, where a deviation must not refuse, its warning) was
    /// rendered (what mutate mode would change). Kept so that
    /// tools (the audit) render the patch from the same decision instead of
    /// evaluating again; the host never sees it.
    pub refused_plan: Option<Plan>,
}

impl Outcome {
    /// Allowed, unchanged, nothing to report.
    pub(crate) fn allow() -> Self {
        Self::with_plan(Plan::default())
    }

    /// Allowed with the changes in `plan`.
    pub(crate) fn with_plan(plan: Plan) -> Self {
        Self {
            verdict: Verdict::Allow(plan),
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
            refused_plan: None,
        }
    }

    /// Rejected: the object itself is wrong (400).
    pub(crate) fn reject(message: impl Into<String>) -> Self {
        Self::reject_with_code(message, 400)
    }

    /// Rejected with an explicit code.
    pub(crate) fn reject_with_code(message: impl Into<String>, code: u16) -> Self {
        Self {
            verdict: Verdict::Reject {
                message: message.into(),
                code,
            },
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
            refused_plan: None,
        }
    }
}
