//! The pure label → cloud-tag transformer: the tag key, the skip reasons in
//! their order and the count cap of docs/cloud-tags.md ("Built-in profiles").
//!
//! Input: the opted-in labels, sorted by qualified key (a `BTreeMap`, whose
//! byte-wise `str` order is Go's string order), and a profile. Output: the
//! tags that map cleanly, and one [`Skip`] for every label that does not.
//! Every input label ends as exactly one tag or one skip.

use super::label_set::OptedIn;
use crate::tags::keys::tag_naming::TagKeys;
use crate::tags::profiles::provider_limits::{TagProfile, Unit};
use std::fmt;

/// Why a label did not become a tag. The set is closed; the variants are
/// checked in declaration order and the first that applies wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkipReason<'a> {
    /// The qualified key opens with a provider-reserved namespace.
    ReservedPrefix {
        /// The reserved prefix that matched.
        prefix: &'a str,
    },
    /// The prefixed tag key exceeds the key ceiling.
    KeyTooLong {
        /// Measured length of the tag key.
        length: usize,
        /// The ceiling.
        limit: usize,
        /// Unit of both numbers.
        unit: Unit,
    },
    /// The value exceeds the value ceiling.
    ValueTooLong {
        /// Measured length of the value.
        length: usize,
        /// The ceiling.
        limit: usize,
        /// Unit of both numbers.
        unit: Unit,
    },
    /// The prefixed tag key carries a character the provider does not admit.
    KeyCharacterClass {
        /// The first offending character.
        character: char,
    },
    /// The value carries a character the provider does not admit.
    ValueCharacterClass {
        /// The first offending character.
        character: char,
    },
    /// Valid, but lower-sorting keys already filled the per-object cap.
    CountCap {
        /// The cap.
        cap: usize,
        /// Of the cap, the entries the user wrote into the tag field
        /// themselves (CAPI infrastructure kinds; always 0 for XRs).
        taken: usize,
    },
}

impl SkipReason<'_> {
    /// The stable, machine-readable reason (the skip annotation's `reason`).
    pub(crate) fn code(&self) -> &'static str {
        match self {
            SkipReason::ReservedPrefix { .. } => "reserved-prefix",
            SkipReason::KeyTooLong { .. } => "key-too-long",
            SkipReason::ValueTooLong { .. } => "value-too-long",
            SkipReason::KeyCharacterClass { .. } => "key-character-class",
            SkipReason::ValueCharacterClass { .. } => "value-character-class",
            SkipReason::CountCap { .. } => "count-cap",
        }
    }
}

impl fmt::Display for SkipReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SkipReason::ReservedPrefix { prefix } => {
                write!(f, "the key starts with the reserved prefix \"{prefix}\"")
            }
            SkipReason::KeyTooLong {
                length,
                limit,
                unit,
            } => write!(
                f,
                "the tag key is {length} {}, the limit is {limit}",
                unit.noun()
            ),
            SkipReason::ValueTooLong {
                length,
                limit,
                unit,
            } => write!(
                f,
                "the value is {length} {}, the limit is {limit}",
                unit.noun()
            ),
            SkipReason::KeyCharacterClass { character } => write!(
                f,
                "the tag key contains {character:?} (U+{:04X})",
                u32::from(character)
            ),
            SkipReason::ValueCharacterClass { character } => write!(
                f,
                "the value contains {character:?} (U+{:04X})",
                u32::from(character)
            ),
            SkipReason::CountCap { cap, taken: 0 } => write!(
                f,
                "{cap} {} with lower-sorting keys already reached the cap of {cap}",
                plural(cap, "tag", "tags")
            ),
            SkipReason::CountCap { cap, taken } => {
                let tags = cap.saturating_sub(taken);
                write!(
                    f,
                    "{taken} {} of the field and {tags} {} with lower-sorting keys already \
                     reached the cap of {cap}",
                    plural(taken, "user entry", "user entries"),
                    plural(tags, "tag", "tags")
                )
            }
        }
    }
}

/// `one` for a count of 1, else `many`.
fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

/// One label that did not become a tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skip<'a> {
    /// The label's qualified key.
    pub qualified_key: &'a str,
    /// The tag key it would have had.
    pub tag_key: String,
    /// Name of the profile that refused it.
    pub provider: &'a str,
    /// Why.
    pub reason: SkipReason<'a>,
}

/// The result of transforming one label set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Transformed<'a> {
    /// Tag key → value, sorted by tag key, each key once. They move into
    /// the edit that writes them (`crate::request::plan::MapEdit::upsert_sorted`),
    /// where the one map they make is built.
    pub tags: Vec<(String, String)>,
    /// Refused labels, sorted by qualified key.
    pub skipped: Vec<Skip<'a>>,
}

// Here, not in profile.rs: what a profile refuses is worded in skip
// reasons, and the profiles know nothing of the transform.
impl TagProfile {
    /// Why this profile refuses *every* label under `prefix`, if it does:
    /// every tag key starts with the prefix in force, so a class that
    /// refuses one of its characters, or a key ceiling too short for the
    /// prefix and one more character, leaves nothing to propagate (GCP
    /// label keys refuse the `:` of `plexsphere:`), and so does a prefix
    /// that opens with a reserved one (`aws:` on AWS).
    pub(crate) fn blocks_every_tag(&self, prefix: &str) -> Option<SkipReason<'_>> {
        if let Some(reserved) = self.reserved_prefix_of(prefix) {
            return Some(SkipReason::ReservedPrefix { prefix: reserved });
        }
        let shortest = self.unit.measure(prefix) + 1;
        if shortest > self.key_max {
            return Some(SkipReason::KeyTooLong {
                length: shortest,
                limit: self.key_max,
                unit: self.unit,
            });
        }
        self.key_characters
            .first_disallowed(prefix)
            .map(|character| SkipReason::KeyCharacterClass { character })
    }
}

