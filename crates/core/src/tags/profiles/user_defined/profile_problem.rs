//! What can be wrong with a user-defined tag profile, each kind worded
//! here once. The setting at fault is the [`SettingsProblem`]'s field
//! (`cloudTags.profiles[0].name`).
//!
//! [`SettingsProblem`]: crate::settings_problem::SettingsProblem

use crate::json::fields::FieldPath;
use crate::json::quote::quoted;
use crate::tags::profiles::provider_limits::GENERIC;
use std::ops::RangeInclusive;

/// Bounds. Wide enough for every provider we know (Azure's 512-character
/// names, Nova's quota of 128 raised tenfold), narrow enough that a typo
/// such as `keyMax: 5120000` is caught instead of silently admitting
/// anything.
pub(super) const KEY_MAX: RangeInclusive<u64> = 1..=4096;
pub(super) const VALUE_MAX: RangeInclusive<u64> = 1..=65536;
pub(super) const CAP: RangeInclusive<u64> = 1..=1024;
pub(super) const PROFILES_MAX: usize = 32;
pub(super) const PROVIDERS_MAX: usize = 32;
pub(super) const PREFIXES_MAX: usize = 64;
pub(super) const PREFIX_LEN_MAX: usize = 253;
pub(super) const NAME_LEN_MAX: usize = 63;
/// Provider values are short words ("aws", "azurerm"); 63 is a DNS label's
/// ceiling, which every provider name we know fits.
pub(super) const PROVIDER_LEN_MAX: usize = 63;
/// `extra` and `except` list single characters: a provider rule names a
/// handful, and anything longer is better said with a set.
pub(super) const CHARACTERS_LEN_MAX: usize = 256;

/// What is wrong with one setting of `cloudTags.profiles`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProfileProblem {
    /// More profiles than allowed: how many.
    #[error(
        "{0} profiles, at most {PROFILES_MAX} are allowed; merge profiles that share \
         constraints by listing several providers in one"
    )]
    TooManyProfiles(usize),
    /// `name` is not a profile name.
    #[error(
        "{} is not a profile name; use 1 to {NAME_LEN_MAX} ASCII letters, digits, \"-\", \
         \"_\" or \".\", e.g. \"azure\"",
        quoted(.0)
    )]
    NotAName(String),
    /// `name` is the fallback profile's.
    #[error(
        "\"{}\" is the fallback profile's name and skip records must tell the two apart; \
         choose another name",
        GENERIC.name
    )]
    FallbackName,
    /// `name` is taken by the profile at `first`.
    #[error(
        "{} is already the name of cloudTags.profiles[{first}]; give each profile its own name",
        quoted(.name)
    )]
    DuplicateName {
        /// The name.
        name: String,
        /// The index of the profile that has it first.
        first: usize,
    },
    /// `name` is a built-in profile's, whose provider no user profile takes.
    #[error(
        "{} is the name of the built-in profile for provider {quoted_provider}, which still applies; \
         list {quoted_provider} in providers to replace it, or choose another name",
        quoted(.name),
        quoted_provider = quoted(.provider)
    )]
    BuiltInName {
        /// The name.
        name: String,
        /// The built-in profile's provider.
        provider: String,
    },
    /// No provider selects the profile.
    #[error("empty; list the provider values that select this profile, e.g. [\"azure\"]")]
    NoProviders,
    /// More provider values than allowed: how many.
    #[error("{0} values, at most {PROVIDERS_MAX} are allowed")]
    TooManyProviders(usize),
    /// An empty provider value.
    #[error("empty provider value; write the value the XR carries, e.g. \"azure\"")]
    EmptyProvider,
    /// A provider value longer than allowed: its length in characters.
    #[error(
        "{0} characters, at most {PROVIDER_LEN_MAX} are allowed; write the value the XR \
         carries, e.g. \"azure\""
    )]
    ProviderTooLong(usize),
    /// A provider value with whitespace or a control character.
    #[error(
        "{} contains {}; provider values are matched exactly (ignoring case), remove it",
        quoted(.provider),
        character_name(.character)
    )]
    ProviderCharacter {
        /// The provider value.
        provider: String,
        /// The first such character.
        character: char,
    },
    /// A provider value already listed (ignoring case) at `earlier`.
    #[error(
        "{} is already listed in {earlier} (ignoring case); a provider value selects one \
         profile, remove one of them",
        quoted(.provider)
    )]
    DuplicateProvider {
        /// The provider value.
        provider: String,
        /// The providers list that has it first.
        earlier: FieldPath,
    },
    /// A number outside `min..=max`.
    #[error("{value} is out of bounds; use a number from {min} to {max}")]
    OutOfBounds {
        /// The number.
        value: u64,
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
    },
    /// `keyCharacters` admits nothing.
    #[error(
        "admits no character; name sets such as [\"letters\", \"digits\"] and/or list \
         characters in extra"
    )]
    NoCharacters,
    /// A character both in `extra` and in `except`.
    #[error(
        "{} is both in extra and in except; keep it in one of them",
        quoted(&.0.to_string())
    )]
    ExtraAndExcept(char),
    /// A control character in `extra` or `except`, and what the class
    /// admits characters of ("tag keys", "tag values").
    #[error(
        "control character {} in extra or except; {} never carry one, remove it",
        code_point(.0),
        .1
    )]
    ControlCharacter(char, &'static str),
    /// `extra` or `except` longer than allowed: its length in characters.
    #[error(
        "{0} characters, at most {CHARACTERS_LEN_MAX} are allowed; name a set such as \
         \"letters\" or \"printable\" instead of listing its characters"
    )]
    TooManyCharacters(usize),
    /// More reserved prefixes than allowed: how many.
    #[error("{0} prefixes, at most {PREFIXES_MAX} are allowed")]
    TooManyPrefixes(usize),
    /// A reserved prefix too short or too long: its length in characters.
    #[error("{0} characters; a reserved prefix has 1 to {PREFIX_LEN_MAX}, e.g. \"azure\"")]
    PrefixLength(usize),
    /// A reserved prefix with a control character.
    #[error(
        "{} contains {}; a qualified key never starts with one, remove it",
        quoted(.prefix),
        character_name(.character)
    )]
    PrefixCharacter {
        /// The prefix.
        prefix: String,
        /// The first control character.
        character: char,
    },
    /// A reserved prefix that one at `earlier` already covers.
    #[error(
        "{} is already listed in {earlier}{}; remove one of them",
        quoted(.prefix),
        ignoring_case_note(.ignoring_case)
    )]
    DuplicatePrefix {
        /// The prefix.
        prefix: String,
        /// The reserved prefix that covers it first.
        earlier: FieldPath,
        /// Whether they are equal only ignoring case.
        ignoring_case: bool,
    },
}

/// A character as problems name it: quoted, with its code point.
fn character_name(c: &char) -> String {
    format!("{} ({})", quoted(&c.to_string()), code_point(c))
}

/// `U+0009`.
fn code_point(c: &char) -> String {
    format!("U+{:04X}", u32::from(*c))
}

/// How a duplicate reserved prefix equals the earlier one.
fn ignoring_case_note(ignoring_case: &bool) -> &'static str {
    if *ignoring_case {
        " (ignoring case, as one of them does)"
    } else {
        ""
    }
}

impl From<ProfileProblem> for crate::settings_problem::SettingsProblemKind {
    fn from(problem: ProfileProblem) -> Self {
        Self::Checked(problem.to_string())
    }
}
