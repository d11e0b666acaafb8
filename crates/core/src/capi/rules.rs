//! The CAPI metadata-propagation contract as a table.
//!
//! One [`Rule`] per (child family, parent kind): how the parent is found,
//! which parent maps flow to which child maps, which keys never travel,
//! which bookkeeping keys the child keeps, and which in-place fields
//! (timeouts, `minReadySeconds`, readiness gates, taints, deletion order,
//! machine naming) flow. Each row names the CAPI function it mirrors.
//!
//! Map flows hold the same paths in v1beta1 and v1beta2. A [`FieldFlow`]
//! names its place in each API version ([`ByVersion`]), because v1beta2
//! moved and retyped these fields (v1beta1 `spec.nodeDrainTimeout: "5m"`,
//! v1beta2 `spec.deletion.nodeDrainTimeoutSeconds: 300`). The versioned
//! differences of the topology look-ups (Cluster → ClusterClass references,
//! class metadata paths) are rows of [`super::topology::SHAPES`].

/// A set of kinds: one kind of a group, or every kind of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindMatch {
    /// API group.
    pub group: &'static str,
    /// Kind, or `None` for any kind of the group.
    pub kind: Option<&'static str>,
}

impl KindMatch {
    /// True when (`group`, `kind`) is in the set.
    pub fn matches(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind.is_none_or(|k| k == kind)
    }
}

const CORE: &str = "cluster.x-k8s.io";
const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";

/// MachineDeployment.
pub const MACHINE_DEPLOYMENT: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachineDeployment"),
};
/// MachinePool.
pub const MACHINE_POOL: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachinePool"),
};
/// MachineSet.
pub const MACHINE_SET: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachineSet"),
};
/// Machine.
pub const MACHINE: KindMatch = KindMatch {
    group: CORE,
    kind: Some("Machine"),
};
/// Any control plane provider's kind (KubeadmControlPlane, ...).
pub const ANY_CONTROL_PLANE: KindMatch = KindMatch {
    group: CONTROL_PLANE,
    kind: None,
};
/// Any infrastructure provider's kind (DockerMachine, AWSMachine, ...).
pub const ANY_INFRASTRUCTURE: KindMatch = KindMatch {
    group: "infrastructure.cluster.x-k8s.io",
    kind: None,
};
/// Any bootstrap provider's kind (KubeadmConfig, ...).
pub const ANY_BOOTSTRAP: KindMatch = KindMatch {
    group: "bootstrap.cluster.x-k8s.io",
    kind: None,
};

/// How the parent of a child is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentLink {
    /// The ownerReference with `controller: true` whose kind matches.
    ControllerOwner(KindMatch),
    /// An ownerReference without `controller: true` whose kind matches: CAPI
    /// creates InfraMachines and BootstrapConfigs owned by the MachineSet or
    /// control plane and only later makes the Machine their controller.
    NonControllerOwner(KindMatch),
    /// No ownerReference exists at create time: the Cluster named by the
    /// `cluster.x-k8s.io/cluster-name` label and its ClusterClass, for
    /// objects carrying `topology.cluster.x-k8s.io/owned`. The parent is the
    /// merged topology + class metadata ([`super::topology`]).
    Topology(TopologyEntry),
}

/// Which part of the Cluster topology a topology-owned child comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyEntry {
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
pub enum Flow {
    /// A parent string map flowing into child string maps.
    Map(MapFlow),
    /// One parent field flowing into one child field (CAPI's in-place
    /// propagated fields); off with `capi.inPlaceFields: false`.
    Field(FieldFlow),
}

/// One parent map flowing into child maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapFlow {
    /// Path of the string map in the parent.
    pub from: &'static [&'static str],
    /// Paths of the string maps in the child that receive it.
    pub to: &'static [&'static [&'static str]],
    /// Keys that never travel along this flow.
    pub never_copied: &'static [&'static str],
}

