//! The field flows from a MachineDeployment to its MachineSets, and from a
//! MachineSet or a ControlPlane to its Machines.

use super::contract::*;
use super::node_timeouts::*;

/// MachineDeployment → MachineSet fields (CAPI v1.14 `computeDesiredMS`, for
/// every MachineSet of the MachineDeployment).
pub(crate) const MACHINE_SET_FIELDS: [Flow; 8] = with_node_timeouts(
    [
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
    ],
    node_timeouts!(
        from: ["spec", "template", "spec"] ["spec", "template", "spec", "deletion"],
        to: ["spec", "template", "spec"] ["spec", "template", "spec", "deletion"],
    ),
    [field(
        "taints",
        same(&["spec", "template", "spec", "taints"], TAINTS),
        same(&["spec", "template", "spec", "taints"], TAINTS),
    )],
);

/// MachineSet → Machine fields (CAPI `computeDesiredMachine`);
/// `minReadySeconds` exists on v1beta2 Machines only.
pub(crate) const MACHINE_FROM_MACHINE_SET_FIELDS: [Flow; 6] = with_node_timeouts(
    [
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
    ],
    node_timeouts!(
        from: ["spec", "template", "spec"] ["spec", "template", "spec", "deletion"],
        to: ["spec"] ["spec", "deletion"],
    ),
    [field(
        "taints",
        same(&["spec", "template", "spec", "taints"], TAINTS),
        same(&["spec", "taints"], TAINTS),
    )],
);

/// ControlPlane → Machine fields (KCP `ComputeDesiredMachine`; never
/// `minReadySeconds`). The gates KCP always adds stay: a keyed list keeps
/// entries the parent does not name.
pub(crate) const MACHINE_FROM_CONTROL_PLANE_FIELDS: [Flow; 5] = with_node_timeouts(
    [],
    node_timeouts!(
        from: ["spec", "machineTemplate"] ["spec", "machineTemplate", "spec", "deletion"],
        to: ["spec"] ["spec", "deletion"],
    ),
    [
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
    ],
);
