//! Topology-owned ControlPlanes, MachineDeployments and MachinePools: their
//! parent is the Cluster's topology merged over its ClusterClass (CAPI
//! `exp/topology/desiredstate`).
//!
//! The resolver turns (Cluster, ClusterClass) into a small synthetic parent
//! object `{labels, annotations, machineTemplate?, <in-place fields>}` so
//! the topology rows of the rule table flow like every other row. The v1beta1 / v1beta2
//! differences are the [`SHAPES`] rows.

use super::rules::TopologyEntry;
use crate::api_version;
use crate::fields::{self, FieldError, FieldPath, StringMap};
use crate::projection::Projection;
use serde_json::{Map, Value};

mod field_merge;
mod sources;
use field_merge::{Sides, merge_fields};
use sources::{Metadata, Side, nest, sources};

/// Label present on every object the topology controller owns.
pub const TOPOLOGY_OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
/// Label naming the Cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Label naming the MachineDeployment's entry in the Cluster topology.
pub const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
/// Label naming the MachinePool's entry in the Cluster topology.
pub const POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";

/// A list of worker entries: `spec.topology.workers.<list>` in the Cluster
/// (entries keyed by `name`), `spec.workers.<list>` in the ClusterClass
/// (keyed by `class`), and the child label naming the child's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// `machineDeployments` or `machinePools`.
    pub list: &'static str,
    /// The child's label naming its entry.
    pub name_label: &'static str,
}

/// The worker list a topology entry lives in; `None` for the control plane.
pub fn workers(entry: TopologyEntry) -> Option<Workers> {
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
pub struct ClusterShape {
    /// The Cluster / ClusterClass apiVersion.
    pub api_version: &'static str,
    /// ClusterClass name inside the Cluster.
    pub class_name: &'static [&'static str],
    /// ClusterClass namespace inside the Cluster (default: the Cluster's).
    pub class_namespace: &'static [&'static str],
    /// Metadata inside a `ClusterClass.spec.workers.machineDeployments[]` or
    /// `machinePools[]` entry.
    pub worker_class_metadata: &'static [&'static str],
}

/// The Cluster shapes the policy reads.
pub const SHAPES: &[ClusterShape] = &[
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
    /// What the resolver reads of the Cluster for `entry`: the class
    /// reference and that entry's metadata. These are also the look-up's
    /// field masks, so nothing else of the Cluster crosses into the guest.
    /// `fields` are the in-place fields the rule reads, relative to the entry.
    pub fn cluster_projection(
        &self,
        entry: TopologyEntry,
        fields: &[&'static [&'static str]],
    ) -> Projection<'static> {
        let base = topology_entry_path(entry);
        let mut paths: Vec<Vec<&'static str>> =
            vec![self.class_name.to_vec(), self.class_namespace.to_vec()];
        if workers(entry).is_some() {
            paths.push([base.as_slice(), &["name"]].concat());
            paths.push([base.as_slice(), &["class"]].concat());
        }
        paths.push([base.as_slice(), &["metadata", "labels"]].concat());
        paths.push([base.as_slice(), &["metadata", "annotations"]].concat());
        paths.extend(fields.iter().map(|field| [base.as_slice(), field].concat()));
        let paths: Vec<&[&'static str]> = paths.iter().map(Vec::as_slice).collect();
        Projection::of(&paths)
    }

    /// What the resolver reads of the ClusterClass for `entry`.
    pub fn class_projection(
        &self,
        entry: TopologyEntry,
        fields: &[&'static [&'static str]],
    ) -> Projection<'static> {
        let base = class_entry_path(entry);
        let mut paths: Vec<Vec<&'static str>> = match workers(entry) {
            None => vec![
                vec!["spec", "controlPlane", "metadata", "labels"],
                vec!["spec", "controlPlane", "metadata", "annotations"],
                vec!["spec", "controlPlane", "machineInfrastructure"],
            ],
            Some(_) => {
                let metadata = [base.as_slice(), self.worker_class_metadata].concat();
                vec![
                    [base.as_slice(), &["class"]].concat(),
                    [metadata.as_slice(), &["labels"]].concat(),
                    [metadata.as_slice(), &["annotations"]].concat(),
                ]
            }
        };
        paths.extend(fields.iter().map(|field| [base.as_slice(), field].concat()));
        let paths: Vec<&[&'static str]> = paths.iter().map(Vec::as_slice).collect();
        Projection::of(&paths)
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
/// Cluster is read at the child's own version (README, "Cluster API: what
/// flows where").
pub fn shape_for_child_version(version: &str) -> Option<&'static ClusterShape> {
    SHAPES
        .iter()
        .find(|s| api_version::version(s.api_version) == version)
}

/// The ClusterClass (name, namespace) a Cluster refers to, if it has one.
pub fn class_ref<'a>(
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

