//! The object whose label set an object's tags start from, under the
//! object's own (docs/cloud-tags.md): the Cluster of a cluster-level
//! infrastructure object (and of an OpenStackMachine), or the composite
//! resource that composed a managed resource; how it is named, what is
//! read of it, and how the search for it ended.
//!
//! The Cluster is named by the label `cluster.x-k8s.io/cluster-name` (same
//! namespace), which CAPI sets on cloned machines and on topology-generated
//! objects at CREATE, else by an ownerReference of kind `Cluster`, which the
//! Cluster controller adds to an InfraCluster after it is created. It is
//! looked up at the version of an ownerReference to it, else at
//! `cluster.x-k8s.io/v1beta2`, the version CAPI v1.11 and later serve; the
//! mask is the two maps the label set is read from.

use crate::error::Error;
use crate::json::fields::{self, FieldError};
use crate::json::labels_annotation::Entries;
use crate::json::projection::Projection;
use crate::kube::owners::{self, OwnerRef};
use crate::request::lookup::{LookupError, ObjectRef};
use crate::request::reads::Reads;
use crate::tags::contract_names::{ANNOTATIONS, LABELS};
use crate::tags::decision::label_set::{LabelSet, Layer, Source};
use crate::tags::failures::TAG_SOURCE_READER;
use crate::tags::object_read::parse_labels_annotation;
use serde_json::{Map, Value};

pub(crate) use crate::kube::kinds::CLUSTER_NAME_LABEL;
const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// The version a Cluster is read at when no ownerReference names one.
pub(crate) const DEFAULT_CLUSTER_VERSION: &str = "cluster.x-k8s.io/v1beta2";
/// What is read of the source: its label set.
/// What [`cluster_reference`] and a managed resource's composing resource
/// (`managed_resource::composing_resource`) read of the object besides
/// its labels: its owners, in its namespace.
pub(crate) const OWNER_PATHS: [&[&str]; 2] =
    [&["metadata", "ownerReferences"], &["metadata", "namespace"]];

const READ: [&[&str]; 2] = [&["metadata", "labels"], &["metadata", "annotations"]];

/// How the search for the object a label set starts from ended.
#[derive(Debug)]
pub(crate) enum SourceFound {
    /// The row reads no other object, or neither label nor owner names a
    /// Cluster, or the name is not a valid object name: no look-up was
    /// made.
    Unnamed,
    /// The Cluster does not exist (yet, or any more).
    ClusterNotFound(ObjectRef),
    /// The Cluster, holding only its labels and annotations.
    Cluster(ObjectRef, Value),
    /// A managed resource's composite resource, holding only its labels
    /// and annotations.
    ComposingXr(ObjectRef, Value),
}

impl SourceFound {
    /// The object read, and what was read of it.
    pub(crate) fn read(&self) -> Option<(&ObjectRef, &Value)> {
        match self {
            SourceFound::Cluster(reference, object)
            | SourceFound::ComposingXr(reference, object) => Some((reference, object)),
            SourceFound::Unnamed | SourceFound::ClusterNotFound(_) => None,
        }
    }

    /// Its layers of a label set, read once (none when nothing was read).
    pub(crate) fn layers(&self) -> Result<SourceLayers<'_>, FieldError> {
        let Some((_, object)) = self.read() else {
            return Ok(SourceLayers::default());
        };
        let labels = fields::string_object(object, LABELS)?;
        let annotations = fields::string_map(object, ANNOTATIONS)?;
        let extra = parse_labels_annotation(&annotations)?;
        Ok(SourceLayers { labels, extra })
    }
}

/// The looked-up object's layers of a label set: its labels and its
/// label-set annotation's entries.
#[derive(Default)]
pub(crate) struct SourceLayers<'f> {
    labels: Option<&'f Map<String, Value>>,
    extra: Entries<'f>,
}

impl SourceLayers<'_> {
    /// The label set these layers start: its labels, then its annotation.
    pub(crate) fn set(&self) -> LabelSet<'_> {
        let mut set = LabelSet::default();
        if let Some(labels) = self.labels {
            set = set.with(Source::LookedUpLabels, Layer::Object(labels));
        }
        set.with(Source::LookedUpAnnotation, Layer::Annotation(&self.extra))
    }
}

