//! Cluster API metadata propagation at admission time.
//!
//! For a child object, find the first rule (`rules::CAPI_RULES`) whose parent
//! link applies, read the parent through [`crate::request::lookup::Lookup`] (at most one look-up per
//! parent object; none when no rule applies), and plan the flows: parent keys
//! are added or corrected on the child, nothing is removed, and the child's
//! bookkeeping keys are never written; the in-place fields the parent sets
//! (`in_place`) are made the child's, compared by meaning. Machines also report which keys CAPI
//! will sync to their Node, and Machine templates warn about Kubernetes
//! labels that will never reach a Node.

pub(crate) mod key_pattern;

mod child_kind;
pub(crate) mod explained;
mod go_regex;
pub(crate) mod in_place;
mod malformed;
pub(crate) mod node_sync;
pub(crate) mod owner_link;
mod parent;
mod parent_paths;
mod propagation_settings;
mod resolve;
pub(crate) mod rules;
pub(crate) mod topology;

use crate::error::Error;
use crate::explain::ExplanationPart;
use crate::json::fields;
use crate::kube::owners::owner_refs;
use crate::request::AdmissionRequest;
use crate::request::lookup::ObjectRef;
use crate::request::plan::{MapEdit, Plan};
use crate::request::reads::Need;
use crate::request::reads::Reads;
use crate::stage::{Declared, Reported, Stage, StageForKind, StageReport, StageTrace};
pub(crate) use child_kind::ChildKind;
use explained::propagation_trace::MapStep;
pub(crate) use explained::propagation_trace::Trace;
pub(crate) use explained::propagation_why::render;
use in_place::{FieldDecision, MalformedIn};
use malformed::malformed;
use parent::Parent;
pub(crate) use resolve::Located;
use resolve::locate;
use resolve::{Resolved, resolve_parent};
use rules::{FieldFlow, Flow, KeyRule, MapFlow, Rule};
use serde_json::Value;

pub(crate) use crate::kube::kinds::is_capi_group;

/// The ClusterClass (name, namespace) a Cluster's topology names, read as
/// the Cluster's own API version keeps it (`spec.topology.class` and
/// `classNamespace` in v1beta1, `spec.topology.classRef` in v1beta2); the
/// namespace defaults to the Cluster's. `None` when the Cluster names no
/// class, at an API version the policy does not read, or malformed.
pub fn cluster_class(cluster: &Value) -> Option<(&str, &str)> {
    let api_version = cluster["apiVersion"].as_str()?;
    let shape = (topology::SHAPES.iter()).find(|s| s.api_version == api_version)?;
    let namespace = cluster["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    topology::class_ref(shape, cluster, namespace).ok()?
}

/// The Cluster an object belongs to by its `cluster.x-k8s.io/cluster-name`
/// label, for the objects CAPI ties to their Cluster that way: those the
/// Cluster's topology controller owns (`topology.cluster.x-k8s.io/owned`)
/// and infrastructure objects (`infrastructure.cluster.x-k8s.io`).
pub fn labelled_cluster(object: &Value) -> Option<&str> {
    let labels = &object["metadata"]["labels"];
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let infrastructure =
        crate::kube::api_version::group(api_version) == "infrastructure.cluster.x-k8s.io";
    if !infrastructure && labels.get(topology::TOPOLOGY_OWNED_LABEL).is_none() {
        return None;
    }
    labels[topology::CLUSTER_NAME_LABEL].as_str()
}

/// Each owner the object's `metadata.ownerReferences` name, as the object
/// to read (in the object's namespace, where CAPI's owners are), and
/// whether it is the controller. None when the references are malformed:
/// the policy refuses such an object, naming the entry.
pub fn owners(object: &Value) -> Vec<(ObjectRef, bool)> {
    let namespace = object["metadata"]["namespace"].as_str();
    let owners = owner_refs(object).unwrap_or_default();
    (owners.into_iter())
        .map(|owner| (owner.object_ref(namespace), owner.controller))
        .collect()
}
pub(crate) use propagation_settings::{CapiSettings, RawCapiSettings};

/// The CAPI stage as it stands for one request's kind (`child`, found when
/// the request was routed) under the `capi` section.
pub(crate) struct CapiForKind<'r> {
    child: ChildKind,
    settings: &'r CapiSettings,
}

/// The CAPI stage for a kind the rules act on.
pub(crate) fn for_kind(child: ChildKind, settings: &CapiSettings) -> CapiForKind<'_> {
    CapiForKind { child, settings }
}

