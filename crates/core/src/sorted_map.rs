//! Sorted maps: building a `BTreeMap` from its entries through one
//! function per entry type, and [`SortedMap`], the string map a plan's edit
//! sets, kept as a sorted vector.
//!
//! `collect()` into a `BTreeMap` instantiates the standard library's stable
//! sort for the iterator it is given, 2 to 6 KB of wasm each time; a
//! dozen call sites with their own iterator types made the module 40 KB
//! larger for the same sort (BENCHMARKS.md, "Size"). Collected into a `Vec`
//! first and built here, each entry type sorts with one copy.

use std::collections::BTreeMap;

/// The map of `entries`, the last of equal keys kept, as `collect()` and
/// repeated inserts keep it; sorted input is built in one pass.
#[inline(never)]
pub fn map_of<K: Ord, V>(entries: Vec<(K, V)>) -> BTreeMap<K, V> {
    entries.into_iter().collect()
}

/// String keys with their values, sorted by key, each key once: the keys a
/// map edit sets ([`crate::plan::MapEdit::set`]). A vector, not a
/// `BTreeMap`: the tags of a composite resource come out of the transform
/// sorted already and are read once, in order, by the writer
/// ([`crate::projection::Shape::write_filled`]). A `BTreeMap` sorted them
/// again to build its nodes, and walked and freed those nodes; on 50 tags
/// that was 35,000 instructions of an evaluation (BENCHMARKS.md). Lookups
/// search by halves; inserts, only ever a handful when two edits of one map
/// merge, shift the tail.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SortedMap {
    entries: Vec<(String, String)>,
}

impl SortedMap {
    /// An empty map.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// The map of `entries`, which are sorted by key, each key once (the
    /// caller's invariant, checked in debug builds): taken as they are.
    pub fn from_sorted(entries: Vec<(String, String)>) -> Self {
        debug_assert!(entries.windows(2).all(|pair| pair[0].0 < pair[1].0));
        Self { entries }
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|(held, _)| held.as_str().cmp(key))
    }

    /// The value at `key`.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.position(key).ok().map(|i| &self.entries[i].1)
    }

    /// Whether the map holds `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.position(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Keeps the entries `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) {
        self.entries.retain(|(key, value)| keep(key, value));
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map holds no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        self.entries.iter().map(as_refs)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.entries.iter().map(|(key, _)| key)
    }
}

/// The entries of a [`SortedMap`] in key order.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, String)>,
    fn(&'a (String, String)) -> (&'a String, &'a String),
>;

fn as_refs((key, value): &(String, String)) -> (&String, &String) {
    (key, value)
}

impl<'a> IntoIterator for &'a SortedMap {
    type Item = (&'a String, &'a String);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for SortedMap {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// Sorted as they come, the last of equal keys kept, as `collect()` into a
/// `BTreeMap` and repeated inserts keep it.
impl FromIterator<(String, String)> for SortedMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(entries: I) -> Self {
        let entries: Vec<(String, String)> = entries.into_iter().collect();
        if entries.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return Self { entries };
        }
        Self {
            entries: map_of(entries).into_iter().collect(),
        }
    }
}

impl std::fmt::Debug for SortedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_of_equal_keys_wins_in_any_order() {
        let map = map_of(vec![("b", 1), ("a", 2), ("b", 3)]);
        assert_eq!(map, BTreeMap::from([("a", 2), ("b", 3)]));
    }
}

#[test]
fn a_sorted_map_collects_like_a_btree_map() {
    let pairs = [("b", "1"), ("a", "2"), ("b", "3"), ("c", "4")];
    let owned = || pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    let map: SortedMap = owned().collect();
    let tree: BTreeMap<String, String> = owned().collect();
    assert!(map.iter().eq(tree.iter()));
    assert_eq!(format!("{map:?}"), format!("{tree:?}"));
    let sorted: SortedMap = map.clone().into_iter().collect();
    assert_eq!(sorted, map);
}

#[test]
fn a_sorted_map_inserts_removes_and_finds_in_order() {
    let mut map = SortedMap::from_sorted(vec![("b".into(), "1".into())]);
    assert_eq!(map.insert("d".into(), "2".into()), None);
    assert_eq!(map.insert("a".into(), "3".into()), None);
    assert_eq!(map.insert("b".into(), "4".into()), Some("1".into()));
    assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b", "d"]);
    assert_eq!(map.get("b").map(String::as_str), Some("4"));
    assert!(map.contains_key("d") && !map.contains_key("c"));
    assert_eq!(map.remove("a"), Some("3".into()));
    assert_eq!(map.remove("a"), None);
    map.retain(|key, _| key != "d");
    assert_eq!(map.len(), 1);
    assert!(!map.is_empty());
    assert!(SortedMap::new().is_empty());
}