/// Which of the two topology objects a malformed field was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The Cluster.
    Cluster,
    /// The ClusterClass.
    ClusterClass,
}

/// The synthetic parent of a topology child: the merged metadata
/// (`labels`, `annotations`, `machineTemplate`) and each in-place field at
/// its path relative to the entry, taken from the topology entry when set
/// there, else from the class entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The synthetic parent object.
    pub object: Value,
    /// For each field path (dotted, relative to the entry) where its value
    /// comes from, or where it was looked for.
    pub origins: Vec<(String, FieldOrigin)>,
}

/// Where a topology child's field value comes from. Paths are rendered
/// within their object, e.g. `spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldOrigin {
    /// The Cluster's topology entry sets it.
    Cluster(String),
    /// The topology entry does not, the ClusterClass entry does.
    ClusterClass(String),
    /// Neither sets it: (the Cluster path, the ClusterClass path).
    Neither(String, String),
}

/// The merged metadata and fields for a topology child, as a synthetic
/// parent, or `None` when the Cluster has no entry named `entry_name` for
/// it (a skip, not a failure). `field_paths` are the in-place fields the
/// rule reads, relative to the entry.
pub fn merged_parent(
    shape: &ClusterShape,
    entry: TopologyEntry,
    cluster: &Value,
    class: &Value,
    entry_name: &str,
    field_paths: &[&[&str]],
) -> Result<Option<Merged>, (Source, FieldError)> {
    let Some(sources) = sources(shape, entry, cluster, class, entry_name)? else {
        return Ok(None);
    };
    let merged = merge(&sources.topology.metadata, &sources.class.metadata);
    let parent = if workers(entry).is_none() {
        let mut parent = merged.clone();
        // CAPI sets spec.machineTemplate.metadata only for control planes
        // whose class declares machine infrastructure.
        let infrastructure = ["spec", "controlPlane", "machineInfrastructure"];
        if fields::get(class, &infrastructure)
            .map_err(|e| (Source::ClusterClass, e))?
            .is_some()
        {
            parent.insert("machineTemplate".to_owned(), Value::Object(merged));
        }
        parent
    } else {
        merged
    };
    let sides = Sides {
        topology: (sources.topology.entry, sources.topology.at),
        class: (sources.class.entry, sources.class.at),
    };
    merge_fields(parent, &sides, field_paths).map(Some)
}

/// Where the keys of one merged metadata map (`labels` or `annotations`)
/// of a topology child's parent come from: each side's map, at its path
/// rendered within its object (e.g. `spec.topology.controlPlane.metadata.labels`,
/// `spec.workers.machineDeployments[class="default-worker"].template.metadata.labels`).
/// A key the topology sets wins over the class's (`util.MergeMap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySources<'a> {
    /// The Cluster's topology entry: its map, and the map's path.
    pub topology: (StringMap<'a>, String),
    /// The ClusterClass's entry: its map, and the map's path.
    pub class: (StringMap<'a>, String),
}

/// The [`KeySources`] of the merged `map` (`labels` or `annotations`) of a
/// topology child, read again from the Cluster and ClusterClass the parent
/// was merged from; `None` for another map, or when they no longer yield
/// an entry (they did when the parent was merged). For explanations only:
/// the decision never needs it.
pub fn key_sources<'a>(
    shape: &ClusterShape,
    entry: TopologyEntry,
    cluster: &'a Value,
    class: &'a Value,
    entry_name: &str,
    map: &str,
) -> Option<KeySources<'a>> {
    let sources = sources(shape, entry, cluster, class, entry_name).ok()??;
    let side = |side: Side<'a>| {
        let keys = match map {
            "labels" => side.metadata.labels,
            "annotations" => side.metadata.annotations,
            _ => return None,
        };
        let path = [side.at.as_str()]
            .into_iter()
            .chain(side.metadata_at.iter().copied())
            .chain([map])
            .collect::<Vec<_>>()
            .join(".");
        Some((keys, path))
    };
    Some(KeySources {
        topology: side(sources.topology)?,
        class: side(sources.class)?,
    })
}

/// `util.MergeMap(topology, class)`: keys unioned, the first map's value kept.
fn merge(topology: &Metadata<'_>, class: &Metadata<'_>) -> Map<String, Value> {
    let union = |first: &StringMap<'_>, second: &StringMap<'_>| -> Value {
        let mut out = Map::new();
        for (key, value) in second.iter().chain(first.iter()) {
            out.insert((*key).to_owned(), Value::String((*value).to_owned()));
        }
        Value::Object(out)
    };
    let mut parent = Map::new();
    parent.insert("labels".to_owned(), union(&topology.labels, &class.labels));
    parent.insert(
        "annotations".to_owned(),
        union(&topology.annotations, &class.annotations),
    );
    parent
}
