//! Crossplane composite resources: opted-in labels become provider-correct
//! cloud tags in `spec.cloudTags` (README, "Crossplane: cloud tags").
//!
//! Four stages: *resolve* the label set and provider from the
//! object (a malformed source rejects: "a resolve failure fails"), *transform*
//! under the provider's profile (a skip never fails), *stamp* the result as a
//! [`Plan`] over `spec.cloudTags` and the skip annotation, and *report* each
//! skip as a warning.

pub mod char_class;
mod contract;
mod decision;
pub mod field;
pub mod infra;
pub mod label_set;
pub mod labels_annotation;
pub mod profile;
mod report;
pub mod tag_key;
pub mod transform;
pub mod user_profile;

use crate::explain::{CloudTags, Explanation};
use crate::fields::{self, FieldError, FieldPath, StringMap};
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::quote::quoted;
use crate::settings::{CloudTagSettings, Settings};
use decision::Inputs;
use field::Owned;
use label_set::{LabelSet, Layer, Source};
use profile::{Origin, TagProfile};
pub use report::{skip_records, warning};
use serde_json::Value;

pub use contract::{
    ANNOTATIONS, CLOUD_TAGS, CLOUD_TAGS_FIELD, LABELS, LABELS_ANNOTATION, ORIGIN_LABEL,
    SKIPPED_ANNOTATION,
};

/// Decides the cloud tags of one XR; fills `explain` when given. The old
/// object of an UPDATE (`Value::Null` when there is none, or when the
/// prefix in force cannot differ between profiles: [`CloudTagSettings::prefixes_vary`])
/// says which prefix the entries of the previous profile carry.
pub fn evaluate(
    object: &Value,
    old_object: &Value,
    settings: &Settings,
    explain: Option<&mut Explanation>,
) -> Outcome {
    let settings = match settings.cloud_tags() {
        Ok(settings) => settings,
        // Only when validate_settings, which refuses them, was bypassed.
        Err(e) => {
            return Outcome::reject_with_code(format!("policy settings are not valid: {e}"), 500);
        }
    };
    match plan(object, old_object, settings, explain) {
        Ok(outcome) => outcome,
        Err(e) => Outcome::reject(format!("cannot compute cloud tags: {e}")),
    }
}

fn plan(
    object: &Value,
    old_object: &Value,
    settings: &CloudTagSettings,
    explain: Option<&mut Explanation>,
) -> Result<Outcome, FieldError> {
    let annotations = fields::string_map(object, ANNOTATIONS)?;
    let extra = parse_labels_annotation(&annotations)?;
    let labels = fields::string_object(object, LABELS)?;
    let mut set = LabelSet::default();
    if let Some(labels) = labels {
        set = set.with(Source::OwnLabels, Layer::Object(labels));
    }
    let set = set.with(Source::OwnAnnotation, Layer::Annotation(&extra));
    if set
        .get(ORIGIN_LABEL)
        .is_some_and(|(value, _)| value == "adopted")
    {
        // Adopted resources never propagate: left exactly as submitted.
        if let Some(explain) = explain {
            explain.notes.push(format!(
                "{ORIGIN_LABEL} is \"adopted\": left exactly as submitted"
            ));
        }
        return Ok(Outcome::allow());
    }

    let provider_path: Vec<&str> = settings.provider_path.iter().map(String::as_str).collect();
    let provider = fields::string(object, &provider_path)?;
    let (profile, origin) = settings.profiles.resolve(provider);
    let keys = settings.tag_keys(profile);
    // An UPDATE that moves the object to a profile with another prefix:
    // the entries under the old one were the policy's, and go too.
    let old_prefix = (!old_object.is_null())
        .then(|| {
            let old_provider = fields::string(old_object, &provider_path).ok().flatten();
            settings
                .tag_keys(settings.profiles.resolve(old_provider).0)
                .prefix
        })
        .filter(|old| *old != keys.prefix);
    let current = field::read(object, CLOUD_TAGS_FIELD)?;
    let decided = decision::decide(
        Inputs {
            field: CLOUD_TAGS_FIELD,
            set: &set,
            current: &current,
            profile: (profile, origin),
            keys,
            owned: Owned {
                prefix: keys.prefix,
                old_prefix,
            },
            user_room: false,
            propagating: &settings.propagating_labels,
            annotations: &annotations,
            cluster: "",
        },
        explain.is_some(),
        String::new,
    );
    if let (Some(explain), Some(explained)) = (explain, decided.explained) {
        let path = settings.provider_path.join(".");
        explain.cloud_tags = Some(CloudTags {
            provider: match provider {
                Some(p) => format!("{path} = {}", quoted(p)),
                None => format!("{path} is absent"),
            },
            why: why_profile(origin, provider, profile),
            ..explained
        });
    }
    let mut plan = Plan::default();
    if let Some(edit) = decided.edit {
        plan.push(edit);
    }
    plan.push(decided.skipped);

    let mut outcome = Outcome::with_plan(plan);
    outcome.warnings = decided.warnings;
    Ok(outcome)
}

/// The tag-key prefix in force on a composite resource: its profile's own,
/// else `cloudTags.prefix` (the property tests' and fuzz targets' oracle of
/// ownership; a provider that is not a string gives the fallback's).
pub fn prefix_in_force<'s>(object: &Value, settings: &'s CloudTagSettings) -> &'s str {
    let path: Vec<&str> = settings.provider_path.iter().map(String::as_str).collect();
    let provider = fields::string(object, &path).ok().flatten();
    let (profile, _) = settings.profiles.resolve(provider);
    settings.tag_keys(profile).prefix
}

/// Why `profile` applied, naming the setting that selected it.
fn why_profile(origin: Origin, provider: Option<&str>, profile: &TagProfile) -> String {
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

fn labels_annotation_field() -> FieldPath {
    FieldPath::of(ANNOTATIONS).key(LABELS_ANNOTATION)
}

/// The label-set annotation's entries (none when it is absent).
pub(crate) fn parse_labels_annotation<'o>(
    annotations: &StringMap<'o>,
) -> Result<labels_annotation::Entries<'o>, FieldError> {
    use labels_annotation::Malformed;
    let Some(text) = annotations.get(LABELS_ANNOTATION) else {
        return Ok(labels_annotation::Entries::default());
    };
    labels_annotation::decode(text).map_err(|malformed| {
        let field = match &malformed {
            Malformed::NotAString { key, .. } => labels_annotation_field().key(key),
            Malformed::NotJson(_) | Malformed::NotAnObject(_) => labels_annotation_field(),
        };
        FieldError::new(field, malformed)
    })
}