impl<'r> StageForKind<'r> for CapiForKind<'r> {
    type Stage = CapiStage<'r>;
    type Explained = explained::key_fates::CapiExplanation;

    /// The object's kind and metadata, and its rules' paths, under any
    /// settings; nothing of an old object. Each rule's parent: an owner
    /// of the kinds it names, or the topology's Cluster and ClusterClass,
    /// through every path the rule may read of it.
    fn reads<'a>(&'a self, reads: &mut Declared<'a>) {
        reads.object(self.child.object_paths());
        if reads.declaring_lookups() {
            let in_place = self.settings.in_place_fields();
            parent_paths::declare_lookups(self.child.rules(), in_place, reads);
        }
    }

    fn needs(&self, request: &'r AdmissionRequest) -> Result<Option<CapiStage<'r>>, Error> {
        let located = needs(request, self.child, self.settings)?;
        let stage = CapiStage {
            located,
            child: self.child,
            settings: self.settings,
        };
        Ok(Some(stage))
    }
}

/// The CAPI stage from its `needs` on.
pub(crate) struct CapiStage<'r> {
    located: Located<'r>,
    child: ChildKind,
    settings: &'r CapiSettings,
}

/// The second half of the stage's door: plans the metadata and in-place
/// fields of one Cluster API object (its `needs` read into `reads`) into
/// `plan`, and returns what it reports, or why it rejects the object; with
/// it, when `traced` asks, what it decided ([`Trace`]), up to the
/// rejection if there is one.
impl<'r> Stage<'r> for CapiStage<'r> {
    fn first(&self) -> Option<Need<'_>> {
        self.located.first()
    }

    fn then(&mut self, reads: &Reads) -> Option<Need<'_>> {
        self.located.then(reads)
    }

    fn decide(
        self,
        request: &'r AdmissionRequest,
        reads: &mut Reads,
        plan: &mut Plan,
        traced: bool,
    ) -> StageReport<'r> {
        let CapiStage {
            located,
            child,
            settings,
        } = self;
        let resolved = match resolve_parent(request, located, reads) {
            Ok(resolved) => resolved,
            Err(error) => return StageReport::rejected(error),
        };
        let mut trace = Trace {
            resolved,
            maps: Vec::new(),
            fields: Vec::new(),
            node_sync: None,
        };
        let reported = plan_flows(request, child, settings, plan, &mut trace, traced);
        StageReport::with_trace(reported, traced.then_some(trace))
    }
}

impl StageTrace for Trace<'_> {
    fn render(
        self: Box<Self>,
        request: &AdmissionRequest,
        notes: &mut Vec<String>,
    ) -> Box<dyn ExplanationPart> {
        let mut part = explained::key_fates::CapiExplanation::default();
        render(*self, &request.object, &mut part, notes);
        Box::new(part)
    }
}

/// What the CAPI stage reads of the cluster for `request`, named before
/// any look-up: the rule that applies and the parent (or Cluster topology)
/// it reads first, at the version it reads it. Checks first what every
/// path reads of the object itself ([`check`]), so that an object at fault
/// is refused with 400 before any look-up could fail retryably (500).
fn needs<'r>(
    request: &'r AdmissionRequest,
    child: ChildKind,
    settings: &CapiSettings,
) -> Result<Located<'r>, Error> {
    let namespace = check(request)?;
    locate(
        request,
        child.rules(),
        namespace,
        settings.in_place_fields(),
    )
}

/// Checks what every path reads of a Cluster API object, before any look-up
/// is spent, and returns its namespace: its own labels and annotations are
/// read the same way whether or not a rule applies to them, and a
/// non-string value is rejected (docs/bad-input.md).
fn check(request: &AdmissionRequest) -> Result<&str, Error> {
    let namespace = request.object_namespace()?;
    for path in [fields::LABELS, fields::ANNOTATIONS] {
        fields::check_string_map(&request.object, path)?;
    }
    Ok(namespace)
}

