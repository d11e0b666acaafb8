//! Finding a child's parent: the owner a rule names, or the Cluster
//! topology and its ClusterClass merged, named before any look-up with the
//! masks of exactly the paths the rule reads ([`locate`]), then taken from
//! what the request read ([`crate::request::reads`]).

use super::malformed::malformed;
use super::owner_link;
use super::parent::{FieldSource, Parent, Topology};
use super::parent_paths::{field_sources, read_paths};
use super::rules::{self, ParentLink, ReadAt, Rule};
use super::topology::{self, FieldOrigin};
use crate::error::Error;
use crate::json::fields::{self, FieldError, StringMap};
use crate::json::projection::Projection;
use crate::kube::api_version;
use crate::kube::owners;
use crate::request::AdmissionRequest;
use crate::request::lookup::{LookupError, ObjectRef};
use crate::request::reads::{Need, Reads};
use serde_json::Value;

/// What the rule that applies to a request reads, found from the request
/// alone, before any look-up, so that a look-up of the same object by the
/// tags can be shared (one read per object).
pub(crate) enum Located<'r> {
    /// No rule applies (no matching owner, not topology-owned): no look-up.
    NoRule,
    /// The rule reads the owner `reference` names, through `projection`.
    Owner {
        /// The rule.
        rule: &'static Rule,
        /// The owner.
        reference: ObjectRef,
        /// What the rule reads of it.
        projection: Projection<'static>,
    },
    /// The rule reads the Cluster topology, then its ClusterClass.
    Topology(TopologyRead<'r>),
}

/// The Cluster a topology-owned child's rule reads first, and what it needs
/// to read the ClusterClass after it.
pub(crate) struct TopologyRead<'r> {
    rule: &'static Rule,
    entry: rules::TopologyEntry,
    shape: &'static topology::ClusterShape,
    entry_name: &'r str,
    field_paths: Vec<&'static [&'static str]>,
    cluster: ObjectRef,
    projection: Projection<'static>,
    /// The ClusterClass the Cluster names, once the Cluster is read
    /// (its [`Located::then`]).
    class: Option<Result<Option<ObjectRef>, FieldError>>,
    class_projection: Projection<'static>,
}

/// The CAPI stage's reads: the rule's parent (or the topology's Cluster),
/// then the ClusterClass that Cluster names.
impl Located<'_> {
    /// The first look-up the rule makes: the object and its mask.
    pub(super) fn first(&self) -> Option<Need<'_>> {
        match self {
            Located::NoRule => None,
            Located::Owner {
                reference,
                projection,
                ..
            } => Some((reference, projection)),
            Located::Topology(read) => Some((&read.cluster, &read.projection)),
        }
    }

    /// The look-up the rule makes once `reads` holds its first: the
    /// ClusterClass a topology-owned child's Cluster (in the child's
    /// namespace) names, if the Cluster was found and names one. What the
    /// Cluster says is kept, a malformed class reference too, for the rule
    /// to report.
    pub(super) fn then(&mut self, reads: &Reads) -> Option<Need<'_>> {
        let Located::Topology(read) = self else {
            return None;
        };
        let cluster = reads.peek(&read.cluster)?;
        let namespace = read.cluster.namespace.as_deref().unwrap_or_default();
        let class = read
            .class
            .insert(class_reference(read.shape, cluster, namespace));
        match class {
            Ok(Some(class)) => Some((class, &read.class_projection)),
            _ => None,
        }
    }
}

