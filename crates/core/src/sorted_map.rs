//! Sorted maps: building a `BTreeMap` from its entries through one
//! function per entry type, and [`SortedMap`], the string map a plan's edit
//! sets, kept as a sorted vector.
//!
//! `collect()` into a `BTreeMap` instantiates the standard library's stable
//! sort for the iterator it is given, 2 to 6 KB of wasm for each iterator
//! type. Collected into a `Vec` first and built here, each entry type sorts
//! with one copy, whatever the call sites iterate.

use std::collections::BTreeMap;

/// The map of `entries`, the last of equal keys kept, as `collect()` and
/// repeated inserts keep it; sorted input is built in one pass.
#[inline(never)]
pub fn map_of<K: Ord, V>(entries: Vec<(K, V)>) -> BTreeMap<K, V> {
    entries.into_iter().collect()
}

/// `pairs` sorted by key, the last of equal keys kept, as [`map_of`] keeps
/// them; pairs that come sorted, each key once, are taken as they come.
pub fn sorted_pairs<'a>(pairs: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    if pairs.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        pairs
    } else {
        map_of(pairs).into_iter().collect()
    }
}

/// String keys with their values, sorted by key, each key once: the keys a
/// map edit sets ([`crate::plan::MapEdit::set`]). Not a `BTreeMap` of
/// `String`s: the tags of a composite resource come out of the transform
/// sorted already, and are read once, in order, by the writer
/// ([`crate::projection::Shape::write_filled`]), so nothing needs a tree's
/// nodes, and a `String` per key and value would be an allocation per tag.
/// Every key and value is written back to back into one text, and the
/// entries say where each lies: one allocation for the text and one for
/// the entries, however many tags. Lookups search by halves;
/// inserts, only ever a handful when two edits of one map merge, shift the
/// entries after them, and a replaced or removed entry's text stays unused
/// in the buffer until the map is dropped.
#[derive(Clone, Default)]
pub struct SortedMap {
    /// Keys and values, back to back.
    text: String,
    /// One per key, in key order.
    entries: Vec<Entry>,
}

/// Where one entry's key and value lie in [`SortedMap::text`]: the key is
/// `key..value`, the value `value..end`.
#[derive(Clone, Copy)]
struct Entry {
    key: usize,
    value: usize,
    end: usize,
}

impl SortedMap {
    /// An empty map.
    pub const fn new() -> Self {
        Self {
            text: String::new(),
            entries: Vec::new(),
        }
    }

    /// An empty map with room for `entries` keys of `text` bytes in all,
    /// keys and values together.
    pub fn with_capacity(entries: usize, text: usize) -> Self {
        Self {
            text: String::with_capacity(text),
            entries: Vec::with_capacity(entries),
        }
    }

    /// Sets `key` to `value`, as [`SortedMap::insert`] does, at one
    /// comparison when `key` sorts after every key the map holds (keys that
    /// come in order, the usual case) instead of a search: the order is
    /// checked, never assumed.
    pub fn push(&mut self, key: &str, value: &str) {
        // As bytes: UTF-8 sorts as its text does, and slicing the bytes
        // skips the two char-boundary checks of slicing the text.
        let key_of = |entry: &Entry| &self.text.as_bytes()[entry.key..entry.value];
        if (self.entries.last()).is_some_and(|last| key_of(last) >= key.as_bytes()) {
            return self.insert(key, value);
        }
        let entry = self.append(key, value);
        self.entries.push(entry);
    }

    fn append(&mut self, key: &str, value: &str) -> Entry {
        let start = self.text.len();
        self.text.push_str(key);
        self.text.push_str(value);
        Entry {
            key: start,
            value: start + key.len(),
            end: self.text.len(),
        }
    }

    fn key(&self, entry: &Entry) -> &str {
        &self.text[entry.key..entry.value]
    }

    fn pair(&self, entry: &Entry) -> (&str, &str) {
        (
            &self.text[entry.key..entry.value],
            &self.text[entry.value..entry.end],
        )
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|entry| self.key(entry).cmp(key))
    }

    /// The value at `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        let i = self.position(key).ok()?;
        Some(self.pair(&self.entries[i]).1)
    }

    /// Whether the map holds `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Sets `key` to `value`.
    pub fn insert(&mut self, key: &str, value: &str) {
        let position = self.position(key);
        let entry = self.append(key, value);
        match position {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
    }

    /// Removes `key`; true when the map held it.
    pub fn remove(&mut self, key: &str) -> bool {
        self.position(key).map(|i| self.entries.remove(i)).is_ok()
    }

    /// Keeps the entries `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) {
        let text = &self.text;
        self.entries
            .retain(|entry| keep(&text[entry.key..entry.value], &text[entry.value..entry.end]));
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
        Iter {
            text: &self.text,
            entries: self.entries.iter(),
        }
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.iter().map(|(key, _)| key)
    }
}

