//! `questions-ui.yml` (the form Rancher's UI shows for the policy's settings)
//! against the policy's own settings struct and the README's Settings section.
//!
//! The settings are not listed by hand here: a probing [`Deserializer`] walks
//! [`RawSettings`]' derived `Deserialize` impl and records every field path
//! and its shape (struct, bool, string, list, enum with its variants), so a
//! setting added to `crates/core/src/settings.rs` fails this test until it has a question
//! and a README row. The defaults are checked by deserializing the settings
//! the questions' defaults describe and comparing them with `{}`'s.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use metadata_propagation_core::settings::RawSettings;
use serde::de::value::{Error, StrDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

const QUESTIONS: &str = include_str!("../questions-ui.yml");
const README: &str = include_str!("../README.md");

/// What a settings field is, as its `Deserialize` impl asks for it.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Struct,
    Bool,
    Int,
    String,
    List,
    Map,
    Enum(Vec<&'static str>),
}

/// Every field path of `RawSettings` (`capi.inPlaceFields`) and its shape.
fn settings_shapes() -> BTreeMap<String, Shape> {
    let shapes = RefCell::new(BTreeMap::new());
    let probe = Probe {
        path: String::new(),
        shapes: &shapes,
    };
    <RawSettings as serde::Deserialize>::deserialize(probe).expect("the probe walks RawSettings");
    shapes.into_inner()
}

/// A deserializer that answers every request with an empty value of the
/// requested shape and records the shape under the field's path.
struct Probe<'a> {
    path: String,
    shapes: &'a RefCell<BTreeMap<String, Shape>>,
}

impl Probe<'_> {
    fn record(&self, shape: Shape) {
        if !self.path.is_empty() {
            self.shapes.borrow_mut().insert(self.path.clone(), shape);
        }
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(de::Error::custom(format!(
            "{}: a shape this test does not know; teach Probe and questions-ui.yml",
            self.path
        )))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.record(Shape::Struct);
        visitor.visit_map(Fields {
            probe: self,
            fields: fields.iter(),
            current: None,
        })
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::Bool);
        visitor.visit_bool(false)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::Int);
        visitor.visit_u64(0)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // An optional setting is asked for as what it holds.
        visitor.visit_some(self)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::Map);
        visitor.visit_map(NoEntries)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::String);
        visitor.visit_string(String::new())
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::List);
        visitor.visit_seq(NoItems)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.record(Shape::Enum(variants.to_vec()));
        let first: StrDeserializer<'static, Error> = variants[0].into_deserializer();
        visitor.visit_enum(first)
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 f64 char bytes byte_buf
        unit unit_struct newtype_struct tuple tuple_struct identifier ignored_any
    }
}

/// A struct's fields, each once, each value probed under its path.
struct Fields<'a> {
    probe: Probe<'a>,
    fields: std::slice::Iter<'static, &'static str>,
    current: Option<&'static str>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(field) = self.fields.next() else {
            return Ok(None);
        };
        self.current = Some(field);
        let key: StrDeserializer<'static, Error> = field.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let field = self.current.take().expect("a key before its value");
        let path = if self.probe.path.is_empty() {
            field.to_owned()
        } else {
            format!("{}.{field}", self.probe.path)
        };
        seed.deserialize(Probe {
            path,
            shapes: self.probe.shapes,
        })
    }
}

struct NoItems;

struct NoEntries;

impl<'de> MapAccess<'de> for NoEntries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, _: K) -> Result<Option<K::Value>, Error> {
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, _: V) -> Result<V::Value, Error> {
        unreachable!("no keys, so no values")
    }
}

impl<'de> SeqAccess<'de> for NoItems {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        _: T,
    ) -> Result<Option<T::Value>, Error> {
        Ok(None)
    }
}

/// A question, with its subquestions' parent (`map[`) flattened away.
struct Question {
    variable: String,
    value: Value,
    parent: bool,
}

fn questions() -> Vec<Question> {
    let document: Value = serde_norway::from_str(QUESTIONS).expect("questions-ui.yml is YAML");
    let mut out = Vec::new();
    fn walk(list: &Value, out: &mut Vec<Question>) {
        for q in list.as_array().expect("a list of questions") {
            let variable = q["variable"]
                .as_str()
                .expect("every question names a variable");
            let sub = q.get("subquestions");
            out.push(Question {
                variable: variable.to_owned(),
                value: q.clone(),
                parent: sub.is_some(),
            });
            if let Some(sub) = sub {
                walk(sub, out);
            }
        }
    }
    walk(&document["questions"], &mut out);
    out
}

/// `[text](target)` -> `text`: the UI shows plain text, the README links.
fn strip_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The README's Settings section (up to the next `## ` heading).
fn settings_section() -> &'static str {
    let start = README
        .find("\n## Settings\n")
        .expect("README has a Settings section");
    let body = &README[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |i| i + 3);
    &body[..end]
}

