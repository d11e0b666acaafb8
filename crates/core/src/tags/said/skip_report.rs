//! How the tag decision is reported: one warning per skip (or one summary
//! under a profile that can never admit its prefix), the skip annotation's
//! records, each label's fate and why an entry goes. Shared by composite
//! resources and CAPI infrastructure.

use super::label_fates::{LabelFate, TagFate};
use crate::json::fields::StringMap;
use crate::json::quote::{push_quoted, quoted};
use crate::request::plan::MapEdit;
use crate::tags::contract_names::{ANNOTATIONS, SKIPPED_ANNOTATION};
use crate::tags::decision::label_set::{LabelSet, OptedIn};
use crate::tags::decision::transform::{self, Skip, SkipReason, Transformed};
use crate::tags::keys::tag_naming::TagKeys;
use crate::tags::profiles::provider_limits::TagProfile;
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
        _ => {
            // The words of a reason are written once for a run of skips
            // with the same reason (a count cap skips every label past it).
            let mut said: Option<(SkipReason<'_>, String)> = None;
            let mut warnings = Vec::with_capacity(skipped.len());
            for skip in skipped {
                let detail = match &mut said {
                    Some((reason, detail)) if *reason == skip.reason => detail,
                    said => &said.insert((skip.reason, skip.reason.to_string())).1,
                };
                warnings.push(warning_with(skip, detail));
            }
            warnings
        }
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
        SkipReason::ReservedPrefix { prefix: reserved } => format!(
            "the mandated prefix {} starts with its reserved prefix {}",
            quoted(prefix),
            quoted(reserved)
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
/// `looked_up` names the object a looked-up source was read from.
pub(crate) fn label_fates(
    set: &LabelSet<'_>,
    opted_in: &OptedIn<'_, &str>,
    transformed: &Transformed<'_>,
    keys: &TagKeys<'_>,
    profile: &TagProfile,
    looked_up: &str,
) -> Vec<LabelFate> {
    (set.sources().into_iter())
        .map(|(key, source)| LabelFate {
            qualified_key: key.to_owned(),
            source: source.describe(looked_up),
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

/// The skip annotation's value: a compact JSON array sorted by qualified
/// key, each record's fields in the contract's order, written as
/// `serde_json` writes them, with the answer's own JSON strings
/// ([`push_quoted`]): serde's escaping reads a byte at a time, and an
/// object past the count cap has hundreds of records.
pub(crate) fn skip_records(skipped: &[Skip<'_>]) -> String {
    let mut records = String::with_capacity(skipped.len() * 160);
    records.push('[');
    for (index, skip) in skipped.iter().enumerate() {
        if index > 0 {
            records.push(',');
        }
        let fields = [
            ("{\"qualifiedKey\":", skip.qualified_key),
            (",\"tagKey\":", skip.tag_key.as_str()),
            (",\"provider\":", skip.provider),
            (",\"reason\":", skip.reason.code()),
        ];
        for (name, value) in fields {
            records.push_str(name);
            push_quoted(&mut records, value);
        }
        records.push('}');
    }
    records.push(']');
    records
}

/// The admission warning for one skip, its reason worded as `detail`:
/// written piece by piece, as `format!` would write it, without its
/// machinery (an object can have hundreds of skips, each a warning).
fn warning_with(skip: &Skip<'_>, detail: &str) -> String {
    let code = skip.reason.code();
    let mut text = String::with_capacity(
        96 + skip.qualified_key.len() + skip.tag_key.len() + skip.provider.len() + detail.len(),
    );
    text.push_str("cloud tag skipped: label ");
    push_quoted(&mut text, skip.qualified_key);
    text.push_str(" did not become tag ");
    push_quoted(&mut text, &skip.tag_key);
    for piece in [
        " on provider profile ",
        skip.provider,
        ": ",
        code,
        " (",
        detail,
        ")",
    ] {
        text.push_str(piece);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as serde writes it, fields in the contract's order.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Record<'a> {
        qualified_key: &'a str,
        tag_key: &'a str,
        provider: &'a str,
        reason: &'a str,
    }

    /// The records are what serde_json writes for them, byte for byte,
    /// keys that need escapes included.
    #[test]
    fn skip_records_are_written_as_serde_json_writes_them() {
        let skips = [
            Skip {
                qualified_key: "example.com/a\"b",
                tag_key: "plexsphere:example.com/a\"b".to_owned(),
                provider: "aws",
                reason: SkipReason::KeyCharacterClass { character: '"' },
            },
            Skip {
                qualified_key: "example.com/tab\there",
                tag_key: "p:\\\u{1}é".to_owned(),
                provider: "my-profile",
                reason: SkipReason::CountCap { cap: 50, taken: 3 },
            },
        ];
        let records: Vec<Record<'_>> = (skips.iter())
            .map(|skip| Record {
                qualified_key: skip.qualified_key,
                tag_key: &skip.tag_key,
                provider: skip.provider,
                reason: skip.reason.code(),
            })
            .collect();
        assert_eq!(
            skip_records(&skips),
            serde_json::to_string(&records).unwrap()
        );
        assert_eq!(skip_records(&[]), "[]");
    }
}
