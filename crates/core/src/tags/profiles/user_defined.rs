//! `cloudTags.profiles`: tag profiles users define in the settings (issue
//! 22), parsed strictly and checked completely when the policy is loaded.
//!
//! A user profile states exactly what a built-in one holds, so it becomes
//! the same [`TagProfile`] value and takes the same code path. Every problem
//! of every profile is reported at once, each named by its field path: every
//! type error, unknown field and missing field (`read`), and what the
//! checks find in the members that are valid.

mod characters;
pub(crate) mod raw_profile;
mod read;
pub(crate) use characters::RawKeyCharacters;
pub(crate) use raw_profile::RawReservedPrefix;

use super::provider_limits::DEFAULT_PREFIX;
use super::provider_limits::{BUILT_IN, GENERIC, INFRASTRUCTURE, ReservedPrefix, TagProfile};
use crate::json::fields::FieldPath;
use crate::settings_problem::SettingsProblem;
use read::ReadProfile;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::RangeInclusive;

pub(crate) mod profile_problem;
pub(crate) use profile_problem::ProfileProblem;
use profile_problem::{
    CAP, KEY_MAX, NAME_LEN_MAX, PREFIX_LEN_MAX, PREFIXES_MAX, PROFILES_MAX, PROVIDER_LEN_MAX,
    PROVIDERS_MAX, VALUE_MAX,
};

/// `cloudTags.profiles`, where every problem here is found.
fn profiles_field() -> FieldPath {
    FieldPath::of(&["cloudTags", "profiles"])
}

/// A problem with the profile setting at `field`.
fn problem(field: FieldPath, kind: ProfileProblem) -> SettingsProblem {
    SettingsProblem::new(field, kind)
}

/// Parses and checks every profile (each its JSON text), pushing each
/// problem onto `problems`, and returns the profiles (meaningful only when
/// nothing was pushed).
pub(crate) fn prepare_profiles(
    raw: &[ProfileText],
    problems: &mut Vec<SettingsProblem>,
) -> Vec<TagProfile> {
    // Read one by one rather than as part of the settings document: a
    // profile serde refuses does not hide the problems of the others.
    let (read, refused): (Vec<ReadProfile>, Vec<Vec<SettingsProblem>>) = raw
        .iter()
        .enumerate()
        .map(|(i, ProfileText(text))| {
            let mut refused = Vec::new();
            let profile = read::read(text.get(), &profiles_field().index(i), &mut refused);
            (profile, refused)
        })
        .unzip();
    check_all(&read, refused, problems)
}

/// Checks the profiles as read; `refused` (what serde refused in each
/// profile) comes first among each profile's problems.
fn check_all(
    raw: &[ReadProfile],
    refused: Vec<Vec<SettingsProblem>>,
    problems: &mut Vec<SettingsProblem>,
) -> Vec<TagProfile> {
    if raw.len() > PROFILES_MAX {
        let kind = ProfileProblem::TooManyProfiles(raw.len());
        problems.push(problem(profiles_field(), kind));
    }
    raw.iter()
        .zip(refused)
        .enumerate()
        .filter_map(|(i, (profile, refused))| {
            problems.extend(refused);
            let field = profiles_field().index(i);
            check_name(&field, raw, i, problems);
            check_providers(&field, raw, i, problems);
            build(&field, profile, problems)
        })
        .collect()
}

/// The profiles before `i`, with their positions.
fn earlier(raw: &[ReadProfile], i: usize) -> impl Iterator<Item = (usize, &ReadProfile)> {
    raw[..i].iter().enumerate()
}

fn check_name(
    field: &FieldPath,
    raw: &[ReadProfile],
    i: usize,
    problems: &mut Vec<SettingsProblem>,
) {
    let Some(name) = &raw[i].name else { return };
    let valid = !name.is_empty()
        && name.len() <= NAME_LEN_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let kind = if !valid {
        ProfileProblem::NotAName(name.clone())
    } else if name.eq_ignore_ascii_case(&GENERIC.name) {
        ProfileProblem::FallbackName
    } else if let Some((first, _)) = earlier(raw, i)
        .find(|(_, p)| (p.name.as_ref()).is_some_and(|earlier| earlier.eq_ignore_ascii_case(name)))
    {
        ProfileProblem::DuplicateName {
            name: name.clone(),
            first,
        }
    } else if let Some(built_in) = BUILT_IN
        .iter()
        .chain(&INFRASTRUCTURE)
        .find(|b| b.name.eq_ignore_ascii_case(name))
        .filter(|b| !b.providers.iter().any(|p| selects_any(raw, p)))
    {
        ProfileProblem::BuiltInName {
            name: name.clone(),
            provider: built_in.providers[0].to_string(),
        }
    } else {
        return;
    };
    problems.push(problem(field.member("name"), kind));
}

