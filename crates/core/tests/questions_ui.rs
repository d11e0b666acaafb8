//! `questions-ui.yml` (the form Rancher's UI shows for the policy's settings)
//! against the policy's own settings struct and docs/settings.md.
//!
//! The settings are not listed by hand here: a probing [`Deserializer`] walks
//! [`RawSettings`]' derived `Deserialize` impl and records every field path
//! and its shape (struct, bool, string, list, enum with its variants), so a
//! setting added to `crates/core/src/settings.rs` fails this test until it has a question
//! and a row in docs/settings.md. The defaults are checked by deserializing the settings
//! the questions' defaults describe and comparing them with `{}`'s.
//!
//! `cloudTags.profiles` is a list of objects the settings struct keeps as
//! JSON; each entry is a [`RawProfile`], probed the same way (list elements
//! included) under `cloudTags.profiles[]`, so a profile field added to
//! `crates/core/src/tags/profiles/user_defined.rs` fails this test until the
//! `sequence_questions` ask for it and the "User-defined tag profiles"
//! table of docs/settings.md has its row. The rows of
//! `cloudTags.managedResources.kinds` are probed the same way
//! ([`ELEMENTS_PROBED`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::support;
use crate::request::mode::MODES;
use metadata_propagation_core::settings::{RawSettings, Settings};
use metadata_propagation_core::tags::profiles::provider_limits::{GENERIC, TagProfile};
use metadata_propagation_core::tags::profiles::user_defined::raw_profile::RawProfile;
use serde::de::value::{Error, StrDeserializer};
use serde::de::{
    self, Deserialize, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Value, json};

const QUESTIONS: &str = include_str!("../../../questions-ui.yml");
const SETTINGS_DOC: &str = include_str!("../../../docs/settings.md");

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

/// The setting that lists user-defined tag profiles, each a [`RawProfile`].
const PROFILES: &str = "cloudTags.profiles";

/// The list settings whose elements are probed too (`path[]`), so that a
/// list of rows (`cloudTags.managedResources.kinds`) is asked for with
/// `sequence_questions` naming each field of a row, and the help text of a
/// list of names (`families`) names every valid one.
const ELEMENTS_PROBED: &[&str] = &[
    "cloudTags.managedResources.families",
    "cloudTags.managedResources.kinds",
];

/// Every field path of `RawSettings` (`capi.inPlaceFields`) and its shape,
/// and every field path of a tag profile under `cloudTags.profiles[]`
/// (`cloudTags.profiles[].keyCharacters.sets`), with the elements of its
/// lists (`cloudTags.profiles[].keyCharacters.sets[]`, an enum).
fn settings_shapes() -> BTreeMap<String, Shape> {
    let shapes = RefCell::new(BTreeMap::new());
    let probe = Probe {
        path: String::new(),
        elements: false,
        shapes: &shapes,
    };
    <RawSettings as serde::Deserialize>::deserialize(probe).expect("the probe walks RawSettings");
    assert_eq!(
        shapes.borrow().get(PROFILES),
        Some(&Shape::List),
        "{PROFILES} is the list of tag profiles"
    );
    let profile = Probe {
        path: format!("{PROFILES}[]"),
        elements: true,
        shapes: &shapes,
    };
    <RawProfile as serde::Deserialize>::deserialize(profile).expect("the probe walks RawProfile");
    shapes.into_inner()
}

/// A deserializer that answers every request with an empty value of the
/// requested shape (a list: with one element probed under `path[]` when
/// `elements` is set) and records the shape under the field's path.
struct Probe<'a> {
    path: String,
    elements: bool,
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
        // `mode` is read as a string, so that a value of another type is
        // refused naming the valid ones: its variants are MODES.
        if self.path == "mode" {
            self.record(Shape::Enum(MODES.to_vec()));
            return visitor.visit_str(MODES[0]);
        }
        self.record(Shape::String);
        visitor.visit_string(String::new())
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.record(Shape::List);
        if self.elements || ELEMENTS_PROBED.contains(&self.path.as_str()) {
            visitor.visit_seq(OneItem {
                probe: Some(Probe {
                    path: format!("{}[]", self.path),
                    elements: true,
                    shapes: self.shapes,
                }),
            })
        } else {
            visitor.visit_seq(NoItems)
        }
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
            elements: self.probe.elements,
            shapes: self.probe.shapes,
        })
    }
}

struct NoItems;

/// A list of one element, probed.
struct OneItem<'a> {
    probe: Option<Probe<'a>>,
}

