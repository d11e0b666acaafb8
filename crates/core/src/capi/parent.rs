//! A child's parent as the decision reads it: an object read from the
//! cluster, or the one synthesised from a Cluster topology and its
//! ClusterClass, with where each of its fields comes from, so reports and
//! errors name the object a value was read in.

use super::*;

/// A parent read from the cluster (or synthesised from topology).
pub(super) struct Parent {
    pub(super) reference: ObjectRef,
    /// The API version its field paths are read at (`v1beta2`).
    pub(super) version: String,
    pub(super) object: Value,
    /// Topology parents: where each field comes from (the Cluster or the
    /// ClusterClass), by path relative to the entry.
    pub(super) origins: Vec<(String, Origin)>,
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
pub(super) enum Origin {
    /// Read in this object, at this rendered path.
    In(ObjectRef, String),
    /// Set by neither the Cluster nor the ClusterClass.
    Neither(String),
}

impl Parent {
    pub(super) fn read(reference: ObjectRef, object: Value) -> Self {
        let version = api_version::version(&reference.api_version).to_owned();
        Self {
            reference,
            version,
            object,
            origins: Vec::new(),
            topology: None,
        }
    }

    /// Explanations only: for a topology parent, where each key of the
    /// merged map `flow` reads comes from, each side named in full
    /// (`Cluster default/c (…) spec.topology.controlPlane.metadata.labels`).
    /// `None` for any other parent. `child` names the child's entry.
    pub(super) fn key_sources<'a>(
        &'a self,
        flow: &MapFlow,
        child: &'a Value,
    ) -> Option<topology::KeySources<'a>> {
        let topology = self.topology.as_ref()?;
        let labels = fields::string_map(child, OWN_LABELS).ok()?;
        let entry_name = resolve::entry_name(&labels, topology.entry)?;
        let sources = topology::key_sources(
            topology.shape,
            topology.entry,
            &topology.cluster,
            &topology.class,
            entry_name,
            flow.from.last()?,
        )?;
        let cluster = &self.reference;
        let namespace = cluster.namespace.as_deref().unwrap_or_default();
        let class =
            resolve::class_reference(topology.shape, &topology.cluster, namespace).ok()??;
        Some(topology::KeySources {
            topology: (
                sources.topology.0,
                format!("{cluster} {}", sources.topology.1),
            ),
            class: (sources.class.0, format!("{class} {}", sources.class.1)),
        })
    }

    fn origin(&self, from: &Endpoint) -> Option<&Origin> {
        let path = from.path.join(".");
        self.origins
            .iter()
            .find(|(relative, _)| *relative == path)
            .map(|(_, origin)| origin)
    }

    /// Where the parent holds the field at `from`, as reports name it.
    pub(super) fn source(&self, from: &Endpoint) -> String {
        match self.origin(from) {
            Some(Origin::In(reference, path)) => format!("{reference} {path}"),
            Some(Origin::Neither(text)) => text.clone(),
            None => format!("{} {}", self.reference, from.path.join(".")),
        }
    }

    /// A malformed parent field, named in the object it was read from.
    pub(super) fn malformed(&self, rule: &Rule, error: FieldError) -> CapiError {
        let origin = self.origins.iter().find(|(relative, _)| {
            let field = error.field.to_string();
            field == *relative || field.starts_with(&format!("{relative}["))
        });
        match origin {
            Some((relative, Origin::In(reference, path))) => {
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
