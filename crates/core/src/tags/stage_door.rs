//! The tags stage's door ([`crate::stage`]): what the tags read of an
//! object of a kind, declared once, from the rows the kind may be covered
//! by; then `needs` and `decide`.

use super::cloud_settings::{DEFAULT_PROVIDER_SEGMENTS, TagSettings};
use super::contract_names::{ANNOTATIONS, LABELS};
use super::needs::{self, TagNeeds};
use super::object_read::NAME_PATHS;
use super::targets::label_source::{OWNER_PATHS, label_set_mask};
use super::targets::{LabelSource, ProfileChoice, Target};
use super::{Trace, render};
use crate::error::Error;
use crate::explain::ExplanationPart;
use crate::json::fields::Segments;
use crate::kube::kinds;
use crate::request::plan::Plan;
use crate::request::reads::{Need, Reads};
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::stage::LookupGroup::{AnyButClusterApi, Named};
use crate::stage::{Declared, Stage, StageForKind, StageReport, StageTrace};
use crate::tags::said::label_fates::TagsExplanation;
use crate::tags::targets::covering_row::KindRows;
use crate::tags::targets::managed_resource::family_of;
use std::borrow::Cow;

/// The tags stage as it stands for one request's kind under the
/// `cloudTags` section.
pub(crate) struct TagsForKind<'r> {
    settings: &'r TagSettings,
    rows: KindRows,
    /// `cloudTags.providerPath`, where the kind's row chooses its profile
    /// by the provider (empty otherwise).
    provider: Cow<'r, [&'r str]>,
    /// Whether the kind is of a managed-resource family's group.
    of_a_family: bool,
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
        rows,
        provider,
        of_a_family: family_of(&kind.group).is_some(),
    }
}

/// What the decision of `row` reads of the object besides its labels and
/// annotations: the row's tag field and what tells its objects apart
/// ([`Target::reads`]), what finds the object its label set starts from
/// (its owners), and what names it in messages. A managed resource's row
/// (the one row whose labels come from its composing resource) reads its
/// owners and names through its shape, which `Target::reads` declares:
/// they are not declared twice (the projection is built on every request).
fn row_reads(row: &Target) -> impl Iterator<Item = Segments<'_, '_>> {
    let (owners, named): (&[&[&str]], bool) = match row.labels {
        LabelSource::Object => (&[], row.named_in_messages),
        LabelSource::ClusterAndObject => (&OWNER_PATHS, row.named_in_messages),
        LabelSource::ComposingResource => (&[], false),
    };
    let named: &[&[&str]] = match named {
        true => &NAME_PATHS,
        false => &[],
    };
    let paths = owners.iter().chain(named).map(|path| Segments::of(path));
    row.reads().chain(paths)
}

impl<'r> StageForKind<'r> for TagsForKind<'r> {
    type Stage = TagStage<'r>;
    type Explained = TagsExplanation;

    /// The labels and annotations (the label set) and, for each row the
    /// kind may be covered by, what its decision reads ([`Target::reads`]),
    /// the provider where it chooses its profile by the provider, and of
    /// an UPDATE's old object the provider, when the prefix in force may
    /// differ between profiles, and a managed resource's tag field (its
    /// stored entries stay when its composite resource cannot be read).
    /// A moved provider and a managed-resource row's paths are the
    /// settings' (`cloudTags.capiInfrastructure` off only drops rows).
    fn reads<'a>(&'a self, reads: &mut Declared<'a>) {
        reads.object([LABELS, ANNOTATIONS]);
        if let Some(row) = self.rows.table() {
            for path in row_reads(row) {
                reads.object_path(path);
            }
            match &self.provider {
                Cow::Borrowed([]) => {}
                Cow::Borrowed(path) => reads.object_path(path.iter().copied()),
                Cow::Owned(path) => reads.object_by_settings([path.iter().copied()]),
            }
        }
        match self.rows.managed_row() {
            Some(row) => reads.object_by_settings(row_reads(row)),
            // The settings may make a managed-resource row for the kind,
            // with a tag field they name.
            None if self.of_a_family => reads.object_by_settings(None::<[&str; 0]>),
            None => {}
        }
        // Whether prefixes vary is asked only of a row that reads the
        // provider: it prepares the whole section.
        let varies = || (self.settings.prepared()).is_ok_and(|tags| tags.prefixes_vary());
        if !self.provider.is_empty() {
            reads.old_object(varies, self.provider.iter().copied());
        }
        if let Some(row) = self.rows.managed_row() {
            reads.old_object(|| true, row.field.segments());
        }
        // The object a row's label set starts from: the Cluster, or a
        // managed resource's composite resource (of any XRD, never of a
        // Cluster API group: `managed_resource::composing_resource`),
        // masked to its label set.
        if !reads.declaring_lookups() {
            return;
        }
        let rows = self.rows.table().into_iter().chain(self.rows.managed_row());
        for row in rows {
            let (group, kind) = match row.labels {
                LabelSource::Object => continue,
                LabelSource::ClusterAndObject => (Named(kinds::CORE), Some("Cluster")),
                LabelSource::ComposingResource => (AnyButClusterApi, None),
            };
            reads.lookup(group, kind, label_set_mask());
        }
    }

    fn needs(&self, request: &'r AdmissionRequest) -> Result<Option<TagStage<'r>>, Error> {
        let needs = needs::needs(request, &self.rows)?;
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
    fn render(
        self: Box<Self>,
        request: &AdmissionRequest,
        notes: &mut Vec<String>,
    ) -> Box<dyn ExplanationPart> {
        let mut part = TagsExplanation::default();
        render(*self, request, &mut part, notes);
        Box::new(part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::targets::managed_resource::SHAPE_PATHS;

    /// What `row_reads` leaves out for a managed resource's row, its shape
    /// reads.
    #[test]
    fn a_managed_resource_shape_reads_its_owners_and_names() {
        for path in OWNER_PATHS.iter().chain(&NAME_PATHS) {
            assert!(SHAPE_PATHS.contains(path), "{path:?}");
        }
    }
}
