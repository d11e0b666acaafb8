//! How the tag decision is reported: one warning per skip (or one summary
//! under a profile that can never admit its prefix), the skip annotation's
//! records, each label's fate and why an entry goes. Shared by composite
//! resources and CAPI infrastructure.

use super::label_set::{LabelSet, OptedIn};
use super::tag_annotations::{ANNOTATIONS, SKIPPED_ANNOTATION};
use super::transform::{self, Skip, SkipReason, Transformed};
use crate::explain::{LabelFate, TagFate};
use crate::fields::StringMap;
use crate::plan::MapEdit;
use crate::quote::quoted;
use crate::tags::profile::TagProfile;
use crate::tags::tag_key::TagKeys;
use serde::Serialize;
use std::collections::BTreeMap;

/// One warning per skip, except under a profile that refuses every tag:
/// then every label fails for the same reason, and one warning saying so
/// tells the user more than fifty identical ones (docs/settings.md,
/// "User-defined tag profiles"). The skip annotation still lists every label.
pub(crate) fn warnings(
    profile: &TagProfile,
    keys: &TagKeys<'_>,
    skipped: &[Skip<'_>],
) -> Vec<String> {
    match blocked(profile, keys) {
        Some(why) if !skipped.is_empty() => vec![format!(
            "cloud tags skipped: {why}; {} opted-in label(s) skipped, each recorded in annotation \
             {SKIPPED_ANNOTATION}",
            skipped.len()
        )],
        _ => skipped.iter().map(warning).collect(),
    }
}

/// Why no tag can propagate under `profile` with the prefix in force, in
/// words; `None` when some can.
pub(crate) fn blocked(profile: &TagProfile, keys: &TagKeys<'_>) -> Option<String> {
    let prefix = keys.prefix;
    let why = match profile.blocks_every_tag(prefix)? {
        SkipReason::KeyCharacterClass { character } => format!(
            "its key characters ({}) refuse {} of the mandated prefix {}",
            profile.key_characters.describe(),
            quoted(&character.to_string()),
            quoted(prefix)
        ),
        SkipReason::KeyTooLong { limit, unit, .. } => format!(
            "its key ceiling of {limit} {} leaves no room after the mandated prefix {}",
            unit.noun(),
            quoted(prefix)
        ),
        other => other.to_string(),
    };
    Some(format!(
        "no tag can ever propagate under provider profile {}: {why}",
        profile.name
    ))
}

/// The fate of every label of `set` (explanations only), as the plan
/// decided it: opted in or not in `opted_in`, tag or skip in `transformed`;
/// `cluster` names the Cluster a Cluster source was read from.
pub(crate) fn label_fates(
    set: &LabelSet<'_>,
    opted_in: &OptedIn<'_, &str>,
    transformed: &Transformed<'_>,
    keys: &TagKeys<'_>,
    profile: &TagProfile,
    cluster: &str,
) -> Vec<LabelFate> {
    (set.sources().into_iter())
        .map(|(key, source)| LabelFate {
            qualified_key: key.to_owned(),
            source: source.describe(cluster),
            fate: label_fate(key, opted_in.contains_key(key), transformed, keys, profile),
        })
        .collect()
}

/// What became of label `key`, as the transform decided it.
fn label_fate(
    key: &str,
    opted_in: bool,
    transformed: &Transformed<'_>,
    keys: &TagKeys<'_>,
    profile: &TagProfile,
) -> TagFate {
    // `skipped` is sorted by qualified key (transform::transform).
    let skip = transformed
        .skipped
        .binary_search_by(|s| s.qualified_key.cmp(key))
        .ok()
        .map(|at| &transformed.skipped[at]);
    if !opted_in {
        TagFate::NotOptedIn
    } else if let Some(skip) = skip {
        TagFate::Skipped {
            reason: skip.reason.code().to_owned(),
            detail: skip.reason.to_string(),
        }
    } else {
        let tag_key = keys.tag_key(key);
        TagFate::Tag {
            caution: profile.provider_caution(&tag_key, keys.prefix.len()),
            tag_key,
        }
    }
}

/// Why an entry of the policy's goes from a tag field: a skip of this
/// evaluation, an entry the profile refuses, no opted-in label producing
/// it, or a prefix of the profile the object had before this update.
pub(crate) fn removal_note(
    tag_key: &str,
    value: &str,
    transformed: &Transformed<'_>,
    profile: &TagProfile,
    keys: &TagKeys<'_>,
) -> String {
    let Some(qualified_key) = keys.qualified_key_of(tag_key) else {
        return format!(
            "stale: written under the prefix of the profile before this update, not {}",
            quoted(keys.prefix)
        );
    };
    let skipped = transformed.skipped.iter().find(|s| s.tag_key == tag_key);
    let reason = match skipped {
        Some(skip) => Some(skip.reason),
        None => transform::check(profile, keys, qualified_key, tag_key, value),
    };
    match reason {
        Some(reason) => format!("invalid for profile {}: {}", profile.name, reason.code()),
        None => "stale: no opted-in label produces it".to_owned(),
    }
}

/// The skip annotation: present exactly when something was skipped.
pub(crate) fn skipped_edit(annotations: &StringMap<'_>, skipped: &[Skip<'_>]) -> MapEdit {
    if skipped.is_empty() {
        let mut remove = BTreeMap::new();
        if annotations.contains_key(SKIPPED_ANNOTATION) {
            remove.insert(
                SKIPPED_ANNOTATION.to_owned(),
                "stale: no label was skipped".to_owned(),
            );
        }
        return MapEdit {
            remove,
            ..MapEdit::new(ANNOTATIONS)
        };
    }
    let records = skip_records(skipped);
    MapEdit::upsert(
        ANNOTATIONS,
        annotations,
        [(SKIPPED_ANNOTATION, records.as_str())],
    )
}

/// One record of the skip annotation (field order is the contract's).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SkipRecord<'a> {
    qualified_key: &'a str,
    tag_key: &'a str,
    provider: &'a str,
    reason: &'a str,
}

/// The skip annotation's value: a compact JSON array sorted by qualified key.
pub(crate) fn skip_records(skipped: &[Skip<'_>]) -> String {
    /// The records written straight from the skips, without a list of them.
    struct Records<'s, 'a>(&'s [Skip<'a>]);
    impl Serialize for Records<'_, '_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_seq(self.0.iter().map(|s| SkipRecord {
                qualified_key: s.qualified_key,
                tag_key: &s.tag_key,
                provider: s.provider,
                reason: s.reason.code(),
            }))
        }
    }
    serde_json::to_string(&Records(skipped)).unwrap_or_else(|_| "[]".to_owned())
}

/// The admission warning for one skip.
pub(crate) fn warning(skip: &Skip<'_>) -> String {
    format!(
        "cloud tag skipped: label {} did not become tag {} on provider profile {}: {} ({})",
        quoted(skip.qualified_key),
        quoted(&skip.tag_key),
        skip.provider,
        skip.reason.code(),
        skip.reason
    )
}
