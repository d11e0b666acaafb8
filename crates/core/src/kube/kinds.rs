//! Cluster API's vocabulary that both stages share: its API groups, sets of
//! kinds, and the label that names an object's Cluster. The CAPI rules
//! ([`crate::capi`]) and the tag table ([`crate::tags`]) both match kinds
//! and find Clusters with these, so they live below both.

/// API groups whose kinds follow the CAPI propagation contract.
pub(crate) const CAPI_GROUPS: [&str; 4] = [
    "cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
    "bootstrap.cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
];

/// True for the Cluster API groups.
pub(crate) fn is_capi_group(group: &str) -> bool {
    CAPI_GROUPS.contains(&group)
}

/// A set of kinds: one kind of a group, or every kind of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KindMatch {
    /// API group.
    pub group: &'static str,
    /// Kind, or `None` for any kind of the group.
    pub kind: Option<&'static str>,
}

impl KindMatch {
    /// True when (`group`, `kind`) is in the set.
    pub(crate) fn matches(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind.is_none_or(|k| k == kind)
    }
}

/// Cluster API's core group.
pub(crate) const CORE: &str = "cluster.x-k8s.io";
/// The control plane providers' group.
pub(crate) const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";

/// MachineDeployment.
pub(crate) const MACHINE_DEPLOYMENT: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachineDeployment"),
};
/// MachinePool.
pub(crate) const MACHINE_POOL: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachinePool"),
};
/// MachineSet.
pub(crate) const MACHINE_SET: KindMatch = KindMatch {
    group: CORE,
    kind: Some("MachineSet"),
};
/// Machine.
pub(crate) const MACHINE: KindMatch = KindMatch {
    group: CORE,
    kind: Some("Machine"),
};
/// Any control plane provider's kind (KubeadmControlPlane, ...).
pub(crate) const ANY_CONTROL_PLANE: KindMatch = KindMatch {
    group: CONTROL_PLANE,
    kind: None,
};
/// Any infrastructure provider's kind (DockerMachine, AWSMachine, ...).
pub(crate) const ANY_INFRASTRUCTURE: KindMatch = KindMatch {
    group: "infrastructure.cluster.x-k8s.io",
    kind: None,
};
/// Any bootstrap provider's kind (KubeadmConfig, ...).
pub(crate) const ANY_BOOTSTRAP: KindMatch = KindMatch {
    group: "bootstrap.cluster.x-k8s.io",
    kind: None,
};

/// Label naming an object's Cluster, which CAPI sets on the objects it
/// creates for one.
pub(crate) const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
