//! The tags stage's door ([`crate::stage`]): what the tags read of an
//! object of a kind, declared once, from the rows the kind may be covered
//! by; then `needs` and `decide`.

use super::tag_annotations::{ANNOTATIONS, LABELS};
use super::tag_needs::{self, TagNeeds};
use super::tag_settings::{DEFAULT_PROVIDER_SEGMENTS, TagSettings};
use super::targets::{ProfileChoice, Target};
use super::{Trace, render};
use crate::error::Error;
use crate::explain::Explanation;
use crate::json::projection::Projection;
use crate::request::plan::Plan;
use crate::request::reads::{Need, Reads};
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::stage::{Stage, StageForKind, StageReport, StageTrace};
use crate::tags::said::tags_explanation::TagsExplanation;
use crate::tags::targets::covering_row::KindRows;
use crate::tags::targets::managed_resource::family_of;
use std::borrow::Cow;

/// The tags stage as it stands for one request's kind under the
/// `cloudTags` section.
pub(crate) struct TagsForKind<'r> {
    settings: &'r TagSettings,
    rows: KindRows<'r>,
    /// The managed-resource row the kind would be covered by.
    managed: Option<Target>,
    /// `cloudTags.providerPath`, where the kind's row chooses its profile
    /// by the provider (empty otherwise).
    provider: Cow<'r, [&'r str]>,
}

/// The tags stage for `kind` under `settings`.
pub(crate) fn for_kind<'r>(kind: &GroupVersionKind, settings: &'r TagSettings) -> TagsForKind<'r> {
    let rows = KindRows::of(
        kind,
        settings.capi_infrastructure(),
        settings.managed_resources(),
    );
    let by_provider = rows
        .table()
        .is_some_and(|row| row.profile == ProfileChoice::Provider);
    let provider = match by_provider {
        false => Cow::Borrowed(&[][..]),
        true if settings.provider_path_is_default() => Cow::Borrowed(DEFAULT_PROVIDER_SEGMENTS),
        true => Cow::Owned(settings.provider_path()),
    };
    TagsForKind {
        settings,
        managed: rows.managed_row(kind),
        rows,
        provider,
    }
}

/// Keeps in `projection` what the tags read of an object of `kind` under
/// the default settings, before the settings are read: the infrastructure
/// rows in force, the provider at its default path. False, keeping
/// nothing, for a kind of a managed-resource family's group, which the
/// settings may make a row for, with a tag field they name.
pub(crate) fn default_object_paths(
    kind: &GroupVersionKind,
    projection: &mut Projection<'static>,
) -> bool {
    if family_of(&kind.group).is_some() {
        return false;
    }
    let rows = KindRows::of(kind, true, None);
    projection.keep_all([LABELS, ANNOTATIONS]);
    table_paths(rows.table(), DEFAULT_PROVIDER_SEGMENTS, projection);
    true
}

/// Keeps the object paths of the table's row for the kind in
/// `projection`: its tag field, what tells its objects apart, and
/// `provider` where it chooses its profile by the provider.
fn table_paths<'a>(
    row: Option<&'static Target>,
    provider: &'a [&'a str],
    projection: &mut Projection<'a>,
) {
    if let Some(row) = row {
        for path in row.reads() {
            projection.keep(path);
        }
        if row.profile == ProfileChoice::Provider {
            projection.keep(provider.iter().copied());
        }
    }
}

impl<'r> StageForKind<'r> for TagsForKind<'r> {
    type Stage = TagStage<'r>;
    type Explained = TagsExplanation;

    /// The labels and annotations (the label set), and what the rows the
    /// kind may be covered by read.
    fn object_paths<'a>(&'a self, projection: &mut Projection<'a>) {
        projection.keep_all([LABELS, ANNOTATIONS]);
        table_paths(self.rows.table(), &self.provider, projection);
        if let Some(row) = &self.managed {
            for path in row.reads() {
                projection.keep(path);
            }
        }
    }

    /// A composite resource's provider, when the prefix in force may
    /// differ between profiles, and a managed resource's tag field (its
    /// stored entries stay when its composite resource cannot be read).
    fn old_object_paths<'a>(&'a self, projection: &mut Projection<'a>) {
        // Whether prefixes vary is asked only of a row that reads the
        // provider: it prepares the whole section.
        let varies = || (self.settings.prepared()).is_ok_and(|tags| tags.prefixes_vary());
        if !self.provider.is_empty() && varies() {
            projection.keep(self.provider.iter().copied());
        }
        if let Some(row) = &self.managed {
            projection.keep(row.field.segments());
        }
    }

    /// Only `cloudTags.providerPath`, when it moves the provider of a row
    /// that reads it, and a managed-resource row make the settings'
    /// paths differ from the default ones (`cloudTags.capiInfrastructure`
    /// off makes them fewer).
    fn covered_by_default(&self) -> bool {
        matches!(self.provider, Cow::Borrowed(_)) && self.managed.is_none()
    }

    fn needs(&self, request: &'r AdmissionRequest) -> Result<Option<TagStage<'r>>, Error> {
        let needs = tag_needs::needs(request, &self.rows)?;
        Ok(needs.map(|needs| TagStage {
            needs,
            settings: self.settings,
        }))
    }
}

/// The tags stage from its `needs` on.
pub(crate) struct TagStage<'r> {
    needs: TagNeeds<'r>,
    settings: &'r TagSettings,
}

/// The tags stage's one read: the object whose label set the tags start
/// from (a Cluster, a composite resource), masked to that label set.
impl<'r> Stage<'r> for TagStage<'r> {
    fn first(&self) -> Option<Need<'_>> {
        self.needs.first()
    }

    fn decide(
        self,
        request: &'r AdmissionRequest,
        reads: &mut Reads,
        plan: &mut Plan,
        traced: bool,
    ) -> StageReport<'r> {
        super::decide(request, self.needs, self.settings, reads, plan, traced)
    }
}

impl StageTrace for Trace<'_> {
    fn render(self: Box<Self>, request: &AdmissionRequest, explanation: &mut Explanation) {
        render(*self, request, explanation);
    }
}
