//! What the policy does with the changes the contract asks for
//! (`settings.mode`).

use serde::Deserialize;

/// What the policy does with the changes the contract asks for.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Make the changes (return a mutated object).
    #[default]
    Mutate,
    /// Never mutate: reject objects that deviate, listing every deviation
    /// (for `mutating: false` policies and background audits).
    Validate,
}
