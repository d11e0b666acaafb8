//! A tag field (a composite resource's `spec.cloudTags`, an infrastructure
//! object's provider field): read in either shape, and the one edit that
//! makes the policy's entries exactly the computed tags.
//!
//! Entries whose key does not start with the tag prefix are the user's and
//! are kept (in a list, in their order); the prefixed entries are the
//! policy's and are recomputed every time. Mutating admission runs before
//! the API server checks the schema, so a field of the wrong shape is
//! rejected naming the field rather than guessed at.

use crate::json::fields::{self, FieldError, FieldPath, Path, Problem};
use crate::request::plan::{Edit, FieldEdit, MapEdit};
use crate::tags::decision::transform::Transformed;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How the tag field holds its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A map of tag key to value (`additionalTags: {k: v}`).
    Map,
    /// A list of `{key, value}` objects (CAPO `serverMetadata`, a list map
    /// keyed by `key`).
    KeyValueList,
}

/// A tag field: where it lies, how it holds its entries, and what it
/// becomes when left with none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TagField<'t> {
    /// Its path.
    pub(crate) path: &'t Path,
    /// How it holds its entries.
    pub(crate) layout: Layout,
    /// What it becomes when left with no entry.
    pub(crate) when_empty: WhenEmpty,
}

/// What a tag field left with no entry becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenEmpty {
    /// It goes, even one submitted empty: a composite resource's
    /// `spec.cloudTags` is absent when there is no tag.
    Absent,
    /// It goes when the policy's last tags leave it; one the user wrote,
    /// even empty, stays (an infrastructure object's field).
    KeptIfWritten,
}

/// Which entries of a tag field are the policy's: those under the prefix
/// in force, and on a composite resource's UPDATE that changed its profile
/// those under the old profile's prefix too. Every other entry is the
/// user's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owned<'s> {
    /// The prefix in force.
    pub(crate) prefix: &'s str,
    /// The previous profile's prefix, when it differs.
    pub(crate) old_prefix: Option<&'s str>,
}

impl Owned<'_> {
    /// Whether the entry `key` is the policy's.
    pub(crate) fn owns(&self, key: &str) -> bool {
        key.starts_with(self.prefix) || self.old_prefix.is_some_and(|old| key.starts_with(old))
    }
}

/// The tag field as submitted.
#[derive(Debug)]
pub(crate) struct Current<'o> {
    /// Whether the field is present (not absent, not `null`).
    pub(crate) present: bool,
    /// Its entries, in field order (a map's as it iterates: nothing here
    /// rests on that order).
    pub(crate) entries: Vec<(&'o str, &'o str)>,
    /// A list's items as submitted, one per entry (none for a map): a
    /// rewritten list keeps the user's items whole, not only their key and
    /// value.
    items: &'o [Value],
}

impl Current<'_> {
    /// The entries the user wrote: on infrastructure they take room under
    /// the profile's cap.
    pub(crate) fn user_entries(&self, owned: Owned<'_>) -> impl Iterator<Item = (&str, &str)> {
        (self.entries.iter().copied()).filter(move |(key, _)| !owned.owns(key))
    }

    /// The entries the policy owns.
    pub(crate) fn policy_entries(&self, owned: Owned<'_>) -> impl Iterator<Item = (&str, &str)> {
        (self.entries.iter().copied()).filter(move |(key, _)| owned.owns(key))
    }
}

/// Reads the tag field of `object`.
pub(crate) fn read<'o>(object: &'o Value, field: TagField<'_>) -> Result<Current<'o>, FieldError> {
    let path = field.path;
    match field.layout {
        Layout::Map => {
            let map = fields::object_at(object, path)?;
            let entries = match map {
                Some(map) => fields::string_entries(map, || FieldPath::at(path))?
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
        Layout::KeyValueList => {
            let items = match fields::get_at(object, path)? {
                None => None,
                Some(Value::Array(items)) => Some(items),
                Some(other) => {
                    return Err(FieldError::expected(
                        FieldPath::at(path),
                        "a list of {key, value} objects",
                        other,
                    ));
                }
            };
            let entries = items
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, item)| list_entry(path, i, item))
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
    field: &Path,
    i: usize,
    item: &'o Value,
) -> Result<(&'o str, &'o str), FieldError> {
    let at = format!("{}[{i}]", field.dotted());
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
                Problem::Missing,
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
/// policy's exactly `transformed.tags`, or `None` when the field already
/// holds them. The tags move out of `transformed`; `remove` holds each
/// policy entry that is not among them, with why it goes (for reports), and
/// `source` says where the tags come from.
pub(crate) fn edit(
    field: TagField<'_>,
    current: &Current<'_>,
    owned: Owned<'_>,
    transformed: &mut Transformed<'_>,
    remove: BTreeMap<String, String>,
    source: impl FnOnce() -> String,
) -> Option<Edit> {
    let tags = std::mem::take(&mut transformed.tags);
    let no_user_entry = current.user_entries(owned).next().is_none();
    match field.layout {
        Layout::Map => {
            let held: fields::StringMap = crate::json::sorted_map::map_of(current.entries.clone());
            let drop_when_empty = tags.is_empty()
                && no_user_entry
                && match field.when_empty {
                    WhenEmpty::Absent => current.present,
                    WhenEmpty::KeptIfWritten => !remove.is_empty(),
                };
            let edit = MapEdit {
                remove,
                drop_when_empty,
                ..MapEdit::upsert_sorted(field.path.clone(), &held, tags)
            };
            (!edit.is_empty()).then_some(Edit::Map(edit))
        }
        Layout::KeyValueList => {
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
            let wanted: Vec<(&str, &str)> = current
                .user_entries(owned)
                .chain(tags.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .collect();
            if wanted == current.entries {
                return None;
            }
            // A list that held only the policy's tags goes with the last of
            // them, as a map does.
            if wanted.is_empty() {
                return Some(Edit::Field(FieldEdit {
                    path: field.path.clone(),
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
                .filter(|((key, _), _)| !owned.owns(key))
                .map(|(_, item)| item.clone());
            let tag_items = tags.iter().map(|(key, value)| entry(key, value));
            Some(Edit::Field(FieldEdit {
                path: field.path.clone(),
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
