//! `cloudTags.propagatingLabels` as the tag stage reads it.

use std::borrow::Cow;

/// Qualified label keys, sorted, each once: built only by [`OptedInKeys::new`],
/// which sorts them, so whatever reads them in order (the opted-in labels
/// of a label set, and the transform's count cap after them) can rely on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptedInKeys<'a>(Vec<Cow<'a, str>>);

impl<'a> OptedInKeys<'a> {
    /// `keys` sorted, each once (one pass over a list that is sorted
    /// already, as settings usually hold it).
    pub fn new(mut keys: Vec<Cow<'a, str>>) -> Self {
        if !keys.windows(2).all(|pair| pair[0] < pair[1]) {
            keys.sort_unstable();
            keys.dedup();
        }
        Self(keys)
    }
}

impl<'a> std::ops::Deref for OptedInKeys<'a> {
    type Target = [Cow<'a, str>];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