/// What one flow does with one parent key for one target map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRule {
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
    pub fn rule_for(&self, key: &str, kept: &[&str]) -> KeyRule {
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
pub enum Unit {
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

impl Unit {
    /// True when a value in `self` can be written as `other`.
    pub fn converts_to(self, other: Unit) -> bool {
        use Unit::*;
        match (self, other) {
            (Duration | Seconds, Duration | Seconds) => true,
            (Integer | IntegerOmitZero, Integer | IntegerOmitZero) => true,
            (a, b) => a == b,
        }
    }
}

/// Where a field lives in one API version of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// Path of the field.
    pub path: &'static [&'static str],
    /// How its value is written.
    pub unit: Unit,
}

/// A field's place in each API version; `None`: the version has no such
/// field, and a flow needing it does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByVersion {
    /// `*.cluster.x-k8s.io/v1beta1`.
    pub v1beta1: Option<Endpoint>,
    /// `*.cluster.x-k8s.io/v1beta2`.
    pub v1beta2: Option<Endpoint>,
}

impl ByVersion {
    /// The field at API version `version` (`v1beta1`, `v1beta2`).
    pub fn at(&self, version: &str) -> Option<&Endpoint> {
        match version {
            "v1beta1" => self.v1beta1.as_ref(),
            "v1beta2" => self.v1beta2.as_ref(),
            _ => None,
        }
    }

    /// Every endpoint, oldest version first.
    pub fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.v1beta1.iter().chain(self.v1beta2.iter())
    }
}

/// One parent field flowing into one child field. The parent's path is
/// chosen by the parent's API version and the child's by the child's, so
/// a v1beta1 child of a v1beta2 parent converts seconds into a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldFlow {
    /// The field's name in messages (`nodeDrainTimeout`).
    pub field: &'static str,
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
pub struct Bookkeeping {
    /// Label keys.
    pub labels: &'static [&'static str],
    /// Annotation keys.
    pub annotations: &'static [&'static str],
}

/// One propagation path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Family name used in messages ("MachineSet", "InfraMachine", ...).
    pub family: &'static str,
    /// Which children the rule applies to.
    pub child: KindMatch,
    /// How the parent is found.
    pub parent: ParentLink,
    /// What flows, in groups (the metadata maps, then the in-place fields).
    pub flows: &'static [&'static [Flow]],
    /// What the child keeps.
    pub bookkeeping: Bookkeeping,
    /// The CAPI function this row mirrors.
    pub upstream: &'static str,
}

const LABELS: &[&str] = &["metadata", "labels"];
const ANNOTATIONS: &[&str] = &["metadata", "annotations"];
const TEMPLATE_LABELS: &[&str] = &["spec", "template", "metadata", "labels"];
const TEMPLATE_ANNOTATIONS: &[&str] = &["spec", "template", "metadata", "annotations"];
const MACHINE_TEMPLATE_LABELS: &[&str] = &["spec", "machineTemplate", "metadata", "labels"];
const MACHINE_TEMPLATE_ANNOTATIONS: &[&str] =
    &["spec", "machineTemplate", "metadata", "annotations"];

/// MachineDeployment annotations never copied to MachineSets
/// (mdutil `annotationsToSkip`, identical in v1.6 and v1.14).
pub const MD_ANNOTATIONS_TO_SKIP: &[&str] = &[
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
pub const TOPOLOGY_UPGRADE_ANNOTATIONS: &[&str] = &[
    "topology.cluster.x-k8s.io/hold-upgrade-sequence",
    "topology.cluster.x-k8s.io/defer-upgrade",
];

/// Keys of the synthetic parent the topology resolver builds.
pub mod merged {
    /// Merged topology + class labels.
    pub const LABELS: &[&str] = &["labels"];
    /// Merged topology + class annotations.
    pub const ANNOTATIONS: &[&str] = &["annotations"];
    /// Present only when the ClusterClass has `controlPlane.machineInfrastructure`.
    pub const MACHINE_TEMPLATE_LABELS: &[&str] = &["machineTemplate", "labels"];
    /// Present only when the ClusterClass has `controlPlane.machineInfrastructure`.
    pub const MACHINE_TEMPLATE_ANNOTATIONS: &[&str] = &["machineTemplate", "annotations"];
}

/// A topology worker (MachineDeployment, MachinePool): the merged topology
/// and class metadata goes to the object and to its template, without the
/// upgrade-sequence annotations.
const FROM_TOPOLOGY_WORKER: &[Flow] = &[
    Flow::Map(MapFlow {
        from: merged::LABELS,
        to: &[LABELS, TEMPLATE_LABELS],
        never_copied: &[],
    }),
    Flow::Map(MapFlow {
        from: merged::ANNOTATIONS,
        to: &[ANNOTATIONS, TEMPLATE_ANNOTATIONS],
        never_copied: TOPOLOGY_UPGRADE_ANNOTATIONS,
    }),
];

const fn at(path: &'static [&'static str], unit: Unit) -> Option<Endpoint> {
    Some(Endpoint { path, unit })
}

