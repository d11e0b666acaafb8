//! Where each kind keeps its cloud tags, as one table ([`TARGETS`]): the
//! Crossplane composite resource's row ([`COMPOSITE_RESOURCE`], told by
//! the object's shape) and one row per CAPI infrastructure kind
//! (docs/infrastructure-tags.md). `row_for` picks a request's row,
//! and every row goes through the one tag decision (`tags::decide`); what
//! differs between kinds is data here, never a question of which row it is.
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

pub(crate) mod adoption;
pub(crate) mod composing_xr;
pub(crate) mod composite;
pub(crate) mod covering_row;
pub(crate) mod field;
pub(crate) mod label_source;
pub(crate) mod managed_resource;
pub(crate) mod mr_catalogue;

use crate::json::fields::{Path, Segments};
use crate::kube::kinds::{self, KindMatch};
use crate::request::{AdmissionRequest, GroupVersionKind};
pub(crate) use crate::tags::targets::field::Layout;
use crate::tags::targets::field::{TagField, WhenEmpty};
pub(crate) use adoption::Adoption;

/// Whose labels become the object's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelSource {
    /// The object's own label set.
    Object,
    /// The owning Cluster's label set, with the object's on top.
    ClusterAndObject,
    /// The label set of the composite resource that composed the object
    /// (a managed resource's), alone: the object's own labels are
    /// Crossplane's bookkeeping and the Composition's.
    ComposingResource,
}

/// Which objects a row covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// A CAPI infrastructure kind at the API version its provider serves
    /// (the only one a request can arrive in: the others are
    /// `served: false`).
    Kind {
        /// Group and kind.
        kind: KindMatch,
        /// The served version.
        version: &'static str,
    },
    /// An object of any kind outside the Cluster API groups (the route
    /// has already set Kubernetes' own aside) with a Crossplane composite
    /// resource's shape (`composite::is_composite_resource`).
    CompositeResource,
    /// A Crossplane managed resource of a family the settings turn on, of
    /// a kind with a tag field (`managed_resource`): the row is made for
    /// the request, its field taken from the catalogue or the settings.
    ManagedResource,
}

impl Match {
    /// Whether a request of `kind` may be covered, before its object is
    /// read.
    pub(crate) fn may_cover(&self, kind: &GroupVersionKind) -> bool {
        match self {
            Match::Kind {
                kind: covered,
                version,
            } => *version == kind.version && covered.matches(&kind.group, &kind.kind),
            Match::CompositeResource | Match::ManagedResource => !kinds::is_capi_group(&kind.group),
        }
    }

    /// Whether `request` is covered: its kind, and its object's shape
    /// where the row asks for one; `composite` says whether the object is
    /// a composite resource, asked at most once per request whichever rows
    /// ask it (`covering_row::KindRows::row_for`).
    pub(crate) fn covers(
        &self,
        request: &AdmissionRequest,
        composite: &mut dyn FnMut() -> bool,
    ) -> bool {
        self.may_cover(&request.kind)
            && match self {
                Match::Kind { .. } => true,
                Match::CompositeResource => composite(),
                // A user's XRD may give an XR a `forProvider`: an MR's
                // shape, and not a composite resource's.
                Match::ManagedResource => {
                    managed_resource::has_shape(&request.object) && !composite()
                }
            }
    }

    /// What [`Match::covers`] reads of the object.
    fn reads(&self) -> &'static [&'static [&'static str]] {
        match self {
            Match::Kind { .. } => &[],
            Match::CompositeResource => &composite::SHAPE_PATHS,
            Match::ManagedResource => &managed_resource::SHAPE_PATHS,
        }
    }
}

