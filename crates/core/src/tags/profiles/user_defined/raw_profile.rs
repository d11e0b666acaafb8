//! One entry of `cloudTags.profiles` as written, before it is checked:
//! what serde reads in one strict parse, and what [`super::read`] reads
//! member by member when that parse refuses it.

use super::characters::RawKeyCharacters;
use crate::json::null_unset::null_is_default;
use crate::tags::profiles::provider_limits::Unit;

/// One entry of `cloudTags.profiles` as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "a profile object such as {\"name\": \"azure\", \"providers\": [\"azure\"], …}"
)]
pub(crate) struct RawProfile {
    /// Reported as `provider` in skip records.
    pub(crate) name: String,
    /// Provider values that select the profile (ignoring case).
    pub(crate) providers: Vec<String>,
    /// Ceiling on the prefixed tag key.
    pub(crate) key_max: u64,
    /// Ceiling on the value.
    pub(crate) value_max: u64,
    /// `runes` or `bytes`.
    pub(crate) unit: Unit,
    /// Most tags per object.
    pub(crate) cap: u64,
    /// Characters admitted in the prefixed tag key.
    pub(crate) key_characters: RawKeyCharacters,
    /// Characters admitted in the value, in the same form; left out (or
    /// with no sets, extra or except at all), any value is admitted.
    #[serde(default, deserialize_with = "null_is_default")]
    pub(crate) value_characters: RawKeyCharacters,
    /// Reserved qualified-key prefixes (default none).
    #[serde(default, deserialize_with = "null_is_default")]
    pub(crate) reserved_prefixes: Vec<RawReservedPrefix>,
    /// The profile's own tag-key prefix, winning over `cloudTags.prefix`
    /// for the objects it applies to (default: none of its own).
    #[serde(default)]
    pub(crate) prefix: Option<String>,
}

/// One reserved prefix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "a reserved prefix such as {\"prefix\": \"aws:\", \"ignoreCase\": true}"
)]
pub(crate) struct RawReservedPrefix {
    /// The prefix of the qualified key.
    pub(crate) prefix: String,
    /// Whether it matches in any upper/lowercase combination.
    pub(crate) ignore_case: bool,
}
