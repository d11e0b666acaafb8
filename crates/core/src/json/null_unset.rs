//! `null` in the settings means "not set": a field written `null` takes its
//! default, as a field left out does. This is how Go's `encoding/json`
//! reads a null into a Kubernetes object's field, what Rancher's form sends
//! for a field left empty, and what YAML writes for a key with no value
//! (`families:`). serde's derive would refuse it as a wrong type.

use serde::{Deserialize, Deserializer};

/// A settings field read with `null` as its type's default (for a field
/// whose default is not its type's, the field's own function does the same
/// with its value).
pub(crate) fn null_is_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}
