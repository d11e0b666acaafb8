//! Which row of the tag table covers a request ([`row_for`]): a row of
//! [`TARGETS`] found by kind or shape, or a managed resource's row, made
//! for the request from the catalogue or the settings
//! (`cloudTags.managedResources`), and the rows a kind may be covered by
//! before its object is read (what the object's projection keeps).

use crate::fields::{Path, Segments};
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::tags::field::WhenEmpty;
use crate::tags::managed_resource::{KindTags, ManagedResources};
use crate::tags::mr_catalogue::Family;
use crate::tags::targets::{self, LabelSource, Layout, Match, ProfileChoice, TARGETS, Target};

/// A managed resource's row, made for one request: the composite
/// resource's labels become tags in the MR's own field (a map of strings
/// under `spec.forProvider`, from the catalogue or the settings), under
/// its family's profile; entries outside the prefix are kept and take
/// room, the provider's own keys too.
pub(crate) const fn managed_resource(family: Family, field: Path) -> Target {
    Target {
        matches: Match::ManagedResource,
        field,
        layout: Layout::Map,
        when_empty: WhenEmpty::KeptIfWritten,
        labels: LabelSource::ComposingResource,
        profile: ProfileChoice::Family(family.name()),
        create_only: false,
        user_entries_take_room: true,
        provider_keys: family.provider_keys(),
        adopted_left_alone: true,
        behind_capi_infrastructure: false,
        named_in_messages: true,
        upstream: "the provider's CRD (docs/managed-resources.md)",
    }
}

/// The rows in force under the settings' `cloudTags.capiInfrastructure`.
fn in_force(capi_infrastructure: bool) -> impl Iterator<Item = &'static Target> {
    TARGETS
        .iter()
        .filter(move |t| capi_infrastructure || !t.behind_capi_infrastructure)
}

/// What the tag table says of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Covered {
    /// The row that tags its object.
    Row(Target),
    /// An object of a managed-resource family the settings turn on that
    /// has no tag field (its kind has none, or it is not a managed
    /// resource): left unchanged, without a warning.
    Untagged,
    /// No row: the object is not one the tags know.
    Not,
}

/// The row that covers `request`, if any: the routing step every row goes
/// through, by kind and, for the composite resource and managed
/// resources, by shape. `managed` is `cloudTags.managedResources` when it
/// turns a family on.
pub(crate) fn row_for(
    request: &AdmissionRequest,
    capi_infrastructure: bool,
    managed: Option<&ManagedResources>,
) -> Covered {
    if let Some(row) = in_force(capi_infrastructure).find(|t| t.matches.covers(request)) {
        return Covered::Row(row.clone());
    }
    let kind = &request.kind;
    let tags = managed.and_then(|managed| managed.tag_field(&kind.group, &kind.kind));
    // Every other kind of a family that is on (a kind without a tag field,
    // a ProviderConfig, a ProviderConfigUsage) is the family's too, and
    // goes unchanged without a warning.
    match tags {
        Some(KindTags::Field(family, field)) if Match::ManagedResource.covers(request) => {
            Covered::Row(managed_resource(family, field.clone()))
        }
        Some(KindTags::Field(..) | KindTags::NoTagField) => Covered::Untagged,
        Some(KindTags::FamilyOff) | None => Covered::Not,
    }
}

/// The tag field of the managed-resource row a request of `kind` would
/// be covered by, known before its object is read, borrowed from the
/// settings: with what tells a managed resource's shape
/// ([`managed_row_reads`]), what the object's projection keeps for it.
pub(crate) fn managed_field_for_kind<'m>(
    kind: &GroupVersionKind,
    managed: Option<&'m ManagedResources>,
) -> Option<&'m Path> {
    match managed?.tag_field(&kind.group, &kind.kind)? {
        KindTags::Field(_, field) if Match::ManagedResource.may_cover(kind) => Some(field),
        _ => None,
    }
}

/// What the decision of a managed resource's row with the tag field
/// `field` reads of the object besides its labels and annotations
/// ([`Target::reads`]).
pub(crate) fn managed_row_reads(field: &Path) -> impl Iterator<Item = Segments<'_, '_>> {
    targets::reads(field, Match::ManagedResource)
}

/// What the tags read of an object of `kind` itself, known before the
/// object is read: for every row that may cover it ([`rows_for_kind`]),
/// its tag field and what tells its objects apart, and `provider` where
/// the row picks its profile by the provider.
pub(crate) fn object_paths<'a, 'p>(
    kind: &GroupVersionKind,
    capi_infrastructure: bool,
    provider: &'a [&'p str],
) -> Vec<Segments<'a, 'p>> {
    let mut paths: Vec<Segments<'a, 'p>> = Vec::new();
    for row in rows_for_kind(kind, capi_infrastructure) {
        for path in row.reads() {
            paths.push(path);
        }
        if row.profile == ProfileChoice::Provider {
            paths.push(Segments::of(provider));
        }
    }
    paths
}

/// The rows that may cover a request of `kind`, known before its object is
/// read: what the object's projection keeps for them.
pub(crate) fn rows_for_kind(
    kind: &GroupVersionKind,
    capi_infrastructure: bool,
) -> impl Iterator<Item = &'static Target> {
    in_force(capi_infrastructure).filter(move |t| t.matches.may_cover(kind))
}
