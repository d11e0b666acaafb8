//! The settings that name tags: `cloudTags.prefix`, a user profile's own
//! `prefix`, and `cloudTags.tagKeys` (docs, "Tag keys"). Each problem names
//! its field, and both labels of a shared body are named.

use crate::json::fields::FieldPath;
use crate::settings_problem::SettingsProblem;
pub(crate) use crate::tags::keys::naming_problem::{PREFIX_MAX, TagKeyProblem};
use crate::tags::keys::tag_naming::Bodies;

/// Checks a prefix (`cloudTags.prefix`, or a profile's `prefix`) at `field`.
pub(crate) fn check_prefix(field: FieldPath, prefix: &str, problems: &mut Vec<SettingsProblem>) {
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
pub(crate) fn check_bodies(
    bodies: &Bodies,
    propagating: &[String],
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
