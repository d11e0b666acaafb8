//! Cloud tags: opted-in labels become provider-correct tags in an object's
//! tag field, for a Crossplane composite resource (`spec.cloudTags`;
//! docs/cloud-tags.md) and for a CAPI infrastructure object (its provider's
//! field; docs/infrastructure-tags.md) alike.
//!
//! One decision over one table ([`targets`]): `decide` *resolves* the label
//! set and the profile the row names (a malformed source rejects: "a
//! resolve failure fails"), *transforms* the opted-in labels under the
//! profile (a skip never fails), *stamps* the tag field and the skip
//! annotation into the request's plan, over the metadata the CAPI rules
//! have planned, and *reports* each skip as a warning.

mod char_class;
pub(crate) mod cluster;
pub(crate) mod composing_xr;
pub(crate) mod composite;
pub(crate) mod covering_row;
mod decision;
pub(crate) mod field;
pub(crate) mod label_set;
pub(crate) mod managed_resource;
pub(crate) mod mr_catalogue;
mod opted_in;
pub(crate) mod profile;
pub(crate) mod profiles;
mod provider_refuses;
mod report;
pub(crate) mod said;
pub(crate) mod tag_annotations;
pub(crate) mod tag_key;
mod tag_key_checks;
mod tag_key_problem;
mod tag_needs;
mod tag_settings;
mod tagging_trace;
pub(crate) mod targets;
pub(crate) mod transform;
pub(crate) mod user_profile;
mod why;

use crate::error::Error;
use crate::fields::{self, FieldError, Path, StringMap};
use crate::labels_annotation;
use crate::plan::Plan;
use crate::reads::Reads;
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::stage_report::{Reported, StageReport};
use cluster::ClusterFound;
pub(crate) use covering_row::{managed_row_reads, object_paths};
use decision::Inputs;
use field::Owned;
use label_set::{LabelSet, Layer, Source};
use profile::{GENERIC, Origin, TagProfile};
use serde_json::{Map, Value};
use tag_needs::Tagging;
pub(crate) use tag_needs::{TagNeeds, needs};
use tag_needs::{adopted, own_reference, parse_labels_annotation};
use tagging_trace::Tagged;
pub(crate) use tagging_trace::Trace;
use targets::{LabelSource, ProfileChoice, Target};
pub(crate) use why::render;

pub(crate) use tag_annotations::SKIPPED_ANNOTATION;
pub(crate) use tag_annotations::{ANNOTATIONS, LABELS};
pub(crate) use tag_settings::CloudTagSettings;
pub(crate) use tag_settings::{DEFAULT_PROVIDER_SEGMENTS, RawCloudTagSettings, TagSettings};

/// The tag field of the managed-resource row a request of `kind` would be
/// covered by, when `cloudTags.managedResources` makes one for it, known
/// before the object is read: with what the row reads of the object's
/// shape ([`managed_row_reads`]), what the object's projection, and its old
/// object's, keep for it.
pub(crate) fn managed_field<'s>(
    kind: &GroupVersionKind,
    settings: &'s TagSettings,
) -> Option<&'s Path> {
    covering_row::managed_field_for_kind(kind, settings.managed_resources())
}

/// The second half of the stage's door: adds the tags decision of
/// `request`'s object to `plan` (which holds its CAPI metadata edits, if
/// any), from what `needs` names, the Cluster taken from `reads`, and
/// returns the skip warnings, or why it rejects the object; with them,
/// when `trace` asks for it, what it decided ([`Trace`]).
pub(crate) fn decide<'s>(
    request: &AdmissionRequest,
    needs: TagNeeds<'_>,
    settings: &'s TagSettings,
    reads: &mut Reads,
    plan: &mut Plan,
    trace: bool,
) -> StageReport<Trace<'s>> {
    let mut deviation_warns = false;
    let decided = match needs {
        TagNeeds::NotAComposite => {
            let warning = composite::not_a_composite_resource(&request.kind);
            Ok((vec![warning], trace.then_some(Trace::NotAComposite)))
        }
        TagNeeds::Untagged => Ok((Vec::new(), trace.then_some(Trace::Untagged))),
        TagNeeds::Adopted => Ok((Vec::new(), trace.then_some(Trace::Adopted))),
        TagNeeds::LeftAlone(why) => Ok((Vec::new(), trace.then_some(Trace::LeftAlone(why)))),
        TagNeeds::Tagging(tagging) => {
            deviation_warns = !tagging.target.deviation_refuses(&request.operation);
            tag(*tagging, request, settings, reads, plan, trace)
        }
    };
    match decided {
        Ok((warnings, trace)) => StageReport {
            reported: Ok(Reported {
                warnings,
                deviation_warns,
                ..Reported::default()
            }),
            trace,
        },
        Err(error) => StageReport {
            reported: Err(error),
            trace: None,
        },
    }
}

