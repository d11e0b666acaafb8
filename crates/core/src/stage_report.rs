//! What a stage hands back through its door: one shape for the CAPI rules
//! and the cloud tags, so that the decision joins the two without knowing
//! either.

use crate::error::Error;
use std::collections::BTreeMap;

/// What a stage reports besides the edits it adds to the plan.
#[derive(Debug, Default)]
pub(crate) struct Reported {
    /// Admission warnings, in the stage's order.
    pub(crate) warnings: Vec<String>,
    /// Audit annotations (a Machine's Node sync).
    pub(crate) audit_annotations: BTreeMap<String, String>,
    /// Validate mode reports the stage's deviations as a warning instead
    /// of refusing the request: a managed resource's UPDATE, which
    /// Crossplane's provider makes and which must never be refused.
    pub(crate) deviation_warns: bool,
}

/// A stage's answer: what it reports, or why it rejects the object, and,
/// when the caller asked, its record of what it decided (`T`, which the
/// explanation renders): on a rejection, what the stage had decided before
/// it (the CAPI rules' flows up to a malformed parent field), or nothing.
pub(crate) struct StageReport<T> {
    /// The report, or the rejection.
    pub(crate) reported: Result<Reported, Error>,
    /// The record, when asked for.
    pub(crate) trace: Option<T>,
}
