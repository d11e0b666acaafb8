//! Where each API version of Cluster and ClusterClass keeps what the
//! topology resolver reads ([`SHAPES`]), the worker lists, and the labels
//! that name a topology child's Cluster and entry.

use crate::capi::rules::TopologyEntry;
use crate::json::fields::{self, FieldError};
use crate::json::projection::Projection;
use crate::kube::api_version;
use serde_json::Value;

/// Label present on every object the topology controller owns.
pub(crate) const TOPOLOGY_OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
pub(crate) use crate::kube::kinds::CLUSTER_NAME_LABEL;
/// Label naming the MachineDeployment's entry in the Cluster topology.
pub(crate) const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
/// Label naming the MachinePool's entry in the Cluster topology.
pub(crate) const POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";

/// A list of worker entries: `spec.topology.workers.<list>` in the Cluster
/// (entries keyed by `name`), `spec.workers.<list>` in the ClusterClass
/// (keyed by `class`), and the child label naming the child's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Workers {
    /// `machineDeployments` or `machinePools`.
    pub(crate) list: &'static str,
    /// The child's label naming its entry.
    pub(crate) name_label: &'static str,
}

/// The worker list a topology entry lives in; `None` for the control plane.
pub(crate) fn workers(entry: TopologyEntry) -> Option<Workers> {
    match entry {
        TopologyEntry::ControlPlane => None,
        TopologyEntry::MachineDeployment => Some(Workers {
            list: "machineDeployments",
            name_label: DEPLOYMENT_NAME_LABEL,
        }),
        TopologyEntry::MachinePool => Some(Workers {
            list: "machinePools",
            name_label: POOL_NAME_LABEL,
        }),
    }
}

/// Where one API version of Cluster / ClusterClass keeps what the resolver reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClusterShape {
    /// The Cluster / ClusterClass apiVersion.
    pub api_version: &'static str,
    /// ClusterClass name inside the Cluster.
    pub(crate) class_name: &'static [&'static str],
    /// ClusterClass namespace inside the Cluster (default: the Cluster's).
    pub(crate) class_namespace: &'static [&'static str],
    /// Metadata inside a `ClusterClass.spec.workers.machineDeployments[]` or
    /// `machinePools[]` entry.
    pub(crate) worker_class_metadata: &'static [&'static str],
}

/// The Cluster shapes the policy reads.
pub(crate) const SHAPES: &[ClusterShape] = &[
    ClusterShape {
        api_version: "cluster.x-k8s.io/v1beta1",
        class_name: &["spec", "topology", "class"],
        class_namespace: &["spec", "topology", "classNamespace"],
        worker_class_metadata: &["template", "metadata"],
    },
    ClusterShape {
        api_version: "cluster.x-k8s.io/v1beta2",
        class_name: &["spec", "topology", "classRef", "name"],
        class_namespace: &["spec", "topology", "classRef", "namespace"],
        worker_class_metadata: &["metadata"],
    },
];

impl ClusterShape {
    /// What the resolver reads of the Cluster and of its ClusterClass for
    /// `entry`: of the Cluster the class reference and the entry's
    /// metadata, of the ClusterClass the entry class's metadata. These are
    /// also the look-ups' field masks, so nothing else crosses into the
    /// guest. `fields` are the in-place fields the rule reads, relative to
    /// the entry, in both.
    pub(crate) fn projections(
        &self,
        entry: TopologyEntry,
        fields: &[&'static [&'static str]],
    ) -> [Projection<'static>; 2] {
        let in_cluster = topology_entry_path(entry);
        let mut cluster: Vec<Vec<&'static str>> =
            vec![self.class_name.to_vec(), self.class_namespace.to_vec()];
        if workers(entry).is_some() {
            cluster.push([in_cluster.as_slice(), &["name"]].concat());
            cluster.push([in_cluster.as_slice(), &["class"]].concat());
        }
        cluster.push([in_cluster.as_slice(), &["metadata", "labels"]].concat());
        cluster.push([in_cluster.as_slice(), &["metadata", "annotations"]].concat());

        let in_class = class_entry_path(entry);
        let class = match workers(entry) {
            None => vec![
                vec!["spec", "controlPlane", "metadata", "labels"],
                vec!["spec", "controlPlane", "metadata", "annotations"],
                vec!["spec", "controlPlane", "machineInfrastructure"],
            ],
            Some(_) => {
                let metadata = [in_class.as_slice(), self.worker_class_metadata].concat();
                vec![
                    [in_class.as_slice(), &["class"]].concat(),
                    [metadata.as_slice(), &["labels"]].concat(),
                    [metadata.as_slice(), &["annotations"]].concat(),
                ]
            }
        };
        [(in_cluster, cluster), (in_class, class)].map(|(base, mut paths)| {
            paths.extend(fields.iter().map(|field| [base.as_slice(), field].concat()));
            let paths: Vec<&[&'static str]> = paths.iter().map(Vec::as_slice).collect();
            Projection::of(&paths)
        })
    }
}

/// Where the Cluster keeps `entry`: `spec.topology.controlPlane`, or the
/// `spec.topology.workers.<list>` array.
fn topology_entry_path(entry: TopologyEntry) -> Vec<&'static str> {
    match workers(entry) {
        None => vec!["spec", "topology", "controlPlane"],
        Some(workers) => vec!["spec", "topology", "workers", workers.list],
    }
}

/// Where the ClusterClass keeps `entry`: `spec.controlPlane`, or the
/// `spec.workers.<list>` array.
fn class_entry_path(entry: TopologyEntry) -> Vec<&'static str> {
    match workers(entry) {
        None => vec!["spec", "controlPlane"],
        Some(workers) => vec!["spec", "workers", workers.list],
    }
}

/// The shape of the Cluster a child of API version `version` looks up: the
/// Cluster is read at the child's own version (docs/capi.md, "Cluster API:
/// what flows where").
pub(crate) fn shape_for_child_version(version: &str) -> Option<&'static ClusterShape> {
    SHAPES
        .iter()
        .find(|s| api_version::version(s.api_version) == version)
}

/// The ClusterClass (name, namespace) a Cluster refers to, if it has one.
pub(crate) fn class_ref<'a>(
    shape: &ClusterShape,
    cluster: &'a Value,
    cluster_namespace: &'a str,
) -> Result<Option<(&'a str, &'a str)>, FieldError> {
    let Some(name) = fields::string(cluster, shape.class_name)?.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let namespace = fields::string(cluster, shape.class_namespace)?
        .filter(|n| !n.is_empty())
        .unwrap_or(cluster_namespace);
    Ok(Some((name, namespace)))
}
