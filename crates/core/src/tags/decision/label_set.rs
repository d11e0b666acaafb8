//! The label set tags are computed from, for every tag target: up to four
//! sources, each sorted by key, a later one winning a key both hold
//! (docs/infrastructure-tags.md: a Cluster's labels and annotation, then the
//! object's labels and annotation). A composite resource has the object's
//! two; an infrastructure object of a "Cluster + object" row all four.
//!
//! The sources are read where they lie, never merged into a map of their
//! own: the opted-in labels (a handful) are found in them, and only an
//! explanation lists every label.

use crate::json::fields::StringMap;
use crate::json::labels_annotation::Entries;
use crate::tags::contract_names::{LABELS_ANNOTATION, ORIGIN_LABEL};
use crate::tags::keys::opted_in::OptedInKeys;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Where a label of the set comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The `metadata.labels` of the object looked up for its label set (the
    /// owning Cluster, a managed resource's composite resource).
    LookedUpLabels,
    /// The label-set annotation of that object.
    LookedUpAnnotation,
    /// The object's `metadata.labels`.
    OwnLabels,
    /// The object's label-set annotation.
    OwnAnnotation,
}

/// One source's entries, each key once.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Layer<'s> {
    /// A labels map read in place (every value checked to be a string).
    Object(&'s Map<String, Value>),
    /// A labels map as a plan leaves it.
    Map(&'s StringMap<'s>),
    /// The label-set annotation's entries.
    Annotation(&'s Entries<'s>),
}

impl<'s> Layer<'s> {
    fn get(self, key: &str) -> Option<&'s str> {
        match self {
            Layer::Object(map) => map.get(key).and_then(Value::as_str),
            Layer::Map(map) => map.get(key).copied(),
            Layer::Annotation(entries) => entries.get(key),
        }
    }

    fn len(self) -> usize {
        match self {
            Layer::Object(map) => map.len(),
            Layer::Map(map) => map.len(),
            Layer::Annotation(entries) => entries.len(),
        }
    }

    /// The entries, in the order the source keeps them (key order, unless
    /// a serde_json map is built with its `preserve_order` feature). One
    /// iterator type for the three sources, not a boxed one: a fresh
    /// instance pays for its first call through a function table.
    fn entries(self) -> impl Iterator<Item = (&'s str, &'s str)> + 's {
        let (object, map, annotation) = match self {
            Layer::Object(object) => (Some(object), None, None),
            Layer::Map(map) => (None, Some(map), None),
            Layer::Annotation(entries) => (None, None, Some(entries)),
        };
        let object = (object.into_iter().flatten())
            .map(|(key, value)| (key.as_str(), value.as_str().unwrap_or_default()));
        let map = (map.into_iter().flatten()).map(|(key, value)| (*key, *value));
        let annotation = annotation.into_iter().flat_map(|entries| entries.iter());
        object.chain(map).chain(annotation)
    }

    fn keys(self) -> impl Iterator<Item = &'s str> {
        self.entries().map(|(key, _)| key)
    }
}

/// The sources of one object's label set, the lowest first.
#[derive(Debug, Default)]
pub(crate) struct LabelSet<'s> {
    layers: Vec<(Source, Layer<'s>)>,
}

impl<'s> LabelSet<'s> {
    /// Adds `layer` over the sources already held.
    pub(crate) fn with(mut self, source: Source, layer: Layer<'s>) -> Self {
        self.layers.push((source, layer));
        self
    }

    /// The value of `key` and the source it comes from: the last source
    /// that holds it.
    pub(crate) fn get(&self, key: &str) -> Option<(&'s str, Source)> {
        (self.layers.iter().rev()).find_map(|(source, layer)| Some((layer.get(key)?, *source)))
    }

    /// Whether the set marks its object adopted (`platform/origin:
    /// adopted`): an adopted resource's tags belong to whoever created it,
    /// and its row may leave it exactly as submitted.
    pub(crate) fn marks_adopted(&self) -> bool {
        self.get(ORIGIN_LABEL)
            .is_some_and(|(value, _)| value == "adopted")
    }

