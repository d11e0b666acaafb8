//! Keyed lists: list maps such as `readinessGates` (keyed by
//! `conditionType`) and `taints` (by `key` and `effect`), whose entries are
//! told apart by their key fields.
//!
//! Entries are found by key through a hash index, so matching a parent's
//! list against a child's, or applying the edits of a whole list, costs
//! time linear in both lists' lengths: a scan per entry made a Cluster with
//! 10,000 readiness gates cost 5 s in wasm, over policy-server's
//! 2 s timeout. The CRDs cap these lists (32 gates, 64 taints), but a cap is
//! the API server's to enforce and a CRD's to raise: the policy does not
//! rely on it.
//!
//! The index never decides an order: each list is still walked in its own
//! order, and the index only says where the entry with a given key sits, the
//! same entry a scan from the start would find. So the output is what the
//! scans gave, byte for byte.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};

/// The key of a keyed-list entry: its key fields and their values, in the
/// list's key order (`conditionType`; `key`, `effect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryKey(pub(crate) Vec<(&'static str, Value)>);

impl EntryKey {
    /// The key of `entry` for a list keyed by `fields` (absent reads as null).
    pub(crate) fn of(fields: &[&'static str], entry: &Value) -> Self {
        Self(
            fields
                .iter()
                .map(|&field| (field, field_of(entry, field).clone()))
                .collect(),
        )
    }

    /// The key's field names, in order.
    fn fields(&self) -> Vec<&'static str> {
        self.0.iter().map(|(field, _)| *field).collect()
    }

    /// True when both keys name the same fields: keys of the same list.
    pub(crate) fn same_fields(&self, other: &EntryKey) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|((a, _), (b, _))| a == b)
    }
}

impl fmt::Display for EntryKey {
    /// `[conditionType="X"]`, `[key="k",effect="NoSchedule"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, (field, value)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{field}={value}")?;
        }
        f.write_str("]")
    }
}

/// A field of an entry, absent (or the entry not an object) read as null,
/// as [`EntryKey::of`] reads it.
fn field_of<'a>(entry: &'a Value, field: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    entry.get(field).unwrap_or(&NULL)
}

/// A key seen where it already is: in an entry of a list keyed by the given
/// fields, or in an [`EntryKey`] read before. Both hash and compare as the
/// sequence of the key's values, so an `EntryKey` finds the entry it was
/// read from, and no key is copied to be looked up.
#[derive(Clone, Copy)]
enum KeyOf<'a> {
    Entry(&'a [&'static str], &'a Value),
    Read(&'a EntryKey),
}

impl KeyOf<'_> {
    fn len(&self) -> usize {
        match self {
            KeyOf::Entry(fields, _) => fields.len(),
            KeyOf::Read(key) => key.0.len(),
        }
    }

    fn value(&self, i: usize) -> &Value {
        match self {
            KeyOf::Entry(fields, entry) => field_of(entry, fields[i]),
            KeyOf::Read(key) => &key.0[i].1,
        }
    }
}

impl Hash for KeyOf<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        counted();
        for i in 0..self.len() {
            self.value(i).hash(state);
        }
    }
}

impl PartialEq for KeyOf<'_> {
    fn eq(&self, other: &Self) -> bool {
        counted();
        self.len() == other.len() && (0..self.len()).all(|i| self.value(i) == other.value(i))
    }
}

impl Eq for KeyOf<'_> {}

/// Where each key first occurs in a list: the entry a scan from the start
/// finds (a list map has unique keys; should one not, the first wins, as
/// for a scan).
pub(crate) struct Index<'a> {
    fields: &'a [&'static str],
    first: HashMap<KeyOf<'a>, usize>,
}

impl<'a> Index<'a> {
    /// The index of `entries`, a list keyed by `fields`.
    pub(crate) fn of(fields: &'a [&'static str], entries: &'a [Value]) -> Self {
        let mut first = HashMap::with_capacity(entries.len());
        for (at, entry) in entries.iter().enumerate() {
            first.entry(KeyOf::Entry(fields, entry)).or_insert(at);
        }
        Self { fields, first }
    }

    /// Where the first entry with the key of `entry` (an entry of a list
    /// keyed by the same fields) sits.
    pub(crate) fn position_of(&self, entry: &Value) -> Option<usize> {
        self.first.get(&KeyOf::Entry(self.fields, entry)).copied()
    }

    /// Where the first entry with `key` sits.
    fn position(&self, key: &EntryKey) -> Option<usize> {
        self.first.get(&KeyOf::Read(key)).copied()
    }
}

/// The entries of a list keyed by `fields`, in order, each key's first
/// entry only.
pub(crate) fn first_of_each_key<'a>(
    fields: &'a [&'static str],
    entries: &'a [Value],
) -> impl Iterator<Item = &'a Value> {
    let mut seen = HashSet::with_capacity(entries.len());
    entries
        .iter()
        .filter(move |entry| seen.insert(KeyOf::Entry(fields, entry)))
}

