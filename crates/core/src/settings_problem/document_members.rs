//! A refused settings document read again from the user's own text, member
//! by member, so that every problem is named at once with its path.
//!
//! An object's members are taken as written: each key with its value's raw
//! text, a key written twice kept twice (a `serde_json::Value` would keep
//! one and hide the other). A member is then read alone, by the same derive
//! the strict parse uses, through serde_path_to_error, which names the
//! setting serde refused under the member's own path. Only refused
//! documents come here; accepted ones are parsed once, strictly.

use crate::json::fields::FieldPath;
use crate::settings_problem::{SettingsProblem, SettingsProblemKind};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// One member of an object: its key and its value's text, as written.
#[derive(Debug, Clone)]
pub(crate) struct Member<'a> {
    /// The key, as written (unescaped).
    pub(crate) key: String,
    /// The value's JSON text.
    pub(crate) value: &'a RawValue,
}

/// The members of the object `text` holds, sorted by key (as the problems
/// are reported: a key written twice comes twice, in its order), or `None`
/// when `text` is not an object.
pub(crate) fn members(text: &str) -> Option<Vec<Member<'_>>> {
    let Members(mut members) = serde_json::from_str(text).ok()?;
    members.sort_by(|a, b| a.key.cmp(&b.key));
    Some(members)
}

/// The problem of a key written twice in one object.
fn written_twice(at: FieldPath, key: &str) -> SettingsProblem {
    // serde's wording, which the strict parse refuses the document with.
    let message = format!("duplicate field `{key}`");
    SettingsProblem::new(at, SettingsProblemKind::Refused(message))
}

/// Whether member `i` of `members` (sorted by key) is the first of its
/// key, the one read; the second of a key written more than once adds the
/// one problem that names it, under `at`.
pub(crate) fn first_of_key(
    members: &[Member<'_>],
    i: usize,
    at: &FieldPath,
    problems: &mut Vec<SettingsProblem>,
) -> bool {
    let key = &members[i].key;
    let same = |j: Option<usize>| j.is_some_and(|j| members[j].key == *key);
    if !same(i.checked_sub(1)) {
        return true;
    }
    if !same(i.checked_sub(2)) {
        problems.push(written_twice(at.member(key), key));
    }
    false
}

/// `text` read as a `T` whose place in the settings is `at`; when serde
/// refuses it, the problem names the setting it refused (`at` and the path
/// inside `text`), with serde's message.
pub(crate) fn read<'de, T: Deserialize<'de>>(
    text: &'de str,
    at: &FieldPath,
) -> Result<T, SettingsProblem> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let (field, error) = match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(value) => match deserializer.end() {
            Ok(()) => return Ok(value),
            Err(error) => (at.clone(), error),
        },
        Err(error) => (path_under(at, error.path()), error.into_inner()),
    };
    let message = message(&error);
    Err(if field.is_document() {
        SettingsProblem::document_refused(message)
    } else {
        SettingsProblem::new(field, SettingsProblemKind::Refused(message))
    })
}

/// The object whose one member is `key` with the value `value`, as text:
/// a member read alone, as a document of its own.
pub(crate) fn alone(key: &str, value: &RawValue) -> String {
    let key = serde_json::to_string(key).expect("a string always serialises");
    format!("{{{key}:{}}}", value.get())
}

/// The JSON type of `value`, as messages name it.
pub(crate) fn type_name(value: &RawValue) -> &'static str {
    match value.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// `at` followed by serde's `path`; the keys of the settings that are the
/// user's keys (label keys, which hold dots and slashes) in brackets, as the
/// checks after parsing write them: `cloudTags.tagKeys["platform/env"]`.
fn path_under(at: &FieldPath, path: &serde_path_to_error::Path) -> FieldPath {
    use serde_path_to_error::Segment;
    let mut field = at.clone();
    for segment in path.iter() {
        field = match segment {
            Segment::Seq { index } => field.index(*index),
            Segment::Map { key } if KEYED.contains(&field.to_string().as_str()) => field.key(key),
            Segment::Map { key } => field.member(key),
            Segment::Enum { .. } | Segment::Unknown => field,
        };
    }
    field
}

/// The settings whose members are the user's keys.
const KEYED: [&str; 1] = ["cloudTags.tagKeys"];

/// serde's message without serde_json's position, which is in the text
/// read alone, not in the user's document.
fn message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(message) => message.to_owned(),
        None => message,
    }
}

/// An object's members in document order, duplicates kept.
struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push(Member {
                        key,
                        value: map.next_value()?,
                    });
                }
                Ok(Members(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)] // read only by serde
    struct Inner {
        name: String,
        sets: Vec<Set>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Set {
        Letters,
        Digits,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)] // read only by serde
    struct Outer {
        #[serde(default)]
        inner: Vec<Inner>,
        #[serde(default)]
        tag_keys: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        on: bool,
    }

    fn refused(text: &str) -> String {
        let root = FieldPath::of(&["cloudTags"]);
        read::<Outer>(text, &root).unwrap_err().to_string()
    }

    #[test]
    fn names_the_refused_value() {
        assert_eq!(
            refused(
                r#"{"inner": [{"name": "a", "sets": ["letters"]},
                              {"name": "b", "sets": ["digits", "alnum"]}]}"#
            ),
            "cloudTags.inner[1].sets[1]: unknown variant `alnum`, expected `letters` or `digits`"
        );
        assert_eq!(
            refused(r#"{"on": "yes"}"#),
            "cloudTags.on: invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            refused(r#"{"inner": [{"name": "a", "sets": {}}]}"#),
            "cloudTags.inner[0].sets: invalid type: map, expected a sequence"
        );
    }

    #[test]
    fn names_an_unknown_field_by_its_key() {
        assert_eq!(
            refused(r#"{"inner": [{"name": "a", "sets": [], "nmae": "b"}]}"#),
            "cloudTags.inner[0].nmae: unknown field `nmae`, expected `name` or `sets`"
        );
    }

    #[test]
    fn names_the_object_a_field_is_missing_from() {
        assert_eq!(
            refused(r#"{"inner": [{"sets": ["letters"]}]}"#),
            "cloudTags.inner[0]: missing field `name`"
        );
        assert_eq!(
            refused(r#"{"inner": [{}]}"#),
            "cloudTags.inner[0]: missing field `name`"
        );
    }

    #[test]
    fn writes_a_map_key_in_brackets() {
        assert_eq!(
            refused(r#"{"tagKeys": {"env": 3}}"#),
            "cloudTags.tagKeys[\"env\"]: invalid type: integer `3`, expected a string"
        );
    }

    #[test]
    fn names_the_document_when_it_is_refused_whole() {
        assert_eq!(
            refused(r#""text""#),
            "cloudTags: invalid type: string \"text\", expected struct Outer"
        );
    }

    #[test]
    fn members_keep_a_key_written_twice_and_sort_by_key() {
        let text = r#"{"b": 1, "a": {"x": [1, 2]}, "b": "two"}"#;
        let read = members(text).unwrap();
        let read: Vec<_> = read
            .iter()
            .map(|m| (m.key.as_str(), m.value.get()))
            .collect();
        assert_eq!(
            read,
            [("a", r#"{"x": [1, 2]}"#), ("b", "1"), ("b", r#""two""#)]
        );
        assert!(members("[1]").is_none());
        assert_eq!(
            written_twice(FieldPath::of(&["mode"]), "mode").to_string(),
            "mode: duplicate field `mode`"
        );
    }
}
