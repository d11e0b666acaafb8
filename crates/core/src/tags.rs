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

mod cloud_settings;
pub(crate) mod contract_names;
pub(crate) mod decision;
mod failures;
pub(crate) mod keys;
mod needs;
mod object_read;
pub(crate) mod profiles;
pub(crate) mod said;
pub(crate) mod stage_door;
pub(crate) mod targets;

use crate::error::Error;
use crate::json::fields::{self, FieldError};
use crate::request::AdmissionRequest;
use crate::request::lookup::ObjectRef;
use crate::request::plan::Plan;
use crate::request::reads::Reads;
use crate::stage::{Reported, StageReport};
use decision::Inputs;
use failures::malformed;
use needs::{TagNeeds, Tagging};
use object_read::{OwnLayers, own_reference};
use profiles::provider_limits::{GENERIC, Origin, TagProfile};
use said::tagging_trace::Tagged;
pub(crate) use said::tagging_trace::Trace;
pub(crate) use said::why::render;
use targets::composing_xr::Unread;
use targets::field::{Current, Owned};
use targets::label_source::SourceFound;
use targets::{LabelSource, ProfileChoice, Target};

pub(crate) use cloud_settings::CloudTagSettings;
pub(crate) use cloud_settings::{RawCloudTagSettings, TagSettings};
pub(crate) use contract_names::ANNOTATIONS;
pub(crate) use contract_names::SKIPPED_ANNOTATION;

/// The second half of the stage's door: adds the tags decision of
/// `request`'s object to `plan` (which holds its CAPI metadata edits, if
/// any), from what `needs` names, the Cluster taken from `reads`, and
/// returns the skip warnings, or why it rejects the object; with them,
/// when `trace` asks for it, what it decided ([`Trace`]).
fn decide<'r>(
    request: &AdmissionRequest,
    needs: TagNeeds<'_>,
    settings: &'r TagSettings,
    reads: &mut Reads,
    plan: &mut Plan,
    trace: bool,
) -> StageReport<'r> {
    let mut deviation_warns = false;
    let decided = match needs {
        TagNeeds::NotAComposite => {
            let warning = targets::composite::not_a_composite_resource(&request.kind);
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
        Ok((warnings, trace)) => {
            let reported = Reported {
                warnings,
                deviation_warns,
                ..Reported::default()
            };
            StageReport::with_trace(Ok(reported), trace)
        }
        Err(error) => StageReport::rejected(error),
    }
}

/// What [`decide`] answers for an object: its warnings, and when asked,
/// its record.
type Answer<'s> = Result<(Vec<String>, Option<Trace<'s>>), Error>;

/// [`decide`] for an object it tags: by the row's label source, each with
/// its own function.
fn tag<'s>(
    tagging: Tagging<'_>,
    request: &AdmissionRequest,
    settings: &'s TagSettings,
    reads: &mut Reads,
    plan: &mut Plan,
    trace: bool,
) -> Answer<'s> {
    let Tagging {
        target,
        field,
        source,
    } = tagging;
    let source = source.map(|(source, _)| source);
    let Some(current) = field else {
        return Ok((Vec::new(), trace.then_some(Trace::CreateOnly(target))));
    };
    let row = Row {
        warn_removals: settings.mutates(),
        settings: settings.prepared()?,
        target,
        current,
        request,
        trace,
        reads,
        plan,
    };
    match row.target.labels {
        LabelSource::ComposingResource => row.tag_by_composing_xr(source),
        LabelSource::Object | LabelSource::ClusterAndObject => {
            row.tag_by_cluster_and_object(source)
        }
    }
}

/// What tagging one object under its row shares, whatever its label
/// source.
struct Row<'a, 's> {
    target: Target,
    current: Current<'a>,
    request: &'a AdmissionRequest,
    settings: &'s CloudTagSettings,
    warn_removals: bool,
    trace: bool,
    reads: &'a mut Reads,
    plan: &'a mut Plan,
}

impl<'a, 's> Row<'a, 's> {
    /// A row whose label set is the object's own, over its Cluster's when
    /// the row reads one: the object's labels and annotations as they
    /// will be stored (after the plan's metadata edits), over the
    /// Cluster's.
    fn tag_by_cluster_and_object(self, cluster: Option<ObjectRef>) -> Answer<'s> {
        let object = &self.request.object;
        let annotations = (self.plan.resulting_map(&self.request.object, ANNOTATIONS))
            .map_err(|error| malformed(own_reference(&self.target, self.request), error))?;
        let found = targets::label_source::read_cluster(cluster, self.reads)?;
        let looked_up = (found.layers())
            .map_err(|error| malformed(found.read().map(|(r, _)| r.clone()), error))?;
        let own_layers = OwnLayers::read(self.plan, object, &annotations);
        let own_layers = own_layers.map_err(|error| self.malformed(error))?;
        // Later sources win: the Cluster's labels, its annotation, the
        // object's labels, its annotation.
        let set = own_layers.over(looked_up.set());
        let tags = self.decide(&set, &annotations, &found)?;
        self.stamp(tags, found)
    }

    /// A managed resource's row: its composite resource's label set alone
    /// (its own labels are Crossplane's bookkeeping and the
    /// Composition's).
    fn tag_by_composing_xr(self, xr: Option<ObjectRef>) -> Answer<'s> {
        let annotations = (self.plan.resulting_map(&self.request.object, ANNOTATIONS))
            .map_err(|error| malformed(own_reference(&self.target, self.request), error))?;
        let found = match xr.map(|xr| targets::composing_xr::read(xr, self.reads)) {
            Some((xr, Ok(value))) => SourceFound::ComposingXr(xr, value),
            Some((xr, Err(unread))) => return self.xr_unread((xr, unread)),
            None => targets::label_source::read_cluster(None, self.reads)?,
        };
        let looked_up = match found.layers() {
            Ok(layers) => layers,
            Err(error) => {
                return match found {
                    SourceFound::ComposingXr(xr, _) => {
                        self.xr_unread((xr, Unread::Malformed(error)))
                    }
                    _ => Err(malformed(found.read().map(|(r, _)| r.clone()), error)),
                };
            }
        };
        let tags = self.decide(&looked_up.set(), &annotations, &found)?;
        self.stamp(tags, found)
    }
}