/// [`decide`] for an object it tags.
fn tag<'s>(
    tagging: Tagging<'_>,
    request: &AdmissionRequest,
    settings: &'s TagSettings,
    reads: &mut Reads,
    plan: &mut Plan,
    trace: bool,
) -> Result<(Vec<String>, Option<Trace<'s>>), Error> {
    let Tagging {
        target,
        field,
        source,
    } = tagging;
    let source = source.map(|(source, _)| source);
    let object = &request.object;
    let Some(current) = field else {
        return Ok((Vec::new(), trace.then_some(Trace::CreateOnly(target))));
    };
    let warn_removals = settings.mutates();
    let settings = settings.prepared()?;
    let own = |error| Error::tags(own_reference(&target, request), error);

    // The label set: the object's labels and annotations as they will be
    // stored (after the plan's metadata edits), under them the Cluster's;
    // or, for a managed resource, its composite resource's alone.
    // Borrowed from the plan: everything below is computed into owned
    // edits before the plan is changed.
    let annotations = plan.resulting_map(object, ANNOTATIONS).map_err(own)?;
    let found = match (target.labels, source) {
        (LabelSource::ComposingResource, Some(xr)) => {
            let read = composing_xr::read(&xr, reads);
            let layers = read.and_then(|value| {
                let found = ClusterFound::Read(xr.clone(), value);
                match ClusterLayers::check(&found) {
                    Ok(()) => Ok(found),
                    Err(error) => Err(composing_xr::Unread::Malformed(error)),
                }
            });
            match layers {
                Ok(found) => found,
                Err(unread) => {
                    // A family chooses the profile: nothing to fail on.
                    let chosen = choose_profile(&target, request, settings).map_err(own)?;
                    let owned = chosen.owned(settings);
                    let field = (&current, owned);
                    let (warning, edit) =
                        composing_xr::unread(unread, &xr, &target, request, field)?;
                    if let Some(edit) = edit {
                        plan.push(edit);
                    }
                    return Ok((vec![warning], trace.then_some(Trace::Unread(xr))));
                }
            }
        }
        (_, source) => cluster::read(source, reads)?,
    };
    let of_cluster = ClusterLayers::read(&found)?;
    // Later sources win: the Cluster's labels, its annotation, the
    // object's labels, its annotation.
    let mut set = LabelSet::default();
    if let Some(cluster_labels) = of_cluster.labels {
        set = set.with(Source::ClusterLabels, Layer::Object(cluster_labels));
    }
    set = set.with(
        Source::ClusterAnnotation,
        Layer::Annotation(&of_cluster.extra),
    );
    let own_extra;
    let labels;
    if target.labels != LabelSource::ComposingResource {
        own_extra = parse_labels_annotation(&annotations).map_err(own)?;
        labels = OwnLabels::read(plan, object).map_err(own)?;
        if let Some(layer) = labels.layer() {
            set = set.with(Source::OwnLabels, layer);
        }
        set = set.with(Source::OwnAnnotation, Layer::Annotation(&own_extra));
    }
    if target.adopted_left_alone && adopted(&set) {
        return Ok((Vec::new(), trace.then_some(Trace::Adopted)));
    }

    let chosen = choose_profile(&target, request, settings).map_err(own)?;
    let owned = chosen.owned(settings);
    let Chosen {
        provider,
        profile,
        origin,
        ..
    } = chosen;
    let keys = settings.tag_keys(profile);
    let fallback = (target.profile == ProfileChoice::Provider && origin == Origin::Fallback)
        .then(|| said::fallback(provider, &settings.provider_path.join(".")));
    // Named only in explanations: formatted only for one.
    let cluster = match (&found, trace) {
        (ClusterFound::Read(reference, _), true) => reference.to_string(),
        _ => String::new(),
    };
    let decided = decision::decide(
        Inputs {
            target: &target,
            set: &set,
            current: &current,
            profile: (profile, origin),
            keys,
            owned,
            propagating: &settings.propagating_labels,
            annotations: &annotations,
            cluster: &cluster,
            fallback,
            warn_removals,
        },
        trace,
        || why::labels_source(&found, profile),
    );
    if let Some(edit) = decided.edit {
        plan.push(edit);
    }
    plan.merge(decided.skipped);
    let mut warnings = decided.warnings;
    if let ClusterFound::NotFound(reference) = &found {
        warnings.push(said::cluster_not_found(reference));
    }
    let trace = decided.explained.map(|cloud_tags| {
        Trace::Tagged(Box::new(Tagged {
            target,
            cloud_tags,
            provider_path: settings.provider_path.join("."),
            provider: provider.map(str::to_owned),
            found,
            profile: (profile, origin),
        }))
    });
    Ok((warnings, trace))
}

