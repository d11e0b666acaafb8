//! The in-place fields of a topology child, merged: the Cluster topology
//! wins over the ClusterClass field by field, and a list is taken whole
//! from one side.

use super::sources::{Source, nest};
use crate::json::fields::{self, FieldError};
use serde_json::{Map, Value};

/// The synthetic parent of a topology child: the merged metadata
/// (`labels`, `annotations`, `machineTemplate`) and each in-place field at
/// its path relative to the entry, taken from the topology entry when set
/// there, else from the class entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Merged {
    /// The synthetic parent object.
    pub(crate) object: Value,
    /// For each field path (dotted, relative to the entry) where its value
    /// comes from, or where it was looked for.
    pub(crate) origins: Vec<(String, FieldOrigin)>,
}

/// Where a topology child's field value comes from. Paths are rendered
/// within their object, e.g. `spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldOrigin {
    /// The Cluster's topology entry sets it.
    Cluster(String),
    /// The topology entry does not, the ClusterClass entry does.
    ClusterClass(String),
    /// Neither sets it: (the Cluster path, the ClusterClass path).
    Neither(String, String),
}

/// The topology entry and the class entry a child's fields come from,
/// each with its rendered path.
pub(super) struct Sides<'a> {
    pub(super) topology: (&'a Value, String),
    pub(super) class: (&'a Value, String),
}

/// Adds each field to the synthetic parent: the topology entry's value when
/// it sets the field, else the class entry's (CAPI: topology ?? class,
/// field by field; a list is taken whole from one side).
pub(super) fn merge_fields(
    mut parent: Map<String, Value>,
    sides: &Sides<'_>,
    field_paths: &[&[&str]],
) -> Result<Merged, (Source, FieldError)> {
    let mut origins = Vec::with_capacity(field_paths.len());
    for path in field_paths {
        let relative = path.join(".");
        let (value, origin) = match (
            set_value(&sides.topology, path, Source::Cluster)?,
            set_value(&sides.class, path, Source::ClusterClass)?,
        ) {
            (Some(value), _) => (
                Some(value),
                FieldOrigin::Cluster(format!("{}.{relative}", sides.topology.1)),
            ),
            (None, Some(value)) => (
                Some(value),
                FieldOrigin::ClusterClass(format!("{}.{relative}", sides.class.1)),
            ),
            (None, None) => (
                None,
                FieldOrigin::Neither(
                    format!("{}.{relative}", sides.topology.1),
                    format!("{}.{relative}", sides.class.1),
                ),
            ),
        };
        if let Some(value) = value {
            insert_at(&mut parent, path, value.clone());
        }
        origins.push((relative, origin));
    }
    Ok(Merged {
        object: Value::Object(parent),
        origins,
    })
}

/// The value one side sets at `path`, if it sets one.
pub(super) fn set_value<'a>(
    (entry, at): &(&'a Value, String),
    path: &[&str],
    source: Source,
) -> Result<Option<&'a Value>, (Source, FieldError)> {
    fields::get(entry, path)
        .map(|value| value.filter(|v| !is_unset(v)))
        .map_err(|e| (source, nest(at, e)))
}

/// An enum CAPI treats as unset (`deletion.order: ""`).
pub(super) fn is_unset(value: &Value) -> bool {
    value.as_str() == Some("")
}

pub(super) fn insert_at(map: &mut Map<String, Value>, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = map;
    for segment in parents {
        let next = current
            .entry(*segment)
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(next) = next else {
            return;
        };
        current = next;
    }
    current.insert((*last).to_owned(), value);
}