impl<'de> SeqAccess<'de> for OneItem<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.probe
            .take()
            .map(|probe| seed.deserialize(probe))
            .transpose()
    }
}

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

/// A question, with its subquestions' parent (`map[`) and its sequence
/// questions' parent (`sequence[`) flattened away. `variable` is the full
/// path: a sequence question's own variable is relative to the list's
/// element (`name` under `cloudTags.profiles` is
/// `cloudTags.profiles[].name`), a subquestion's is the path in its scope
/// (`keyCharacters.sets` under `cloudTags.profiles[].keyCharacters`).
struct Question {
    variable: String,
    value: Value,
    parent: bool,
    sequence: bool,
}

impl Question {
    /// Inside a list element (a `sequence_questions` entry or below).
    fn in_sequence(&self) -> bool {
        self.variable.contains("[]")
    }

    fn required(&self) -> bool {
        self.value["required"].as_bool().unwrap_or(false)
    }
}

fn questions() -> Vec<Question> {
    let document: Value = serde_norway::from_str(QUESTIONS).expect("questions-ui.yml is YAML");
    let mut out = Vec::new();
    /// `scope`: the path of the list element the questions are in, with its
    /// trailing dot (empty at the top level).
    fn walk(list: &Value, scope: &str, parent: Option<&str>, out: &mut Vec<Question>) {
        for q in list.as_array().expect("a list of questions") {
            let variable = q["variable"]
                .as_str()
                .expect("every question names a variable");
            if let Some(parent) = parent {
                // Rancher's UI keys a subquestion by what follows its
                // parent's variable.
                assert!(
                    variable.starts_with(&format!("{parent}.")),
                    "subquestion {variable} of {parent}: its variable extends the parent's"
                );
            }
            let path = format!("{scope}{variable}");
            let sub = q.get("subquestions");
            let seq = q.get("sequence_questions");
            out.push(Question {
                variable: path.clone(),
                value: q.clone(),
                parent: sub.is_some(),
                sequence: seq.is_some(),
            });
            if let Some(sub) = sub {
                walk(sub, scope, Some(variable), out);
            }
            if let Some(seq) = seq {
                walk(seq, &format!("{path}[]."), None, out);
            }
        }
    }
    walk(&document["questions"], "", None, &mut out);
    out
}

/// `[text](target)` -> `text`: the UI shows plain text, the docs link.
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

/// The "Every setting" section of docs/settings.md (up to the next `## `
/// heading).
fn settings_section() -> &'static str {
    let start = SETTINGS_DOC
        .find("\n## Every setting\n")
        .expect("docs/settings.md has an \"Every setting\" section");
    let body = &SETTINGS_DOC[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |i| i + 3);
    &body[..end]
}

/// The "User-defined tag profiles" section of docs/settings.md (up to the
/// next heading).
fn profiles_section() -> &'static str {
    let start = SETTINGS_DOC
        .find("\n## User-defined tag profiles\n")
        .expect("docs/settings.md has a User-defined tag profiles section");
    let body = &SETTINGS_DOC[start + 1..];
    let end = body[4..].find("\n#").map_or(body.len(), |i| i + 4);
    &body[..end]
}

