//! One profile of `cloudTags.profiles` read from its JSON text: at once,
//! straight into its fields, when serde accepts it (nearly always); member
//! by member when it refuses it, so that every type error, unknown field and
//! missing field is reported, each named by its path, and the members that
//! are valid are still checked.
//!
//! The same way as the rest of the settings ([`crate::settings`]' refused
//! documents): each member is taken from the user's own text
//! ([`members`]), read alone by the derive the whole profile is read with,
//! and named by its path. An unknown member is tried alone against
//! [`RawProfile`] itself, so serde words it and lists the fields from its
//! derive; a key written twice is refused, naming it.

use super::characters::RawKeyCharacters;
use super::raw_profile::{RawProfile, RawReservedPrefix};
use crate::json::fields::FieldPath;
use crate::settings_problem::document_members::{self, Member, alone, first_of_key};
use crate::settings_problem::{SettingsProblem, SettingsProblemKind};
use crate::tags::profiles::provider_limits::Unit;
use serde::de::{Deserialize, Error as _};

/// A profile as read, what the checks run on. A required member is `None`
/// when it is absent or refused (a problem says which) and its checks are
/// skipped; an optional one is its default then, as when left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ReadProfile {
    pub(crate) name: Option<String>,
    pub(crate) providers: Option<Vec<String>>,
    pub(crate) key_max: Option<u64>,
    pub(crate) value_max: Option<u64>,
    pub(crate) unit: Option<Unit>,
    pub(crate) cap: Option<u64>,
    pub(crate) key_characters: Option<RawKeyCharacters>,
    pub(crate) value_characters: RawKeyCharacters,
    pub(crate) reserved_prefixes: Vec<RawReservedPrefix>,
    pub(crate) prefix: Option<String>,
}

impl From<RawProfile> for ReadProfile {
    fn from(raw: RawProfile) -> Self {
        Self {
            name: Some(raw.name),
            providers: Some(raw.providers),
            key_max: Some(raw.key_max),
            value_max: Some(raw.value_max),
            unit: Some(raw.unit),
            cap: Some(raw.cap),
            key_characters: Some(raw.key_characters),
            value_characters: raw.value_characters,
            reserved_prefixes: raw.reserved_prefixes,
            prefix: raw.prefix,
        }
    }
}

/// The members [`RawProfile`] cannot do without, in its order (the order
/// serde looks for them in).
const REQUIRED: [&str; 7] = [
    "name",
    "providers",
    "keyMax",
    "valueMax",
    "unit",
    "cap",
    "keyCharacters",
];

/// The profile at `field` (`cloudTags.profiles[1]`) from its JSON `text`,
/// each problem serde finds pushed onto `problems`.
pub(super) fn read(
    text: &str,
    field: &FieldPath,
    problems: &mut Vec<SettingsProblem>,
) -> ReadProfile {
    // What every valid profile costs: one strict parse, as before.
    if let Ok(profile) = serde_json::from_str::<RawProfile>(text) {
        return profile.into();
    }
    // Refused: read again, to name every setting at fault.
    match document_members::members(text) {
        Some(members) => by_member(&members, field, problems),
        // Not an object: read whole. serde's message says what a profile
        // is; or it is one written as the list of its fields, which the
        // derive reads too.
        None => match document_members::read::<RawProfile>(text, field) {
            Ok(profile) => profile.into(),
            Err(problem) => {
                problems.push(problem);
                ReadProfile::default()
            }
        },
    }
}

