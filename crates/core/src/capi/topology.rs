//! Topology-owned ControlPlanes, MachineDeployments and MachinePools: their
//! parent is the Cluster's topology merged over its ClusterClass (CAPI
//! `exp/topology/desiredstate`).
//!
//! The resolver turns (Cluster, ClusterClass) into a small synthetic parent
//! object `{labels, annotations, machineTemplate?, <in-place fields>}` so
//! the topology rows of the rule table flow like every other row. The v1beta1 / v1beta2
//! differences are the [`SHAPES`] rows.

use super::rules::TopologyEntry;
use crate::json::fields::{self, FieldError, StringMap};
use serde_json::{Map, Value};

mod field_merge;
mod shape;
mod sources;
pub(crate) use field_merge::{FieldOrigin, Merged};
use field_merge::{Sides, merge_fields};
pub(crate) use shape::{CLUSTER_NAME_LABEL, ClusterShape, SHAPES, TOPOLOGY_OWNED_LABEL, class_ref};
pub(crate) use shape::{shape_for_child_version, workers};
pub(crate) use sources::Source;
use sources::{Metadata, Side, sources};

/// The merged metadata and fields for a topology child, as a synthetic
/// parent, or `None` when the Cluster has no entry named `entry_name` for
/// it (a skip, not a failure). `field_paths` are the in-place fields the
/// rule reads, relative to the entry.
pub(crate) fn merged_parent(
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
pub(crate) struct KeySources<'a> {
    /// The Cluster's topology entry: its map, and the map's path.
    pub(crate) topology: (StringMap<'a>, String),
    /// The ClusterClass's entry: its map, and the map's path.
    pub(crate) class: (StringMap<'a>, String),
}

/// The [`KeySources`] of the merged `map` (`labels` or `annotations`) of a
/// topology child, read again from the Cluster and ClusterClass the parent
/// was merged from; `None` for another map, or when they no longer yield
/// an entry (they did when the parent was merged). For explanations only:
/// the decision never needs it.
pub(crate) fn key_sources<'a>(
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