/// Whether any user profile lists `provider`.
fn selects_any(raw: &[ReadProfile], provider: &str) -> bool {
    raw.iter()
        .filter_map(|p| p.providers.as_ref())
        .flatten()
        .any(|p| same_provider(p, provider))
}

/// Provider values compare as [`TagProfile::selected_by`] matches them.
fn same_provider(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// What keeps `provider` from being listed in any profile: empty, too
/// long, or with whitespace or a control character (matched exactly, " aws"
/// would never select a profile: it is a typo). The XR's fallback warning
/// asks the same, to tell a value to correct on the object from one a
/// profile can list.
pub(crate) fn provider_value_problems(provider: &str) -> Vec<ProfileProblem> {
    if provider.is_empty() {
        return vec![ProfileProblem::EmptyProvider];
    }
    let mut found = Vec::new();
    let length = provider.chars().count();
    if length > PROVIDER_LEN_MAX {
        found.push(ProfileProblem::ProviderTooLong(length));
    }
    if let Some(character) = provider
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        let provider = provider.to_owned();
        found.push(ProfileProblem::ProviderCharacter {
            provider,
            character,
        });
    }
    found
}

fn check_providers(
    field: &FieldPath,
    raw: &[ReadProfile],
    i: usize,
    problems: &mut Vec<SettingsProblem>,
) {
    let Some(providers) = &raw[i].providers else {
        return;
    };
    let list = field.member("providers");
    if providers.is_empty() {
        problems.push(problem(list.clone(), ProfileProblem::NoProviders));
    } else if providers.len() > PROVIDERS_MAX {
        let kind = ProfileProblem::TooManyProviders(providers.len());
        problems.push(problem(list.clone(), kind));
    }
    for (j, provider) in providers.iter().enumerate() {
        let here = || list.index(j);
        let value_problems = provider_value_problems(provider);
        problems.extend(value_problems.into_iter().map(|kind| problem(here(), kind)));
        if provider.is_empty() {
            continue;
        }
        // Earlier entries of this profile, then earlier profiles.
        let earlier = providers[..j]
            .iter()
            .any(|p| same_provider(p, provider))
            .then(|| list.clone())
            .or_else(|| {
                earlier(raw, i)
                    .find(|(_, p)| {
                        p.providers
                            .iter()
                            .flatten()
                            .any(|q| same_provider(q, provider))
                    })
                    .map(|(k, _)| profiles_field().index(k).member("providers"))
            });
        if let Some(earlier) = earlier {
            let provider = provider.clone();
            let kind = ProfileProblem::DuplicateProvider { provider, earlier };
            problems.push(problem(here(), kind));
        }
    }
}

/// The profile, with every number and string checked; `None` when a
/// required member is missing or refused (the checks of the others run).
fn build(
    field: &FieldPath,
    raw: &ReadProfile,
    problems: &mut Vec<SettingsProblem>,
) -> Option<TagProfile> {
    let mut bounded = |name: &str, value: Option<u64>, range: RangeInclusive<u64>| {
        let value = value?;
        if !range.contains(&value) {
            let (min, max) = range.into_inner();
            let kind = ProfileProblem::OutOfBounds { value, min, max };
            problems.push(problem(field.member(name), kind));
        }
        Some(usize::try_from(value).unwrap_or(usize::MAX))
    };
    let key_max = bounded("keyMax", raw.key_max, KEY_MAX);
    let value_max = bounded("valueMax", raw.value_max, VALUE_MAX);
    let cap = bounded("cap", raw.cap, CAP);
    let key_characters = (raw.key_characters.as_ref())
        .map(|class| characters::check(field, "keyCharacters", class, problems));
    // Left out (all empty): any value, as under the four XR profiles.
    let value_characters = (raw.value_characters != RawKeyCharacters::default())
        .then(|| characters::check(field, "valueCharacters", &raw.value_characters, problems));
    let reserved_prefixes = reserved_prefixes(field, &raw.reserved_prefixes, problems);
    let prefix = raw.prefix.as_ref().map(|prefix| {
        crate::tags::keys::prefix_checks::check_prefix(field.member("prefix"), prefix, problems);
        Cow::Owned(prefix.clone())
    });
    Some(TagProfile {
        name: Cow::Owned(raw.name.clone()?),
        providers: (raw.providers.as_ref()?.iter().cloned())
            .map(Cow::Owned)
            .collect(),
        key_max: key_max?,
        value_max: value_max?,
        unit: raw.unit?,
        cap: cap?,
        key_characters: key_characters?,
        value_characters,
        reserved_prefixes,
        prefix,
        default_prefix: DEFAULT_PREFIX,
        provider_refuses: None,
    })
}

