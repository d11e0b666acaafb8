//! The tag field of an infrastructure object: read in either shape, and the
//! one edit that makes its prefixed entries exactly the computed tags.
//!
//! Entries whose key does not start with the tag prefix are the user's and
//! are kept (in a list, in their order); the prefixed entries are the
//! policy's and are recomputed every time. Mutating admission runs before
//! the API server checks the schema, so a field of the wrong shape is
//! rejected naming the field rather than guessed at.

use super::targets::{Shape, Target};
use crate::fields::{self, FieldError, FieldPath, Problem};
use crate::plan::{Edit, FieldEdit, MapEdit};
use crate::tags::tag_key::TagKeys;
use crate::tags::transform::Transformed;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The tag field as submitted.
#[derive(Debug)]
pub struct Current<'o> {
    /// Whether the field is present (not absent, not `null`).
    pub present: bool,
    /// Its entries, in field order (a map's in key order).
    pub entries: Vec<(&'o str, &'o str)>,
    /// A list's items as submitted, one per entry (none for a map): a
    /// rewritten list keeps the user's items whole, not only their key and
    /// value.
    items: &'o [Value],
}

impl Current<'_> {
    /// The entries the user wrote (keys without the prefix in force): they
    /// take room under the profile's cap.
    pub fn user_entries(&self, keys: &TagKeys<'_>) -> impl Iterator<Item = (&str, &str)> {
        (self.entries.iter().copied()).filter(|(key, _)| !keys.owns(key))
    }

    /// The entries the policy owns (keys with the prefix in force).
    pub fn prefixed(&self, keys: &TagKeys<'_>) -> impl Iterator<Item = (&str, &str)> {
        (self.entries.iter().copied()).filter(|(key, _)| keys.owns(key))
    }
}

/// Reads the target's tag field of `object`.
pub fn read<'o>(object: &'o Value, target: &Target) -> Result<Current<'o>, FieldError> {
    match target.shape {
        Shape::Map => {
            let map = fields::object(object, target.field)?;
            let entries = match map {
                Some(map) => fields::string_entries(map, || FieldPath::of(target.field))?
                    .into_iter()
                    .collect(),
                None => Vec::new(),
            };
            Ok(Current {
                present: map.is_some(),
                entries,
                items: &[],
            })
        }
        Shape::KeyValueList => {
            let items = match fields::get(object, target.field)? {
                None => None,
                Some(Value::Array(items)) => Some(items),
                Some(other) => {
                    return Err(FieldError::expected(
                        FieldPath::of(target.field),
                        "a list of {key, value} objects",
                        other,
                    ));
                }
            };
            let entries = items
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, item)| list_entry(target.field, i, item))
                .collect::<Result<_, _>>()?;
            Ok(Current {
                present: items.is_some(),
                entries,
                items: items.map_or(&[], Vec::as_slice),
            })
        }
    }
}

/// One `{key, value}` entry of a list-shaped tag field.
fn list_entry<'o>(
    field: &[&str],
    i: usize,
    item: &'o Value,
) -> Result<(&'o str, &'o str), FieldError> {
    let at = format!("{}[{i}]", field.join("."));
    let Value::Object(entry) = item else {
        return Err(FieldError::expected(
            FieldPath::of(&[&at]),
            "a {key, value} object",
            item,
        ));
    };
    let text = |name: &str| -> Result<&'o str, FieldError> {
        match entry.get(name) {
            Some(Value::String(s)) => Ok(s.as_str()),
            None | Some(Value::Null) => Err(FieldError::new(
                FieldPath::of(&[&at, name]),
                Problem::Required,
            )),
            Some(other) => Err(FieldError::expected(
                FieldPath::of(&[&at, name]),
                "a string",
                other,
            )),
        }
    };
    Ok((text("key")?, text("value")?))
}

/// The edit that leaves the user's entries as they are and makes the
/// prefixed ones exactly `transformed.tags`, or `None` when the field
/// already holds them. The tags move out of `transformed`; `remove` holds
/// each prefixed entry that is not among them, with why it goes (for
/// reports), and `source` says where the tags come from.
pub fn edit(
    target: &'static Target,
    current: &Current<'_>,
    keys: &TagKeys<'_>,
    transformed: &mut Transformed<'_>,
    remove: BTreeMap<String, String>,
    source: impl FnOnce() -> String,
) -> Option<Edit> {
    let tags = std::mem::take(&mut transformed.tags);
    match target.shape {
        Shape::Map => {
            let held: fields::StringMap = crate::sorted_map::map_of(current.entries.clone());
            // A field the user wrote stays, even empty; one that held only
            // the policy's tags goes with the last of them, as it came.
            let drop_when_empty = tags.is_empty()
                && !remove.is_empty()
                && current.user_entries(keys).next().is_none();
            let edit = MapEdit {
                remove,
                drop_when_empty,
                ..MapEdit::upsert_map(target.field, &held, tags)
            };
            (!edit.is_empty()).then_some(Edit::Map(edit))
        }
        Shape::KeyValueList => {
            if !current.present && tags.is_empty() {
                return None;
            }
            // The user's items as written, in their order, then the tags
            // sorted by key (a SortedMap iterates in key order).
            let entry = |key: &str, value: &str| {
                Value::Object(Map::from_iter([
                    ("key".to_owned(), Value::String(key.to_owned())),
                    ("value".to_owned(), Value::String(value.to_owned())),
                ]))
            };
            let wanted: Vec<(&str, &str)> = current.user_entries(keys).chain(tags.iter()).collect();
            if wanted == current.entries {
                return None;
            }
            // A list that held only the policy's tags goes with the last of
            // them, as a map does.
            if wanted.is_empty() {
                return Some(Edit::Field(FieldEdit {
                    path: target.field,
                    entry: None,
                    value: Value::Null,
                    was: Some(Value::Array(current.items.to_vec())),
                    source: format!("no tag left: {}", source()),
                }));
            }
            let user_items = current
                .entries
                .iter()
                .zip(current.items)
                .filter(|((key, _), _)| !keys.owns(key))
                .map(|(_, item)| item.clone());
            let tag_items = tags.iter().map(|(key, value)| entry(key, value));
            Some(Edit::Field(FieldEdit {
                path: target.field,
                entry: None,
                value: Value::Array(user_items.chain(tag_items).collect()),
                was: current
                    .present
                    .then(|| Value::Array(current.items.to_vec())),
                source: source(),
            }))
        }
    }
}
