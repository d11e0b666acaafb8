//! `cloudTags.propagatingLabels` as the tag stage reads it.

/// Qualified label keys, sorted, each once: built only by `OptedInKeys::new`,
/// which sorts them, so whatever reads them in order (the opted-in labels
/// of a label set, and the transform's count cap after them) can rely on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OptedInKeys(Vec<String>);

impl OptedInKeys {
    /// `keys` sorted, each once (one pass over a list that is sorted
    /// already, as settings usually hold it).
    pub(crate) fn new(mut keys: Vec<String>) -> Self {
        if !keys.windows(2).all(|pair| pair[0] < pair[1]) {
            keys.sort_unstable();
            keys.dedup();
        }
        Self(keys)
    }
}

impl std::ops::Deref for OptedInKeys {
    type Target = [String];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
