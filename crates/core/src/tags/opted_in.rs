//! `cloudTags.propagatingLabels` as the tag stage reads it.

use std::cmp::Ordering;
use std::sync::Arc;

/// Qualified label keys, sorted, each once: built only by `OptedInKeys::new`,
/// which sorts them, so whatever reads them in order (the opted-in labels
/// of a label set, and the transform's count cap after them) can rely on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OptedInKeys(Arc<Vec<String>>);

impl OptedInKeys {
    /// `keys` sorted, each once: the list itself when it is (one pass, as
    /// settings usually hold it), else a sorted copy.
    pub(crate) fn new(keys: impl Into<Arc<Vec<String>>>) -> Self {
        let keys = keys.into();
        if (keys.windows(2)).all(|pair| compare_keys(&pair[0], &pair[1]) == Ordering::Less) {
            return Self(keys);
        }
        let mut keys = Arc::unwrap_or_clone(keys);
        keys.sort_unstable();
        keys.dedup();
        Self(Arc::new(keys))
    }
}

impl std::ops::Deref for OptedInKeys {
    type Target = [String];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// `a.cmp(b)` for label keys, which share long prefixes
/// (`platform.example.org/…`): the common prefix is passed eight bytes a
/// step. In wasm, `str::cmp` calls libc's `memcmp`, which compares a byte
/// a step at about ten instructions each; the opted-in keys are compared
/// with each other once and with the labels once.
pub(crate) fn compare_keys(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (a_words, b_words) = (a.as_chunks::<8>().0, b.as_chunks::<8>().0);
    let same = (a_words.iter().zip(b_words))
        .take_while(|(a, b)| a == b)
        .count();
    a[same * 8..].cmp(&b[same * 8..])
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The same order as `str::cmp`, on keys that share prefixes of
        /// every length.
        #[test]
        fn compare_keys_orders_as_str_does(
            prefix in "[a-z./-]{0,20}",
            a in "[a-z0-9./-]{0,12}|\\PC{0,4}|\\x00{0,3}[a\\x00]{0,9}",
            b in "[a-z0-9./-]{0,12}|\\PC{0,4}|\\x00{0,3}[a\\x00]{0,9}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            proptest::prop_assert_eq!(compare_keys(&a, &b), a.cmp(&b));
            proptest::prop_assert_eq!(compare_keys(&a, &a), Ordering::Equal);
        }
    }
}
