//! The door every stage of the decision goes through, one shape for all:
//! what a stage reads of the object (declared before the object is
//! decoded), what it reads of the cluster (its `needs`, named before any
//! look-up), and its decision over what was read, with what it reports
//! and, when asked, its record for the explanation. The decision runs the
//! stages as a list (`evaluate/stage_list.rs`: a row a stage) and knows
//! nothing else of them.

use crate::error::Error;
use crate::explain::ExplanationPart;
use crate::json::projection::Projection;
use crate::kube::kinds::is_capi_group;
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

    /// The stage's part of an explanation, empty when the stage kept no
    /// record; its record renders one ([`StageTrace::render`]).
    type Explained: ExplanationPart + Default;

    /// Declares, in `reads`, every path of the request's object and old
    /// object the stage reads or writes, and every object it may look up,
    /// with its mask: the one place that says so, for every row and every
    /// setting.
    fn reads<'a>(&'a self, reads: &mut Declared<'a>);

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

/// What a stage decided, for the explanation: rendered after the records
/// of the stages before it, into the stage's own part, at the stage's
/// place in the list.
pub(crate) trait StageTrace {
    /// The record in words: the stage's part of the explanation, and the
    /// notes on the whole object it adds to `notes`.
    fn render(
        self: Box<Self>,
        request: &AdmissionRequest,
        notes: &mut Vec<String>,
    ) -> Box<dyn ExplanationPart>;
}

/// Which part of its reads a stage's [`StageForKind::reads`] is asked for:
/// every stage is asked the same, and keeps only what is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The paths of the object.
    Object,
    /// The paths of an UPDATE's old object.
    OldObject,
    /// Only whether the settings name paths of the object beyond those a
    /// stage reads before the settings are known.
    BySettings,
    /// The objects a stage may look up, and what of each.
    Lookups,
}

/// An object a stage may look up, by its group and kind, and the mask it
/// reads it through: what an audit that lists the cluster keeps of each
/// possible parent, and what the tests hold every look-up to.
#[derive(Debug, Clone)]
pub struct DeclaredLookup {
    /// The API groups it may be of.
    pub group: LookupGroup,
    /// Its kind; `None`: any kind of those groups.
    pub kind: Option<&'static str>,
    /// The mask, as paths kept whole.
    pub projection: Projection<'static>,
}

/// The API groups a declared look-up's object may be of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupGroup {
    /// This group (a CAPI parent, a Cluster).
    Named(&'static str),
    /// Any group but Cluster API's (`kube::kinds::is_capi_group`): a
    /// managed resource's composite resource, of a user's XRD, which is
    /// never a Cluster API object.
    AnyButClusterApi,
}

impl LookupGroup {
    /// Whether an object of `group` may be one it names.
    pub fn names(self, group: &str) -> bool {
        match self {
            LookupGroup::Named(named) => named == group,
            LookupGroup::AnyButClusterApi => !is_capi_group(group),
        }
    }
}

impl DeclaredLookup {
    /// Whether an object of `group` and `kind` is one it names.
    pub fn names(&self, group: &str, kind: &str) -> bool {
        self.group.names(group) && self.kind.is_none_or(|k| k == kind)
    }
}

/// What the stages declare they read of one part of a request
/// ([`StageForKind::reads`]).
pub(crate) struct Declared<'a> {
    part: Part,
    projection: Projection<'a>,
    by_settings: bool,
    lookups: Vec<DeclaredLookup>,
}

impl<'a> Declared<'a> {
    /// Nothing yet, of `part`.
    pub(crate) fn of(part: Part) -> Self {
        Self {
            part,
            projection: Projection::default(),
            by_settings: false,
            lookups: Vec::new(),
        }
    }

    /// An object of `group` and `kind` (`None`: any of the groups) the
    /// stage may look up, through the mask `projection`; a stage declares
    /// its look-ups only when [`Declared::declaring_lookups`] (the
    /// admission path never builds their masks).
    pub(crate) fn lookup(
        &mut self,
        group: LookupGroup,
        kind: Option<&'static str>,
        projection: Projection<'static>,
    ) {
        if self.part == Part::Lookups {
            self.lookups.push(DeclaredLookup {
                group,
                kind,
                projection,
            });
        }
    }

    /// Whether the stages are asked what they may look up: a stage builds
    /// its masks only then.
    pub(crate) fn declaring_lookups(&self) -> bool {
        self.part == Part::Lookups
    }

    /// What the stages declared they may look up.
    pub(crate) fn into_lookups(self) -> Vec<DeclaredLookup> {
        self.lookups
    }

    /// Paths of the object the stage reads whatever the settings say, or
    /// that the settings may only leave out.
    pub(crate) fn object<'p, 's: 'p + 'a>(
        &mut self,
        paths: impl IntoIterator<Item = &'p [&'s str]>,
    ) {
        if self.part == Part::Object {
            self.projection.keep_all(paths);
        }
    }

    /// A path of the object the stage reads, of `segments`.
    pub(crate) fn object_path(&mut self, segments: impl IntoIterator<Item = &'a str>) {
        if self.part == Part::Object {
            self.projection.keep(segments);
        }
    }

    /// Paths of the object that only the settings name (a moved provider,
    /// a managed resource's tag field), and none for a kind the settings
    /// may make the stage read more of: what the wire splits before the
    /// settings are known cannot hold them.
    pub(crate) fn object_by_settings(
        &mut self,
        paths: impl IntoIterator<Item = impl IntoIterator<Item = &'a str>>,
    ) {
        self.by_settings = true;
        if self.part == Part::Object {
            for path in paths {
                self.projection.keep(path);
            }
        }
    }

    /// A path of the old object, of `segments`, when `read` says the stage
    /// reads it (asked only of the old object's declaration).
    pub(crate) fn old_object(
        &mut self,
        read: impl FnOnce() -> bool,
        segments: impl IntoIterator<Item = &'a str>,
    ) {
        if self.part == Part::OldObject && read() {
            self.projection.keep(segments);
        }
    }

    /// Whether a stage declared paths only the settings name.
    pub(crate) fn by_settings(&self) -> bool {
        self.by_settings
    }

    /// What the stages declared of the part.
    pub(crate) fn into_projection(self) -> Projection<'a> {
        self.projection
    }
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

#[cfg(test)]
mod tests {
    use super::LookupGroup::{AnyButClusterApi, Named};

    #[test]
    fn a_composite_resource_is_of_any_group_but_cluster_apis() {
        for group in ["platform.example.org", "", "apps", "addons.x-k8s.io"] {
            assert!(AnyButClusterApi.names(group), "{group}");
        }
        for group in ["cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"] {
            assert!(!AnyButClusterApi.names(group), "{group}");
        }
        assert!(Named("cluster.x-k8s.io").names("cluster.x-k8s.io"));
        assert!(!Named("cluster.x-k8s.io").names("controlplane.cluster.x-k8s.io"));
    }
}