/// How a row's profile is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProfileChoice {
    /// By the object's provider value (`cloudTags.providerPath`): the
    /// profile listing it, else the fallback.
    Provider,
    /// The built-in infrastructure profile of this name, unless a user
    /// profile lists the name among its providers and replaces it.
    Named(&'static str),
    /// A managed resource's: its family's name plays the part of a
    /// composite resource's provider value (`aws` selects the built-in
    /// `aws` profile, unless a user profile lists it).
    Family(&'static str),
}

/// One row of the target table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The objects it covers.
    pub(crate) matches: Match,
    /// Path of the tag field.
    pub field: Path,
    /// How the field holds its entries.
    pub(crate) layout: Layout,
    /// What the field becomes when left with no entry.
    pub(crate) when_empty: WhenEmpty,
    /// Whose labels count.
    pub(crate) labels: LabelSource,
    /// How the profile is chosen.
    pub(crate) profile: ProfileChoice,
    /// Stamped on CREATE only: the provider makes the field immutable, so a
    /// change on UPDATE would turn an allowed request into a denial.
    pub create_only: bool,
    /// Whether the user's entries in the field take room under the
    /// profile's cap (the providers merge cluster and machine tags per
    /// instance, under one cap).
    pub(crate) user_entries_take_room: bool,
    /// Keys the provider writes into the field itself, which take room
    /// whether or not they are there yet (`Family::provider_keys`).
    pub(crate) provider_keys: &'static [&'static str],
    /// Which label set's `platform/origin: adopted` leaves the object as
    /// submitted (an adopted resource's tags belong to whoever created
    /// it).
    pub(crate) adoption: Adoption,
    /// Stamped only when `cloudTags.capiInfrastructure` is on.
    pub(crate) behind_capi_infrastructure: bool,
    /// Whether messages and explanations name the object and its tag
    /// field: an infrastructure object's decision reads its Cluster too,
    /// and its field is one of several; a composite resource is the only
    /// object read, and its field is always `spec.cloudTags`.
    pub(crate) named_in_messages: bool,
    /// Where the field is documented, for the README and messages.
    pub(crate) upstream: &'static str,
}

/// The composite resource's row: its own labels become tags in
/// `spec.cloudTags`, a map that is absent when it holds no tag, under the
/// profile its provider value selects; its user entries take no room.
pub(crate) const COMPOSITE_RESOURCE: Target = Target {
    matches: Match::CompositeResource,
    field: Path::Static(&["spec", "cloudTags"]),
    layout: Layout::Map,
    when_empty: WhenEmpty::Absent,
    labels: LabelSource::Object,
    profile: ProfileChoice::Provider,
    create_only: false,
    user_entries_take_room: false,
    provider_keys: &[],
    adoption: Adoption::OwnLabelSet,
    behind_capi_infrastructure: false,
    named_in_messages: false,
    upstream: "the composite resource's XRD",
};

const INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io";
const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
const ADDITIONAL_TAGS: &[&str] = &["spec", "additionalTags"];
const ADDITIONAL_LABELS: &[&str] = &["spec", "additionalLabels"];

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
        field: Path::Static(field),
        layout: Layout::Map,
        when_empty: WhenEmpty::KeptIfWritten,
        labels,
        profile: ProfileChoice::Named(profile),
        create_only: false,
        user_entries_take_room: true,
        provider_keys: &[],
        adoption: Adoption::Never,
        behind_capi_infrastructure: true,
        named_in_messages: true,
        upstream,
    }
}

use LabelSource::{ClusterAndObject, Object};

/// The table. A request is covered by at most one row.
pub(crate) const TARGETS: &[Target] = &[
    COMPOSITE_RESOURCE,
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
        ADDITIONAL_LABELS,
        ClusterAndObject,
        "capg",
        "cluster-api-provider-gcp api/v1beta1/gcpcluster_types.go",
    ),
    map_row(
        kind(INFRASTRUCTURE, "GCPMachine"),
        "v1beta1",
        ADDITIONAL_LABELS,
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
        ADDITIONAL_LABELS,
        ClusterAndObject,
        "capg",
        "cluster-api-provider-gcp exp/api/v1beta1/gcpmanagedmachinepool_types.go",
    ),
    Target {
        matches: Match::Kind {
            kind: kind(INFRASTRUCTURE, "OpenStackMachine"),
            version: "v1beta1",
        },
        field: Path::Static(&["spec", "serverMetadata"]),
        layout: Layout::KeyValueList,
        when_empty: WhenEmpty::KeptIfWritten,
        labels: ClusterAndObject,
        profile: ProfileChoice::Named("capo"),
        create_only: true,
        user_entries_take_room: true,
        provider_keys: &[],
        adoption: Adoption::Never,
        behind_capi_infrastructure: true,
        named_in_messages: true,
        upstream: "cluster-api-provider-openstack api/v1beta1/openstackmachine_types.go",
    },
];

