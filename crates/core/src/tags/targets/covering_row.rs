//! Which row of the tag table covers a request ([`KindRows::row_for`]): a
//! row of [`TARGETS`] found by kind or shape, or a managed resource's row,
//! made for the request from the catalogue or the settings
//! (`cloudTags.managedResources`), from the rows its kind may be covered by
//! ([`KindRows`]), found once, before the object is read.

use crate::json::fields::Path;
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::tags::targets::composite::is_composite_resource;
use crate::tags::targets::field::WhenEmpty;
use crate::tags::targets::managed_resource::{KindTags, ManagedResources};
use crate::tags::targets::mr_catalogue::Family;
use crate::tags::targets::{Adoption, LabelSource, Layout, Match, ProfileChoice, TARGETS, Target};

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
        adoption: Adoption::OwnThenComposite,
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

/// The rows a request of one kind may be covered by, found once, before
/// its object is read: the table's row for the kind (at most one may cover
/// a kind: `targets.rs` tests it), and what `cloudTags.managedResources`
/// says of the kind. What the object's projection keeps, and where
/// [`KindRows::row_for`] looks once the object is read.
#[derive(Debug, Clone, Default)]
pub(crate) struct KindRows {
    table: Option<&'static Target>,
    managed: Managed,
}

/// What `cloudTags.managedResources` says of a kind.
#[derive(Debug, Clone, Default)]
enum Managed {
    /// Its family is off, or it is of no family.
    #[default]
    Not,
    /// Its family is on and it has no tag field: left unchanged.
    Untagged,
    /// An object of the kind that has a managed resource's shape is
    /// covered by this row, made once for the kind; another object of the
    /// kind is left unchanged.
    Row(Target),
}

impl KindRows {
    /// The rows for `kind`, under `cloudTags.capiInfrastructure` and
    /// `managed`, `cloudTags.managedResources` when it turns a family on.
    pub(crate) fn of(
        kind: &GroupVersionKind,
        capi_infrastructure: bool,
        managed: Option<&ManagedResources>,
    ) -> Self {
        let table = in_force(capi_infrastructure).find(|t| t.matches.may_cover(kind));
        let managed = match managed.and_then(|managed| managed.tag_field(&kind.group, &kind.kind)) {
            Some(KindTags::Field(family, field)) if Match::ManagedResource.may_cover(kind) => {
                Managed::Row(managed_resource(family, field.clone()))
            }
            Some(KindTags::Field(..) | KindTags::NoTagField) => Managed::Untagged,
            Some(KindTags::FamilyOff) | None => Managed::Not,
        };
        Self { table, managed }
    }

    /// The table's row that may cover the kind.
    pub(crate) fn table(&self) -> Option<&'static Target> {
        self.table
    }

    /// The managed-resource row the kind would be covered by, when
    /// `cloudTags.managedResources` makes one for it.
    pub(crate) fn managed_row(&self) -> Option<&Target> {
        match &self.managed {
            Managed::Row(row) => Some(row),
            Managed::Not | Managed::Untagged => None,
        }
    }

    /// The row that covers `request`, if any: the routing step every row
    /// goes through, by kind and, for the composite resource and managed
    /// resources, by shape.
    pub(crate) fn row_for(&self, request: &AdmissionRequest) -> Covered {
        let mut known = None;
        let mut composite = || {
            *known.get_or_insert_with(|| is_composite_resource(&request.object, &request.namespace))
        };
        if let Some(row) = (self.table).filter(|t| t.matches.covers(request, &mut composite)) {
            return Covered::Row(row.clone());
        }
        // Every other kind of a family that is on (a kind without a tag
        // field, a ProviderConfig, a ProviderConfigUsage) is the family's
        // too, and goes unchanged without a warning.
        match &self.managed {
            Managed::Row(row) if row.matches.covers(request, &mut composite) => {
                Covered::Row(row.clone())
            }
            Managed::Row(_) | Managed::Untagged => Covered::Untagged,
            Managed::Not => Covered::Not,
        }
    }
}