/// The Cluster's layers of a label set: its labels and its label-set
/// annotation's entries (none when no Cluster was read).
#[derive(Default)]
struct ClusterLayers<'c> {
    labels: Option<&'c Map<String, Value>>,
    extra: labels_annotation::Entries<'c>,
}

impl<'c> ClusterLayers<'c> {
    fn read(found: &'c ClusterFound) -> Result<Self, Error> {
        let ClusterFound::Read(reference, cluster) = found else {
            return Ok(Self::default());
        };
        Self::of(cluster).map_err(|error| Error::tags(Some(reference.clone()), error))
    }

    /// Whether the layers of `found` read (a composite resource's are
    /// checked before the decision, which a malformed one does not reach).
    fn check(found: &'c ClusterFound) -> Result<(), FieldError> {
        match found {
            ClusterFound::Read(_, object) => Self::of(object).map(drop),
            _ => Ok(()),
        }
    }

    fn of(object: &'c Value) -> Result<Self, FieldError> {
        let labels = fields::string_object(object, LABELS)?;
        let annotations = fields::string_map(object, ANNOTATIONS)?;
        let extra = parse_labels_annotation(&annotations)?;
        Ok(Self { labels, extra })
    }
}

/// The profile an object is tagged under.
struct Chosen<'o, 's> {
    /// The provider that selected it (a composite resource's), if any.
    provider: Option<&'o str>,
    /// The profile.
    profile: &'s TagProfile,
    /// What chose it.
    origin: Origin,
    /// The prefix the entries of the object's previous profile carry: an
    /// UPDATE that moves a composite resource to a profile with another
    /// prefix (the entries under the old one were the policy's, and go
    /// too).
    old_prefix: Option<&'s str>,
}

impl<'s> Chosen<'_, 's> {
    /// Which entries of the tag field are the policy's under this choice.
    fn owned(&self, settings: &'s CloudTagSettings) -> Owned<'s> {
        let prefix = settings.tag_keys(self.profile).prefix;
        Owned {
            prefix,
            old_prefix: self.old_prefix.filter(|old| *old != prefix),
        }
    }
}

/// The profile `target`'s row chooses for `request`'s object: by the
/// object's provider (and its old object's), or by the row's name.
fn choose_profile<'o, 's>(
    target: &Target,
    request: &'o AdmissionRequest,
    settings: &'s CloudTagSettings,
) -> Result<Chosen<'o, 's>, FieldError> {
    let name = match target.profile {
        ProfileChoice::Named(name) => name,
        ProfileChoice::Family(family) => {
            let (profile, origin) = settings.profiles.resolve(Some(family));
            return Ok(Chosen {
                provider: None,
                profile,
                origin,
                old_prefix: None,
            });
        }
        ProfileChoice::Provider => {
            let path: Vec<&str> = settings.provider_path.iter().map(String::as_str).collect();
            let provider = fields::string(&request.object, &path)?;
            let (profile, origin) = settings.profiles.resolve(provider);
            let old_prefix = (!request.old_object.is_null()).then(|| {
                let old_provider = fields::string(&request.old_object, &path);
                let old_profile = settings.profiles.resolve(old_provider.ok().flatten()).0;
                settings.tag_keys(old_profile).prefix
            });
            return Ok(Chosen {
                provider,
                profile,
                origin,
                old_prefix,
            });
        }
    };
    let (profile, origin) =
        (settings.profiles.infrastructure(name)).unwrap_or((&GENERIC, Origin::Fallback));
    Ok(Chosen {
        provider: None,
        profile,
        origin,
        old_prefix: None,
    })
}

/// An object's `metadata.labels` as the plan will leave them: read in
/// place when the plan does not edit them (always, on a composite
/// resource), else overlaid by the plan's edits.
enum OwnLabels<'a> {
    InPlace(Option<&'a Map<String, Value>>),
    Planned(StringMap<'a>),
}

impl<'a> OwnLabels<'a> {
    fn read(plan: &'a Plan, object: &'a Value) -> Result<Self, FieldError> {
        if plan.map_edits().any(|edit| edit.path == LABELS) {
            plan.resulting_map(object, LABELS).map(OwnLabels::Planned)
        } else {
            fields::string_object(object, LABELS).map(OwnLabels::InPlace)
        }
    }

    fn layer(&self) -> Option<Layer<'_>> {
        match self {
            OwnLabels::InPlace(labels) => labels.map(Layer::Object),
            OwnLabels::Planned(labels) => Some(Layer::Map(labels)),
        }
    }
}
