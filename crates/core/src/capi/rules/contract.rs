//! The contract's types, and the paths and helpers its tables share.

pub(crate) use crate::kube::kinds::KindMatch;
pub(crate) use crate::kube::kinds::{
    ANY_BOOTSTRAP, ANY_CONTROL_PLANE, ANY_INFRASTRUCTURE, MACHINE, MACHINE_DEPLOYMENT,
    MACHINE_POOL, MACHINE_SET,
};

/// How the parent of a child is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParentLink {
    /// The ownerReference with `controller: true` whose kind matches.
    ControllerOwner(KindMatch),
    /// An ownerReference without `controller: true` whose kind matches: CAPI
    /// creates InfraMachines and BootstrapConfigs owned by the MachineSet or
    /// control plane and only later makes the Machine their controller.
    NonControllerOwner(KindMatch),
    /// An ownerReference whose kind matches, with or without
    /// `controller: true`: a control plane creates its InfraMachines and
    /// BootstrapConfigs owned either way (Kairos sets the flag, the others
    /// do not), and CAPI's adoption removes the reference either way
    /// (`removeOnCreateOwnerRefs`, machine_controller_phases.go).
    AnyOwner(KindMatch),
    /// No ownerReference exists at create time: the Cluster named by the
    /// `cluster.x-k8s.io/cluster-name` label and its ClusterClass, for
    /// objects carrying `topology.cluster.x-k8s.io/owned`. The parent is the
    /// merged topology + class metadata ([`crate::capi::topology`]).
    Topology(TopologyEntry),
}

/// Which part of the Cluster topology a topology-owned child comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TopologyEntry {
    /// `spec.topology.controlPlane` + `ClusterClass.spec.controlPlane`.
    ControlPlane,
    /// `spec.topology.workers.machineDeployments[name]` + the class entry.
    MachineDeployment,
    /// `spec.topology.workers.machinePools[name]` + the class entry.
    MachinePool,
}

/// What flows along a rule: a string map (labels, annotations) or one
/// typed field (a timeout, `minReadySeconds`, a keyed list, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// A parent string map flowing into child string maps.
    Map(MapFlow),
    /// One parent field flowing into one child field (CAPI's in-place
    /// propagated fields); off with `capi.inPlaceFields: false`.
    Field(FieldFlow),
}

/// One parent map flowing into child maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MapFlow {
    /// Path of the string map in the parent.
    pub(crate) from: &'static [&'static str],
    /// Paths of the string maps in the child that receive it.
    pub(crate) to: &'static [&'static [&'static str]],
    /// Keys that never travel along this flow.
    pub(crate) never_copied: &'static [&'static str],
}

/// What one flow does with one parent key for one target map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyRule {
    /// The contract never copies this key along this flow.
    NeverCopied,
    /// A bookkeeping key of the child: the child keeps its value.
    Bookkeeping,
    /// The key flows with the parent's value.
    Copied,
}

impl MapFlow {
    /// The one place that decides whether `key` travels to a target map
    /// whose bookkeeping keys are `kept`; the plan and the explanation both
    /// ask here.
    pub(crate) fn rule_for(&self, key: &str, kept: &[&str]) -> KeyRule {
        if self.never_copied.contains(&key) {
            KeyRule::NeverCopied
        } else if kept.contains(&key) {
            KeyRule::Bookkeeping
        } else {
            KeyRule::Copied
        }
    }
}

/// How a field's value is written at one API version, and so how it is
/// compared and converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// v1beta1 `metav1.Duration`: Go duration text, compared by value.
    Duration,
    /// v1beta2 whole seconds (`*int32`), the same quantity as [`Unit::Duration`].
    Seconds,
    /// An `int32` count (`minReadySeconds`); 0 is a value.
    Integer,
    /// v1beta1 MachineSet `minReadySeconds`: a plain `int32` with
    /// `omitempty`, so 0 means absent and is never written.
    IntegerOmitZero,
    /// A string enum (`deletePolicy`, `deletion.order`); `""` is unset.
    Enum,
    /// An object taken whole (`machineNaming`).
    Object,
    /// A list map (`x-kubernetes-list-type: map`) with these key fields:
    /// each parent entry is asserted on the child, other entries stay.
    KeyedList(&'static [&'static str]),
}

/// Where a field lives in one API version of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// Path of the field.
    pub path: &'static [&'static str],
    /// How its value is written.
    pub unit: Unit,
}

/// A field's place in each API version; `None`: the version has no such
/// field, and a flow needing it does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ByVersion {
    /// `*.cluster.x-k8s.io/v1beta1`.
    pub(crate) v1beta1: Option<Endpoint>,
    /// `*.cluster.x-k8s.io/v1beta2`.
    pub(crate) v1beta2: Option<Endpoint>,
}

