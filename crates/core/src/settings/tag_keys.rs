//! The settings that name tags: `cloudTags.prefix`, a user profile's own
//! `prefix`, and `cloudTags.tagKeys` (docs, "Tag keys"). Each problem names
//! its field, and both labels of a shared body are named.

use super::SettingsProblem;
use crate::fields::{FieldPath, quoted};
use crate::tags::tag_key::Bodies;
use std::borrow::Cow;

/// The longest prefix, in bytes: room for a company's name and a
/// separator, far below every provider's key ceiling.
pub const PREFIX_MAX: usize = 64;

/// What is wrong with a tag-key prefix or a `cloudTags.tagKeys` entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagKeyProblem {
    /// An empty prefix would make every entry of a tag field the policy's.
    #[error(
        "empty prefix: the prefix marks which tags the policy owns, so every user tag would be \
         removed; use e.g. \"plexsphere:\" (the default) or omit the field"
    )]
    EmptyPrefix,
    /// A prefix over [`PREFIX_MAX`] bytes.
    #[error("the prefix is {0} bytes, at most {PREFIX_MAX} are allowed; use e.g. \"acme:\"")]
    PrefixTooLong(usize),
    /// A prefix with a control character, which no cloud admits in a key.
    #[error(
        "{} contains the control character U+{:04X}, which no cloud admits in a tag key; \
         remove it",
        quoted(.prefix),
        u32::from(*.character)
    )]
    PrefixControl {
        /// The prefix as written.
        prefix: String,
        /// The first control character.
        character: char,
    },
    /// A `tagKeys` entry for a label that is not opted in.
    #[error(
        "{} is not in cloudTags.propagatingLabels, so it never becomes a tag; add it there or \
         remove this entry",
        quoted(.0)
    )]
    NotOptedIn(String),
    /// A `tagKeys` entry with an empty body.
    #[error(
        "empty tag-key body for label {}: give the name its tag gets after the prefix, e.g. \
         \"cost-center\", or remove the entry to keep the label's own key",
        quoted(.0)
    )]
    EmptyBody(String),
    /// Two opted-in labels whose tag keys would have one body.
    #[error(
        "labels {} and {} both get the tag-key body {}{}, so they would write one tag; give \
         each label a body of its own",
        quoted(.first),
        quoted(.second),
        quoted(.body),
        own_key_note(.first, .second, .body)
    )]
    SharedBody {
        /// The label that sorts first.
        first: String,
        /// The other label.
        second: String,
        /// The body both would get.
        body: String,
    },
}

/// Which of two labels sharing `body` has it as its own key (no entry).
fn own_key_note(first: &str, second: &str, body: &str) -> String {
    [first, second]
        .into_iter()
        .find(|label| *label == body)
        .map(|label| {
            format!(
                " ({} has no tagKeys entry, so its body is its own key)",
                quoted(label)
            )
        })
        .unwrap_or_default()
}

/// Checks a prefix (`cloudTags.prefix`, or a profile's `prefix`) at `field`.
pub fn check_prefix(field: FieldPath, prefix: &str, problems: &mut Vec<SettingsProblem>) {
    let problem = if prefix.is_empty() {
        TagKeyProblem::EmptyPrefix
    } else if prefix.len() > PREFIX_MAX {
        TagKeyProblem::PrefixTooLong(prefix.len())
    } else if let Some(character) = prefix.chars().find(|c| c.is_control()) {
        TagKeyProblem::PrefixControl {
            prefix: prefix.to_owned(),
            character,
        }
    } else {
        return;
    };
    problems.push(SettingsProblem::new(field, problem));
}

/// Checks `cloudTags.tagKeys` against the opted-in labels `propagating`
/// (as written): every entry's label is opted in and has a body, and no
/// two opted-in labels end with one body (a label without an entry has its
/// own key as body).
pub fn check_bodies(
    bodies: &Bodies,
    propagating: &[Cow<'_, str>],
    problems: &mut Vec<SettingsProblem>,
) {
    let field = |label: &str| FieldPath::of(&["cloudTags", "tagKeys"]).key(label);
    for (label, body) in bodies {
        if !propagating.iter().any(|key| key == label) {
            let problem = TagKeyProblem::NotOptedIn(label.clone());
            problems.push(SettingsProblem::new(field(label), problem));
        } else if body.is_empty() {
            let problem = TagKeyProblem::EmptyBody(label.clone());
            problems.push(SettingsProblem::new(field(label), problem));
        }
    }
    // Labels without an entry keep their own keys, which are distinct, so
    // every shared body has a chosen one among its labels: each chosen body
    // is compared with the entries before it and with the opted-in labels'
    // own keys. A few entries, compared in place: nothing is built, and
    // nothing at all when no body is chosen (every request prepares this).
    let opted_in = |label: &str| propagating.iter().any(|key| key == label);
    let chosen =
        || (bodies.iter()).filter(|(label, body)| !body.is_empty() && opted_in(label.as_str()));
    for (k, (label, body)) in chosen().enumerate() {
        // The first earlier entry with this body, else a label whose own
        // key it is (`bodies` iterates in key order).
        let earlier = chosen().take(k).find(|(_, other)| *other == body);
        let own = || {
            (propagating.iter().map(AsRef::as_ref))
                .find(|key: &&str| *key == body.as_str() && !bodies.contains_key(*key))
        };
        let (first, second) = match (earlier, own()) {
            (Some((first, _)), _) => (first.as_str(), label.as_str()),
            (None, Some(key)) if key < label.as_str() => (key, label.as_str()),
            (None, Some(key)) => (label.as_str(), key),
            (None, None) => continue,
        };
        let problem = TagKeyProblem::SharedBody {
            first: first.to_owned(),
            second: second.to_owned(),
            body: body.clone(),
        };
        problems.push(SettingsProblem::new(field(label), problem));
    }
}