fn reserved_prefixes(
    field: &FieldPath,
    raw: &[RawReservedPrefix],
    problems: &mut Vec<SettingsProblem>,
) -> Cow<'static, [ReservedPrefix]> {
    let list = field.member("reservedPrefixes");
    if raw.len() > PREFIXES_MAX {
        let kind = ProfileProblem::TooManyPrefixes(raw.len());
        problems.push(problem(list.clone(), kind));
    }
    for (j, r) in raw.iter().enumerate() {
        let here = || list.index(j).member("prefix");
        let length = r.prefix.chars().count();
        if !(1..=PREFIX_LEN_MAX).contains(&length) {
            problems.push(problem(here(), ProfileProblem::PrefixLength(length)));
        }
        if let Some(character) = r.prefix.chars().find(|c| c.is_control()) {
            let prefix = r.prefix.clone();
            let kind = ProfileProblem::PrefixCharacter { prefix, character };
            problems.push(problem(here(), kind));
        }
        if let Some(k) = raw[..j].iter().position(|earlier| same_prefix(earlier, r)) {
            let kind = ProfileProblem::DuplicatePrefix {
                prefix: r.prefix.clone(),
                earlier: list.index(k),
                ignoring_case: raw[k].prefix != r.prefix,
            };
            problems.push(problem(here(), kind));
        }
    }
    raw.iter()
        .map(|r| ReservedPrefix {
            prefix: Cow::Owned(r.prefix.clone()),
            ignore_case: r.ignore_case,
        })
        .collect()
}

/// Whether one of two reserved prefixes matches every key the other does:
/// equal, or equal ignoring ASCII case and one of them ignores case.
fn same_prefix(a: &RawReservedPrefix, b: &RawReservedPrefix) -> bool {
    a.prefix == b.prefix
        || ((a.ignore_case || b.ignore_case) && a.prefix.eq_ignore_ascii_case(&b.prefix))
}

/// One of `cloudTags.profiles`, as its JSON text.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct ProfileText(pub(crate) Box<RawValue>);

/// Equal when written alike (the text, not what it means).
impl PartialEq for ProfileText {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

#[cfg(test)]
mod tests {
    use crate::behaviour::support::prepare_profile_values;
    use rstest::rstest;
    use serde_json::{Value, json};

    /// The problems of one otherwise valid profile with `edit` applied.
    fn problems_with(edit: impl FnOnce(&mut Value)) -> Vec<String> {
        let mut profile = json!({"name": "acme", "providers": ["acme"], "keyMax": 63,
            "valueMax": 63, "unit": "runes", "cap": 10,
            "keyCharacters": {"sets": ["letters", "digits"], "extra": "-_.:/"},
            "reservedPrefixes": [{"prefix": "acme:", "ignoreCase": false}]});
        edit(&mut profile);
        let mut problems = Vec::new();
        prepare_profile_values(&[profile], &mut problems);
        problems
    }

    #[test]
    fn the_base_profile_is_valid() {
        assert_eq!(problems_with(|_| {}), Vec::<String>::new());
    }

