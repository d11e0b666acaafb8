//! A child's parent as the decision reads it: an object read from the
//! cluster, or the one synthesised from a Cluster topology and its
//! ClusterClass, with where each of its fields comes from, so reports and
//! errors name the object a value was read in.

use super::malformed::malformed;
use super::rules::{self, Endpoint, ReadAt, Rule};
use super::topology;
use crate::error::Error;
use crate::json::fields::{FieldError, FieldPath};
use crate::kube::api_version;
use crate::request::lookup::ObjectRef;
use serde_json::Value;

/// A parent read from the cluster (or synthesised from topology).
pub(super) struct Parent {
    pub(super) reference: ObjectRef,
    /// The API version its field paths are read at (`v1beta2`).
    pub(super) version: String,
    pub(super) object: Value,
    /// Topology parents: where each field comes from (the Cluster or the
    /// ClusterClass), by path relative to the entry.
    pub(super) origins: Vec<(String, FieldSource)>,
    /// Topology parents: the Cluster and ClusterClass merged.
    pub(super) topology: Option<Topology>,
}

/// The Cluster and ClusterClass a topology parent was merged from, moved
/// here rather than copied, so an explanation can name where each label
/// and annotation comes from; the decision never reads them again. The
/// Cluster's reference is the parent's; the ClusterClass's is read again
/// from the Cluster.
pub(super) struct Topology {
    pub(super) shape: &'static topology::ClusterShape,
    pub(super) entry: rules::TopologyEntry,
    pub(super) cluster: Value,
    pub(super) class: Value,
}

/// Where a field of a synthesised topology parent comes from.
pub(super) enum FieldSource {
    /// Read in this object, at this rendered path.
    In(ObjectRef, String),
    /// Set by neither the Cluster nor the ClusterClass.
    Neither(String),
}

impl Parent {
    /// The parent `object`, read at `reference`; its fields are read at the
    /// version `read_at` finds for it.
    pub(super) fn read(reference: ObjectRef, object: Value, read_at: ReadAt) -> Self {
        let version = api_version::version(&reference.api_version);
        let version = read_at
            .version_of(&reference.kind, version, &object)
            .to_owned();
        Self {
            reference,
            version,
            object,
            origins: Vec::new(),
            topology: None,
        }
    }

    fn origin(&self, from: &Endpoint) -> Option<&FieldSource> {
        let path = from.path.join(".");
        self.origins
            .iter()
            .find(|(relative, _)| *relative == path)
            .map(|(_, origin)| origin)
    }

    /// Where the parent holds the field at `from`, as reports name it.
    pub(super) fn source(&self, from: &Endpoint) -> String {
        match self.origin(from) {
            Some(FieldSource::In(reference, path)) => format!("{reference} {path}"),
            Some(FieldSource::Neither(text)) => text.clone(),
            None => format!("{} {}", self.reference, from.path.join(".")),
        }
    }

    /// A malformed parent field, named in the object it was read from.
    pub(super) fn malformed(&self, rule: &Rule, error: FieldError) -> Error {
        let origin = self.origins.iter().find(|(relative, _)| {
            let field = error.field.to_string();
            field == *relative || field.starts_with(&format!("{relative}["))
        });
        match origin {
            Some((relative, FieldSource::In(reference, path))) => {
                let field = error.field.to_string();
                let rest = &field[relative.len()..];
                malformed(
                    rule,
                    reference,
                    FieldError::new(FieldPath::of(&[&format!("{path}{rest}")]), error.problem),
                )
            }
            _ => malformed(rule, &self.reference, error),
        }
    }
}