/// The rule that applies to `request` (in `namespace`) and the first
/// object it reads, or that none applies.
pub(crate) fn locate<'r>(
    request: &'r AdmissionRequest,
    rules: &'static [Rule],
    namespace: &str,
    in_place: bool,
) -> Result<Located<'r>, Error> {
    let object = &request.object;
    let mut owners = None;
    for rule in rules {
        match rule.parent {
            ParentLink::ControllerOwner(_)
            | ParentLink::NonControllerOwner(_)
            | ParentLink::AnyOwner(_) => {
                let refs = match &owners {
                    Some(refs) => refs,
                    None => owners.insert(owners::owner_refs(object)?),
                };
                let Some(owner) = owner_link::find(refs, &rule.parent) else {
                    continue;
                };
                let reference = owner.object_ref(Some(namespace));
                let version = api_version::version(owner.api_version);
                let projection = Projection::of(&read_paths(rule, owner.kind, version, in_place));
                return Ok(Located::Owner {
                    rule,
                    reference,
                    projection,
                });
            }
            ParentLink::Topology(entry) => {
                if let Some(read) = locate_topology(request, namespace, rule, entry, in_place)? {
                    return Ok(Located::Topology(read));
                }
            }
        }
    }
    Ok(Located::NoRule)
}

/// How the search for a parent ended.
pub(super) enum Resolved {
    /// A rule applies and its parent was read.
    Parent(&'static Rule, Parent),
    /// No rule applies (no matching owner, not topology-owned): no look-up.
    NoRule,
    /// The parent (or Cluster / ClusterClass) does not exist.
    NotFound(&'static Rule, ObjectRef),
    /// The Cluster topology has no entry for this MachineDeployment.
    NoTopologyEntry(&'static Rule, ObjectRef),
}

/// The parent `located` names, taken from `reads`, or why there is none.
pub(super) fn resolve_parent(
    request: &AdmissionRequest,
    located: Located<'_>,
    reads: &mut Reads,
) -> Result<Resolved, Error> {
    match located {
        Located::NoRule => Ok(Resolved::NoRule),
        Located::Owner {
            rule, reference, ..
        } => Ok(match read(reads, rule, reference.clone())? {
            Some(parent) => Resolved::Parent(rule, parent),
            None => Resolved::NotFound(rule, reference),
        }),
        Located::Topology(read) => resolve_topology(read, &request.kind.version, reads),
    }
}

/// The Cluster a topology-owned child's `rule` reads, when the child
/// carries the topology labels (`None`: the rule does not apply).
fn locate_topology<'r>(
    request: &'r AdmissionRequest,
    namespace: &str,
    rule: &'static Rule,
    entry: rules::TopologyEntry,
    in_place: bool,
) -> Result<Option<TopologyRead<'r>>, Error> {
    let labels = fields::string_map(&request.object, &["metadata", "labels"])?;
    if !labels.contains_key(topology::TOPOLOGY_OWNED_LABEL) {
        return Ok(None);
    }
    let cluster_name = labels
        .get(topology::CLUSTER_NAME_LABEL)
        .filter(|n| !n.is_empty());
    let shape = topology::shape_for_child_version(&request.kind.version);
    let entry_name = entry_name(&labels, entry);
    let (Some(cluster_name), Some(shape), Some(entry_name)) = (cluster_name, shape, entry_name)
    else {
        return Ok(None);
    };
    let cluster = ObjectRef {
        api_version: shape.api_version.to_owned(),
        kind: "Cluster".to_owned(),
        name: (*cluster_name).to_owned(),
        namespace: Some(namespace.to_owned()),
    };
    let field_paths = field_sources(rule, &request.kind.version, in_place);
    let [projection, class_projection] = shape.projections(entry, &field_paths);
    Ok(Some(TopologyRead {
        rule,
        entry,
        shape,
        entry_name,
        field_paths,
        cluster,
        projection,
        class: None,
        class_projection,
    }))
}

/// The merged topology + class metadata of a topology-owned child of
/// `version`.
fn resolve_topology(
    located: TopologyRead<'_>,
    version: &str,
    reads: &mut Reads,
) -> Result<Resolved, Error> {
    let TopologyRead {
        rule,
        entry,
        shape,
        entry_name,
        field_paths,
        cluster: cluster_ref,
        class,
        ..
    } = located;
    let Some(cluster) = read(reads, rule, cluster_ref.clone())? else {
        return Ok(Resolved::NotFound(rule, cluster_ref));
    };
    // Named when the Cluster was read (`then`, which every read of the
    // stage's needs runs); named again here only if it was not, and then
    // taking the class from `reads` says it was never read.
    let class_ref = class
        .unwrap_or_else(|| {
            let namespace = cluster.reference.namespace.as_deref().unwrap_or_default();
            class_reference(shape, &cluster.object, namespace)
        })
        .map_err(|error| malformed(rule, &cluster.reference, error))?;
    let Some(class_ref) = class_ref else {
        return Ok(Resolved::NoTopologyEntry(rule, cluster.reference));
    };
    let Some(class) = read(reads, rule, class_ref.clone())? else {
        return Ok(Resolved::NotFound(rule, class_ref));
    };
    let merged = topology::merged_parent(
        shape,
        entry,
        &cluster.object,
        &class.object,
        entry_name,
        &field_paths,
    )
    .map_err(|(source, error)| {
        let parent = match source {
            topology::Source::Cluster => &cluster.reference,
            topology::Source::ClusterClass => &class.reference,
        };
        malformed(rule, parent, error)
    })?;
    Ok(match merged {
        Some(merged) => {
            let class_ref = &class.reference;
            let origins = merged
                .origins
                .into_iter()
                .map(|(relative, origin)| {
                    let origin = match origin {
                        FieldOrigin::Cluster(path) => {
                            FieldSource::In(cluster.reference.clone(), path)
                        }
                        FieldOrigin::ClusterClass(path) => FieldSource::In(class_ref.clone(), path),
                        FieldOrigin::Neither(in_cluster, in_class) => {
                            FieldSource::Neither(format!(
                                "neither {} {in_cluster} nor {class_ref} {in_class}",
                                cluster.reference
                            ))
                        }
                    };
                    (relative, origin)
                })
                .collect();
            Resolved::Parent(
                rule,
                Parent {
                    version: version.to_owned(),
                    origins,
                    // Moved, not copied: only an explanation reads them.
                    topology: Some(Topology {
                        shape,
                        entry,
                        cluster: cluster.object,
                        class: class.object,
                    }),
                    ..Parent::read(cluster.reference, merged.object, ReadAt::Version)
                },
            )
        }
        None => Resolved::NoTopologyEntry(rule, cluster.reference),
    })
}

/// The ClusterClass a Cluster of `shape` in `cluster_namespace` refers to,
/// if it refers to one.
pub(super) fn class_reference(
    shape: &topology::ClusterShape,
    cluster: &Value,
    cluster_namespace: &str,
) -> Result<Option<ObjectRef>, FieldError> {
    let class_ref = topology::class_ref(shape, cluster, cluster_namespace)?;
    Ok(class_ref.map(|(name, namespace)| ObjectRef {
        api_version: shape.api_version.to_owned(),
        kind: "ClusterClass".to_owned(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
    }))
}

/// The name of the child's entry in the Cluster topology, from its labels
/// (`""` for the control plane, which has one entry).
pub(super) fn entry_name<'a>(
    labels: &StringMap<'a>,
    entry: rules::TopologyEntry,
) -> Option<&'a str> {
    match topology::workers(entry) {
        None => Some(""),
        Some(workers) => labels.get(workers.name_label).copied(),
    }
}

/// One object read: NotFound is `None` (allowed unchanged), anything else
/// fails.
pub(super) fn read(
    reads: &mut Reads,
    rule: &Rule,
    reference: ObjectRef,
) -> Result<Option<Parent>, Error> {
    match reads.take(&reference) {
        Ok(object) => Ok(Some(Parent::read(reference, object, rule.read_at))),
        Err(LookupError::NotFound) => Ok(None),
        Err(LookupError::Denied(message) | LookupError::Failed(message)) => Err(Error::Lookup {
            object: Box::new(reference),
            reader: format!("the parent of this {}", rule.family).into(),
            message,
        }),
    }
}
