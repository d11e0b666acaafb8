//! A user profile's character classes, `keyCharacters` and `valueCharacters`:
//! `sets` ∪ `extra` ∖ `except`, checked as the profile is prepared.

use super::profile_problem::{CHARACTERS_LEN_MAX, ProfileProblem};
use crate::json::fields::FieldPath;
use crate::json::null_unset::null_is_default;
use crate::settings_problem::SettingsProblem;
use crate::tags::profiles::char_class::CharSet;
use crate::tags::profiles::char_class::KeyCharacters;

/// `keyCharacters` and `valueCharacters`: `sets` ∪ `extra` ∖ `except`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "character classes such as {\"sets\": [\"ascii-letters\"], \"extra\": \"-_\"}"
)]
pub(crate) struct RawKeyCharacters {
    /// Named sets (`letters`, `digits`, `non-control`, ...).
    #[serde(default, deserialize_with = "null_is_default")]
    pub(crate) sets: Vec<CharSet>,
    /// Characters admitted besides the sets.
    #[serde(default, deserialize_with = "null_is_default")]
    pub(crate) extra: String,
    /// Characters refused even when a set admits them.
    #[serde(default, deserialize_with = "null_is_default")]
    pub(crate) except: String,
}

/// The character class `name` (`keyCharacters` or `valueCharacters`) of the
/// profile at `field`, its problems pushed onto `problems`.
pub(super) fn check(
    field: &FieldPath,
    name: &str,
    raw: &RawKeyCharacters,
    problems: &mut Vec<SettingsProblem>,
) -> KeyCharacters {
    let field = field.member(name);
    let what = if name == "keyCharacters" {
        "tag keys"
    } else {
        "tag values"
    };
    if raw.sets.is_empty() && raw.extra.is_empty() {
        problems.push(SettingsProblem::new(
            field.clone(),
            ProfileProblem::NoCharacters,
        ));
    }
    if let Some(c) = raw.extra.chars().find(|&c| raw.except.contains(c)) {
        problems.push(SettingsProblem::new(
            field.clone(),
            ProfileProblem::ExtraAndExcept(c),
        ));
    }
    if let Some(c) = raw
        .extra
        .chars()
        .chain(raw.except.chars())
        .find(|c| c.is_control())
    {
        let kind = ProfileProblem::ControlCharacter(c, what);
        problems.push(SettingsProblem::new(field.clone(), kind));
    }
    for (part, text) in [("extra", &raw.extra), ("except", &raw.except)] {
        let length = text.chars().count();
        if length > CHARACTERS_LEN_MAX {
            let kind = ProfileProblem::TooManyCharacters(length);
            problems.push(SettingsProblem::new(field.member(part), kind));
        }
    }
    KeyCharacters::from_parts(&raw.sets, raw.extra.clone(), raw.except.clone())
}