/// Applies `edits`, each an entry and its key, to one keyed list as
/// applying them one after the other would: an edit replaces the first
/// entry with its key, or is appended when the list has none (an entry an
/// earlier edit appended included). All keys name the same fields, and
/// each entry holds its own key (the policy's edits write the parent's
/// entry, key fields included), so a replaced entry keeps its place for
/// the edits after it.
pub(crate) fn upsert(entries: &mut Vec<Value>, edits: Vec<(EntryKey, Value)>) {
    let targets = targets(entries, &edits);
    for ((_, entry), target) in edits.into_iter().zip(targets) {
        match target {
            Some(at) => entries[at] = entry,
            None => entries.push(entry),
        }
    }
}

/// Where each edit of [`upsert`] lands: the position of the entry it
/// replaces, or `None` to append. Decided before anything is written, so
/// the index can borrow the list.
fn targets(entries: &[Value], edits: &[(EntryKey, Value)]) -> Vec<Option<usize>> {
    let Some((first, _)) = edits.first() else {
        return Vec::new();
    };
    let fields = first.fields();
    let held = Index::of(&fields, entries);
    let mut appended = HashMap::new();
    edits
        .iter()
        .map(|(key, _)| {
            let found = held
                .position(key)
                .or_else(|| appended.get(&KeyOf::Read(key)).copied());
            if found.is_none() {
                appended.insert(KeyOf::Read(key), entries.len() + appended.len());
            }
            found
        })
        .collect()
}

/// Counts one key operation (a key hashed, or two keys compared), with the
/// `count-key-operations` feature, which only the core's own tests turn on:
/// crates/core/tests/list_scaling.rs checks that they grow linearly with
/// the lists. Without it, nothing.
#[inline]
fn counted() {
    #[cfg(feature = "count-key-operations")]
    KEY_OPERATIONS.with(|count| count.set(count.get() + 1));
}

#[cfg(feature = "count-key-operations")]
thread_local! {
    static KEY_OPERATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The key operations (keys hashed, pairs of keys compared) this thread has
/// made so far.
#[cfg(feature = "count-key-operations")]
pub(crate) fn key_operations() -> u64 {
    KEY_OPERATIONS.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TAINT: &[&str] = &["key", "effect"];

    impl EntryKey {
        /// True when `entry` has this key.
        fn matches(&self, entry: &Value) -> bool {
            counted();
            self.0
                .iter()
                .all(|(field, value)| field_of(entry, field) == value)
        }
    }

    #[test]
    fn a_key_finds_the_first_entry_holding_it_absent_fields_reading_as_null() {
        let entries = [
            json!({"key": "a", "effect": "NoSchedule"}),
            json!({"key": "b"}),
            json!({"key": "a", "effect": "NoSchedule", "value": "second"}),
            json!("not an object"),
        ];
        let index = Index::of(TAINT, &entries);
        assert_eq!(
            index.position_of(&json!({"key": "a", "effect": "NoSchedule"})),
            Some(0)
        );
        assert_eq!(
            index.position_of(&json!({"key": "b", "effect": null})),
            Some(1)
        );
        assert_eq!(index.position(&EntryKey::of(TAINT, &json!({}))), Some(3));
        assert_eq!(index.position_of(&json!({"key": "a"})), None);
        assert!(EntryKey::of(TAINT, &entries[1]).matches(&json!({"key": "b", "value": "x"})));
    }

    #[test]
    fn numbers_match_as_serde_json_compares_them() {
        let entries = [json!({"key": 0.0, "effect": 1})];
        let index = Index::of(TAINT, &entries);
        assert_eq!(
            index.position_of(&json!({"key": -0.0, "effect": 1})),
            Some(0)
        );
        assert_eq!(index.position_of(&json!({"key": 0.0, "effect": 1.0})), None);
    }

    #[test]
    fn first_of_each_key_keeps_order_and_drops_later_duplicates() {
        let entries = [
            json!({"conditionType": "B"}),
            json!({"conditionType": "A"}),
            json!({"conditionType": "B", "polarity": "Negative"}),
        ];
        let kept: Vec<_> = first_of_each_key(&["conditionType"], &entries).collect();
        assert_eq!(kept, [&entries[0], &entries[1]]);
    }

    #[test]
    fn upsert_replaces_in_place_appends_once_and_keeps_the_rest() {
        let key = |k: &str| EntryKey::of(TAINT, &json!({"key": k, "effect": "NoSchedule"}));
        let entry = |k: &str, v: &str| json!({"key": k, "effect": "NoSchedule", "value": v});
        let mut list = vec![entry("mine", "1"), entry("a", "old"), entry("a", "twin")];
        upsert(
            &mut list,
            vec![
                (key("new"), entry("new", "1")),
                (key("a"), entry("a", "new")),
                (key("new"), entry("new", "2")),
            ],
        );
        assert_eq!(
            list,
            [
                entry("mine", "1"),
                entry("a", "new"),
                entry("a", "twin"),
                entry("new", "2")
            ]
        );
    }
}