    /// The opted-in labels (`keys`: sorted, each once) with their values,
    /// in key order, the last source holding a key winning: each source's
    /// finds are laid over the earlier ones'. A source not much larger
    /// than the keys is joined with them in one pass, each key compared
    /// with its neighbours rather than searched for (label keys share long
    /// prefixes, so a search compares the same prefix again at every
    /// step). A larger one (a label-set annotation of
    /// 10,000 entries), or one whose entries do not come in key order (a
    /// serde_json map built with `preserve_order`), has each key looked up.
    pub(crate) fn opted_in<'k>(&self, keys: &'k OptedInKeys) -> OptedIn<'k, &'s str> {
        let mut found = Vec::new();
        for (_, layer) in self.layers.iter().filter(|(_, layer)| layer.len() > 0) {
            let joined = (layer.len() <= JOIN_AT_MOST * keys.len())
                .then(|| join(keys, layer.entries()))
                .flatten();
            let finds = joined.unwrap_or_else(|| {
                (keys.iter())
                    .filter_map(|key| Some((key.as_ref(), layer.get(key)?)))
                    .collect()
            });
            found = overlay(found, finds);
        }
        OptedIn(found)
    }

    /// Every label of the set with the source it comes from, sorted by key
    /// (explanations only).
    pub(crate) fn sources(&self) -> BTreeMap<&'s str, Source> {
        let mut sources = BTreeMap::new();
        for (source, layer) in &self.layers {
            sources.extend(layer.keys().map(|key| (key, *source)));
        }
        sources
    }
}

/// A source of at most this many entries per opted-in key is joined with
/// the keys; a larger one is searched, key by key.
const JOIN_AT_MOST: usize = 4;

/// `keys` (sorted, each once) joined with `entries` in one pass: `None`
/// when the entries turn out not to come in key order, which the join
/// needs and checks for every entry.
///
/// Every key still ahead sorts after the entry before (it was skipped past
/// that entry, or it is the first key after one it matched), so a key found
/// at or below an entry shows the entry comes after the one before: the
/// join's own comparison checks the order. Only an entry that sorts before
/// every key ahead (one not opted in) is compared with the entry before.
fn join<'k, 's>(
    keys: &'k [String],
    entries: impl Iterator<Item = (&'s str, &'s str)>,
) -> Option<Vec<(&'k str, &'s str)>> {
    let mut keys = keys.iter().map(String::as_str).peekable();
    let mut found = Vec::with_capacity(keys.len());
    let mut last: Option<&str> = None;
    for (key, value) in entries {
        let mut after_last = false;
        while let Some(&opted) = keys.peek() {
            match opted.cmp(key) {
                Ordering::Less => {
                    keys.next();
                    after_last = true;
                }
                Ordering::Equal => {
                    found.push((opted, value));
                    keys.next();
                    after_last = true;
                    break;
                }
                Ordering::Greater => break,
            }
        }
        if !after_last && last.is_some_and(|last| last >= key) {
            return None;
        }
        last = Some(key);
    }
    Some(found)
}

/// `new` laid over `held`: both sorted by key, each key once; of a key
/// both hold, `new`'s value.
fn overlay<'k, 's>(
    held: Vec<(&'k str, &'s str)>,
    new: Vec<(&'k str, &'s str)>,
) -> Vec<(&'k str, &'s str)> {
    if held.is_empty() {
        return new;
    }
    let mut out = Vec::with_capacity(held.len() + new.len());
    let mut held = held.into_iter().peekable();
    for (key, value) in new {
        while let Some(&(held_key, _)) = held.peek() {
            match held_key.cmp(key) {
                Ordering::Less => out.extend(held.next()),
                Ordering::Equal => {
                    held.next();
                    break;
                }
                Ordering::Greater => break,
            }
        }
        out.push((key, value));
    }
    out.extend(held);
    out
}

/// Opted-in labels (qualified key, value), sorted by key, each key once:
/// built only by [`LabelSet::opted_in`], in the order of the
/// [`OptedInKeys`] it is given, so the transform takes them as they come.
#[derive(Debug, PartialEq)]
pub(crate) struct OptedIn<'k, V>(Vec<(&'k str, V)>);

impl<'k, V> OptedIn<'k, V> {
    /// Whether `key` is opted in.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.0.binary_search_by(|(k, _)| (*k).cmp(key)).is_ok()
    }

    /// The labels, sorted by key, each once.
    pub(crate) fn pairs(&self) -> &[(&'k str, V)] {
        &self.0
    }
}

