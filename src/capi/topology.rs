//! Topology-owned ControlPlanes and MachineDeployments: their parent is the
//! Cluster's topology merged over its ClusterClass (capi-rules §d).
//!
//! The resolver turns (Cluster, ClusterClass) into a small synthetic parent
//! object `{labels, annotations, machineTemplate?}` so the topology rows of
//! the rule table flow like every other row. The v1beta1 / v1beta2
//! differences are the [`SHAPES`] rows.

use super::rules::TopologyEntry;
use crate::fields::{self, FieldError, FieldPath, StringMap};
use crate::projection::Projection;
use serde_json::{Map, Value};

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
    pub fn cluster_projection(&self, entry: TopologyEntry) -> Projection {
        const CONTROL_PLANE: [&str; 4] = ["spec", "topology", "controlPlane", "metadata"];
        match workers(entry) {
            None => Projection::of(&[
                self.class_name,
                self.class_namespace,
                &[CONTROL_PLANE.as_slice(), &["labels"]].concat(),
                &[CONTROL_PLANE.as_slice(), &["annotations"]].concat(),
            ]),
            Some(workers) => {
                let list = ["spec", "topology", "workers", workers.list];
                Projection::of(&[
                    self.class_name,
                    self.class_namespace,
                    &[list.as_slice(), &["name"]].concat(),
                    &[list.as_slice(), &["class"]].concat(),
                    &[list.as_slice(), &["metadata", "labels"]].concat(),
                    &[list.as_slice(), &["metadata", "annotations"]].concat(),
                ])
            }
        }
    }

    /// What the resolver reads of the ClusterClass for `entry`.
    pub fn class_projection(&self, entry: TopologyEntry) -> Projection {
        match workers(entry) {
            None => Projection::of(&[
                &["spec", "controlPlane", "metadata", "labels"],
                &["spec", "controlPlane", "metadata", "annotations"],
                &["spec", "controlPlane", "machineInfrastructure"],
            ]),
            Some(workers) => {
                let list = ["spec", "workers", workers.list];
                let metadata = [list.as_slice(), self.worker_class_metadata].concat();
                Projection::of(&[
                    &[list.as_slice(), &["class"]].concat(),
                    &[metadata.as_slice(), &["labels"]].concat(),
                    &[metadata.as_slice(), &["annotations"]].concat(),
                ])
            }
        }
    }
}

/// The shape of the Cluster a child of API version `version` looks up
/// (DESIGN.md: the Cluster is read at the child's own version).
pub fn shape_for_child_version(version: &str) -> Option<&'static ClusterShape> {
    SHAPES
        .iter()
        .find(|s| s.api_version.rsplit('/').next() == Some(version))
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

/// The merged metadata for a topology child, as a synthetic parent object,
/// or `None` when the Cluster has no entry named `entry_name` for it (a
/// skip, not a failure).
pub fn merged_parent(
    shape: &ClusterShape,
    entry: TopologyEntry,
    cluster: &Value,
    class: &Value,
    entry_name: &str,
) -> Result<Option<Value>, (Source, FieldError)> {
    let in_cluster = |e| (Source::Cluster, e);
    let in_class = |e| (Source::ClusterClass, e);
    let Some(workers) = workers(entry) else {
        let topology = metadata(cluster, &["spec", "topology", "controlPlane", "metadata"])
            .map_err(in_cluster)?;
        let from_class =
            metadata(class, &["spec", "controlPlane", "metadata"]).map_err(in_class)?;
        let merged = merge(&topology, &from_class);
        let mut parent = merged.clone();
        // CAPI sets spec.machineTemplate.metadata only for control planes
        // whose class declares machine infrastructure.
        let infrastructure = ["spec", "controlPlane", "machineInfrastructure"];
        if fields::get(class, &infrastructure)
            .map_err(in_class)?
            .is_some()
        {
            parent.insert("machineTemplate".to_owned(), Value::Object(merged));
        }
        return Ok(Some(Value::Object(parent)));
    };
    let topology_path = ["spec", "topology", "workers", workers.list];
    let Some((index, topology_entry)) =
        find_entry(cluster, &topology_path, "name", entry_name).map_err(in_cluster)?
    else {
        return Ok(None);
    };
    let entry_path = format!("{}[{index}]", topology_path.join("."));
    let topology =
        metadata(topology_entry, &["metadata"]).map_err(|e| in_cluster(nest(&entry_path, e)))?;
    let class_name = fields::string(topology_entry, &["class"])
        .map_err(|e| in_cluster(nest(&entry_path, e)))?
        .unwrap_or_default();
    let class_path = ["spec", "workers", workers.list];
    let class_entry = find_entry(class, &class_path, "class", class_name).map_err(in_class)?;
    let from_class = match class_entry {
        Some((i, class_entry)) => metadata(class_entry, shape.worker_class_metadata)
            .map_err(|e| in_class(nest(&format!("{}[{i}]", class_path.join(".")), e)))?,
        // CAPI never creates a worker whose class the ClusterClass lacks; if
        // one exists, its own topology metadata still applies.
        None => Metadata::default(),
    };
    Ok(Some(Value::Object(merge(&topology, &from_class))))
}

/// Labels and annotations of one metadata block.
#[derive(Debug, Default)]
struct Metadata<'a> {
    labels: StringMap<'a>,
    annotations: StringMap<'a>,
}

fn metadata<'a>(root: &'a Value, path: &[&str]) -> Result<Metadata<'a>, FieldError> {
    let labels_path: Vec<&str> = path.iter().copied().chain(["labels"]).collect();
    let annotations_path: Vec<&str> = path.iter().copied().chain(["annotations"]).collect();
    Ok(Metadata {
        labels: fields::string_map(root, &labels_path)?,
        annotations: fields::string_map(root, &annotations_path)?,
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

/// The entry of the array at `path` whose `key` field equals `wanted`.
fn find_entry<'a>(
    root: &'a Value,
    path: &[&str],
    key: &str,
    wanted: &str,
) -> Result<Option<(usize, &'a Value)>, FieldError> {
    let entries = match fields::get(root, path)? {
        None => return Ok(None),
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(FieldError::new(
                FieldPath::of(path),
                format!("expected an array, found {}", fields::type_name(other)),
            ));
        }
    };
    for (i, entry) in entries.iter().enumerate() {
        let name = fields::string(entry, &[key])
            .map_err(|e| nest(&format!("{}[{i}]", path.join(".")), e))?;
        if name == Some(wanted) {
            return Ok(Some((i, entry)));
        }
    }
    Ok(None)
}

/// Re-roots an error found inside an array entry under the entry's path.
fn nest(prefix: &str, error: FieldError) -> FieldError {
    FieldError::new(
        FieldPath::of(&[prefix, &error.field.to_string()]),
        error.problem,
    )
}