impl Target {
    /// The row's tag field.
    pub(crate) const fn tag_field(&self) -> TagField<'_> {
        TagField {
            path: &self.field,
            layout: self.layout,
            when_empty: self.when_empty,
        }
    }

    /// Whether this request's object gets its tags (re)computed: not on
    /// the UPDATE of a CREATE-only row.
    pub(crate) fn stamps(&self, operation: &str) -> bool {
        !self.create_only || operation == "CREATE"
    }

    /// Whether validate mode refuses a deviation of this row's object on
    /// `operation`: always, but on a managed resource's UPDATE, which
    /// Crossplane's provider makes to record what it did in the cloud, and
    /// which must never be refused (it would wedge the resource); there a
    /// deviation is a warning.
    pub(crate) fn deviation_refuses(&self, operation: &str) -> bool {
        self.matches != Match::ManagedResource || operation == "CREATE"
    }

    /// The built-in infrastructure profile a row names.
    pub(crate) fn profile_name(&self) -> Option<&'static str> {
        match self.profile {
            ProfileChoice::Named(name) => Some(name),
            ProfileChoice::Provider | ProfileChoice::Family(_) => None,
        }
    }

    /// What the row's decision reads of the object besides its labels and
    /// annotations: the tag field and what tells the object's shape (the
    /// provider, a setting, is the caller's to add).
    pub(crate) fn reads(&self) -> impl Iterator<Item = Segments<'_, '_>> {
        reads(&self.field, self.matches)
    }
}

/// What the decision of a row covering `matches` with the tag field
/// `field` reads of the object besides its labels and annotations
/// ([`Target::reads`]).
pub(crate) fn reads(field: &Path, matches: Match) -> impl Iterator<Item = Segments<'_, '_>> {
    let shape = matches.reads().iter().map(|path| Segments::of(path));
    std::iter::once(field.segments()).chain(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::invariants::fuzz_oracles::target_for;
    use crate::tags::profiles::Profiles;
    use crate::tags::targets::covering_row::KindRows;

    #[test]
    fn every_named_profile_is_a_built_in_one() {
        for target in TARGETS {
            if let ProfileChoice::Named(name) = target.profile {
                assert!(
                    Profiles::default().infrastructure(name).is_some(),
                    "{target:?}"
                );
            }
        }
    }

    #[test]
    fn a_kind_and_version_has_at_most_one_row() {
        let kinds: Vec<_> = TARGETS.iter().filter_map(Target::kind).collect();
        for (i, a) in kinds.iter().enumerate() {
            assert!(!kinds[i + 1..].contains(a), "{a:?}");
        }
    }

    /// The composite resource is a row like the others, behind no switch,
    /// and no CAPI kind falls to it.
    #[test]
    fn the_composite_resource_is_a_row_of_the_table() {
        assert_eq!(
            TARGETS
                .iter()
                .filter(|t| t.matches == Match::CompositeResource)
                .count(),
            1
        );
        let kind = |group: &str, kind: &str| GroupVersionKind {
            group: group.to_owned(),
            version: "v1".to_owned(),
            kind: kind.to_owned(),
        };
        let xr = kind("platform.example.org", "XNetwork");
        assert_eq!(
            KindRows::of(&xr, false, None).table(),
            Some(&COMPOSITE_RESOURCE)
        );
        let machine = kind(INFRASTRUCTURE, "AWSMachine");
        let rows = |capi_infrastructure| KindRows::of(&machine, capi_infrastructure, None);
        assert_eq!(rows(true).table(), None, "v1 is not served");
        assert_eq!(rows(false).table(), None);
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