/// The first reason `profile` refuses this label, ignoring the count cap.
/// `tag_key` is the label's (`TagKeys::tag_key`).
pub(crate) fn check<'p>(
    profile: &'p TagProfile,
    keys: &TagKeys<'_>,
    qualified_key: &str,
    tag_key: &str,
    value: &str,
) -> Option<SkipReason<'p>> {
    let prefix_refused = profile.key_characters.first_disallowed(keys.prefix);
    check_after_prefix(
        profile,
        prefix_refused,
        keys.prefix.len(),
        qualified_key,
        tag_key,
        value,
    )
}

/// [`check`], the prefix's characters already checked (`prefix_refused`):
/// every tag key opens with the prefix, so a transform looks at it once,
/// not once per label. `tag_key` is the prefix (`prefix_len` bytes), then
/// the body.
fn check_after_prefix<'p>(
    profile: &'p TagProfile,
    prefix_refused: Option<char>,
    prefix_len: usize,
    qualified_key: &str,
    tag_key: &str,
    value: &str,
) -> Option<SkipReason<'p>> {
    // The contract reserves on the qualified key; the cloud checks the tag
    // key, so a prefix in force that makes one reserved (`aws:` itself, or
    // `a` before `ws:x`) is refused too rather than written for the
    // provider to deny.
    let reserved =
        (profile.reserved_prefix_of(qualified_key)).or_else(|| profile.reserved_prefix_of(tag_key));
    if let Some(prefix) = reserved {
        return Some(SkipReason::ReservedPrefix { prefix });
    }
    let unit = profile.unit;
    // (length, limit) when `text` is longer than `limit` in the profile's
    // unit; no rune is shorter than a byte, so a text of at most `limit`
    // bytes is not measured.
    let over = |text: &str, limit: usize| {
        (text.len() > limit)
            .then(|| (unit.measure(text), limit))
            .filter(|(length, _)| *length > limit)
    };
    if let Some((length, limit)) = over(tag_key, profile.key_max) {
        return Some(SkipReason::KeyTooLong {
            length,
            limit,
            unit,
        });
    }
    if let Some((length, limit)) = over(value, profile.value_max) {
        return Some(SkipReason::ValueTooLong {
            length,
            limit,
            unit,
        });
    }
    let body = tag_key.get(prefix_len..).unwrap_or_default();
    let key_refused = prefix_refused.or_else(|| profile.key_characters.first_disallowed(body));
    if let Some(character) = key_refused {
        return Some(SkipReason::KeyCharacterClass { character });
    }
    profile
        .value_characters
        .as_ref()
        .and_then(|class| class.first_disallowed(value))
        .map(|character| SkipReason::ValueCharacterClass { character })
}

/// The transform of the opted-in labels of a label set, sorted by
/// qualified key, each once, by their type: taken as they come.
pub(crate) fn transform_opted<'a>(
    labels: &OptedIn<'a, &'a str>,
    profile: &'a TagProfile,
    keys: &TagKeys<'_>,
    taken: usize,
) -> Transformed<'a> {
    transform_sorted(labels.pairs(), profile, keys, taken)
}

/// The transform's work, on labels sorted by qualified key, each key once
/// ([`OptedIn`], or the oracle's `sorted_pairs`, made them so; the count
/// cap keeps the lowest keys).
pub(crate) fn transform_sorted<'a>(
    labels: &[(&'a str, &'a str)],
    profile: &'a TagProfile,
    keys: &TagKeys<'_>,
    taken: usize,
) -> Transformed<'a> {
    let mut skipped = Vec::new();
    let mut tags = Vec::new();
    let room = profile.cap.saturating_sub(taken);
    let prefix_refused = profile.key_characters.first_disallowed(keys.prefix);
    // Each tag key is composed here, then copied into the map or, for a
    // skip, into a string of its own.
    let mut tag_key = String::new();
    for &(qualified_key, value) in labels {
        keys.write(qualified_key, &mut tag_key);
        let checked = check_after_prefix(
            profile,
            prefix_refused,
            keys.prefix.len(),
            qualified_key,
            &tag_key,
            value,
        );
        let reason = checked.or_else(|| {
            (tags.len() >= room).then_some(SkipReason::CountCap {
                cap: profile.cap,
                taken,
            })
        });
        match reason {
            None => tags.push((tag_key.clone(), value.to_owned())),
            Some(reason) => skipped.push(Skip {
                qualified_key,
                tag_key: tag_key.clone(),
                provider: &profile.name,
                reason,
            }),
        }
    }
    // With no chosen bodies every tag key is the prefix then the qualified
    // key, so the tags come in the labels' order; chosen bodies can reorder
    // them, and they are sorted once. Tag keys are unique either way: the
    // settings refuse two labels with one body.
    if keys.chooses_bodies() {
        tags.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    }
    debug_assert!(
        tags.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "tags out of order, or two labels with one tag key"
    );
    Transformed { tags, skipped }
}

impl Transformed<'_> {
    /// Whether `tag_key` became a tag.
    pub(crate) fn tagged(&self, tag_key: &str) -> bool {
        (self
            .tags
            .binary_search_by(|(key, _)| key.as_str().cmp(tag_key)))
        .is_ok()
    }
}
