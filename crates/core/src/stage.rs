//! The door every stage of the decision goes through, one shape for all:
//! what a stage reads of the object (declared before the object is
//! decoded), what it reads of the cluster (its `needs`, named before any
//! look-up), and its decision over what was read, with what it reports
//! and, when asked, its record for the explanation. The decision runs the
//! stages as a list (`evaluate/stage_list.rs`: a row a stage) and knows
//! nothing else of them.

use crate::error::Error;
use crate::explain::{Explanation, ExplanationPart};
use crate::json::projection::Projection;
use crate::request::AdmissionRequest;
use crate::request::plan::Plan;
use crate::request::reads::{Need, Reads};
use std::collections::BTreeMap;

/// A stage as it stands for one request's kind and the settings, before
/// the object is decoded. What it reads of the object is declared here and
/// nowhere else: the wire decodes those paths and passes the rest through
/// as text.
pub(crate) trait StageForKind<'r> {
    /// The stage from its `needs` on.
    type Stage: Stage<'r>;

    /// The stage's part of an explanation, empty until its record is
    /// rendered into it ([`StageTrace::render`]).
    type Explained: ExplanationPart + Default;

    /// Keeps the paths of the object the stage reads or writes in
    /// `projection`.
    fn object_paths<'a>(&'a self, projection: &mut Projection<'a>);

    /// Keeps the paths of an UPDATE's old object the stage reads in
    /// `projection`.
    fn old_object_paths<'a>(&'a self, _projection: &mut Projection<'a>) {}

    /// Whether what the stage declares under the default settings (what
    /// the wire splits the object through while it reads the payload,
    /// before the settings) covers its [`StageForKind::object_paths`] under
    /// these settings.
    fn covered_by_default(&self) -> bool {
        true
    }

    /// What the stage reads of the cluster for `request`, named before any
    /// look-up, after what it reads of the object itself (an object at
    /// fault is refused before a look-up); `None`: the stage has nothing
    /// to do with the request.
    fn needs(&self, request: &'r AdmissionRequest) -> Result<Option<Self::Stage>, Error>;
}

/// A stage from its `needs` on: what it reads of the cluster, in two rounds
/// (the object the request names, then one named by what that answered),
/// then its decision over what was read. The decision reads every stage's
/// first round, then every stage's second, so an object two stages name is
/// read once.
pub(crate) trait Stage<'r> {
    /// The object the request names, if the stage reads one.
    fn first(&self) -> Option<Need<'_>>;

    /// The object the first round's answers name, if the stage reads one.
    fn then(&mut self, _reads: &Reads) -> Option<Need<'_>> {
        None
    }

    /// Adds the stage's edits of `request`'s object to `plan`, over what
    /// the stages before it planned, from what `reads` holds; returns what
    /// it reports, or why it rejects the object, and, when `traced` asks,
    /// its record.
    fn decide(
        self,
        request: &'r AdmissionRequest,
        reads: &mut Reads,
        plan: &mut Plan,
        traced: bool,
    ) -> StageReport<'r>;
}

/// What a stage decided, for the explanation: rendered into it, after the
/// records of the stages before it.
pub(crate) trait StageTrace {
    /// Puts the record into `explanation`, in words.
    fn render(self: Box<Self>, request: &AdmissionRequest, explanation: &mut Explanation);
}

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
/// when the caller asked, its record of what it decided: on a rejection,
/// what the stage had decided before it (the CAPI rules' flows up to a
/// malformed parent field), or nothing.
pub(crate) struct StageReport<'r> {
    /// The report, or the rejection.
    pub(crate) reported: Result<Reported, Error>,
    /// The record, when asked for.
    pub(crate) trace: Option<Box<dyn StageTrace + 'r>>,
}

impl<'r> StageReport<'r> {
    /// The report of a stage that rejects the object before it decided
    /// anything.
    pub(crate) fn rejected(error: Error) -> Self {
        Self {
            reported: Err(error),
            trace: None,
        }
    }

    /// `reported`, with `trace` when there is one.
    pub(crate) fn with_trace<T: StageTrace + 'r>(
        reported: Result<Reported, Error>,
        trace: Option<T>,
    ) -> Self {
        Self {
            reported,
            trace: trace.map(|trace| Box::new(trace) as Box<dyn StageTrace + 'r>),
        }
    }
}
