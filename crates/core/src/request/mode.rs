//! What the policy does with the changes the contract asks for
//! (`settings.mode`).

use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;

/// What the policy does with the changes the contract asks for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Make the changes (return a mutated object).
    #[default]
    Mutate,
    /// Never mutate: reject objects that deviate, listing every deviation
    /// (for `mutating: false` policies and background audits).
    Validate,
}

/// The valid values, named in every refusal of another (docs/settings.md).
pub(crate) const MODES: &[&str] = &["mutate", "validate"];

/// By hand, read as a string, so that a value of any other type is refused
/// listing the valid ones, as an unknown string is.
impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ModeName;
        impl Visitor<'_> for ModeName {
            type Value = Mode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`mutate` or `validate`")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<Mode, E> {
                match value {
                    "mutate" => Ok(Mode::Mutate),
                    "validate" => Ok(Mode::Validate),
                    other => Err(E::unknown_variant(other, MODES)),
                }
            }
        }
        deserializer.deserialize_str(ModeName)
    }
}