impl ByVersion {
    /// The field at API version `version` (`v1beta1`, `v1beta2`).
    pub(crate) fn at(&self, version: &str) -> Option<&Endpoint> {
        match version {
            "v1beta1" => self.v1beta1.as_ref(),
            "v1beta2" => self.v1beta2.as_ref(),
            _ => None,
        }
    }

    /// Every endpoint, oldest version first.
    pub(crate) fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.v1beta1.iter().chain(self.v1beta2.iter())
    }
}

/// One parent field flowing into one child field. The parent's path is
/// chosen by the parent's API version and the child's by the child's, so
/// a v1beta1 child of a v1beta2 parent converts seconds into a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldFlow {
    /// The field's name in messages (`nodeDrainTimeout`).
    pub(crate) field: &'static str,
    /// Where the parent holds it. For topology children: relative to the
    /// Cluster's topology entry and, with the same path, the ClusterClass
    /// entry (the resolver merges the two, topology first).
    pub from: ByVersion,
    /// Where the child holds it.
    pub to: ByVersion,
}

/// Keys the child's own controller sets after copying from the parent, so the
/// child's value (or absence) stands: the policy never writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bookkeeping {
    /// Label keys.
    pub(crate) labels: &'static [&'static str],
    /// Annotation keys.
    pub(crate) annotations: &'static [&'static str],
}

/// At which API version a parent's field paths are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAt {
    /// At the version the parent is read at.
    Version,
    /// By the parent's shape. A control plane's API version says nothing of
    /// its machine template's shape (k0smotron and Kairos keep the
    /// v1beta1-contract shape under a v1beta2 name), so its in-place fields
    /// are read where its object holds them: at the shape `known` gives
    /// its kind and version, else at `v1beta2` when the object has
    /// `probe`, at `v1beta1` otherwise.
    Shape {
        /// (kind, API version, the contract shape that version has), for
        /// the kinds whose versions name their shape: their look-ups ask
        /// for one shape's paths only.
        known: &'static [(&'static str, &'static str, &'static str)],
        /// The path only the v1beta2-contract shape has.
        probe: &'static [&'static str],
    },
}

impl ReadAt {
    /// The version whose paths a parent of `kind` read at `version` holds
    /// its fields at, when that is known before reading it.
    pub(crate) fn known_version<'v>(&self, kind: &str, version: &'v str) -> Option<&'v str> {
        match self {
            ReadAt::Version => Some(version),
            ReadAt::Shape { known, .. } => known
                .iter()
                .find(|(k, v, _)| *k == kind && *v == version)
                .map(|(_, _, shape)| *shape),
        }
    }

    /// The path that tells the two shapes apart, for a parent read by its
    /// shape.
    pub(crate) fn probe(&self) -> Option<&'static [&'static str]> {
        match self {
            ReadAt::Version => None,
            ReadAt::Shape { probe, .. } => Some(probe),
        }
    }

    /// The version whose paths hold the fields of `object`, a parent of
    /// `kind` read at `version`.
    pub(crate) fn version_of<'v>(
        &self,
        kind: &str,
        version: &'v str,
        object: &serde_json::Value,
    ) -> &'v str {
        let probed = || match self.probe() {
            Some(probe) if matches!(crate::json::fields::get(object, probe), Ok(Some(_))) => {
                "v1beta2"
            }
            _ => "v1beta1",
        };
        self.known_version(kind, version).unwrap_or_else(probed)
    }
}

/// One propagation path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rule {
    /// Family name used in messages ("MachineSet", "InfraMachine", ...).
    pub family: &'static str,
    /// Which children the rule applies to.
    pub child: KindMatch,
    /// How the parent is found.
    pub parent: ParentLink,
    /// What flows, in groups (the metadata maps, then the in-place fields).
    pub(crate) flows: &'static [&'static [Flow]],
    /// What the child keeps.
    pub(crate) bookkeeping: Bookkeeping,
    /// At which API version the parent's field paths are read.
    pub(crate) read_at: ReadAt,
    /// The CAPI function this row mirrors.
    pub(crate) upstream: &'static str,
}

/// An object's own labels (a Machine's are synced to its Node) and
/// annotations.
pub(crate) use crate::json::fields::{ANNOTATIONS, LABELS};
pub(super) const TEMPLATE_LABELS: &[&str] = &["spec", "template", "metadata", "labels"];
pub(super) const TEMPLATE_ANNOTATIONS: &[&str] = &["spec", "template", "metadata", "annotations"];
pub(super) const MACHINE_TEMPLATE_LABELS: &[&str] =
    &["spec", "machineTemplate", "metadata", "labels"];