    #[rstest]
    #[case::at_the_limit(63, None)]
    #[case::one_past(
        64,
        Some(
            "cloudTags.profiles[0].providers[0]: 64 characters, at most 63 are allowed; write the value the XR carries, e.g. \"azure\""
        )
    )]
    fn provider_value_length_is_capped(#[case] length: usize, #[case] expected: Option<&str>) {
        let provider = "p".repeat(length);
        let problems = problems_with(|p| p["providers"] = json!([provider]));
        assert_eq!(problems.first().map(String::as_str), expected);
    }

    #[rstest]
    #[case::leading_space(" aws", r#"" aws" contains " " (U+0020)"#)]
    #[case::trailing_newline("aws\n", r#""aws\n" contains "\n" (U+000A)"#)]
    #[case::no_break_space("a\u{a0}ws", "\"a\u{a0}ws\" contains \"\u{a0}\" (U+00A0)")]
    #[case::nul("a\u{0}ws", r#""a\u0000ws" contains "\u0000" (U+0000)"#)]
    fn provider_value_with_whitespace_or_control_is_refused(
        #[case] provider: &str,
        #[case] what: &str,
    ) {
        assert_eq!(
            problems_with(|p| p["providers"] = json!(["acme", provider])),
            [format!(
                "cloudTags.profiles[0].providers[1]: {what}; provider values are matched exactly \
                 (ignoring case), remove it"
            )]
        );
    }

    #[rstest]
    #[case::extra("extra")]
    #[case::except("except")]
    fn extra_and_except_length_is_capped(#[case] name: &str) {
        // 256 distinct characters are accepted, 257 are not.
        let characters =
            |n: u32| -> String { (0..n).filter_map(|i| char::from_u32(0x100 + i)).collect() };
        let other = if name == "extra" { "except" } else { "extra" };
        let at_limit = problems_with(|p| {
            p["keyCharacters"][name] = json!(characters(256));
            p["keyCharacters"][other] = json!("");
        });
        assert_eq!(at_limit, Vec::<String>::new());
        let over = problems_with(|p| {
            p["keyCharacters"][name] = json!(characters(257));
            p["keyCharacters"][other] = json!("");
        });
        assert_eq!(
            over,
            [format!(
                "cloudTags.profiles[0].keyCharacters.{name}: 257 characters, at most 256 are \
                 allowed; name a set such as \"letters\" or \"printable\" instead of listing its \
                 characters"
            )]
        );
    }

    #[rstest]
    #[case::exact_twice(("azure", false), ("azure", false), Some(""))]
    #[case::case_ignored_covers(("azure", true), ("AZURE", false), Some(" (ignoring case, as one of them does)"))]
    #[case::covered_by_later(("Azure", false), ("azure", true), Some(" (ignoring case, as one of them does)"))]
    #[case::both_ignore_case(("azure", true), ("Azure", true), Some(" (ignoring case, as one of them does)"))]
    #[case::distinct_exact_cases(("azure", false), ("Azure", false), None)]
    #[case::distinct_prefixes(("azure", true), ("azurerm", true), None)]
    fn duplicate_reserved_prefixes_are_refused(
        #[case] first: (&str, bool),
        #[case] second: (&str, bool),
        #[case] how: Option<&str>,
    ) {
        let problems = problems_with(|p| {
            p["reservedPrefixes"] = json!([
                {"prefix": "windows", "ignoreCase": true},
                {"prefix": first.0, "ignoreCase": first.1},
                {"prefix": second.0, "ignoreCase": second.1},
            ]);
        });
        let expected: Vec<String> = how
            .map(|how| {
                format!(
                    "cloudTags.profiles[0].reservedPrefixes[2].prefix: \"{}\" is already listed in \
                     cloudTags.profiles[0].reservedPrefixes[1]{how}; remove one of them",
                    second.0
                )
            })
            .into_iter()
            .collect();
        assert_eq!(problems, expected);
    }

    #[test]
    fn value_characters_are_optional_and_checked_like_key_characters() {
        let prepare_one = |edit: &dyn Fn(&mut Value)| {
            let mut profile = json!({"name": "acme", "providers": ["acme"], "keyMax": 63,
                "valueMax": 63, "unit": "runes", "cap": 10,
                "keyCharacters": {"sets": ["letters", "digits"], "extra": "-_.:/"}});
            edit(&mut profile);
            let mut problems = Vec::new();
            let profiles = prepare_profile_values(&[profile], &mut problems);
            (profiles, problems)
        };
        let (left_out, problems) = prepare_one(&|_| {});
        assert_eq!(
            (left_out[0].value_characters.is_none(), problems.len()),
            (true, 0)
        );
        let (given, _) = prepare_one(&|p| {
            p["valueCharacters"] = json!({"sets": ["ascii-letters"], "extra": "-"});
        });
        let class = given[0].value_characters.as_ref().unwrap();
        assert_eq!(class.first_disallowed("ab-ü"), Some('ü'));
        let (_, problems) = prepare_one(&|p| p["valueCharacters"] = json!({"except": "/"}));
        assert_eq!(
            problems,
            [
                "cloudTags.profiles[0].valueCharacters: admits no character; name sets such as \
                 [\"letters\", \"digits\"] and/or list characters in extra"
            ]
        );
    }

    #[test]
    fn a_profile_named_like_an_infrastructure_built_in_must_list_it() {
        let problems = problems_with(|p| p["name"] = json!("capa"));
        assert_eq!(
            problems,
            [
                "cloudTags.profiles[0].name: \"capa\" is the name of the built-in profile for \
                 provider \"capa\", which still applies; list \"capa\" in providers to replace it, \
                 or choose another name"
            ]
        );
        assert_eq!(
            problems_with(|p| {
                p["name"] = json!("capa");
                p["providers"] = json!(["capa"]);
            }),
            Vec::<String>::new()
        );
    }

    #[test]
    fn reserved_prefix_with_a_control_character_is_refused() {
        assert_eq!(
            problems_with(|p| p["reservedPrefixes"][0]["prefix"] = json!("acme\t")),
            [
                "cloudTags.profiles[0].reservedPrefixes[0].prefix: \"acme\\t\" contains \"\\t\" (U+0009); a qualified key never starts with one, remove it"
            ]
        );
    }
}