/// A field with the same path and unit in both API versions.
const fn same(path: &'static [&'static str], unit: Unit) -> ByVersion {
    ByVersion {
        v1beta1: at(path, unit),
        v1beta2: at(path, unit),
    }
}

/// A node timeout: a v1beta1 duration at `v1beta1`, v1beta2 seconds at `v1beta2`.
const fn timeout(v1beta1: &'static [&'static str], v1beta2: &'static [&'static str]) -> ByVersion {
    ByVersion {
        v1beta1: at(v1beta1, Unit::Duration),
        v1beta2: at(v1beta2, Unit::Seconds),
    }
}

const fn field(field: &'static str, from: ByVersion, to: ByVersion) -> Flow {
    Flow::Field(FieldFlow { field, from, to })
}

/// `readinessGates` entries are keyed by `conditionType`.
pub const READINESS_GATE_KEYS: &[&str] = &["conditionType"];
/// `taints` entries are keyed by `key` and `effect`.
pub const TAINT_KEYS: &[&str] = &["key", "effect"];
const GATES: Unit = Unit::KeyedList(READINESS_GATE_KEYS);
const TAINTS: Unit = Unit::KeyedList(TAINT_KEYS);

/// Topology + class → ControlPlane fields, relative to `spec.topology.controlPlane`
/// and `ClusterClass.spec.controlPlane` (CAPI `computeControlPlane`). The
/// contract version is taken to be the ControlPlane's own API version.
pub const TOPOLOGY_CONTROL_PLANE_FIELDS: [Flow; 5] = [
    field(
        "nodeDrainTimeout",
        timeout(
            &["nodeDrainTimeout"],
            &["deletion", "nodeDrainTimeoutSeconds"],
        ),
        timeout(
            &["spec", "machineTemplate", "nodeDrainTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["nodeVolumeDetachTimeout"],
            &["deletion", "nodeVolumeDetachTimeoutSeconds"],
        ),
        timeout(
            &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["nodeDeletionTimeout"],
            &["deletion", "nodeDeletionTimeoutSeconds"],
        ),
        timeout(
            &["spec", "machineTemplate", "nodeDeletionTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
    ),
    field(
        "readinessGates",
        ByVersion {
            v1beta1: at(&["readinessGates"], GATES),
            v1beta2: at(&["readinessGates"], GATES),
        },
        ByVersion {
            v1beta1: at(&["spec", "machineTemplate", "readinessGates"], GATES),
            v1beta2: at(
                &["spec", "machineTemplate", "spec", "readinessGates"],
                GATES,
            ),
        },
    ),
    field(
        "taints",
        ByVersion {
            v1beta1: at(&["taints"], TAINTS),
            v1beta2: at(&["taints"], TAINTS),
        },
        ByVersion {
            v1beta1: at(&["spec", "machineTemplate", "taints"], TAINTS),
            v1beta2: at(&["spec", "machineTemplate", "spec", "taints"], TAINTS),
        },
    ),
];

/// Topology + class → MachineDeployment fields, relative to the topology and
/// class `machineDeployments[]` entries (CAPI `computeMachineDeployment`).
/// Rollout strategy, remediation, failure domain and replicas are not
/// in-place-only fields (they roll Machines out) and do not flow here.
pub const TOPOLOGY_MACHINE_DEPLOYMENT_FIELDS: [Flow; 7] = [
    field(
        "minReadySeconds",
        ByVersion {
            v1beta1: at(&["minReadySeconds"], Unit::Integer),
            v1beta2: at(&["minReadySeconds"], Unit::Integer),
        },
        ByVersion {
            v1beta1: at(&["spec", "minReadySeconds"], Unit::Integer),
            v1beta2: at(
                &["spec", "template", "spec", "minReadySeconds"],
                Unit::Integer,
            ),
        },
    ),
    field(
        "nodeDrainTimeout",
        timeout(
            &["nodeDrainTimeout"],
            &["deletion", "nodeDrainTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDrainTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["nodeVolumeDetachTimeout"],
            &["deletion", "nodeVolumeDetachTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["nodeDeletionTimeout"],
            &["deletion", "nodeDeletionTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDeletionTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
    ),
    field(
        "readinessGates",
        same(&["readinessGates"], GATES),
        same(&["spec", "template", "spec", "readinessGates"], GATES),
    ),
    field(
        "taints",
        same(&["taints"], TAINTS),
        same(&["spec", "template", "spec", "taints"], TAINTS),
    ),
    field(
        "deletionOrder",
        ByVersion {
            v1beta1: at(&["strategy", "rollingUpdate", "deletePolicy"], Unit::Enum),
            v1beta2: at(&["deletion", "order"], Unit::Enum),
        },
        ByVersion {
            v1beta1: at(
                &["spec", "strategy", "rollingUpdate", "deletePolicy"],
                Unit::Enum,
            ),
            v1beta2: at(&["spec", "deletion", "order"], Unit::Enum),
        },
    ),
];

/// Topology + class → MachinePool fields (CAPI `computeMachinePool`; pools
/// have no readiness gates).
pub const TOPOLOGY_MACHINE_POOL_FIELDS: [Flow; 5] = [
    field(
        "minReadySeconds",
        ByVersion {
            v1beta1: at(&["minReadySeconds"], Unit::Integer),
            v1beta2: at(&["minReadySeconds"], Unit::Integer),
        },
        ByVersion {
            v1beta1: at(&["spec", "minReadySeconds"], Unit::Integer),
            v1beta2: at(
                &["spec", "template", "spec", "minReadySeconds"],
                Unit::Integer,
            ),
        },
    ),
    field(
        "nodeDrainTimeout",
        timeout(
            &["nodeDrainTimeout"],
            &["deletion", "nodeDrainTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDrainTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["nodeVolumeDetachTimeout"],
            &["deletion", "nodeVolumeDetachTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["nodeDeletionTimeout"],
            &["deletion", "nodeDeletionTimeoutSeconds"],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDeletionTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
    ),
    field(
        "taints",
        same(&["taints"], TAINTS),
        same(&["spec", "template", "spec", "taints"], TAINTS),
    ),
];

/// MachineDeployment → MachineSet fields (CAPI v1.14 `computeDesiredMS`, for
/// every MachineSet of the MachineDeployment).
pub const MACHINE_SET_FIELDS: [Flow; 8] = [
    field(
        "minReadySeconds",
        ByVersion {
            v1beta1: at(&["spec", "minReadySeconds"], Unit::Integer),
            v1beta2: at(
                &["spec", "template", "spec", "minReadySeconds"],
                Unit::Integer,
            ),
        },
        ByVersion {
            v1beta1: at(&["spec", "minReadySeconds"], Unit::IntegerOmitZero),
            v1beta2: at(
                &["spec", "template", "spec", "minReadySeconds"],
                Unit::Integer,
            ),
        },
    ),
    field(
        "deletionOrder",
        ByVersion {
            v1beta1: at(
                &["spec", "strategy", "rollingUpdate", "deletePolicy"],
                Unit::Enum,
            ),
            v1beta2: at(&["spec", "deletion", "order"], Unit::Enum),
        },
        ByVersion {
            v1beta1: at(&["spec", "deletePolicy"], Unit::Enum),
            v1beta2: at(&["spec", "deletion", "order"], Unit::Enum),
        },
    ),
    field(
        "machineNaming",
        ByVersion {
            v1beta1: at(&["spec", "machineNamingStrategy"], Unit::Object),
            v1beta2: at(&["spec", "machineNaming"], Unit::Object),
        },
        ByVersion {
            v1beta1: at(&["spec", "machineNamingStrategy"], Unit::Object),
            v1beta2: at(&["spec", "machineNaming"], Unit::Object),
        },
    ),
    field(
        "readinessGates",
        same(&["spec", "template", "spec", "readinessGates"], GATES),
        same(&["spec", "template", "spec", "readinessGates"], GATES),
    ),
    field(
        "nodeDrainTimeout",
        timeout(
            &["spec", "template", "spec", "nodeDrainTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDrainTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["spec", "template", "spec", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "template", "spec", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["spec", "template", "spec", "nodeDeletionTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "template", "spec", "nodeDeletionTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
    ),
    field(
        "taints",
        same(&["spec", "template", "spec", "taints"], TAINTS),
        same(&["spec", "template", "spec", "taints"], TAINTS),
    ),
];

/// MachineSet → Machine fields (CAPI `computeDesiredMachine`);
/// `minReadySeconds` exists on v1beta2 Machines only.
pub const MACHINE_FROM_MACHINE_SET_FIELDS: [Flow; 6] = [
    field(
        "minReadySeconds",
        ByVersion {
            v1beta1: None,
            v1beta2: at(
                &["spec", "template", "spec", "minReadySeconds"],
                Unit::Integer,
            ),
        },
        ByVersion {
            v1beta1: None,
            v1beta2: at(&["spec", "minReadySeconds"], Unit::Integer),
        },
    ),
    field(
        "readinessGates",
        same(&["spec", "template", "spec", "readinessGates"], GATES),
        same(&["spec", "readinessGates"], GATES),
    ),
    field(
        "nodeDrainTimeout",
        timeout(
            &["spec", "template", "spec", "nodeDrainTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeDrainTimeout"],
            &["spec", "deletion", "nodeDrainTimeoutSeconds"],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["spec", "template", "spec", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeVolumeDetachTimeout"],
            &["spec", "deletion", "nodeVolumeDetachTimeoutSeconds"],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["spec", "template", "spec", "nodeDeletionTimeout"],
            &[
                "spec",
                "template",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeDeletionTimeout"],
            &["spec", "deletion", "nodeDeletionTimeoutSeconds"],
        ),
    ),
    field(
        "taints",
        same(&["spec", "template", "spec", "taints"], TAINTS),
        same(&["spec", "taints"], TAINTS),
    ),
];

/// ControlPlane → Machine fields (KCP `ComputeDesiredMachine`; never
/// `minReadySeconds`). The gates KCP always adds stay: a keyed list keeps
/// entries the parent does not name.
pub const MACHINE_FROM_CONTROL_PLANE_FIELDS: [Flow; 5] = [
    field(
        "nodeDrainTimeout",
        timeout(
            &["spec", "machineTemplate", "nodeDrainTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeDrainTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeDrainTimeout"],
            &["spec", "deletion", "nodeDrainTimeoutSeconds"],
        ),
    ),
    field(
        "nodeVolumeDetachTimeout",
        timeout(
            &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeVolumeDetachTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeVolumeDetachTimeout"],
            &["spec", "deletion", "nodeVolumeDetachTimeoutSeconds"],
        ),
    ),
    field(
        "nodeDeletionTimeout",
        timeout(
            &["spec", "machineTemplate", "nodeDeletionTimeout"],
            &[
                "spec",
                "machineTemplate",
                "spec",
                "deletion",
                "nodeDeletionTimeoutSeconds",
            ],
        ),
        timeout(
            &["spec", "nodeDeletionTimeout"],
            &["spec", "deletion", "nodeDeletionTimeoutSeconds"],
        ),
    ),
    field(
        "readinessGates",
        ByVersion {
            v1beta1: at(&["spec", "machineTemplate", "readinessGates"], GATES),
            v1beta2: at(
                &["spec", "machineTemplate", "spec", "readinessGates"],
                GATES,
            ),
        },
        ByVersion {
            v1beta1: at(&["spec", "readinessGates"], GATES),
            v1beta2: at(&["spec", "readinessGates"], GATES),
        },
    ),
    field(
        "taints",
        ByVersion {
            v1beta1: at(&["spec", "machineTemplate", "taints"], TAINTS),
            v1beta2: at(&["spec", "machineTemplate", "spec", "taints"], TAINTS),
        },
        ByVersion {
            v1beta1: at(&["spec", "taints"], TAINTS),
            v1beta2: at(&["spec", "taints"], TAINTS),
        },
    ),
];

const MACHINE_BOOKKEEPING: Bookkeeping = Bookkeeping {
    labels: &[
        "cluster.x-k8s.io/cluster-name",
        "cluster.x-k8s.io/set-name",
        "cluster.x-k8s.io/deployment-name",
        "cluster.x-k8s.io/control-plane",
        "cluster.x-k8s.io/control-plane-name",
    ],
    annotations: &[
        "cluster.x-k8s.io/cloned-from-name",
        "cluster.x-k8s.io/cloned-from-groupkind",
        "controlplane.cluster.x-k8s.io/remediation-for",
        "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration",
        "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup",
    ],
};

const FROM_MACHINE_SET: &[Flow] = &[
    Flow::Map(MapFlow {
        from: TEMPLATE_LABELS,
        to: &[LABELS],
        never_copied: &[],
    }),
    Flow::Map(MapFlow {
        from: TEMPLATE_ANNOTATIONS,
        to: &[ANNOTATIONS],
        never_copied: &[],
    }),
];

const FROM_CONTROL_PLANE: &[Flow] = &[
    Flow::Map(MapFlow {
        from: MACHINE_TEMPLATE_LABELS,
        to: &[LABELS],
        never_copied: &[],
    }),
    Flow::Map(MapFlow {
        from: MACHINE_TEMPLATE_ANNOTATIONS,
        to: &[ANNOTATIONS],
        never_copied: &[],
    }),
];

/// The contract. The first row whose child and parent link both apply wins.
pub const CAPI_RULES: &[Rule] = &[
    Rule {
        family: "MachineSet",
        child: MACHINE_SET,
        parent: ParentLink::ControllerOwner(MACHINE_DEPLOYMENT),
        flows: &[
            &[
                Flow::Map(MapFlow {
                    from: ANNOTATIONS,
                    to: &[ANNOTATIONS],
                    never_copied: MD_ANNOTATIONS_TO_SKIP,
                }),
                Flow::Map(MapFlow {
                    from: TEMPLATE_LABELS,
                    to: &[LABELS, TEMPLATE_LABELS],
                    never_copied: &[],
                }),
                Flow::Map(MapFlow {
                    from: TEMPLATE_ANNOTATIONS,
                    to: &[TEMPLATE_ANNOTATIONS],
                    never_copied: &[],
                }),
            ],
            &MACHINE_SET_FIELDS,
        ],
        bookkeeping: Bookkeeping {
            labels: &[
                "machine-template-hash",
                "cluster.x-k8s.io/deployment-name",
                "cluster.x-k8s.io/cluster-name",
            ],
            annotations: &[
                "machinedeployment.clusters.x-k8s.io/revision",
                "machinedeployment.clusters.x-k8s.io/revision-history",
                "machinedeployment.clusters.x-k8s.io/desired-replicas",
                "machinedeployment.clusters.x-k8s.io/max-replicas",
                "cluster.x-k8s.io/disable-machine-create",
            ],
        },
        upstream: "machinedeployment computeDesiredMS + mdutil MachineSetAnnotationsFromMachineDeployment",
    },
    Rule {
        family: "Machine",
        child: MACHINE,
        parent: ParentLink::ControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET, &MACHINE_FROM_MACHINE_SET_FIELDS],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredMachine",
    },
    Rule {
        family: "Machine",
        child: MACHINE,
        parent: ParentLink::ControllerOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE, &MACHINE_FROM_CONTROL_PLANE_FIELDS],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredMachine",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredInfraMachine",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::NonControllerOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredInfraMachine",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredBootstrapConfig",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::NonControllerOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE],
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredKubeadmConfig",
    },
    Rule {
        family: "ControlPlane",
        child: ANY_CONTROL_PLANE,
        parent: ParentLink::Topology(TopologyEntry::ControlPlane),
        flows: &[
            &[
                Flow::Map(MapFlow {
                    from: merged::LABELS,
                    to: &[LABELS],
                    never_copied: &[],
                }),
                Flow::Map(MapFlow {
                    from: merged::ANNOTATIONS,
                    to: &[ANNOTATIONS],
                    never_copied: &[],
                }),
                Flow::Map(MapFlow {
                    from: merged::MACHINE_TEMPLATE_LABELS,
                    to: &[MACHINE_TEMPLATE_LABELS],
                    never_copied: &[],
                }),
                Flow::Map(MapFlow {
                    from: merged::MACHINE_TEMPLATE_ANNOTATIONS,
                    to: &[MACHINE_TEMPLATE_ANNOTATIONS],
                    never_copied: &[],
                }),
            ],
            &TOPOLOGY_CONTROL_PLANE_FIELDS,
        ],
        bookkeeping: Bookkeeping {
            labels: &[
                "cluster.x-k8s.io/cluster-name",
                "topology.cluster.x-k8s.io/owned",
            ],
            annotations: &[
                "cluster.x-k8s.io/cloned-from-name",
                "cluster.x-k8s.io/cloned-from-groupkind",
            ],
        },
        upstream: "topology desiredstate computeControlPlane",
    },
    Rule {
        family: "MachineDeployment",
        child: MACHINE_DEPLOYMENT,
        parent: ParentLink::Topology(TopologyEntry::MachineDeployment),
        flows: &[FROM_TOPOLOGY_WORKER, &TOPOLOGY_MACHINE_DEPLOYMENT_FIELDS],
        bookkeeping: Bookkeeping {
            labels: &[
                "cluster.x-k8s.io/cluster-name",
                "topology.cluster.x-k8s.io/owned",
                "topology.cluster.x-k8s.io/deployment-name",
            ],
            annotations: &[],
        },
        upstream: "topology desiredstate computeMachineDeployment",
    },
    Rule {
        family: "MachinePool",
        child: MACHINE_POOL,
        parent: ParentLink::Topology(TopologyEntry::MachinePool),
        flows: &[FROM_TOPOLOGY_WORKER, &TOPOLOGY_MACHINE_POOL_FIELDS],
        bookkeeping: Bookkeeping {
            labels: &[
                "cluster.x-k8s.io/cluster-name",
                "topology.cluster.x-k8s.io/owned",
                "topology.cluster.x-k8s.io/pool-name",
            ],
            annotations: &[],
        },
        upstream: "topology desiredstate computeMachinePool",
    },
];

/// Where each kind carries the labels of the Machines it creates, for the
/// Node-sync warnings (the Machine itself carries them on its own metadata).
pub const NODE_BOUND_LABELS: &[(KindMatch, &[&str])] = &[
    (MACHINE, LABELS),
    (MACHINE_DEPLOYMENT, TEMPLATE_LABELS),
    (MACHINE_SET, TEMPLATE_LABELS),
    (ANY_CONTROL_PLANE, MACHINE_TEMPLATE_LABELS),
];

impl Bookkeeping {
    /// The bookkeeping keys for a child map: `metadata.labels` and
    /// `spec.template.metadata.labels` hold labels, the other maps a rule
    /// writes hold annotations. Asked only for map flows' targets.
    pub fn for_map(&self, path: &[&str]) -> &'static [&'static str] {
        match path.last() {
            Some(&"labels") => self.labels,
            Some(&"annotations") => self.annotations,
            _ => &[],
        }
    }
}

impl Rule {
    /// Every flow of the rule, maps first.
    pub fn flows(&self) -> impl Iterator<Item = &'static Flow> + use<> {
        self.flows.iter().flat_map(|group| group.iter())
    }
}

/// What the contract lets the policy write on a CAPI child, read from
/// [`CAPI_RULES`]: every map a map flow targets, and every field a field
/// flow targets with its unit (all API versions). The invariant checks and
/// the fuzz targets hold the policy to exactly these.
pub fn contract_targets() -> (Vec<&'static [&'static str]>, Vec<Endpoint>) {
    let mut maps: Vec<&'static [&'static str]> = Vec::new();
    let mut fields: Vec<Endpoint> = Vec::new();
    for flow in CAPI_RULES.iter().flat_map(Rule::flows) {
        match flow {
            Flow::Map(map) => maps.extend(map.to.iter().copied()),
            Flow::Field(field) => fields.extend(field.to.endpoints().copied()),
        }
    }
    maps.sort();
    maps.dedup();
    fields.sort_by_key(|e| e.path);
    fields.dedup();
    (maps, fields)
}
