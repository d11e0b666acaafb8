//! The label-set annotation (`cloud-tags.plexsphere.io/labels`): a JSON
//! object of qualified label keys to string values, decoded without copying.
//!
//! The annotation can hold thousands of entries (the benchmark's has
//! 10,000, 225 KiB), of which a handful are opted in. Decoding it into a
//! `serde_json::Map` allocated every key and value and inserted them one by
//! one into a B-tree whose keys share long prefixes; that was most of such a
//! request's time. Here keys and values borrow from the annotation's text
//! (unless they contain escapes), entries are gathered in a vector, and the
//! map is built in one sorted pass. Every value is still checked to be a
//! string, and the error names the first offending key in key order, as
//! before.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The decoded entries, sorted by key; a duplicate key keeps its last
/// value, as a JSON object decoded into a map does.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Entries<'a>(Vec<(Cow<'a, str>, Cow<'a, str>)>);

impl<'a> Entries<'a> {
    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .map(|at| self.0[at].1.as_ref())
    }

    /// How many entries there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The entries, sorted by key.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(key, value)| (key.as_ref(), value.as_ref()))
    }
}

/// Why the annotation is not a JSON object of strings, each worded here
/// once; an error names the annotation, or for [`Malformed::NotAString`]
/// its entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// Each variant says what the annotation is not.
#[allow(clippy::enum_variant_names)]
pub(crate) enum Malformed {
    /// Empty, or JSON whitespace only: the way `kubectl annotate …=` clears
    /// a value, which is no JSON document.
    #[error("empty; write {{}} for no labels, or remove the annotation")]
    Empty,
    /// Not JSON at all (serde_json's message).
    #[error(
        "not valid JSON ({0}); expected an object such as {{\"acme:team/owner\":\"payments\"}}"
    )]
    NotJson(String),
    /// JSON, but not an object: what it is instead.
    #[error("expected a JSON object of label keys to string values, found {0}")]
    NotAnObject(&'static str),
    /// The entry with this key (the first in key order) has a value of the
    /// named type.
    #[error("expected a string value, found {found}")]
    NotAString {
        /// The entry's key.
        key: String,
        /// What its value is instead.
        found: &'static str,
    },
}

/// Decodes the annotation's text.
pub(crate) fn decode(text: &str) -> Result<Entries<'_>, Malformed> {
    if (text.bytes()).all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        return Err(Malformed::Empty);
    }
    // From text, as every other decode in the module: one copy of
    // serde_json's reader (`wire::Payload::decode` says why text).
    let document: Document<'_> =
        serde_json::from_str(text).map_err(|e| Malformed::NotJson(e.to_string()))?;
    let entries = match document {
        Document::Object(entries) => entries,
        Document::Other(found) => return Err(Malformed::NotAnObject(found)),
    };
    let mut entries = entries;
    // Stable: equal keys stay in document order, so the last of each run is
    // the value a map would keep.
    entries.sort_by(|(a, _), (b, _)| a.cmp(b));
    let mut last: Vec<(Cow<'_, str>, Checked<'_>)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        match last.last_mut() {
            Some((previous, kept)) if *previous == key => *kept = value,
            _ => last.push((key, value)),
        }
    }
    let mut checked = Vec::with_capacity(last.len());
    for (key, value) in last {
        match value {
            Ok(value) => checked.push((key, value)),
            Err(found) => {
                return Err(Malformed::NotAString {
                    key: key.into_owned(),
                    found,
                });
            }
        }
    }
    Ok(Entries(checked))
}

/// An entry's value: a string, or the type it has instead.
type Checked<'a> = Result<Cow<'a, str>, &'static str>;

/// The annotation's JSON document: an object's entries in document order,
/// or the type of whatever else it is.
enum Document<'a> {
    Object(Vec<(Cow<'a, str>, Checked<'a>)>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Document<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocumentVisitor)
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of label keys to string values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(Text(key)) = map.next_key()? {
            let StringOrType(value) = map.next_value()?;
            entries.push((key, value));
        }
        Ok(Document::Object(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Document::Other("an array"))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Document::Other("a string"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Document::Other("a boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Document::Other("a number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Document::Other("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Document::Other("a number"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Document::Other("null"))
    }
}

/// A JSON string, borrowed from the text when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor).map(Text)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text))
    }
}