/// The entries of a [`SortedMap`] in key order.
pub struct Iter<'a> {
    text: &'a str,
    entries: std::slice::Iter<'a, Entry>,
}

impl<'a> Iter<'a> {
    fn pair(&self, entry: &Entry) -> (&'a str, &'a str) {
        (
            &self.text[entry.key..entry.value],
            &self.text[entry.value..entry.end],
        )
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.entries.next()?;
        Some(self.pair(entry))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let entry = self.entries.next_back()?;
        Some(self.pair(entry))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a SortedMap {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Sorted as they come, the last of equal keys kept, as `collect()` into a
/// `BTreeMap` and repeated inserts keep it.
impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for SortedMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let entries: Vec<(K, V)> = entries.into_iter().collect();
        let pairs = entries.iter().map(|(k, v)| (k.as_ref(), v.as_ref()));
        Self::of_pairs(pairs.collect())
    }
}

impl SortedMap {
    /// [`FromIterator`]'s work, for one pair type: the sort is in the module
    /// once (see the module's comment).
    fn of_pairs(pairs: Vec<(&str, &str)>) -> Self {
        let pairs = sorted_pairs(pairs);
        let text = pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
        let mut map = Self::with_capacity(pairs.len(), text);
        pairs.into_iter().for_each(|(k, v)| map.push(k, v));
        map
    }
}

/// Equal when they hold the same keys with the same values, whatever
/// unused text their buffers keep.
impl PartialEq for SortedMap {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for SortedMap {}

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

    #[test]
    fn sorted_pairs_keeps_the_last_of_equal_keys() {
        assert_eq!(
            sorted_pairs(vec![("a", "1"), ("b", "2")]),
            [("a", "1"), ("b", "2")]
        );
        assert_eq!(
            sorted_pairs(vec![("b", "1"), ("a", "2"), ("b", "3")]),
            [("a", "2"), ("b", "3")]
        );
    }

    #[test]
    fn a_sorted_map_collects_like_a_btree_map() {
        let pairs = [("b", "1"), ("a", "2"), ("b", "3"), ("c", "4")];
        let map: SortedMap = pairs.into_iter().collect();
        let tree: BTreeMap<&str, &str> = pairs.into_iter().collect();
        assert!(map.iter().eq(tree.clone()));
        assert!(map.iter().rev().eq(tree.clone().into_iter().rev()));
        assert_eq!(map.iter().len(), 3);
        assert_eq!(format!("{map:?}"), format!("{tree:?}"));
        let again: SortedMap = map.iter().collect();
        assert_eq!(again, map);
    }

    #[test]
    fn a_sorted_map_inserts_removes_and_finds_in_order() {
        let mut map = SortedMap::new();
        map.push("b", "1");
        map.insert("d", "2");
        map.insert("a", "3");
        map.insert("b", "4");
        assert!(map.keys().eq(["a", "b", "d"]));
        assert_eq!(map.get("b"), Some("4"));
        assert!(map.contains_key("d") && !map.contains_key("c"));
        assert!(map.remove("a"));
        assert!(!map.remove("a"));
        map.retain(|key, _| key != "d");
        assert!(map.iter().eq([("b", "4")]));
        assert!(!map.is_empty());
        assert!(SortedMap::new().is_empty());
    }

    /// A key pushed out of order, or again, lands where it sorts, as an
    /// insert would put it.
    #[test]
    fn a_push_out_of_order_is_an_insert() {
        let mut pushed = SortedMap::new();
        let mut inserted = SortedMap::new();
        for (key, value) in [("b", "1"), ("d", "2"), ("a", "3"), ("d", "4"), ("e", "5")] {
            pushed.push(key, value);
            inserted.insert(key, value);
        }
        assert_eq!(pushed, inserted);
        assert!(
            pushed
                .iter()
                .eq([("a", "3"), ("b", "1"), ("d", "4"), ("e", "5")])
        );
    }

    #[test]
    fn maps_with_the_same_entries_are_equal_whatever_their_text_keeps() {
        // The replaced value and the removed entry stay in the buffer.
        let mut edited: SortedMap = [("a", "old"), ("b", "2"), ("c", "3")].into_iter().collect();
        edited.insert("a", "1");
        edited.remove("c");
        let fresh: SortedMap = [("a", "1"), ("b", "2")].into_iter().collect();
        assert_eq!(edited, fresh);
        assert_ne!(edited, SortedMap::new());
        // Keys and values that meet in the buffer are told apart.
        let split: SortedMap = [("ab", "c")].into_iter().collect();
        assert_ne!(split, [("a", "bc")].into_iter().collect());
        assert_eq!(split.get("ab"), Some("c"));
        assert_eq!(split.get("a"), None);
    }
}