impl Source {
    /// Where a label of this source is read, as explanations name it;
    /// `looked_up` names the object a looked-up source was read from.
    pub(crate) fn describe(self, looked_up: &str) -> String {
        match self {
            Source::LookedUpLabels => format!("{looked_up} metadata.labels"),
            Source::LookedUpAnnotation => format!("{looked_up} annotation {LABELS_ANNOTATION}"),
            Source::OwnLabels => "metadata.labels".to_owned(),
            Source::OwnAnnotation => format!("annotation {LABELS_ANNOTATION}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries out of key order (a serde_json map with `preserve_order`)
    /// are not joined; in order, the join finds what looking up finds.
    #[test]
    fn the_join_checks_the_order_it_needs() {
        let keys: Vec<String> = ["a", "c"].into_iter().map(String::from).collect();
        let unsorted = [("c", "3"), ("a", "1"), ("b", "2")];
        assert_eq!(join(&keys, unsorted.into_iter()), None);
        let sorted = [("a", "1"), ("b", "2"), ("c", "3")];
        let joined = join(&keys, sorted.into_iter()).unwrap();
        assert_eq!(joined, [("a", "1"), ("c", "3")]);
        // A repeated key is out of order too.
        assert_eq!(join(&keys, [("a", "1"), ("a", "2")].into_iter()), None);
    }

    proptest::proptest! {
        /// The join refuses exactly the entries that are not in strictly
        /// ascending key order, whichever comparison shows it, and finds
        /// every key the entries hold otherwise.
        #[test]
        fn the_join_refuses_exactly_the_unsorted(
            entries in proptest::collection::vec("[a-d]{0,2}", 0..8),
            keys in proptest::collection::btree_set("[a-d]{0,2}", 0..6),
        ) {
            let keys: Vec<String> = keys.iter().cloned().collect();
            let pairs = entries.iter().map(|k| (k.as_str(), "v"));
            let sorted = entries.windows(2).all(|pair| pair[0] < pair[1]);
            match join(&keys, pairs) {
                None => proptest::prop_assert!(!sorted),
                Some(found) => {
                    proptest::prop_assert!(sorted);
                    let expected: Vec<&str> = (keys.iter().map(AsRef::as_ref))
                        .filter(|key| entries.iter().any(|entry| entry == key))
                        .collect();
                    let found: Vec<&str> = found.iter().map(|(key, _)| *key).collect();
                    proptest::prop_assert_eq!(found, expected);
                }
            }
        }
    }

    proptest::proptest! {
        /// A set of four sources gives, for every key, what inserting every
        /// source's entries into one map, in source order, gives: for a
        /// look-up, for the opted-in labels, and for the explanation.
        #[test]
        fn later_sources_win(
            sources in proptest::collection::vec(
                proptest::collection::btree_map("[a-c]{0,3}", "[xy]{0,2}", 0..8),
                4,
            ),
            keys in proptest::collection::btree_set("[a-c]{0,3}", 0..8),
        ) {
            let order = [
                Source::LookedUpLabels,
                Source::LookedUpAnnotation,
                Source::OwnLabels,
                Source::OwnAnnotation,
            ];
            let maps: Vec<StringMap> = sources
                .iter()
                .map(|entries| entries.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect())
                .collect();
            let mut expected = BTreeMap::new();
            let mut set = LabelSet::default();
            for (map, source) in maps.iter().zip(order) {
                for (key, value) in map {
                    expected.insert(*key, (*value, source));
                }
                set = set.with(source, Layer::Map(map));
            }
            for key in ["", "a", "ab", "abc", "b", "cc"] {
                proptest::prop_assert_eq!(set.get(key), expected.get(key).copied());
            }
            let sources: BTreeMap<&str, Source> =
                expected.iter().map(|(k, (_, s))| (*k, *s)).collect();
            proptest::prop_assert_eq!(set.sources(), sources);
            let keys = OptedInKeys::new(keys.iter().cloned().collect());
            let opted: Vec<(&str, &str)> = keys
                .iter()
                .filter_map(|k| Some((k.as_str(), expected.get(k.as_str())?.0)))
                .collect();
            let opted_in = set.opted_in(&keys);
            proptest::prop_assert_eq!(opted_in.pairs(), opted);
        }
    }
}
