//! The property of a tag field, one for every row of the tag table.

use super::violation::Violation;
use crate::fields::FieldPath;
use crate::tags::targets::{Shape, Target};
use serde_json::Value;

/// The one property of a tag field, for every row of the tag table, maps
/// and lists alike: the user's entries (keys not under `prefix`, the prefix
/// in force) stay as they were, a list's whole and in their order; every
/// entry that changed is the policy's, under `prefix`, and a string; a
/// field that was not a map or a list is never rewritten. The field may go
/// (the policy removed its last entry, or an XR's `{}`).
pub fn check_tag_field(
    target: &Target,
    prefix: &str,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Result<(), Violation> {
    let at = FieldPath::of(target.field);
    let owned = |key: &str| key.starts_with(prefix);
    if old.is_some_and(|v| !v.is_null() && !matches_shape(target.shape, v)) && old != new {
        return Err(Violation::NotAMapRewritten(at));
    }
    if new.is_some_and(|v| !matches_shape(target.shape, v)) && old != new {
        return Err(Violation::Mistyped {
            field: at,
            value: new.cloned().unwrap_or_default(),
        });
    }
    // Each entry as (key, value), with the item itself for a list.
    let entries = |field: Option<&Value>| -> Vec<(String, Value, Value)> {
        match (target.shape, field) {
            (Shape::Map, Some(Value::Object(map))) => map
                .iter()
                .map(|(k, v)| (k.clone(), v.clone(), v.clone()))
                .collect(),
            (Shape::KeyValueList, Some(Value::Array(items))) => items
                .iter()
                .map(|item| {
                    let key = item["key"].as_str().unwrap_or_default().to_owned();
                    (key, item["value"].clone(), item.clone())
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let (old, new) = (entries(old), entries(new));
    let users = |entries: &[(String, Value, Value)]| -> Vec<Value> {
        (entries.iter())
            .filter(|(key, ..)| !owned(key))
            .map(|(.., item)| item.clone())
            .collect()
    };
    if users(&old) != users(&new) {
        let changed =
            (old.iter()).find(|(key, _, item)| !owned(key) && !new.iter().any(|(.., i)| i == item));
        return Err(match changed {
            Some((key, ..)) if new.iter().any(|(k, ..)| k == key) => {
                Violation::Rewritten(at.key(key))
            }
            Some((key, ..)) => Violation::Removed(at.key(key)),
            None => Violation::Rewritten(at),
        });
    }
    for (key, value, item) in &new {
        if old.iter().any(|(.., i)| i == item) {
            continue;
        }
        if !owned(key) {
            return Err(Violation::AddedUnowned(at.key(key)));
        }
        let list_item_has_more = target.shape == Shape::KeyValueList
            && item.as_object().is_some_and(|entry| entry.len() != 2);
        if !value.is_string() || list_item_has_more {
            return Err(Violation::NotAString(at.key(key)));
        }
    }
    Ok(())
}

/// Whether `value` is a tag field of `shape`.
fn matches_shape(shape: Shape, value: &Value) -> bool {
    match shape {
        Shape::Map => value.is_object(),
        Shape::KeyValueList => value.is_array(),
    }
}
