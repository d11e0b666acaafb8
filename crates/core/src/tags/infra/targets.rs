//! Where each CAPI infrastructure kind keeps its cloud tags, as data
//! (README, "Cloud tags on CAPI infrastructure").
//!
//! The rows follow how each provider spreads tags. CAPA, CAPZ and CAPG merge
//! the InfraCluster's tags into every machine's (the machine's value wins),
//! so the Cluster's labels go to the cluster-level object once and reach
//! every machine from there, while a machine takes only its own labels: a
//! Cluster label copied onto each machine would freeze there and win over
//! the Cluster's later value. CAPO has no cluster-level key/value field, so
//! its machines take the Cluster's labels directly. A kind with no row is
//! never stamped: machine templates (immutable, and cloned into machines,
//! which are stamped when created), kinds without a key/value tag field
//! (HetznerCluster, HCloudMachine, OpenStackCluster's string `tags`,
//! DockerMachine), and kinds left for later (GCPMachinePool, GCPManaged*,
//! AzureManaged*). Adding a provider kind is one row.

use crate::capi::rules::KindMatch;
pub use crate::tags::field::Shape;
use crate::tags::field::{TagField, WhenEmpty};

/// Whose labels become the object's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelSource {
    /// The object's own label set.
    Object,
    /// The owning Cluster's label set, with the object's on top.
    ClusterAndObject,
}

/// One row of the target table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Group and kind of the object.
    pub kind: KindMatch,
    /// The API version the provider serves (the only one a request can
    /// arrive in: the others are `served: false`).
    pub version: &'static str,
    /// Path of the tag field.
    pub field: &'static [&'static str],
    /// How the field holds its entries.
    pub shape: Shape,
    /// Whose labels count.
    pub labels: LabelSource,
    /// The built-in infrastructure profile applied (a user profile listing
    /// this name among its providers replaces it).
    pub profile: &'static str,
    /// Stamped on CREATE only: the provider makes the field immutable, so a
    /// change on UPDATE would turn an allowed request into a denial.
    pub create_only: bool,
    /// Where the provider documents the field, for the README and messages.
    pub upstream: &'static str,
}

const INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io";
const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
const ADDITIONAL_TAGS: &[&str] = &["spec", "additionalTags"];

const fn kind(group: &'static str, kind: &'static str) -> KindMatch {
    KindMatch {
        group,
        kind: Some(kind),
    }
}

/// A row whose tag field is a map, stamped on CREATE and UPDATE.
const fn map_row(
    kind: KindMatch,
    version: &'static str,
    field: &'static [&'static str],
    labels: LabelSource,
    profile: &'static str,
    upstream: &'static str,
) -> Target {
    Target {
        kind,
        version,
        field,
        shape: Shape::Map,
        labels,
        profile,
        create_only: false,
        upstream,
    }
}

use LabelSource::{ClusterAndObject, Object};

/// The table. A (group, kind, version) has at most one row.
pub const TARGETS: &[Target] = &[
    map_row(
        kind(INFRASTRUCTURE, "AWSCluster"),
        "v1beta2",
        ADDITIONAL_TAGS,
        ClusterAndObject,
        "capa",
        "cluster-api-provider-aws api/v1beta2/awscluster_types.go",
    ),
    map_row(
        kind(CONTROL_PLANE, "AWSManagedControlPlane"),
        "v1beta2",
        ADDITIONAL_TAGS,
        ClusterAndObject,
        "capa",
        "cluster-api-provider-aws controlplane/eks/api/v1beta2/awsmanagedcontrolplane_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AWSMachine"),
        "v1beta2",
        ADDITIONAL_TAGS,
        Object,
        "capa",
        "cluster-api-provider-aws api/v1beta2/awsmachine_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AWSMachinePool"),
        "v1beta2",
        ADDITIONAL_TAGS,
        Object,
        "capa",
        "cluster-api-provider-aws exp/api/v1beta2/awsmachinepool_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AWSManagedMachinePool"),
        "v1beta2",
        ADDITIONAL_TAGS,
        Object,
        "capa",
        "cluster-api-provider-aws exp/api/v1beta2/awsmanagedmachinepool_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AzureCluster"),
        "v1beta1",
        ADDITIONAL_TAGS,
        ClusterAndObject,
        "capz",
        "cluster-api-provider-azure api/v1beta1/azurecluster_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AzureMachine"),
        "v1beta1",
        ADDITIONAL_TAGS,
        Object,
        "capz",
        "cluster-api-provider-azure api/v1beta1/azuremachine_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "AzureMachinePool"),
        "v1beta1",
        ADDITIONAL_TAGS,
        Object,
        "capz",
        "cluster-api-provider-azure exp/api/v1beta1/azuremachinepool_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "GCPCluster"),
        "v1beta1",
        &["spec", "additionalLabels"],
        ClusterAndObject,
        "capg",
        "cluster-api-provider-gcp api/v1beta1/gcpcluster_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "GCPMachine"),
        "v1beta1",
        &["spec", "additionalLabels"],
        Object,
        "capg",
        "cluster-api-provider-gcp api/v1beta1/gcpmachine_types.go",
    ),
    Target {
        kind: kind(INFRASTRUCTURE, "OpenStackMachine"),
        version: "v1beta1",
        field: &["spec", "serverMetadata"],
        shape: Shape::KeyValueList,
        labels: ClusterAndObject,
        profile: "capo",
        create_only: true,
        upstream: "cluster-api-provider-openstack api/v1beta1/openstackmachine_types.go",
    },
];

impl Target {
    /// The row's tag field: a field the user wrote, even empty, stays.
    pub const fn tag_field(&self) -> TagField {
        TagField {
            path: self.field,
            shape: self.shape,
            when_empty: WhenEmpty::KeptIfWritten,
        }
    }
}

/// The row for an object of `group`/`kind` at API `version`, if any.
pub fn target_for(group: &str, kind: &str, version: &str) -> Option<&'static Target> {
    TARGETS
        .iter()
        .find(|t| t.version == version && t.kind.matches(group, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::profile::Profiles;

    #[test]
    fn every_row_names_a_built_in_profile() {
        for target in TARGETS {
            assert!(
                Profiles::default().infrastructure(target.profile).is_some(),
                "{target:?}"
            );
        }
    }

    #[test]
    fn a_kind_and_version_has_at_most_one_row() {
        for (i, a) in TARGETS.iter().enumerate() {
            for b in &TARGETS[i + 1..] {
                assert!((a.kind, a.version) != (b.kind, b.version), "{a:?}");
            }
        }
    }

    #[test]
    fn templates_other_versions_and_unlisted_kinds_have_no_row() {
        for (group, kind, version) in [
            (INFRASTRUCTURE, "AWSMachineTemplate", "v1beta2"),
            (INFRASTRUCTURE, "AWSCluster", "v1beta1"),
            (INFRASTRUCTURE, "HetznerCluster", "v1beta1"),
            (INFRASTRUCTURE, "OpenStackCluster", "v1beta1"),
            (INFRASTRUCTURE, "DockerMachine", "v1beta2"),
            (CONTROL_PLANE, "KubeadmControlPlane", "v1beta2"),
        ] {
            assert_eq!(target_for(group, kind, version), None, "{kind} {version}");
        }
        assert!(target_for(INFRASTRUCTURE, "AWSMachine", "v1beta2").is_some());
    }
}