/// The profile at `field` read member by member (`members` sorted by key,
/// as the rest of the settings are), then a problem for each required
/// member that is absent. A key written twice is a problem, and its first
/// value is the one read.
fn by_member(
    members: &[Member<'_>],
    field: &FieldPath,
    problems: &mut Vec<SettingsProblem>,
) -> ReadProfile {
    let mut read = ReadProfile::default();
    for (i, Member { key, value }) in members.iter().enumerate() {
        if !first_of_key(members, i, field, problems) {
            continue;
        }
        let at = field.member(key);
        let text = value.get();
        let result = match key.as_str() {
            "name" => decode(text, &at).map(|v| read.name = Some(v)),
            "providers" => decode(text, &at).map(|v| read.providers = Some(v)),
            "keyMax" => decode(text, &at).map(|v| read.key_max = Some(v)),
            "valueMax" => decode(text, &at).map(|v| read.value_max = Some(v)),
            "unit" => decode(text, &at).map(|v| read.unit = Some(v)),
            "cap" => decode(text, &at).map(|v| read.cap = Some(v)),
            "keyCharacters" => decode(text, &at).map(|v| read.key_characters = Some(v)),
            "valueCharacters" => decode_optional(text, &at).map(|v| read.value_characters = v),
            "reservedPrefixes" => decode_optional(text, &at).map(|v| read.reserved_prefixes = v),
            "prefix" => decode(text, &at).map(|v| read.prefix = v),
            // Alone, a profile always misses a required member: serde stops
            // at the unknown key first and names it.
            _ => document_members::read::<RawProfile>(&alone(key, value), field).map(drop),
        };
        if let Err(problem) = result {
            problems.push(problem);
        }
    }
    for name in REQUIRED
        .into_iter()
        .filter(|name| !members.iter().any(|member| member.key == *name))
    {
        let message = serde_json::Error::missing_field(name).to_string();
        problems.push(SettingsProblem::new(
            field.clone(),
            SettingsProblemKind::Refused(message),
        ));
    }
    read
}

/// The member at `at`, read as [`RawProfile`]'s derive reads it.
fn decode<'t, T: Deserialize<'t>>(text: &'t str, at: &FieldPath) -> Result<T, SettingsProblem> {
    document_members::read(text, at)
}

/// An optional member at `at`, `null` read as unset (its default), as the
/// strict parse reads it ([`crate::json::null_unset`]).
fn decode_optional<'t, T: Deserialize<'t> + Default>(
    text: &'t str,
    at: &FieldPath,
) -> Result<T, SettingsProblem> {
    decode::<Option<T>>(text, at).map(Option::unwrap_or_default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    /// A profile with every member, the optional ones included.
    fn full() -> Map<String, Value> {
        let profile = json!({"name": "acme", "providers": ["acme"], "keyMax": 63,
            "valueMax": 63, "unit": "bytes", "cap": 10,
            "keyCharacters": {"sets": ["letters"], "extra": "-"},
            "valueCharacters": {"sets": ["digits"]},
            "reservedPrefixes": [{"prefix": "acme:", "ignoreCase": true}],
            "prefix": "acme-"});
        let Value::Object(members) = profile else {
            unreachable!("an object")
        };
        members
    }

    fn field() -> FieldPath {
        FieldPath::of(&["cloudTags", "profiles"]).index(0)
    }

    /// `members` read member by member: the profile and the problems.
    fn by_members(members: &Map<String, Value>) -> (ReadProfile, Vec<String>) {
        let mut problems = Vec::new();
        let text = Value::Object(members.clone()).to_string();
        let members = document_members::members(&text).unwrap();
        let read = by_member(&members, &field(), &mut problems);
        (read, problems.iter().map(ToString::to_string).collect())
    }

    /// serde's problem with the whole profile, as the settings name it.
    fn serde_says(members: &Map<String, Value>) -> Option<String> {
        let text = Value::Object(members.clone()).to_string();
        document_members::read::<RawProfile>(&text, &field())
            .err()
            .map(|problem| problem.to_string())
    }

    #[test]
    fn member_by_member_reads_every_member_as_the_derive_does() {
        let members = full();
        let whole: RawProfile = serde_json::from_value(Value::Object(members.clone())).unwrap();
        assert_eq!(by_members(&members), (ReadProfile::from(whole), Vec::new()));
    }

    #[test]
    fn required_members_are_those_serde_requires_and_missing_is_worded_as_serde_words_it() {
        for name in full().keys() {
            let mut members = full();
            members.remove(name);
            let (_, problems) = by_members(&members);
            assert_eq!(
                problems.first(),
                serde_says(&members).as_ref(),
                "{name} left out"
            );
        }
    }

    #[test]
    fn an_unknown_member_is_worded_as_serde_words_it() {
        let mut members = full();
        members.insert("keymax".to_owned(), json!(63));
        let (read, problems) = by_members(&members);
        assert_eq!(problems, Vec::from_iter(serde_says(&members)));
        assert_eq!(
            read.key_max,
            Some(63),
            "the members that are valid are read"
        );
    }

    #[test]
    fn a_refused_required_member_is_none_and_not_also_missing() {
        let mut members = full();
        members.insert("cap".to_owned(), json!("10"));
        let (read, problems) = by_members(&members);
        assert_eq!(
            problems,
            ["cloudTags.profiles[0].cap: invalid type: string \"10\", expected u64"]
        );
        assert_eq!((read.cap, read.key_max), (None, Some(63)));
    }
}
