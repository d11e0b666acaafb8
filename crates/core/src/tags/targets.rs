//! Where each kind keeps its cloud tags, as data: the Crossplane composite
//! resource's row ([`COMPOSITE_RESOURCE`]) and one row per CAPI
//! infrastructure kind ([`TARGETS`]; README, "Cloud tags on CAPI
//! infrastructure"). Every row goes through the one tag decision
//! ([`super::plan`]); what differs between kinds is here.
//!
//! The infrastructure rows follow how each provider spreads tags. CAPA, CAPZ and CAPG merge
//! the InfraCluster's tags into every machine's (the machine's value wins),
//! so the Cluster's labels go to the cluster-level object once and reach
//! every machine from there, while a machine takes only its own labels: a
//! Cluster label copied onto each machine would freeze there and win over
//! the Cluster's later value. CAPO has no cluster-level key/value field, so
//! its machines take the Cluster's labels directly. A kind with no row is
//! never stamped: machine templates (immutable, and cloned into machines,
//! which are stamped when created), kinds without a key/value tag field
//! (HetznerCluster, HCloudMachine, OpenStackCluster's string `tags`,
//! DockerMachine), and kinds left for later (GCPMachinePool,
//! GCPManagedCluster, GCPManagedControlPlane, AzureManaged*). Adding a provider kind is one row.

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

/// Which objects a row covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// A CAPI infrastructure kind at the API version its provider serves
    /// (the only one a request can arrive in: the others are
    /// `served: false`).
    Kind {
        /// Group and kind.
        kind: KindMatch,
        /// The served version.
        version: &'static str,
    },
    /// Every kind the policy treats as a Crossplane composite resource.
    CompositeResource,
}

/// How a row's profile is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileChoice {
    /// By the object's provider value (`cloudTags.providerPath`): the
    /// profile listing it, else the fallback.
    Provider,
    /// The built-in infrastructure profile of this name, unless a user
    /// profile lists the name among its providers and replaces it.
    Named(&'static str),
}

/// One row of the target table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The objects it covers.
    pub matches: Match,
    /// Path of the tag field.
    pub field: &'static [&'static str],
    /// How the field holds its entries.
    pub shape: Shape,
    /// What the field becomes when left with no entry.
    pub when_empty: WhenEmpty,
    /// Whose labels count.
    pub labels: LabelSource,
    /// How the profile is chosen.
    pub profile: ProfileChoice,
    /// Stamped on CREATE only: the provider makes the field immutable, so a
    /// change on UPDATE would turn an allowed request into a denial.
    pub create_only: bool,
    /// Whether the user's entries in the field take room under the
    /// profile's cap (the providers merge cluster and machine tags per
    /// instance, under one cap).
    pub user_entries_take_room: bool,
    /// Whether `platform/origin: adopted` leaves the object as submitted
    /// (an adopted resource's tags belong to whoever created it).
    pub adopted_left_alone: bool,
    /// Where the field is documented, for the README and messages.
    pub upstream: &'static str,
}

/// The composite resource's row: its own labels become tags in
/// `spec.cloudTags`, a map that is absent when it holds no tag, under the
/// profile its provider value selects; its user entries take no room.
pub const COMPOSITE_RESOURCE: Target = Target {
    matches: Match::CompositeResource,
    field: &["spec", "cloudTags"],
    shape: Shape::Map,
    when_empty: WhenEmpty::Absent,
    labels: LabelSource::Object,
    profile: ProfileChoice::Provider,
    create_only: false,
    user_entries_take_room: false,
    adopted_left_alone: true,
    upstream: "the composite resource's XRD",
};

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
        matches: Match::Kind { kind, version },
        field,
        shape: Shape::Map,
        when_empty: WhenEmpty::KeptIfWritten,
        labels,
        profile: ProfileChoice::Named(profile),
        create_only: false,
        user_entries_take_room: true,
        adopted_left_alone: false,
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
    // GKE node-pool resource labels. CAPG does not apply a
    // GCPManagedCluster's labels to the GKE cluster (CAPG #1645), so the
    // node pool takes its Cluster's labels itself.
    map_row(
        kind(INFRASTRUCTURE, "GCPManagedMachinePool"),
        "v1beta1",
        &["spec", "additionalLabels"],
        ClusterAndObject,
        "capg",
        "cluster-api-provider-gcp exp/api/v1beta1/gcpmanagedmachinepool_types.go",
    ),
    Target {
        matches: Match::Kind {
            kind: kind(INFRASTRUCTURE, "OpenStackMachine"),
            version: "v1beta1",
        },
        field: &["spec", "serverMetadata"],
        shape: Shape::KeyValueList,
        when_empty: WhenEmpty::KeptIfWritten,
        labels: ClusterAndObject,
        profile: ProfileChoice::Named("capo"),
        create_only: true,
        user_entries_take_room: true,
        adopted_left_alone: false,
        upstream: "cluster-api-provider-openstack api/v1beta1/openstackmachine_types.go",
    },
];

impl Target {
    /// The row's tag field.
    pub const fn tag_field(&self) -> TagField {
        TagField {
            path: self.field,
            shape: self.shape,
            when_empty: self.when_empty,
        }
    }

    /// Whether this request's object gets its tags (re)computed: not on
    /// the UPDATE of a CREATE-only row.
    pub fn stamps(&self, operation: &str) -> bool {
        !self.create_only || operation == "CREATE"
    }

    /// The built-in infrastructure profile a row names.
    pub fn profile_name(&self) -> Option<&'static str> {
        match self.profile {
            ProfileChoice::Named(name) => Some(name),
            ProfileChoice::Provider => None,
        }
    }

    /// The group and kind a kind row covers, and the served version.
    pub fn kind(&self) -> Option<(KindMatch, &'static str)> {
        match self.matches {
            Match::Kind { kind, version } => Some((kind, version)),
            Match::CompositeResource => None,
        }
    }
}

/// The row for an object of `group`/`kind` at API `version`, if any.
pub fn target_for(group: &str, kind: &str, version: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| {
        t.kind()
            .is_some_and(|(k, v)| v == version && k.matches(group, kind))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::profiles::Profiles;

    #[test]
    fn every_row_names_a_built_in_profile() {
        for target in TARGETS {
            let ProfileChoice::Named(name) = target.profile else {
                panic!("{target:?}");
            };
            assert!(
                Profiles::default().infrastructure(name).is_some(),
                "{target:?}"
            );
        }
    }

    #[test]
    fn a_kind_and_version_has_at_most_one_row() {
        for (i, a) in TARGETS.iter().enumerate() {
            for b in &TARGETS[i + 1..] {
                assert!(a.kind().is_some() && a.kind() != b.kind(), "{a:?}");
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