/// The tag profile table: field -> meaning, backticks of the field removed.
fn readme_profile_rows() -> BTreeMap<String, String> {
    let mut rows = BTreeMap::new();
    for line in profiles_section().lines() {
        let Some(inner) = line.strip_prefix("| `").and_then(|l| l.strip_suffix(" |")) else {
            continue;
        };
        let Some((name, meaning)) = inner.split_once(" | ") else {
            panic!("a tag profile table row with two cells: {line}");
        };
        rows.insert(name.trim_end_matches('`').to_owned(), meaning.to_owned());
    }
    rows
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

/// A default as the settings table writes it (`null`: a setting left unset).
fn as_table_cell(value: &Value) -> String {
    match value {
        Value::Null => "unset".to_owned(),
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
    // A list's elements are asked for by the list's question (its
    // `sequence_questions` when they are objects).
    let settings: BTreeSet<&str> = shapes
        .keys()
        .map(String::as_str)
        .filter(|path| !path.ends_with("[]"))
        .collect();
    let questions = questions();
    let asked: BTreeSet<&str> = questions.iter().map(|q| q.variable.as_str()).collect();
    for probed in [
        "capi.inPlaceFields",
        "cloudTags.profiles[].keyCharacters.sets",
        "cloudTags.profiles[].reservedPrefixes[].ignoreCase",
    ] {
        assert!(settings.contains(probed), "the probe found {settings:?}");
    }
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
        let element = shapes.get(&format!("{}[]", q.variable));
        let expected = match shape {
            Shape::Struct => "map[",
            Shape::Bool => "boolean",
            Shape::Int => "int",
            Shape::String => "string",
            // A list of objects: Rancher's `sequence[` with its own
            // `sequence_questions`.
            Shape::List if element == Some(&Shape::Struct) => "sequence[",
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
        assert_eq!(
            q.sequence,
            expected == "sequence[",
            "{}: sequence_questions",
            q.variable
        );
        if let Some(Shape::Enum(variants)) = element {
            // A list of names: `array[` takes any string, so the help text
            // names every valid one.
            let description = q.value["description"].as_str().unwrap_or_default();
            for variant in variants {
                assert!(
                    description.contains(&format!("`{variant}`")),
                    "{}: the help text does not name `{variant}`: {description}",
                    q.variable
                );
            }
        }
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
    for q in questions().into_iter().filter(|q| !q.in_sequence()) {
        if q.parent {
            assert_eq!(q.value["default"], json!({}), "{}: default", q.variable);
        } else {
            insert_at(&mut described, &q.variable, q.value["default"].clone());
        }
    }
    let described_value = Value::Object(described.clone());
    let from_questions = RawSettings::deserialize(&described_value)
        .unwrap_or_else(|e| panic!("the questions' defaults {described:?} are not settings: {e}"));
    let defaults: RawSettings = serde_json::from_str("{}").expect("{} is valid");
    assert_eq!(from_questions, defaults);
}

#[test]
fn questions_say_what_the_docs_settings_table_says() {
    let rows = readme_rows();
    let leaves: BTreeMap<String, Value> = questions()
        .into_iter()
        .filter(|q| !q.parent && !q.in_sequence())
        .map(|q| (q.variable, q.value))
        .collect();
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        leaves.keys().collect::<Vec<_>>(),
        "docs/settings.md table rows vs questions"
    );
    for (name, (default, meaning)) in &rows {
        let q = &leaves[name];
        assert_eq!(&as_table_cell(&q["default"]), default, "{name}: default");
        assert_eq!(
            q["description"].as_str().unwrap_or_default(),
            strip_links(meaning),
            "{name}: help text (the docs', links as plain text)"
        );
    }
}

/// The questions of one tag profile entry: `cloudTags.profiles[].` removed.
fn profile_questions() -> Vec<Question> {
    let prefix = format!("{PROFILES}[].");
    questions()
        .into_iter()
        .filter_map(|mut q| {
            q.variable = q.variable.strip_prefix(&prefix)?.to_owned();
            Some(q)
        })
        .collect()
}

/// A profile entry's own fields (`keyMax`, not `keyCharacters.sets`).
fn is_profile_field(q: &Question) -> bool {
    !q.variable.contains(['.', '['])
}

/// The entry Rancher's UI adds to a `sequence[` list: each sequence
/// question's variable with its default (`addSequence`). With
/// `nested_items`, every nested list gets one entry built the same way.
fn new_entry(sequence_questions: &Value, nested_items: bool) -> Value {
    let mut entry = Map::new();
    for q in sequence_questions.as_array().expect("sequence questions") {
        let variable = q["variable"].as_str().expect("a variable").to_owned();
        let value = match q.get("sequence_questions") {
            Some(nested) if nested_items => json!([new_entry(nested, true)]),
            _ => q["default"].clone(),
        };
        entry.insert(variable, value);
    }
    Value::Object(entry)
}

fn profiles_question() -> Value {
    let document: Value = serde_norway::from_str(QUESTIONS).expect("questions-ui.yml is YAML");
    let cloud_tags = document["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .find(|q| q["variable"] == "cloudTags")
        .expect("a cloudTags question");
    cloud_tags["subquestions"]
        .as_array()
        .expect("its subquestions")
        .iter()
        .find(|q| q["variable"] == PROFILES)
        .expect("a cloudTags.profiles question")
        .clone()
}

/// `path` (`reservedPrefixes[].prefix`) removed from `entry`, taking the
/// first element of each list on the way.
fn without(entry: &Value, path: &str) -> Value {
    with_member(entry, path, None)
}

/// `entry` with the member at `path` (as [`without`] names it) written
/// `null`.
fn nulled(entry: &Value, path: &str) -> Value {
    with_member(entry, path, Some(Value::Null))
}

/// `entry` with the member at `path` replaced by `value`, or removed.
fn with_member(entry: &Value, path: &str, value: Option<Value>) -> Value {
    let mut entry = entry.clone();
    let mut node = &mut entry;
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        node = match part.strip_suffix("[]") {
            Some(list) => &mut node[list][0],
            None => &mut node[*part],
        };
    }
    let members = node.as_object_mut().expect("an object on the path");
    let last = parts[parts.len() - 1];
    let old = match value {
        Some(value) => members.insert(last.to_owned(), value),
        None => members.remove(last),
    };
    old.unwrap_or_else(|| panic!("{path} is in the entry"));
    entry
}

fn as_profile(entry: &Value) -> Result<RawProfile, serde_json::Error> {
    serde_json::from_value(entry.clone())
}

#[test]
fn tag_profile_questions_say_what_the_docs_profile_table_says() {
    let rows = readme_profile_rows();
    let questions = profile_questions();
    let fields: BTreeMap<&str, &Question> = questions
        .iter()
        .filter(|q| is_profile_field(q))
        .map(|q| (q.variable.as_str(), q))
        .collect();
    assert_eq!(
        rows.keys().map(String::as_str).collect::<Vec<_>>(),
        fields.keys().copied().collect::<Vec<_>>(),
        "docs/settings.md User-defined tag profiles table rows vs the {PROFILES} sequence questions"
    );
    for (name, meaning) in &rows {
        let q = fields[name.as_str()];
        assert_eq!(
            q.value["description"].as_str().unwrap_or_default(),
            strip_links(meaning),
            "{PROFILES}[].{name}: help text (the docs', links as plain text)"
        );
        assert_eq!(
            q.required(),
            !meaning.starts_with("Optional"),
            "{PROFILES}[].{name}: `required` is what the docs say (its row starts with \"Optional\" or not)"
        );
    }
}

#[test]
fn required_marks_exactly_the_profile_fields_the_policy_cannot_do_without() {
    let full = new_entry(&profiles_question()["sequence_questions"], true);
    as_profile(&full)
        .unwrap_or_else(|e| panic!("the questions' defaults {full} are not a tag profile: {e}"));
    for q in profile_questions() {
        let refused = as_profile(&without(&full, &q.variable)).is_err();
        assert_eq!(
            q.required(),
            refused,
            "{PROFILES}[].{}: required: {}, but a profile without it is {}",
            q.variable,
            q.required(),
            if refused { "refused" } else { "accepted" }
        );
    }
}

#[test]
fn an_optional_profile_field_defaults_to_what_leaving_it_out_gives() {
    let entry = new_entry(&profiles_question()["sequence_questions"], false);
    let with_defaults = as_profile(&entry).expect("the defaults make a profile");
    let optional: Vec<Question> = profile_questions()
        .into_iter()
        .filter(|q| is_profile_field(q) && !q.required())
        .collect();
    assert!(
        optional.iter().any(|q| q.variable == "reservedPrefixes"),
        "reservedPrefixes is optional"
    );
    for q in optional {
        assert_eq!(
            as_profile(&without(&entry, &q.variable)).ok().as_ref(),
            Some(&with_defaults),
            "{PROFILES}[].{}: its default is not what leaving it out gives",
            q.variable
        );
    }
}

/// Written `null`, an optional profile field is unset, as Go's
/// encoding/json and Rancher's form for an emptied field have it: the
/// strict parse and the member-by-member read (of a profile another
/// problem makes refused) both give what leaving it out gives.
#[test]
fn an_optional_profile_field_written_null_is_what_leaving_it_out_gives() {
    let entry = new_entry(&profiles_question()["sequence_questions"], false);
    let optional: Vec<Question> = profile_questions()
        .into_iter()
        .filter(|q| is_profile_field(q) && !q.required())
        .collect();
    assert!(
        optional.len() >= 3,
        "valueCharacters, reservedPrefixes, prefix"
    );
    for q in optional {
        let left_out = without(&entry, &q.variable);
        let null = nulled(&entry, &q.variable);
        assert_eq!(
            as_profile(&null).ok(),
            as_profile(&left_out).ok(),
            "{PROFILES}[].{}: written null",
            q.variable
        );
        // An unknown member makes the strict parse refuse the profile, so
        // it is read member by member: the problems are the same.
        let refused = |mut profile: Value| {
            profile["unknownField"] = json!(1);
            let settings = json!({"cloudTags": {"profiles": [profile]}});
            Settings::from_json(settings.to_string().as_bytes())
                .expect_err("an unknown field is refused")
                .to_string()
        };
        assert_eq!(
            refused(null),
            refused(left_out),
            "{PROFILES}[].{} written null, read member by member",
            q.variable
        );
    }
}

/// Every setting written `null` (a section or a field) is its default, as
/// when it is left out: the form Rancher's UI sends for a field left empty,
/// and what YAML writes for a key without a value.
#[test]
fn a_setting_written_null_is_its_default() {
    let defaults: RawSettings = serde_json::from_str("{}").expect("{} is valid");
    let paths: Vec<String> = settings_shapes()
        .into_keys()
        .filter(|path| !path.contains("[]"))
        .collect();
    assert!(
        paths.len() >= 14,
        "every setting, sections included: {paths:?}"
    );
    for path in paths {
        let mut document = Map::new();
        insert_at(&mut document, &path, Value::Null);
        let text = Value::Object(document).to_string();
        let read: RawSettings = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{text}: {path} written null is refused: {e}"));
        assert_eq!(read, defaults, "{text}: {path} written null");
        // Beside another setting's problem, read member by member, it is
        // not one: the problems are those of `{}` with that problem.
        let mut refused: Value = serde_json::from_str(&text).expect("JSON");
        refused["unknownSetting"] = json!(1);
        let error = |document: &Value| {
            Settings::from_json(document.to_string().as_bytes())
                .expect_err("an unknown setting is refused")
                .to_string()
        };
        assert_eq!(
            error(&refused),
            error(&json!({"unknownSetting": 1})),
            "{refused}"
        );
    }
}

#[test]
fn a_new_profile_in_the_form_starts_as_the_built_in_generic_profile() {
    let profiles = profiles_question();
    assert_eq!(profiles["default"], json!([]), "{PROFILES}: default");
    for q in profiles["sequence_questions"]
        .as_array()
        .expect("sequence questions")
    {
        // The UI fills a new entry from the `map[` question's default and
        // shows its subquestions' defaults when the entry has none: the same.
        if let Some(sub) = q.get("subquestions") {
            let shown: Map<String, Value> = sub
                .as_array()
                .expect("subquestions")
                .iter()
                .map(|s| {
                    let variable = s["variable"].as_str().expect("a variable");
                    let key = variable.rsplit('.').next().expect("a key");
                    (key.to_owned(), s["default"].clone())
                })
                .collect();
            assert_eq!(
                q["default"],
                Value::Object(shown),
                "{}: default vs its subquestions' defaults",
                q["variable"]
            );
        }
    }
    let mut entry = new_entry(&profiles["sequence_questions"], false);
    entry["name"] = json!("example");
    entry["providers"] = json!(["example"]);
    let mut problems = Vec::new();
    let prepared = support::prepare_profile_values(std::slice::from_ref(&entry), &mut problems);
    assert_eq!(problems, Vec::<String>::new(), "{entry} is refused");
    let settings = json!({"cloudTags": {"profiles": [entry]}}).to_string();
    if let Err(e) = Settings::from_json(settings.as_bytes()) {
        panic!("settings with the new profile are refused: {e}");
    }
    let [profile] = &prepared[..] else {
        panic!("one profile, got {prepared:?}");
    };
    assert_eq!(
        &TagProfile {
            name: GENERIC.name.clone(),
            providers: GENERIC.providers.clone(),
            ..profile.clone()
        },
        &GENERIC,
        "a new profile's ceilings, unit, cap, key characters and reserved prefixes"
    );
}

#[test]
fn the_docs_settings_example_shows_every_setting_at_its_default() {
    let section = settings_section();
    let start = section.find("```yaml\n").expect("a YAML example") + "```yaml\n".len();
    let end = start + section[start..].find("```").expect("its end");
    let example: Value = serde_norway::from_str(&section[start..end]).expect("YAML");
    let shown = RawSettings::deserialize(&example)
        .unwrap_or_else(|e| panic!("the docs' example {example} is not settings: {e}"));
    assert_eq!(shown, serde_json::from_str::<RawSettings>("{}").unwrap());
    let mut leaves = BTreeSet::new();
    fn walk(value: &Value, path: &str, out: &mut BTreeSet<String>) {
        match value {
            // A map setting shown at its default (`tagKeys: {}`) is a leaf.
            Value::Object(map) if !map.is_empty() => {
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
    // A tag profile's fields are the profiles section's (its own test).
    let settings: BTreeSet<String> = settings_shapes()
        .into_iter()
        .filter(|(k, s)| *s != Shape::Struct && !k.contains("[]"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(leaves, settings, "settings in the docs' YAML example");
}

#[test]
fn strip_links_keeps_the_link_text() {
    assert_eq!(
        strip_links("see [Validate mode](#validate-mode) and [x](y)."),
        "see Validate mode and x."
    );
    assert_eq!(strip_links("no [link] here"), "no [link] here");
}