pub(super) const MACHINE_TEMPLATE_ANNOTATIONS: &[&str] =
    &["spec", "machineTemplate", "metadata", "annotations"];
/// A control plane's machine template in the v1beta2-contract shape:
/// `spec.machineTemplate.spec.infrastructureRef`, which that contract
/// requires of every control plane whose machines CAPI manages (the Cluster
/// API v1.14 book's control-plane contract, "ControlPlane: machines"); the
/// v1beta1 shape holds `spec.machineTemplate.infrastructureRef`.
pub(super) const MACHINE_TEMPLATE_SPEC_PROBE: &[&str] =
    &["spec", "machineTemplate", "spec", "infrastructureRef"];

/// MachineDeployment annotations never copied to MachineSets
/// (mdutil `annotationsToSkip`, identical in v1.6 and v1.14).
pub(crate) const MD_ANNOTATIONS_TO_SKIP: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "machinedeployment.clusters.x-k8s.io/revision",
    "machinedeployment.clusters.x-k8s.io/revision-history",
    "machinedeployment.clusters.x-k8s.io/desired-replicas",
    "machinedeployment.clusters.x-k8s.io/max-replicas",
    "cluster.x-k8s.io/conversion-data",
];

/// Topology annotations a MachineDeployment or MachinePool never receives
/// (`computeMachineDeployment` and `computeMachinePool` delete them, v1.14
/// desired_state.go).
pub(crate) const TOPOLOGY_UPGRADE_ANNOTATIONS: &[&str] = &[
    "topology.cluster.x-k8s.io/hold-upgrade-sequence",
    "topology.cluster.x-k8s.io/defer-upgrade",
];

/// Keys of the synthetic parent the topology resolver builds.
pub(crate) mod merged {
    /// Merged topology + class labels.
    pub(crate) const LABELS: &[&str] = &["labels"];
    /// Merged topology + class annotations.
    pub(crate) const ANNOTATIONS: &[&str] = &["annotations"];
    /// Present only when the ClusterClass has `controlPlane.machineInfrastructure`.
    pub(crate) const MACHINE_TEMPLATE_LABELS: &[&str] = &["machineTemplate", "labels"];
    /// Present only when the ClusterClass has `controlPlane.machineInfrastructure`.
    pub(crate) const MACHINE_TEMPLATE_ANNOTATIONS: &[&str] = &["machineTemplate", "annotations"];
}

pub(super) const fn at(path: &'static [&'static str], unit: Unit) -> Option<Endpoint> {
    Some(Endpoint { path, unit })
}

/// A field with the same path and unit in both API versions.
pub(super) const fn same(path: &'static [&'static str], unit: Unit) -> ByVersion {
    ByVersion {
        v1beta1: at(path, unit),
        v1beta2: at(path, unit),
    }
}

pub(super) const fn field(field: &'static str, from: ByVersion, to: ByVersion) -> Flow {
    Flow::Field(FieldFlow { field, from, to })
}

/// `readinessGates` entries are keyed by `conditionType`.
pub(crate) const READINESS_GATE_KEYS: &[&str] = &["conditionType"];
/// `taints` entries are keyed by `key` and `effect`.
pub(crate) const TAINT_KEYS: &[&str] = &["key", "effect"];
pub(super) const GATES: Unit = Unit::KeyedList(READINESS_GATE_KEYS);
pub(super) const TAINTS: Unit = Unit::KeyedList(TAINT_KEYS);

/// Where each kind carries the labels of the Machines it creates, for the
/// Node-sync warnings (the Machine itself carries them on its own metadata).
pub(crate) const NODE_BOUND_LABELS: &[(KindMatch, &[&str])] = &[
    (MACHINE, LABELS),
    (MACHINE_DEPLOYMENT, TEMPLATE_LABELS),
    (MACHINE_SET, TEMPLATE_LABELS),
    (ANY_CONTROL_PLANE, MACHINE_TEMPLATE_LABELS),
];

impl Bookkeeping {
    /// The bookkeeping keys for a child map: `metadata.labels` and
    /// `spec.template.metadata.labels` hold labels, the other maps a rule
    /// writes hold annotations. Asked only for map flows' targets.
    pub(crate) fn for_map(&self, path: &[&str]) -> &'static [&'static str] {
        match path.last() {
            Some(&"labels") => self.labels,
            Some(&"annotations") => self.annotations,
            _ => &[],
        }
    }
}

impl Rule {
    /// Every flow of the rule, maps first.
    pub(crate) fn flows(&self) -> impl Iterator<Item = &'static Flow> + use<> {
        self.flows.iter().flat_map(|group| group.iter())
    }
}