/// The decision once the parent is resolved (`trace.resolved`): records
/// into `trace` what it decides when `traced` asks.
fn plan_flows<'r>(
    request: &'r AdmissionRequest,
    child: ChildKind,
    settings: &CapiSettings,
    plan: &mut Plan,
    trace: &mut Trace<'r>,
    traced: bool,
) -> Result<Reported, Error> {
    let object = &request.object;
    let in_place = settings.in_place_fields();
    let mut reported = Reported::default();
    if let Resolved::Parent(rule, parent) = &trace.resolved {
        let kind = &request.kind;
        let (version, lacks) = (kind.version.as_str(), lacked_by_child(request));
        let target = Target { object, lacks };
        let mut decisions = Vec::new();
        for flow in rule.flows() {
            match flow {
                Flow::Map(flow) => {
                    let steps = plan_map(rule, parent, flow, &target, plan, traced)?;
                    trace.maps.extend(steps);
                }
                Flow::Field(field)
                    if in_place
                        && (field.to.at(version))
                            .is_some_and(|to| !rules::is_lacked(lacks, to.path)) =>
                {
                    plan_field(rule, parent, field, request, &mut decisions, plan)?;
                    let removals = decisions.iter().filter_map(FieldDecision::removal_warning);
                    reported.warnings.extend(removals);
                    if traced {
                        trace.fields.append(&mut decisions);
                    }
                }
                Flow::Field(_) => {}
            }
        }
    }

    // A Machine's own labels are both checked here and synced below: built
    // once.
    let mut own_labels = None;
    if let Some(path) = child.node_bound {
        let labels = plan.resulting_map(object, path)?;
        reported.warnings.extend(node_sync::unsynced_label_warnings(
            &labels,
            &path.join("."),
            || settings.sync_machine_labels(),
        )?);
        if path == rules::LABELS {
            own_labels = Some(labels);
        }
    }
    if child.machine {
        let labels = match own_labels {
            Some(labels) => labels,
            None => plan.resulting_map(object, rules::LABELS)?,
        };
        let annotations = plan.resulting_map(object, fields::ANNOTATIONS)?;
        let (label_regexes, annotation_regexes) = (
            settings.sync_machine_labels()?,
            settings.sync_machine_annotations()?,
        );
        reported.audit_annotations =
            node_sync::audit_annotations(&labels, &annotations, label_regexes, annotation_regexes);
        trace.node_sync = traced.then(|| {
            explained::propagation_why::node_sync(
                &labels,
                &annotations,
                label_regexes,
                annotation_regexes,
            )
        });
    }
    Ok(reported)
}

/// The paths the request's kind, at its version, has no field under: the
/// API server would drop what is written there, so nothing is
/// (capi/rules/schema_gaps.rs).
fn lacked_by_child(request: &AdmissionRequest) -> &'static [&'static [&'static str]] {
    let kind = &request.kind;
    rules::lacked_by(&kind.group, &kind.kind, &kind.version)
}

/// The object a rule's flows write to, and the paths its CRD lacks, which
/// they leave alone.
struct Target<'r> {
    object: &'r Value,
    lacks: &'static [&'static [&'static str]],
}

/// Plans one map flow: the parent's keys into each target map of the
/// child its CRD holds; returns what it decided for each map when `trace`
/// asks.
fn plan_map(
    rule: &Rule,
    parent: &Parent,
    flow: &'static MapFlow,
    target: &Target<'_>,
    plan: &mut Plan,
    trace: bool,
) -> Result<Vec<MapStep>, Error> {
    let object = target.object;
    let source = fields::string_map(&parent.object, flow.from)
        .map_err(|error| malformed(rule, &parent.reference, error))?;
    let mut steps = Vec::new();
    for &to in flow
        .to
        .iter()
        .filter(|to| !rules::is_lacked(target.lacks, to))
    {
        let kept = rule.bookkeeping.for_map(to);
        let current = fields::string_map(object, to)?;
        // Each offered key's rule is decided here, once; the edit records
        // what it adds and corrects, and the trace both.
        let offered: Vec<_> = source
            .iter()
            .map(|(&key, &value)| (key, value, flow.rule_for(key, kept)))
            .collect();
        let copied = offered
            .iter()
            .filter(|(_, _, key_rule)| *key_rule == KeyRule::Copied)
            .map(|&(key, value, _)| (key, value));
        let edit = MapEdit::upsert(to, &current, copied);
        if trace {
            steps.push(MapStep::record(flow, to, &offered, &current, &edit));
        }
        plan.push(edit);
    }
    Ok(steps)
}

/// Plans one in-place field flow (a field, or each entry of a keyed list).
/// `decisions` is scratch space reused across the rule's field flows; it
/// holds this flow's decisions on return.
fn plan_field<'a>(
    rule: &Rule,
    parent: &Parent,
    field: &'static FieldFlow,
    request: &'a AdmissionRequest,
    decisions: &mut Vec<FieldDecision<'a>>,
    plan: &mut Plan,
) -> Result<(), Error> {
    decisions.clear();
    in_place::decide(
        field,
        &parent.object,
        &parent.version,
        &request.object,
        &request.kind.version,
        decisions,
    )
    .map_err(|error| match error {
        MalformedIn::Parent(error) => parent.malformed(rule, error),
        MalformedIn::Child(error) => Error::from(error),
    })?;
    for decision in decisions.iter() {
        if let Some(edit) = decision.edit(|from| parent.source(from)) {
            plan.push(edit);
        }
    }
    Ok(())
}
