//! The property of a tag field, one for every row of the tag table.

use super::violation::Violation;
use crate::json::fields::FieldPath;
use crate::tags::said;
use crate::tags::targets::{Layout, Target};
use serde_json::Value;

/// The prefixes whose entries in a tag field are the policy's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owned<'a> {
    /// The prefix in force: the policy writes its tags under it, and
    /// removes the entries under it that no opted-in label gives.
    pub prefix: &'a str,
    /// On an UPDATE that changed the object's profile, the old profile's
    /// prefix when it differs: its entries are the policy's to remove,
    /// never to write.
    pub old_prefix: Option<&'a str>,
}

impl Owned<'_> {
    /// Whether the policy may remove the entry `key`.
    fn removable(&self, key: &str) -> bool {
        key.starts_with(self.prefix) || self.old_prefix.is_some_and(|old| key.starts_with(old))
    }

    /// The prefix a removal warning for `key` names: the one it is under
    /// (the prefix in force first, as the policy says it).
    fn of(&self, key: &str) -> &str {
        match self.old_prefix {
            Some(old) if !key.starts_with(self.prefix) => old,
            _ => self.prefix,
        }
    }
}

/// The one property of a tag field, for every row of the tag table, maps
/// and lists alike: the user's entries (keys not under `prefix`, the prefix
/// in force) stay as they were, a list's whole and in their order; every
/// entry that changed is the policy's, under `prefix`, and a string; a
/// field that was not a map or a list is never rewritten. The field may go
/// (the policy removed its last entry, or an XR's `{}`).
pub(crate) fn check_tag_field(
    target: &Target,
    prefix: &str,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Result<(), Violation> {
    let owned = Owned {
        prefix,
        old_prefix: None,
    };
    check_owned_field(target, owned, old, new)
}

/// [`check_tag_field`] where the entries under `owned.old_prefix` are the
/// policy's to remove as well (an UPDATE that changed the profile).
pub(crate) fn check_owned_field(
    target: &Target,
    owned: Owned<'_>,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Result<(), Violation> {
    let at = FieldPath::at(&target.field);
    let prefix = owned.prefix;
    let owned = |key: &str| owned.removable(key);
    if old.is_some_and(|v| !v.is_null() && !matches_layout(target.layout, v)) && old != new {
        return Err(Violation::NotAMapRewritten(at));
    }
    if new.is_some_and(|v| !matches_layout(target.layout, v)) && old != new {
        return Err(Violation::Mistyped {
            field: at,
            value: new.cloned().unwrap_or_default(),
        });
    }
    let (old, new) = (entries(target.layout, old), entries(target.layout, new));
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
        if !key.starts_with(prefix) {
            return Err(Violation::AddedUnowned(at.key(key)));
        }
        let list_item_has_more = target.layout == Layout::KeyValueList
            && item.as_object().is_some_and(|entry| entry.len() != 2);
        if !value.is_string() || list_item_has_more {
            return Err(Violation::NotAString(at.key(key)));
        }
    }
    Ok(())
}

/// Each entry of a tag field of `layout` as (key, value, the item itself
/// for a list, else the value); none when the field is not of that layout.
fn entries(layout: Layout, field: Option<&Value>) -> Vec<(String, Value, Value)> {
    match (layout, field) {
        (Layout::Map, Some(Value::Object(map))) => map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), v.clone()))
            .collect(),
        (Layout::KeyValueList, Some(Value::Array(items))) => items
            .iter()
            .map(|item| {
                let key = item["key"].as_str().unwrap_or_default().to_owned();
                (key, item["value"].clone(), item.clone())
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Nothing is removed silently: every key the mutation removed
/// from the tag field of `target` (there in `old`, in no entry of `new`)
/// comes with its warning among `warnings`, the one `tags::said::removed`
/// words for that field, key and the prefix the key is under, once; and
/// no removal warning for the field names anything else. Validate mode
/// removes nothing (it rejects), so an allowed request there carries no
/// removal warning at all.
pub(crate) fn check_removals_said(
    target: &Target,
    owned: Owned<'_>,
    old: Option<&Value>,
    new: Option<&Value>,
    warnings: &[String],
) -> Result<(), Violation> {
    let field = target.field.dotted();
    let kept = entries(target.layout, new);
    let mut removed: Vec<String> = (entries(target.layout, old).into_iter())
        .map(|(key, ..)| key)
        .filter(|key| !kept.iter().any(|(k, ..)| k == key))
        .collect();
    removed.sort();
    removed.dedup();
    // What every removal warning for this field opens with, whatever the
    // key and prefix: the text two of them share.
    let (a, b) = (
        said::removed(&field, "a", "p", None),
        said::removed(&field, "b", "p", None),
    );
    let opening = shared_start(&a, &b);
    let mut said: Vec<&String> = warnings.iter().filter(|w| w.starts_with(opening)).collect();
    for key in &removed {
        // Given by no opted-in label, or by one that was skipped (which
        // label, the skip warning says).
        let expected = said::removed(&field, key, owned.of(key), None);
        let skipped = said::removed(&field, key, owned.of(key), Some("a"));
        let (stem, end) = (
            shared_start(&expected, &skipped),
            " was skipped, see above)",
        );
        let is_said = |w: &String| *w == expected || (w.starts_with(stem) && w.ends_with(end));
        match said.iter().position(|w| is_said(w)) {
            Some(i) => {
                said.swap_remove(i);
            }
            None => {
                return Err(Violation::RemovedUnsaid(
                    FieldPath::at(&target.field).key(key),
                ));
            }
        }
    }
    match said.first() {
        Some(extra) => Err(Violation::SaidNotRemoved((*extra).clone())),
        None => Ok(()),
    }
}

/// The longest start `a` and `b` share.
fn shared_start<'a>(a: &'a str, b: &str) -> &'a str {
    let length = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    a.get(..length).unwrap_or_default()
}

/// Whether `value` is a tag field of `layout`.
fn matches_layout(layout: Layout, value: &Value) -> bool {
    match layout {
        Layout::Map => value.is_object(),
        Layout::KeyValueList => value.is_array(),
    }
}
