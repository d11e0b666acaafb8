//! The field flows from a Cluster's topology and its ClusterClass to the
//! ControlPlane, MachineDeployment and MachinePool they define.

use super::contract::*;
use super::node_timeouts::*;

/// Topology + class → ControlPlane fields, relative to `spec.topology.controlPlane`
/// and `ClusterClass.spec.controlPlane` (CAPI `computeControlPlane`). The
/// contract version is taken to be the ControlPlane's own API version.
pub(crate) const TOPOLOGY_CONTROL_PLANE_FIELDS: [Flow; 5] = with_node_timeouts(
    [],
    node_timeouts!(
        from: [] ["deletion"],
        to: ["spec", "machineTemplate"] ["spec", "machineTemplate", "spec", "deletion"],
    ),
    [
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
    ],
);

/// `minReadySeconds` of a topology worker (MachineDeployment, MachinePool):
/// the same path in the Cluster's and the ClusterClass's entries, moved
/// under `spec.template.spec` in a v1beta2 child.
const WORKER_MIN_READY_SECONDS: Flow = field(
    "minReadySeconds",
    same(&["minReadySeconds"], Unit::Integer),
    ByVersion {
        v1beta1: at(&["spec", "minReadySeconds"], Unit::Integer),
        v1beta2: at(
            &["spec", "template", "spec", "minReadySeconds"],
            Unit::Integer,
        ),
    },
);

/// Topology + class → MachineDeployment fields, relative to the topology and
/// class `machineDeployments[]` entries (CAPI `computeMachineDeployment`).
/// Rollout strategy, remediation, failure domain and replicas are not
/// in-place-only fields (they roll Machines out) and do not flow here.
pub(crate) const TOPOLOGY_MACHINE_DEPLOYMENT_FIELDS: [Flow; 7] = with_node_timeouts(
    [WORKER_MIN_READY_SECONDS],
    node_timeouts!(
        from: [] ["deletion"],
        to: ["spec", "template", "spec"] ["spec", "template", "spec", "deletion"],
    ),
    [
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
    ],
);

/// Topology + class → MachinePool fields (CAPI `computeMachinePool`; pools
/// have no readiness gates).
pub(crate) const TOPOLOGY_MACHINE_POOL_FIELDS: [Flow; 5] = with_node_timeouts(
    [WORKER_MIN_READY_SECONDS],
    node_timeouts!(
        from: [] ["deletion"],
        to: ["spec", "template", "spec"] ["spec", "template", "spec", "deletion"],
    ),
    [field(
        "taints",
        same(&["taints"], TAINTS),
        same(&["spec", "template", "spec", "taints"], TAINTS),
    )],
);
