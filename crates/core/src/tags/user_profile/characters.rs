//! A user profile's character classes, `keyCharacters` and `valueCharacters`:
//! `sets` ∪ `extra` ∖ `except`, checked as the profile is prepared.

use super::RawKeyCharacters;
use crate::quote::quoted;
use crate::tags::char_class::KeyCharacters;

/// `extra` and `except` list single characters: a provider rule names a
/// handful, and anything longer is better said with a set.
const CHARACTERS_LEN_MAX: usize = 256;

/// A character class (`keyCharacters` or `valueCharacters`, named by `name`)
/// of profile `field`, its problems pushed onto `problems`.
pub(super) fn check(
    field: &str,
    name: &str,
    raw: &RawKeyCharacters,
    problems: &mut Vec<String>,
) -> KeyCharacters {
    let field = format!("{field}.{name}");
    let what = if name == "keyCharacters" {
        "tag keys"
    } else {
        "tag values"
    };
    if raw.sets.is_empty() && raw.extra.is_empty() {
        problems.push(format!(
            "{field}: admits no character; name sets such as [\"letters\", \"digits\"] and/or \
             list characters in extra"
        ));
    }
    if let Some(c) = raw.extra.chars().find(|&c| raw.except.contains(c)) {
        problems.push(format!(
            "{field}: {} is both in extra and in except; keep it in one of them",
            quoted(&c.to_string())
        ));
    }
    if let Some(c) = raw
        .extra
        .chars()
        .chain(raw.except.chars())
        .find(|c| c.is_control())
    {
        problems.push(format!(
            "{field}: control character U+{:04X} in extra or except; {what} never carry one, \
             remove it",
            u32::from(c)
        ));
    }
    for (name, text) in [("extra", &raw.extra), ("except", &raw.except)] {
        let length = text.chars().count();
        if length > CHARACTERS_LEN_MAX {
            problems.push(format!(
                "{field}.{name}: {length} characters, at most {CHARACTERS_LEN_MAX} are allowed; \
                 name a set such as \"letters\" or \"printable\" instead of listing its characters"
            ));
        }
    }
    KeyCharacters::from_parts(&raw.sets, raw.extra.clone(), raw.except.clone())
}