/// The Cluster `object` (in `namespace`, with `labels` as they will be
/// stored) belongs to, if something names it.
pub(crate) fn cluster_reference(
    object: &Value,
    name_label: Option<&str>,
    namespace: &str,
) -> Result<Option<ObjectRef>, FieldError> {
    let owners = owners::owner_refs(object)?;
    let is_cluster = |owner: &&OwnerRef<'_>| owner.kind == "Cluster" && owner.group() == CAPI_GROUP;
    let name = match name_label.filter(|n| !n.is_empty()) {
        Some(name) => name,
        None => match owners.iter().find(is_cluster) {
            Some(owner) => owner.name,
            None => return Ok(None),
        },
    };
    if !is_object_name(name) {
        return Ok(None);
    }
    let api_version = owners
        .iter()
        .filter(is_cluster)
        .find(|owner| owner.name == name)
        .map_or(DEFAULT_CLUSTER_VERSION, |owner| owner.api_version);
    Ok(Some(ObjectRef {
        api_version: api_version.to_owned(),
        kind: "Cluster".to_owned(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
    }))
}

/// What is read of the source, a Cluster or a composite resource: its
/// label set.
pub(crate) fn label_set_mask() -> Projection<'static> {
    Projection::of(&READ)
}

/// The Cluster `reference` names, taken from what the request read
/// (field-masked to its label set, [`label_set_mask`]).
pub(crate) fn read_cluster(
    reference: Option<ObjectRef>,
    reads: &mut Reads,
) -> Result<SourceFound, Error> {
    let Some(reference) = reference else {
        return Ok(SourceFound::Unnamed);
    };
    match reads.take(&reference) {
        Ok(cluster) => Ok(SourceFound::Cluster(reference, cluster)),
        Err(LookupError::NotFound) => Ok(SourceFound::ClusterNotFound(reference)),
        Err(LookupError::Denied(message) | LookupError::Failed(message)) => Err(Error::Lookup {
            object: Box::new(reference),
            reader: TAG_SOURCE_READER.into(),
            message,
        }),
    }
}

/// Whether `name` is a valid object name (a DNS-1123 subdomain, as the API
/// server requires of a Cluster's: at most 253 characters, dot-separated
/// labels, each of lowercase letters, digits and `-`, starting and ending
/// with a letter or digit): a name that is not can name no Cluster, so it is
/// not looked up.
pub(crate) fn is_object_name(name: &str) -> bool {
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let is_label = |label: &str| {
        let bytes = label.as_bytes();
        bytes.first().is_some_and(alphanumeric)
            && bytes.last().is_some_and(alphanumeric)
            && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
    };
    !name.is_empty() && name.len() <= 253 && name.split('.').all(is_label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::simple("prod-eu", true)]
    #[case::dotted("a.b-c", true)]
    #[case::upper("Prod", false)]
    #[case::leading_dash("-a", false)]
    #[case::trailing_dot("a.", false)]
    #[case::slash("a/b", false)]
    #[case::empty("", false)]
    #[case::empty_label("a..b", false)]
    #[case::label_starting_with_a_dash("a.-b", false)]
    #[case::label_ending_with_a_dash("a-.b", false)]
    #[case::longest(&"a".repeat(253), true)]
    #[case::too_long(&"a".repeat(254), false)]
    fn object_names(#[case] name: &str, #[case] valid: bool) {
        assert_eq!(is_object_name(name), valid);
    }

    #[test]
    fn the_label_names_the_cluster_and_an_owner_of_that_name_its_version() {
        let object = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "other"},
            {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "c"}]}});
        let found = cluster_reference(&object, Some("c"), "ns").unwrap();
        assert_eq!(
            found.map(|r| (r.name, r.api_version)),
            Some(("c".into(), "cluster.x-k8s.io/v1beta1".into()))
        );
    }

    #[test]
    fn without_the_label_the_cluster_owner_names_it() {
        let object = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "x"},
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "c"}]}});
        let found = cluster_reference(&object, None, "ns").unwrap().unwrap();
        assert_eq!(found.to_string(), "Cluster ns/c (cluster.x-k8s.io/v1beta2)");
    }

    #[test]
    fn a_label_without_an_owner_is_read_at_v1beta2() {
        let found = cluster_reference(&json!({}), Some("c"), "ns").unwrap();
        assert_eq!(found.unwrap().api_version, DEFAULT_CLUSTER_VERSION);
    }

    #[rstest]
    #[case::nothing(None)]
    #[case::empty_label(Some(""))]
    #[case::invalid_name(Some("Not_A_Name"))]
    fn nothing_valid_names_no_cluster(#[case] name: Option<&str>) {
        assert_eq!(cluster_reference(&json!({}), name, "ns").unwrap(), None);
    }
}
