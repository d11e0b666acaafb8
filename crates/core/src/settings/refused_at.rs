//! Which setting serde refused, found from where serde_json stopped.
//!
//! The document is written out pretty, so every member and every list
//! element starts a line of its own and every non-empty object or list ends
//! on one, and parsed again from that text. serde_json names the line it
//! stopped on, and a table built by walking the document the way the pretty
//! writer does names the setting on that line: the member or element whose
//! value was refused (a wrong type, an unknown variant, an unknown field's
//! key), or the object whose closing line it is (a missing field).
//!
//! A deserializer wrapper that tracks the path (serde_path_to_error) would
//! find the same names, but it instantiates every derive a second time:
//! dropping it took 39 KB off the module (BENCHMARKS.md, "Size").

use super::problem::{SettingsProblem, SettingsProblemKind};
use crate::fields::FieldPath;
use serde_json::Value;

/// `document` parsed by `parse` from its pretty text. If serde refuses it,
/// the problem names the refused setting under `root` (the path of
/// `document` itself; `FieldPath::of(&[])` for the settings, which a
/// problem then calls `settings`), with serde's message.
pub(crate) fn parse<T>(
    document: &Value,
    root: &FieldPath,
    parse: impl FnOnce(&str) -> serde_json::Result<T>,
) -> Result<T, SettingsProblem> {
    let text = serde_json::to_string_pretty(document).expect("JSON values always serialise");
    parse(&text).map_err(|error| refused(document, root, &error))
}

/// serde's `error` with `document` (at `root`), naming the setting on the
/// line it stopped on. Apart from [`parse`], which each type it reads has a
/// copy of.
fn refused(document: &Value, root: &FieldPath, error: &serde_json::Error) -> SettingsProblem {
    let mut lines = vec![root.clone()];
    walk(document, root, &mut lines);
    let field = (error.line().checked_sub(1))
        .and_then(|line| lines.get(line))
        .unwrap_or(root);
    if field.is_document() {
        SettingsProblem::document_refused(message(error))
    } else {
        SettingsProblem::new(field.clone(), SettingsProblemKind::Refused(message(error)))
    }
}

/// The object whose one member is `key`: a member tried alone, as a
/// document of its own.
pub(crate) fn object(key: &str, value: Value) -> Value {
    Value::Object(serde_json::Map::from_iter([(key.to_owned(), value)]))
}

/// Pushes the path of each line after the first of `value`, as
/// `serde_json`'s pretty writer lays it out: an empty object or list stays
/// on its first line.
fn walk(value: &Value, path: &FieldPath, lines: &mut Vec<FieldPath>) {
    match value {
        Value::Object(members) if !members.is_empty() => {
            let keyed = KEYED.contains(&path.to_string().as_str());
            for (name, member) in members {
                let inner = if keyed {
                    path.key(name)
                } else {
                    path.member(name)
                };
                lines.push(inner.clone());
                walk(member, &inner, lines);
            }
            lines.push(path.clone());
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                let inner = path.index(i);
                lines.push(inner.clone());
                walk(item, &inner, lines);
            }
            lines.push(path.clone());
        }
        _ => {}
    }
}

/// The settings whose members are the user's keys (label keys, which hold
/// dots and slashes), written in brackets as the checks after parsing
/// write them: `cloudTags.tagKeys["platform/env"]`.
const KEYED: [&str; 1] = ["cloudTags.tagKeys"];

/// serde's message without serde_json's position, which is in the pretty
/// text, not in the user's document.
fn message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(message) => message.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

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

    fn refused(document: Value) -> String {
        let root = FieldPath::of(&["cloudTags"]);
        let problem =
            parse(&document, &root, |text| serde_json::from_str::<Outer>(text)).unwrap_err();
        problem.to_string()
    }

    #[test]
    fn names_the_refused_value() {
        let document = json!({"inner": [
            {"name": "a", "sets": ["letters"]},
            {"name": "b", "sets": ["digits", "alnum"]},
        ]});
        assert_eq!(
            refused(document),
            "cloudTags.inner[1].sets[1]: unknown variant `alnum`, expected `letters` or `digits`"
        );
        assert_eq!(
            refused(json!({"on": "yes"})),
            "cloudTags.on: invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            refused(json!({"inner": [{"name": "a", "sets": {}}]})),
            "cloudTags.inner[0].sets: invalid type: map, expected a sequence"
        );
    }

    #[test]
    fn names_an_unknown_field_by_its_key() {
        assert_eq!(
            refused(json!({"inner": [{"name": "a", "sets": [], "nmae": "b"}]})),
            "cloudTags.inner[0].nmae: unknown field `nmae`, expected `name` or `sets`"
        );
    }

    #[test]
    fn names_the_object_a_field_is_missing_from() {
        assert_eq!(
            refused(json!({"inner": [{"sets": ["letters"]}]})),
            "cloudTags.inner[0]: missing field `name`"
        );
        assert_eq!(
            refused(json!({"inner": [{}]})),
            "cloudTags.inner[0]: missing field `name`"
        );
    }

    #[test]
    fn writes_a_map_key_in_brackets() {
        assert_eq!(
            refused(json!({"tagKeys": {"env": 3}})),
            "cloudTags.tagKeys[\"env\"]: invalid type: integer `3`, expected a string"
        );
    }

    #[test]
    fn names_the_document_when_it_is_refused_whole() {
        assert_eq!(
            refused(json!("text")),
            "cloudTags: invalid type: string \"text\", expected struct Outer"
        );
    }
}