/// An entry's value: a string, or the type it has instead (its content
/// skipped).
struct StringOrType<'a>(Checked<'a>);

impl<'de> Deserialize<'de> for StringOrType<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(StringOrTypeVisitor)
            .map(StringOrType)
    }
}

struct StringOrTypeVisitor;

impl<'de> Visitor<'de> for StringOrTypeVisitor {
    type Value = Checked<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Owned(text)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Err("an object"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err("an array"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err("a boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Err("null"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, Value};
    use std::collections::BTreeMap;

    /// What the annotation decoded to before: a `serde_json::Map`, checked
    /// entry by entry in key order.
    fn through_value(text: &str) -> Result<BTreeMap<String, String>, Malformed> {
        let map: Map<String, Value> = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(Malformed::NotAnObject(crate::json::fields::type_name(
                    &other,
                )));
            }
            Err(e) => return Err(Malformed::NotJson(e.to_string())),
        };
        map.into_iter()
            .map(|(key, value)| match value {
                Value::String(s) => Ok((key, s)),
                other => Err(Malformed::NotAString {
                    key,
                    found: crate::json::fields::type_name(&other),
                }),
            })
            .collect()
    }

    fn owned(
        entries: Result<Entries<'_>, Malformed>,
    ) -> Result<BTreeMap<String, String>, Malformed> {
        entries.map(|e| {
            e.iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
    }

    #[test]
    fn decodes_like_a_json_map_for_every_shape() {
        for text in [
            r#"{"acme:checkout/owner":"team-payments","platform/env":"prod"}"#,
            r#"{"b":"2","a":"1","b":"3"}"#,
            r#"{"esc\"aped/key":"line\nbreak","plain":"\u00e9t\u00e9"}"#,
            r#"{"z":"1","b":{"nested":"x"},"a":7}"#,
            r#"{"a":[1,2],"b":null,"c":true,"d":1.5,"e":-3}"#,
            r#"{"dup":1,"dup":"now a string"}"#,
            r#"{}"#,
            r#"["a"]"#,
            r#""text""#,
            r#"42"#,
            r#"null"#,
            r#"{"a":"1"} trailing"#,
            r#"{"a":"#,
            r#"{a:1}"#,
        ] {
            assert_eq!(owned(decode(text)), through_value(text), "{text}");
        }
    }

    #[test]
    fn an_empty_annotation_says_how_to_clear_it() {
        for text in ["", " \n\t"] {
            assert_eq!(decode(text), Err(Malformed::Empty));
        }
        assert_eq!(
            Malformed::Empty.to_string(),
            "empty; write {} for no labels, or remove the annotation"
        );
    }

    #[test]
    fn keys_and_values_without_escapes_borrow_the_text() {
        let entries = decode(r#"{"platform/env":"prod","esc\"aped":"x"}"#).unwrap();
        let borrowed = |c: &Cow<'_, str>| matches!(c, Cow::Borrowed(_));
        let shapes: Vec<(bool, bool)> = entries
            .0
            .iter()
            .map(|(k, v)| (borrowed(k), borrowed(v)))
            .collect();
        assert_eq!(shapes, [(false, true), (true, true)]);
        assert_eq!(entries.get("platform/env"), Some("prod"));
        assert_eq!(entries.get("esc\"aped"), Some("x"));
        assert_eq!(entries.get("absent"), None);
    }

    proptest! {
        #[test]
        fn decodes_like_a_json_map(entries in proptest::collection::vec(
            ("[a-c/:\"é]{0,3}", prop_oneof![
                "[a-c\"\\\\é]{0,3}".prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
                Just(Value::Null),
            ]),
            0..6,
        )) {
            let text = format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            prop_assert_eq!(owned(decode(&text)), through_value(&text), "{}", text);
        }
    }
}
