//! The CAPI metadata-propagation contract as a table.
//!
//! One [`Rule`] per (child family, parent kind): how the parent is found,
//! which parent maps flow to which child maps, which keys never travel, and
//! which bookkeeping keys the child keeps. Each row names the CAPI function
//! it mirrors. The same paths hold for v1beta1 and v1beta2 for every row
//! here; the versioned differences (Cluster → ClusterClass references, class
//! metadata paths) are rows of [`super::topology::SHAPES`].

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

/// One parent map flowing into child maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
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

impl Flow {
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
    /// What flows.
    pub flows: &'static [Flow],
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
    Flow {
        from: merged::LABELS,
        to: &[LABELS, TEMPLATE_LABELS],
        never_copied: &[],
    },
    Flow {
        from: merged::ANNOTATIONS,
        to: &[ANNOTATIONS, TEMPLATE_ANNOTATIONS],
        never_copied: TOPOLOGY_UPGRADE_ANNOTATIONS,
    },
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
    Flow {
        from: TEMPLATE_LABELS,
        to: &[LABELS],
        never_copied: &[],
    },
    Flow {
        from: TEMPLATE_ANNOTATIONS,
        to: &[ANNOTATIONS],
        never_copied: &[],
    },
];

const FROM_CONTROL_PLANE: &[Flow] = &[
    Flow {
        from: MACHINE_TEMPLATE_LABELS,
        to: &[LABELS],
        never_copied: &[],
    },
    Flow {
        from: MACHINE_TEMPLATE_ANNOTATIONS,
        to: &[ANNOTATIONS],
        never_copied: &[],
    },
];

/// The contract. The first row whose child and parent link both apply wins.
pub const CAPI_RULES: &[Rule] = &[
    Rule {
        family: "MachineSet",
        child: MACHINE_SET,
        parent: ParentLink::ControllerOwner(MACHINE_DEPLOYMENT),
        flows: &[
            Flow {
                from: ANNOTATIONS,
                to: &[ANNOTATIONS],
                never_copied: MD_ANNOTATIONS_TO_SKIP,
            },
            Flow {
                from: TEMPLATE_LABELS,
                to: &[LABELS, TEMPLATE_LABELS],
                never_copied: &[],
            },
            Flow {
                from: TEMPLATE_ANNOTATIONS,
                to: &[TEMPLATE_ANNOTATIONS],
                never_copied: &[],
            },
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
        flows: FROM_MACHINE_SET,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredMachine",
    },
    Rule {
        family: "Machine",
        child: MACHINE,
        parent: ParentLink::ControllerOwner(ANY_CONTROL_PLANE),
        flows: FROM_CONTROL_PLANE,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredMachine",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: FROM_MACHINE_SET,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredInfraMachine",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::NonControllerOwner(ANY_CONTROL_PLANE),
        flows: FROM_CONTROL_PLANE,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredInfraMachine",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: FROM_MACHINE_SET,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "machineset computeDesiredBootstrapConfig",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::NonControllerOwner(ANY_CONTROL_PLANE),
        flows: FROM_CONTROL_PLANE,
        bookkeeping: MACHINE_BOOKKEEPING,
        upstream: "kubeadm desiredstate ComputeDesiredKubeadmConfig",
    },
    Rule {
        family: "ControlPlane",
        child: ANY_CONTROL_PLANE,
        parent: ParentLink::Topology(TopologyEntry::ControlPlane),
        flows: &[
            Flow {
                from: merged::LABELS,
                to: &[LABELS],
                never_copied: &[],
            },
            Flow {
                from: merged::ANNOTATIONS,
                to: &[ANNOTATIONS],
                never_copied: &[],
            },
            Flow {
                from: merged::MACHINE_TEMPLATE_LABELS,
                to: &[MACHINE_TEMPLATE_LABELS],
                never_copied: &[],
            },
            Flow {
                from: merged::MACHINE_TEMPLATE_ANNOTATIONS,
                to: &[MACHINE_TEMPLATE_ANNOTATIONS],
                never_copied: &[],
            },
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
        flows: FROM_TOPOLOGY_WORKER,
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
        flows: FROM_TOPOLOGY_WORKER,
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
    /// The bookkeeping keys for a child map path (labels or annotations).
    pub fn for_path(&self, path: &[&str]) -> &'static [&'static str] {
        if path.last() == Some(&"labels") {
            self.labels
        } else {
            self.annotations
        }
    }
}