/// The Settings table: setting -> (default, meaning), backticks of the first
/// two cells removed.
fn readme_rows() -> BTreeMap<String, (String, String)> {
    let mut rows = BTreeMap::new();
    for line in settings_section().lines() {
        let Some(inner) = line.strip_prefix("| `").and_then(|l| l.strip_suffix(" |")) else {
            continue;
        };
        let cells: Vec<&str> = inner.splitn(3, " | ").collect();
        let [name, default, meaning] = cells[..] else {
            panic!("a Settings table row with three cells: {line}");
        };
        rows.insert(
            name.trim_end_matches('`').to_owned(),
            (default.trim_matches('`').to_owned(), meaning.to_owned()),
        );
    }
    rows
}

/// A default as the README's table writes it.
fn as_table_cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn insert_at(root: &mut Map<String, Value>, path: &str, value: Value) {
    let mut node = root;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            node.insert(part.to_owned(), value);
            return;
        }
        node = node
            .entry(part)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("a struct path");
    }
}

#[test]
fn every_setting_has_a_question_and_every_question_a_setting() {
    let shapes = settings_shapes();
    let settings: BTreeSet<&str> = shapes.keys().map(String::as_str).collect();
    let questions = questions();
    let asked: BTreeSet<&str> = questions.iter().map(|q| q.variable.as_str()).collect();
    assert!(
        settings.contains("capi.inPlaceFields"),
        "the probe found {settings:?}"
    );
    assert_eq!(
        settings.difference(&asked).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "settings without a question in questions-ui.yml"
    );
    assert_eq!(
        asked.difference(&settings).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "questions that are not settings (validate_settings refuses unknown fields)"
    );
}

#[test]
fn question_types_match_the_settings_shapes() {
    let shapes = settings_shapes();
    for q in questions() {
        let shape = &shapes[&q.variable];
        let ty = q.value["type"].as_str().unwrap_or_default();
        if *shape == Shape::List && ty == "sequence[" {
            // A list of objects: Rancher's `sequence[` with its own
            // `sequence_questions`.
            continue;
        }
        let expected = match shape {
            Shape::Struct => "map[",
            Shape::Bool => "boolean",
            Shape::Int => "int",
            Shape::String => "string",
            Shape::List => "array[",
            Shape::Map => "map[",
            Shape::Enum(_) => "enum",
        };
        assert_eq!(ty, expected, "{}: question type", q.variable);
        assert_eq!(
            q.parent,
            *shape == Shape::Struct,
            "{}: subquestions",
            q.variable
        );
        if let Shape::Enum(variants) = shape {
            let options: Vec<&str> = q.value["options"]
                .as_array()
                .expect("an enum question lists its options")
                .iter()
                .map(|o| o.as_str().expect("string options"))
                .collect();
            assert_eq!(&options, variants, "{}: options", q.variable);
        }
    }
}

#[test]
fn question_defaults_are_the_settings_defaults() {
    let mut described = Map::new();
    for q in questions() {
        if q.parent {
            assert_eq!(q.value["default"], json!({}), "{}: default", q.variable);
        } else {
            insert_at(&mut described, &q.variable, q.value["default"].clone());
        }
    }
    let from_questions: RawSettings = serde_json::from_value(Value::Object(described.clone()))
        .unwrap_or_else(|e| panic!("the questions' defaults {described:?} are not settings: {e}"));
    let defaults: RawSettings = serde_json::from_str("{}").expect("{} is valid");
    assert_eq!(from_questions, defaults);
}

#[test]
fn questions_say_what_the_readme_settings_table_says() {
    let rows = readme_rows();
    let leaves: BTreeMap<String, Value> = questions()
        .into_iter()
        .filter(|q| !q.parent)
        .map(|q| (q.variable, q.value))
        .collect();
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        leaves.keys().collect::<Vec<_>>(),
        "README Settings table rows vs questions"
    );
    for (name, (default, meaning)) in &rows {
        let q = &leaves[name];
        assert_eq!(&as_table_cell(&q["default"]), default, "{name}: default");
        assert_eq!(
            q["description"].as_str().unwrap_or_default(),
            strip_links(meaning),
            "{name}: help text (the README's, links as plain text)"
        );
    }
}

#[test]
fn the_readme_settings_example_shows_every_setting_at_its_default() {
    let section = settings_section();
    let start = section.find("```yaml\n").expect("a YAML example") + "```yaml\n".len();
    let end = start + section[start..].find("```").expect("its end");
    let example: Value = serde_norway::from_str(&section[start..end]).expect("YAML");
    let shown: RawSettings = serde_json::from_value(example.clone())
        .unwrap_or_else(|e| panic!("the README example {example} is not settings: {e}"));
    assert_eq!(shown, serde_json::from_str::<RawSettings>("{}").unwrap());
    let mut leaves = BTreeSet::new();
    fn walk(value: &Value, path: &str, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(v, &p, out);
                }
            }
            _ => {
                out.insert(path.to_owned());
            }
        }
    }
    walk(&example, "", &mut leaves);
    let settings: BTreeSet<String> = settings_shapes()
        .into_iter()
        .filter(|(_, s)| *s != Shape::Struct)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(leaves, settings, "settings in the README's YAML example");
}

#[test]
fn strip_links_keeps_the_link_text() {
    assert_eq!(
        strip_links("see [Validate mode](#validate-mode) and [x](y)."),
        "see Validate mode and x."
    );
    assert_eq!(strip_links("no [link] here"), "no [link] here");
}
