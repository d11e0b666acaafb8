//! The tags stage's [`Trace`] in words, for an [`Explanation`]: how a row
//! chose its profile and where its tags come from, worded per
//! [`ProfileChoice`], and why an object's tags were left alone.

use super::label_fates::{CloudTags, TagsExplanation};
use super::tagging_trace::{Tagged, Trace};
use crate::json::quote::quoted;
use crate::request::AdmissionRequest;
use crate::tags::contract_names::ORIGIN_LABEL;
use crate::tags::profiles::provider_limits::{Origin, TagProfile};
use crate::tags::targets::label_source::SourceFound;
use crate::tags::targets::{ProfileChoice, Target};

/// Puts `trace`, the stage's decisions for `request`'s object, into the
/// stage's `part` of an explanation and its `notes`.
pub(crate) fn render(
    trace: Trace<'_>,
    request: &AdmissionRequest,
    part: &mut TagsExplanation,
    notes: &mut Vec<String>,
) {
    match trace {
        Trace::NotAComposite => {}
        Trace::Untagged => notes.push(format!(
            "{} ({}) is of a managed-resource family cloudTags.managedResources turns on, \
             but has no tag field in the catalogue or the settings: allowed unchanged",
            request.kind.kind, request.kind.group
        )),
        Trace::CreateOnly(target) => {
            if let Some(profile) = target.profile_name() {
                notes.push(format!(
                    "{} is tagged on CREATE only ({profile} makes {} immutable): its tags are \
                     left as they are",
                    request.kind.kind,
                    target.field.dotted()
                ));
            }
        }
        Trace::Adopted => notes.push(format!(
            "{ORIGIN_LABEL} is \"adopted\": left exactly as submitted"
        )),
        Trace::LeftAlone(why) => notes.push(format!(
            "a managed resource left exactly as submitted: {}",
            why.said()
        )),
        Trace::Unread(xr) => notes.push(format!(
            "{xr}, the composite resource whose labels become this managed resource's tags, \
             could not be read: see the warning"
        )),
        Trace::Tagged(tagged) => {
            let Tagged {
                target,
                cloud_tags,
                provider_path,
                provider,
                found,
                profile,
            } = *tagged;
            let provider_read = (provider_path.as_str(), provider.as_deref());
            let (provider, why) = profile_choice(&target, request, provider_read, &found, profile);
            part.cloud_tags = Some(CloudTags {
                provider,
                why,
                field: target.named_in_messages.then(|| target.field.dotted()),
                ..cloud_tags
            });
            if let SourceFound::ClusterNotFound(reference) = &found {
                notes.push(format!(
                    "{reference} was not found: the tags come from this object's own labels"
                ));
            }
        }
    }
}

/// What chose the profile: (`provider`, `why`) of the explanation.
/// `provider` is the provider value read at `provider_path` (a
/// [`ProfileChoice::Provider`] row), `found` the object whose labels were
/// read (a "Cluster + object" row's Cluster, a managed resource's XR).
fn profile_choice(
    target: &Target,
    request: &AdmissionRequest,
    (provider_path, provider): (&str, Option<&str>),
    found: &SourceFound,
    (profile, origin): (&TagProfile, Origin),
) -> (String, String) {
    match target.profile {
        ProfileChoice::Provider => {
            let source = match provider {
                Some(p) => format!("{provider_path} = {}", quoted(p)),
                None => format!("{provider_path} is absent"),
            };
            (source, by_provider(origin, provider, profile))
        }
        ProfileChoice::Named(name) => (
            labels_source(found, profile),
            by_row(request, target, name, origin, profile),
        ),
        ProfileChoice::Family(family) => (
            composing_source(family, found),
            by_row(request, target, family, origin, profile),
        ),
    }
}

/// Why `profile` applied to a composite resource, naming the setting that
/// selected it.
fn by_provider(origin: Origin, provider: Option<&str>, profile: &TagProfile) -> String {
    match (origin, provider) {
        (Origin::BuiltIn, Some(p)) => {
            format!(
                "provider {} selects the built-in profile {}",
                quoted(p),
                profile.name
            )
        }
        (Origin::UserDefined { index }, Some(p)) => {
            format!(
                "provider {} is listed in cloudTags.profiles[{index}].providers",
                quoted(p)
            )
        }
        (_, Some(p)) => format!(
            "provider {} is listed by no profile, so the fallback {} applies",
            quoted(p),
            profile.name
        ),
        (_, None) => format!(
            "no provider value, so the fallback {} applies",
            profile.name
        ),
    }
}

/// Why `profile` applied to an infrastructure object, naming the row or the
/// setting that selected it.
fn by_row(
    request: &AdmissionRequest,
    target: &Target,
    name: &str,
    origin: Origin,
    profile: &TagProfile,
) -> String {
    let kind = &request.kind;
    let row = format!(
        "{} ({}/{}) keeps its tags in {}",
        kind.kind,
        kind.group,
        kind.version,
        target.field.dotted()
    );
    match origin {
        Origin::UserDefined { index } => format!(
            "{row}; cloudTags.profiles[{index}] lists {} among its providers, replacing the \
             built-in profile",
            quoted(name)
        ),
        _ => format!("{row} under the built-in profile {}", profile.name),
    }
}

/// Whose labels a managed resource's tags come from, and its family, in
/// words.
fn composing_source(family: &str, found: &SourceFound) -> String {
    match found.read() {
        Some((reference, _)) => format!("family {family}, labels of {reference}"),
        None => format!("family {family}"),
    }
}

/// Whose labels an infrastructure object's tags come from, in words.
pub(crate) fn labels_source(found: &SourceFound, profile: &TagProfile) -> String {
    let own = format!("this object's labels under profile {}", profile.name);
    match found.read() {
        Some((reference, _)) => format!("the labels of {reference}, then {own}"),
        None => own,
    }
}
