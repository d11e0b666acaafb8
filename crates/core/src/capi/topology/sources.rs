//! The two entries a topology child's parent merges, located and read:
//! the Cluster's topology entry and the ClusterClass's, each with its
//! metadata and its path rendered within its object, a malformed field
//! named in the object it was found in.

use super::shape::{ClusterShape, workers};
use crate::capi::rules::TopologyEntry;
use crate::json::fields::{self, FieldError, FieldPath, StringMap};
use serde_json::Value;

/// Which of the two topology objects a malformed field was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The Cluster.
    Cluster,
    /// The ClusterClass.
    ClusterClass,
}

/// One side of a topology child's parent: the Cluster's topology entry or
/// the ClusterClass's.
pub(super) struct Side<'a> {
    /// The entry (`Null` when the class lacks the worker class).
    pub(super) entry: &'a Value,
    /// The entry's path, rendered: `spec.topology.controlPlane`,
    /// `spec.workers.machineDeployments[class="default-worker"]`.
    pub(super) at: String,
    /// Where the entry keeps its metadata.
    pub(super) metadata_at: &'static [&'static str],
    /// The entry's labels and annotations.
    pub(super) metadata: Metadata<'a>,
}

/// Both sides, or `None` when the Cluster has no entry for the child.
pub(super) struct Sources<'a> {
    pub(super) topology: Side<'a>,
    pub(super) class: Side<'a>,
}

/// Locates the two entries a topology child's parent merges and reads
/// their metadata, in that order, naming a malformed field in its object.
pub(super) fn sources<'a>(
    shape: &ClusterShape,
    entry: TopologyEntry,
    cluster: &'a Value,
    class: &'a Value,
    entry_name: &str,
) -> Result<Option<Sources<'a>>, (Source, FieldError)> {
    let in_cluster = |e| (Source::Cluster, e);
    let in_class = |e| (Source::ClusterClass, e);
    const METADATA: &[&str] = &["metadata"];
    let Some(workers) = workers(entry) else {
        let topology_entry = fields::get(cluster, &["spec", "topology", "controlPlane"])
            .map_err(in_cluster)?
            .unwrap_or(&Value::Null);
        let class_entry = fields::get(class, &["spec", "controlPlane"])
            .map_err(in_class)?
            .unwrap_or(&Value::Null);
        let topology = metadata(topology_entry, METADATA)
            .map_err(|e| in_cluster(nest("spec.topology.controlPlane", e)))?;
        let from_class =
            metadata(class_entry, METADATA).map_err(|e| in_class(nest("spec.controlPlane", e)))?;
        return Ok(Some(Sources {
            topology: Side {
                entry: topology_entry,
                at: "spec.topology.controlPlane".to_owned(),
                metadata_at: METADATA,
                metadata: topology,
            },
            class: Side {
                entry: class_entry,
                at: "spec.controlPlane".to_owned(),
                metadata_at: METADATA,
                metadata: from_class,
            },
        }));
    };
    let topology_path = ["spec", "topology", "workers", workers.list];
    let Some((index, topology_entry)) =
        find_entry(cluster, &topology_path, "name", entry_name).map_err(in_cluster)?
    else {
        return Ok(None);
    };
    let entry_path = format!("{}[{index}]", topology_path.join("."));
    let topology =
        metadata(topology_entry, METADATA).map_err(|e| in_cluster(nest(&entry_path, e)))?;
    let class_name = fields::string(topology_entry, &["class"])
        .map_err(|e| in_cluster(nest(&entry_path, e)))?
        .unwrap_or_default();
    let class_path = ["spec", "workers", workers.list];
    let class_entry = find_entry(class, &class_path, "class", class_name).map_err(in_class)?;
    let (from_class, class_entry) = match class_entry {
        Some((i, class_entry)) => (
            metadata(class_entry, shape.worker_class_metadata)
                .map_err(|e| in_class(nest(&format!("{}[{i}]", class_path.join(".")), e)))?,
            class_entry,
        ),
        // CAPI never creates a worker whose class the ClusterClass lacks; if
        // one exists, its own topology metadata still applies.
        None => (Metadata::default(), &Value::Null),
    };
    let quoted = |value: &str| Value::from(value).to_string();
    Ok(Some(Sources {
        topology: Side {
            entry: topology_entry,
            at: format!("{}[name={}]", topology_path.join("."), quoted(entry_name)),
            metadata_at: METADATA,
            metadata: topology,
        },
        class: Side {
            entry: class_entry,
            at: format!("{}[class={}]", class_path.join("."), quoted(class_name)),
            metadata_at: shape.worker_class_metadata,
            metadata: from_class,
        },
    }))
}

/// Labels and annotations of one metadata block.
#[derive(Debug, Default)]
pub(super) struct Metadata<'a> {
    pub(super) labels: StringMap<'a>,
    pub(super) annotations: StringMap<'a>,
}

fn metadata<'a>(root: &'a Value, path: &[&str]) -> Result<Metadata<'a>, FieldError> {
    let labels_path: Vec<&str> = path.iter().copied().chain(["labels"]).collect();
    let annotations_path: Vec<&str> = path.iter().copied().chain(["annotations"]).collect();
    Ok(Metadata {
        labels: fields::string_map(root, &labels_path)?,
        annotations: fields::string_map(root, &annotations_path)?,
    })
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
            return Err(FieldError::expected(FieldPath::of(path), "an array", other));
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
pub(super) fn nest(prefix: &str, error: FieldError) -> FieldError {
    let field = error.field.to_string();
    let path = if field.is_empty() {
        FieldPath::of(&[prefix])
    } else {
        FieldPath::of(&[prefix, &field])
    };
    FieldError::new(path, error.problem)
}
