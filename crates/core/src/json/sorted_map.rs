//! Building a `BTreeMap` from its entries through one function per entry
//! type.
//!
//! `collect()` into a `BTreeMap` instantiates the standard library's stable
//! sort for the iterator it is given, 2 to 6 KB of wasm for each iterator
//! type. Collected into a `Vec` first and built here, each entry type sorts
//! with one copy, whatever the call sites iterate.

use std::collections::BTreeMap;

/// The map of `entries`, the last of equal keys kept, as `collect()` and
/// repeated inserts keep it; sorted input is built in one pass.
#[inline(never)]
pub(crate) fn map_of<K: Ord, V>(entries: Vec<(K, V)>) -> BTreeMap<K, V> {
    entries.into_iter().collect()
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