/// The tags decided over a label set, and the profile they were decided
/// under.
struct TagsOf<'o, 's> {
    decided: decision::Decided,
    provider: Option<&'o str>,
    profile: (&'s TagProfile, Origin),
}

impl<'a, 's> Row<'a, 's> {
    /// `error`, in the object's words.
    fn malformed(&self, error: FieldError) -> Error {
        malformed(own_reference(&self.target, self.request), error)
    }

    /// The tags over `set`, under the profile the row chooses; `None` when
    /// the set leaves the object as submitted (adopted).
    fn decide(
        &self,
        set: &decision::label_set::LabelSet<'_>,
        annotations: &fields::StringMap<'_>,
        found: &SourceFound,
    ) -> Result<Option<TagsOf<'a, 's>>, Error> {
        let (target, settings) = (&self.target, self.settings);
        if target.adoption.asks_tag_source() && set.marks_adopted() {
            return Ok(None);
        }
        let chosen = choose_profile(target, self.request, settings);
        let chosen = chosen.map_err(|error| self.malformed(error))?;
        let owned = chosen.owned(settings);
        let Chosen {
            provider,
            profile,
            origin,
            ..
        } = chosen;
        let fallback = (target.profile == ProfileChoice::Provider && origin == Origin::Fallback)
            .then(|| said::fallback(provider, &settings.provider_path.join(".")));
        // Named only in explanations: formatted only for one.
        let looked_up_name = match (found.read(), self.trace) {
            (Some((reference, _)), true) => reference.to_string(),
            _ => String::new(),
        };
        let decided = decision::decide(
            Inputs {
                target,
                set,
                current: &self.current,
                profile: (profile, origin),
                keys: settings.tag_keys(profile),
                owned,
                propagating: &settings.propagating_labels,
                annotations,
                looked_up: &looked_up_name,
                fallback,
                warn_removals: self.warn_removals,
            },
            self.trace,
            || said::why::labels_source(found, profile),
        );
        Ok(Some(TagsOf {
            decided,
            provider,
            profile: (profile, origin),
        }))
    }

    /// Adds `tags` to the plan; their warnings and, when asked, the
    /// record. `None`: the object is left as submitted (adopted).
    fn stamp(self, tags: Option<TagsOf<'_, 's>>, found: SourceFound) -> Answer<'s> {
        let Some(TagsOf {
            decided,
            provider,
            profile,
        }) = tags
        else {
            return Ok((Vec::new(), self.trace.then_some(Trace::Adopted)));
        };
        if let Some(edit) = decided.edit {
            self.plan.push(edit);
        }
        self.plan.merge(decided.skipped);
        let mut warnings = decided.warnings;
        if let SourceFound::ClusterNotFound(reference) = &found {
            warnings.push(said::cluster_not_found(reference));
        }
        let trace = decided.explained.map(|cloud_tags| {
            Trace::Tagged(Box::new(Tagged {
                target: self.target,
                cloud_tags,
                provider_path: self.settings.provider_path.join("."),
                provider: provider.map(str::to_owned),
                found,
                profile,
            }))
        });
        Ok((warnings, trace))
    }

    /// [`xr_unread`], for this row.
    fn xr_unread(self, xr: (ObjectRef, Unread)) -> Answer<'s> {
        let row = (&self.target, &self.current);
        xr_unread(xr, row, self.request, self.settings, self.plan, self.trace)
    }
}

/// What a managed resource whose composite resource `xr` could not be used
/// gets ([`targets::composing_xr::unread`]): its family chooses its profile, so
/// nothing here fails on the composite resource.
fn xr_unread<'s>(
    (xr, unread): (ObjectRef, Unread),
    (target, current): (&Target, &Current<'_>),
    request: &AdmissionRequest,
    settings: &CloudTagSettings,
    plan: &mut Plan,
    trace: bool,
) -> Result<(Vec<String>, Option<Trace<'s>>), Error> {
    let own = |error| malformed(own_reference(target, request), error);
    let chosen = choose_profile(target, request, settings).map_err(own)?;
    let owned = chosen.owned(settings);
    let (warning, edit) =
        targets::composing_xr::unread(unread, &xr, target, request, (current, owned))?;
    if let Some(edit) = edit {
        plan.push(edit);
    }
    Ok((vec![warning], trace.then_some(Trace::Unread(xr))))
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
