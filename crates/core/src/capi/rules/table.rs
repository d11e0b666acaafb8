//! The rows of the contract: one [`Rule`] per child family and parent.

use super::contract::*;
use super::machine_fields::*;
use super::topology_fields::*;

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

/// The keys a Machine, InfraMachine or BootstrapConfig keeps, whoever
/// created it: one table for the MachineSet and for every control-plane
/// provider, each key with the source that sets it after copying the
/// template (so the creator's value wins, and the policy never writes it).
const MACHINE_BOOKKEEPING: Bookkeeping = Bookkeeping {
    labels: &[
        // CAPI: machineset computeDesiredMachine; every control plane.
        "cluster.x-k8s.io/cluster-name",
        // CAPI: machineset computeDesiredMachine.
        "cluster.x-k8s.io/set-name",
        // CAPI: machineset computeDesiredMachine.
        "cluster.x-k8s.io/deployment-name",
        // Every control plane; k0smotron sets "true", not "" (its
        // internal/controller/controlplane/util.go), which CAPI's
        // IsControlPlaneMachine accepts.
        "cluster.x-k8s.io/control-plane",
        // KCP, CAPRKE2 (controlplane/internal/controllers/scale.go), k0smotron.
        "cluster.x-k8s.io/control-plane-name",
        // k0smotron with --enable-worker (internal/controller/controlplane/helper.go).
        "k0smotron.io/control-plane-worker-enabled",
    ],
    annotations: &[
        // CAPI: external.CreateFromTemplate.
        "cluster.x-k8s.io/cloned-from-name",
        // CAPI: external.CreateFromTemplate.
        "cluster.x-k8s.io/cloned-from-groupkind",
        // KCP remediation.
        "controlplane.cluster.x-k8s.io/remediation-for",
        // KCP up to v1.11.
        "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration",
        // KCP, and k0smotron (api/controlplane/v1beta2/k0s_types.go).
        "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup",
        // CAPRKE2 (controlplane/api/v1beta2/rke2controlplane_types.go).
        "controlplane.cluster.x-k8s.io/rke2-server-configuration",
        // CAPRKE2 (controlplane/internal/controllers/scale.go).
        "pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup",
        // CAPRKE2 (pkg/rke2/lifecycle_hook.go).
        "pre-drain.delete.hook.machine.cluster.x-k8s.io/rke2-lb-exclusion",
        // k0smotron (api/controlplane/v1beta2/k0s_types.go).
        "k0s.controlplane.cluster.x-k8s.io/k0s-config",
    ],
};

/// A control plane of any provider is read by its machine template's
/// shape, not by its API version's name.
const SHAPE_OF_CONTROL_PLANE: ReadAt = ReadAt::Shape {
    // The kinds whose API versions name their shape, so a look-up asks for
    // one shape's paths: KubeadmControlPlane (CAPI v1.14) and
    // RKE2ControlPlane (CAPRKE2 v0.25, controlplane/api/v1beta{1,2}).
    known: &[
        ("KubeadmControlPlane", "v1beta1", "v1beta1"),
        ("KubeadmControlPlane", "v1beta2", "v1beta2"),
        ("RKE2ControlPlane", "v1beta1", "v1beta1"),
        ("RKE2ControlPlane", "v1beta2", "v1beta2"),
    ],
    probe: MACHINE_TEMPLATE_SPEC_PROBE,
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
pub(crate) const CAPI_RULES: &[Rule] = &[
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
        read_at: ReadAt::Version,
        upstream: "machinedeployment computeDesiredMS + mdutil MachineSetAnnotationsFromMachineDeployment",
    },
    Rule {
        family: "Machine",
        child: MACHINE,
        parent: ParentLink::ControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET, &MACHINE_FROM_MACHINE_SET_FIELDS],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: ReadAt::Version,
        upstream: "machineset computeDesiredMachine",
    },
    Rule {
        family: "Machine",
        child: MACHINE,
        parent: ParentLink::ControllerOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE, &MACHINE_FROM_CONTROL_PLANE_FIELDS],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: SHAPE_OF_CONTROL_PLANE,
        upstream: "kubeadm desiredstate ComputeDesiredMachine; rke2 generateMachine, syncMachines; k0smotron controlplane/util.go",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: ReadAt::Version,
        upstream: "machineset computeDesiredInfraMachine",
    },
    Rule {
        family: "InfraMachine",
        child: ANY_INFRASTRUCTURE,
        parent: ParentLink::AnyOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: SHAPE_OF_CONTROL_PLANE,
        upstream: "kubeadm desiredstate ComputeDesiredInfraMachine; rke2 syncMachines (UpdateExternalObject); k0smotron controlplane/helper.go",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::NonControllerOwner(MACHINE_SET),
        flows: &[FROM_MACHINE_SET],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: ReadAt::Version,
        upstream: "machineset computeDesiredBootstrapConfig",
    },
    Rule {
        family: "BootstrapConfig",
        child: ANY_BOOTSTRAP,
        parent: ParentLink::AnyOwner(ANY_CONTROL_PLANE),
        flows: &[FROM_CONTROL_PLANE],
        bookkeeping: MACHINE_BOOKKEEPING,
        read_at: SHAPE_OF_CONTROL_PLANE,
        upstream: "kubeadm desiredstate ComputeDesiredKubeadmConfig; rke2 syncMachines (UpdateExternalObject); k0smotron k0s_controlplane_controller.go",
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
        read_at: ReadAt::Version,
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
        read_at: ReadAt::Version,
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
        read_at: ReadAt::Version,
        upstream: "topology desiredstate computeMachinePool",
    },
];
