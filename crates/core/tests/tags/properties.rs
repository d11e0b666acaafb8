//! Properties of the transformer over generated label sets: every label ends
//! as exactly one tag or one skip, the result does not depend on the order
//! the labels arrive in, and each profile's result is what an independent
//! oracle, written from the provider's documented rules, says it must be;
//! the generator reaches every outcome each profile can produce; and a
//! built-in restated as a user profile is that built-in.

use super::transform;
use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::request::lookup::MapLookup;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::keys::tag_naming::DEFAULT_PREFIX;
use metadata_propagation_core::tags::profiles::provider_limits::Origin;
use metadata_propagation_core::tags::profiles::provider_limits::{
    AWS, AZURE, GENERIC, HETZNER, OPENSTACK, TagProfile,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use unicode_properties::{GeneralCategory as Gc, UnicodeGeneralCategory};

use super::support::ready_profiles;

/// The oracle's name for each entry of [`PROFILES`] (the ready-made `aws`
/// shares its name with the built-in it replaces).
const ORACLE: [&str; 7] = [
    "aws",
    "hetzner",
    "openstack",
    "generic",
    "azure",
    "gcp-labels",
    "aws-upjet",
];

/// The built-ins and the ready-made profiles (docs/cloud-tags.md's `aws`,
/// and the earlier `azure` and `gcp-labels`: support/ready_profiles.rs), as
/// the policy prepares them.
static PROFILES: LazyLock<Vec<TagProfile>> = LazyLock::new(|| {
    let settings = ready_profiles::settings(&[], &["azure", "gcp-labels", "aws"]);
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let user = settings.cloud_tags().unwrap().profiles.user().to_vec();
    [
        AWS.clone(),
        HETZNER.clone(),
        OPENSTACK.clone(),
        GENERIC.clone(),
    ]
    .into_iter()
    .chain(user)
    .collect()
});

// ---------------------------------------------------------------- the oracle
//
// Written from the documentation, not from the code: no `CharSet`, no
// `KeyCharacters`, no `check`. Sources: the profile table of
// docs/cloud-tags.md ("Built-in profiles") for the built-ins, and the
// provider documents it cites ("Ready-made profiles") for the ready-made
// profiles.

struct Rules {
    key_max: usize,
    value_max: usize,
    bytes: bool,
    cap: usize,
    key_char: fn(char) -> bool,
    /// Reserved prefixes of the qualified key, any case.
    reserved: &'static [&'static str],
}

fn letter(c: char) -> bool {
    matches!(
        c.general_category(),
        Gc::UppercaseLetter
            | Gc::LowercaseLetter
            | Gc::TitlecaseLetter
            | Gc::ModifierLetter
            | Gc::OtherLetter
    )
}

fn digit(c: char) -> bool {
    c.general_category() == Gc::DecimalNumber
}

/// Go's `unicode.IsPrint`, from its documentation: "letters, marks,
/// numbers, punctuation, symbols, and the ASCII space character, from
/// categories L, M, N, P, S and the ASCII space character".
fn printable(c: char) -> bool {
    c == ' '
        || letter(c)
        || matches!(
            c.general_category(),
            Gc::NonspacingMark
                | Gc::SpacingMark
                | Gc::EnclosingMark
                | Gc::DecimalNumber
                | Gc::LetterNumber
                | Gc::OtherNumber
                | Gc::ConnectorPunctuation
                | Gc::DashPunctuation
                | Gc::OpenPunctuation
                | Gc::ClosePunctuation
                | Gc::InitialPunctuation
                | Gc::FinalPunctuation
                | Gc::OtherPunctuation
                | Gc::MathSymbol
                | Gc::CurrencySymbol
                | Gc::ModifierSymbol
                | Gc::OtherSymbol
        )
}

/// The documented rules of the profile called `name`.
fn rules(name: &str) -> Rules {
    match name {
        // AWS leaves 50 tags; upjet's tag initializer adds three of its own.
        "aws-upjet" => Rules {
            cap: 47,
            ..rules("aws")
        },
        // AWS: "letters, numbers, spaces, and + - = . _ : / @", keys 128
        // and values 256 Unicode characters, 50 tags, aws: in any case.
        "aws" => Rules {
            key_max: 128,
            value_max: 256,
            bytes: false,
            cap: 50,
            key_char: |c| letter(c) || digit(c) || " +-=._:/@".contains(c),
            reserved: &["aws:"],
        },
        // docs/cloud-tags.md, "Built-in profiles": Hetzner 63/63 runes, 64 tags, letters digits - _ . : /.
        "hetzner" => Rules {
            key_max: 63,
            value_max: 63,
            bytes: false,
            cap: 64,
            key_char: |c| letter(c) || digit(c) || "-_.:/".contains(c),
            reserved: &[],
        },
        // docs/cloud-tags.md, "Built-in profiles": OpenStack 255/255 bytes, 50 tags, any non-control character.
        "openstack" => Rules {
            key_max: 255,
            value_max: 255,
            bytes: true,
            cap: 50,
            key_char: |c| !c.is_control(),
            reserved: &[],
        },
        // docs/cloud-tags.md, "Built-in profiles": generic 63/255 runes, 32 tags, letters digits - _ . : /.
        "generic" => Rules {
            key_max: 63,
            value_max: 255,
            bytes: false,
            cap: 32,
            key_char: |c| letter(c) || digit(c) || "-_.:/".contains(c),
            reserved: &[],
        },
        // Azure: names 512, values 256, 50 pairs, printable but no
        // < > % & \ ? /; microsoft, azure, windows reserved.
        "azure" => Rules {
            key_max: 512,
            value_max: 256,
            bytes: false,
            cap: 50,
            key_char: |c| printable(c) && !"<>%&\\?/".contains(c),
            reserved: &["microsoft", "azure", "windows"],
        },
        // GCP labels: 63 (measured in bytes, the safe reading), 64 labels,
        // lowercase letters (international allowed), digits, _ and -.
        "gcp-labels" => Rules {
            key_max: 63,
            value_max: 63,
            bytes: true,
            cap: 64,
            key_char: |c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || c == '_'
                    || c == '-'
                    || (!c.is_ascii()
                        && matches!(
                            c.general_category(),
                            Gc::LowercaseLetter
                                | Gc::ModifierLetter
                                | Gc::OtherLetter
                                | Gc::DecimalNumber
                        ))
            },
            reserved: &[],
        },
        other => panic!("no documented rules for {other}"),
    }
}

/// The expected reason code for one label, cap aside, in the documented
/// order (reserved prefix, key length, value length, key characters).
fn expected_reason(rules: &Rules, key: &str, value: &str) -> Option<&'static str> {
    let tag = format!("plexsphere:{key}");
    let len = |s: &str| {
        if rules.bytes {
            s.len()
        } else {
            s.chars().count()
        }
    };
    let lower = key.to_lowercase();
    if rules.reserved.iter().any(|r| lower.starts_with(r)) {
        Some("reserved-prefix")
    } else if len(&tag) > rules.key_max {
        Some("key-too-long")
    } else if len(value) > rules.value_max {
        Some("value-too-long")
    } else if !tag.chars().all(rules.key_char) {
        Some("key-character-class")
    } else {
        None
    }
}

/// Tag key → value and qualified key → reason, as the documentation says.
fn oracle(
    rules: &Rules,
    labels: &BTreeMap<&str, &str>,
) -> (BTreeMap<String, String>, BTreeMap<String, &'static str>) {
    let mut tags = BTreeMap::new();
    let mut skips = BTreeMap::new();
    // BTreeMap order is byte order, the documented cap order.
    for (key, value) in labels {
        match expected_reason(rules, key, value) {
            Some(reason) => {
                skips.insert(key.to_string(), reason);
            }
            None if tags.len() == rules.cap => {
                skips.insert(key.to_string(), "count-cap");
            }
            None => {
                tags.insert(format!("plexsphere:{key}"), value.to_string());
            }
        }
    }
    (tags, skips)
}

// -------------------------------------------------------------- generators

fn label_sets() -> impl Strategy<Value = Vec<(String, String)>> {
    // Keys mix allowed and disallowed characters for every profile: '/'
    // (Azure), upper case and international letters (GCP), Azure's refused
    // symbols and what `printable` refuses but `non-control` admits (no-break
    // space, line separator, soft hyphen, private use, unassigned), the
    // reserved prefixes in any case, and lengths around every ceiling.
    let key = prop_oneof![
        "[a-z]{1,8}/[a-zA-Z0-9._-]{1,20}",
        "(aws|AWS|acme|Microsoft|azure|WINDOWS):[a-z]{1,5}[/_-][a-z]{1,10}",
        "[a-z]{1,3}[/:_][a-zé日É 𝕏@+,<>%&?\\\\\t\u{a0}\u{2028}\u{ad}\u{e000}\u{378}-]{1,10}",
        "[a-z]{1,3}[/:][a-zü]{40,140}",
        "[a-z0-9_-]{1,70}",
        "[a-z]{1,4}:[a-z0-9_-]{1,540}",
    ];
    let value = prop_oneof!["[a-z0-9 ]{0,20}", "[é日a]{20,300}"];
    let mixed = proptest::collection::vec((key, value), 0..90);
    // Short `:`-qualified labels every profile but GCP labels accepts, enough
    // of them to pass the largest cap (64): mixed sets alone hold too few
    // valid labels to reach a cap above 32.
    let crowd = proptest::collection::vec(("[a-z]{1,6}:[a-z0-9]{1,12}", "[a-z0-9]{0,8}"), 20..100);
    prop_oneof![
        3 => mixed.clone(),
        1 => (mixed, crowd).prop_map(|(mut mixed, crowd)| {
            mixed.extend(crowd);
            mixed
        }),
    ]
}

/// The pairs with duplicate keys dropped (the first kept), so any order of
/// them describes the same label set.
fn unique(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    pairs
        .into_iter()
        .filter(|(k, _)| seen.insert(k.clone()))
        .collect()
}

fn as_map(pairs: &[(String, String)]) -> BTreeMap<&str, &str> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_label_is_one_tag_or_one_skip(pairs in label_sets(), p in 0usize..7) {
        let labels = as_map(&pairs);
        let out = transform(labels.clone(), &PROFILES[p]);
        prop_assert_eq!(out.tags.len() + out.skipped.len(), labels.len());
        // Every tag key is the prefix in force, then the qualified key.
        let prefix = PROFILES[p].prefix.as_deref().unwrap_or(DEFAULT_PREFIX);
        prop_assert!(out.tags.iter().all(|(k, _)| k.starts_with(prefix)));
        prop_assert!(out.tags.windows(2).all(|pair| pair[0].0 < pair[1].0), "tags sorted, each key once");
        let tagged: BTreeSet<String> = out.tags.iter().map(|(k, _)| k[prefix.len()..].to_owned()).collect();
        let skipped: BTreeSet<String> = out.skipped.iter().map(|s| s.qualified_key.to_owned()).collect();
        prop_assert!(tagged.is_disjoint(&skipped));
        let all: BTreeSet<String> = tagged.union(&skipped).cloned().collect();
        let input: BTreeSet<String> = labels.keys().map(|k| (*k).to_owned()).collect();
        prop_assert_eq!(all, input);
        for (tag, value) in &out.tags {
            prop_assert_eq!(Some(value.as_str()), labels.get(&tag[prefix.len()..]).copied());
        }
    }

    /// `transform` is fed the same labels in two different orders (a
    /// shuffle of the generated order, and its reverse): the count cap must
    /// keep the same keys both times.
    #[test]
    fn output_is_independent_of_input_order(pairs in label_sets(), p in 0usize..7, seed in any::<u64>()) {
        let pairs = unique(pairs);
        let mut shuffled: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        // Deterministic Fisher-Yates with a tiny LCG: proptest shrinks the seed.
        let mut state = seed;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (state >> 33) as usize % (i + 1));
        }
        let reversed: Vec<(&str, &str)> = shuffled.iter().rev().copied().collect();
        let profile = &PROFILES[p];
        prop_assert_eq!(
            transform(shuffled.iter().copied(), profile),
            transform(reversed.iter().copied(), profile)
        );
        // And both equal the sorted order's result.
        prop_assert_eq!(transform(shuffled, profile), transform(as_map(&pairs), profile));
    }

    /// Tags and skip reasons are exactly what each profile's documented
    /// rules say: checked against the oracle, never with the code's own
    /// character classes.
    #[test]
    fn result_matches_the_documented_rules(pairs in label_sets(), p in 0usize..7) {
        let profile = &PROFILES[p];
        let rules = rules(ORACLE[p]);
        let labels = as_map(&pairs);
        let out = transform(labels.clone(), profile);
        let (tags, skips) = oracle(&rules, &labels);
        let got_tags: BTreeMap<String, String> =
            out.tags.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        let got_skips: BTreeMap<String, &str> =
            out.skipped.iter().map(|s| (s.qualified_key.to_owned(), s.reason.code())).collect();
        prop_assert_eq!(got_tags, tags, "profile {}", profile.name);
        prop_assert_eq!(got_skips, skips, "profile {}", profile.name);
        prop_assert!(out.skipped.iter().all(|s| s.provider == profile.name));
    }
}

/// Each profile's skip reasons the generator must reach, and whether it
/// must produce tags: what the profile *can* produce, in [`ORACLE`] order.
const REACHABLE: [(&str, &[&str], bool); 7] = [
    ("aws", &ALL_REASONS, true),
    ("hetzner", &NO_RESERVED, true),
    ("openstack", &NO_RESERVED, true),
    ("generic", &NO_RESERVED, true),
    ("azure", &ALL_REASONS, true),
    // No tag can ever propagate, so no cap is ever reached; nothing is
    // reserved; the length ceilings are checked before the characters.
    (
        "gcp-labels",
        &["key-character-class", "key-too-long", "value-too-long"],
        false,
    ),
    ("aws-upjet", &ALL_REASONS, true),
];
const ALL_REASONS: [&str; 5] = [
    "count-cap",
    "key-character-class",
    "key-too-long",
    "reserved-prefix",
    "value-too-long",
];
const NO_RESERVED: [&str; 4] = [
    "count-cap",
    "key-character-class",
    "key-too-long",
    "value-too-long",
];

#[test]
fn the_generators_reach_every_outcome_on_every_profile() {
    // Guards the properties above against a generator that never produces
    // a tag, or a given skip, on some profile: they would then pass without
    // testing it. Drawn from a fixed seed as many cases as the properties
    // run, so an outcome the generator reaches only rarely fails here too.
    let strategy = label_sets();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut reasons: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); PROFILES.len()];
    let mut tagged = vec![false; PROFILES.len()];
    for _ in 0..256 {
        let pairs = strategy.new_tree(&mut runner).unwrap().current();
        let labels = as_map(&pairs);
        for (p, profile) in PROFILES.iter().enumerate() {
            let out = transform(labels.clone(), profile);
            reasons[p].extend(out.skipped.iter().map(|s| s.reason.code()));
            tagged[p] |= !out.tags.is_empty();
        }
    }
    for (p, (name, expected, tags)) in REACHABLE.into_iter().enumerate() {
        assert_eq!(name, ORACLE[p]);
        let expected: BTreeSet<&str> = expected.iter().copied().collect();
        assert_eq!(reasons[p], expected, "skip reasons reached on {name}");
        assert_eq!(tagged[p], tags, "tags produced on {name}");
    }
    // The oracle agrees that GCP labels take nothing, rather than vacuously.
    let labels = BTreeMap::from([("acme:owner", "payments"), ("team_x", "1")]);
    assert!(oracle(&rules("gcp-labels"), &labels).0.is_empty());
}

// ------------------------------------------ built-ins restated as user profiles
//
// docs/settings.md ("User-defined tag profiles"): a profile is exactly what a built-in
// is, and the table of built-ins is them written as user profiles. Written
// out here from that table, not from profile.rs.

/// The table's rows as `cloudTags.profiles` entries, with the
/// built-in each restates; `azure` by the earlier ready-made profile, which
/// states the built-in's rules. `generic` cannot be restated under its own
/// name (it is the fallback's), so it is restated for provider `other`. (The
/// built-in `gcp` cannot be restated: a user profile's default prefix is
/// `plexsphere:`, and one that sets `plexsphere-` has a prefix of its own.)
fn restated() -> [(&'static TagProfile, Value); 5] {
    let strict = json!({"sets": ["letters", "digits"], "extra": "-_.:/"});
    [
        (
            &AWS,
            json!({"name": "aws", "providers": ["aws"], "keyMax": 128, "valueMax": 256,
                   "unit": "runes", "cap": 50,
                   "keyCharacters": {"sets": ["letters", "digits"], "extra": " +-=._:/@"},
                   "reservedPrefixes": [{"prefix": "aws:", "ignoreCase": true}]}),
        ),
        (
            &HETZNER,
            json!({"name": "hetzner", "providers": ["hetzner"], "keyMax": 63, "valueMax": 63,
                   "unit": "runes", "cap": 64, "keyCharacters": strict}),
        ),
        (
            &OPENSTACK,
            json!({"name": "openstack", "providers": ["openstack"], "keyMax": 255,
                   "valueMax": 255, "unit": "bytes", "cap": 50,
                   "keyCharacters": {"sets": ["non-control"]}}),
        ),
        (&AZURE, (ready_profiles::EARLIER[0].1)()),
        (
            &GENERIC,
            json!({"name": "generic-restated", "providers": ["other"], "keyMax": 63,
                   "valueMax": 255, "unit": "runes", "cap": 32, "keyCharacters": strict}),
        ),
    ]
}

fn settings_with(propagating: &[&str], profiles: &[&Value]) -> Settings {
    let document = json!({"cloudTags": {"propagatingLabels": propagating, "profiles": profiles}});
    Settings::from_json(document.to_string().as_bytes()).unwrap()
}

#[test]
fn a_restated_built_in_is_the_same_profile() {
    for (built_in, entry) in restated() {
        let settings = settings_with(&[], &[&entry]);
        let provider = entry["providers"][0].as_str().unwrap();
        let (profile, origin) = settings
            .cloud_tags()
            .unwrap()
            .profiles
            .resolve(Some(provider));
        assert_eq!(origin, Origin::UserDefined { index: 0 }, "{provider}");
        // Every field, character class included; only generic's name and
        // providers differ, because it had to be restated under another.
        // What the provider's API refuses beyond the profile is the
        // built-in's own data: a profile of one's own is the fix its
        // caution names, so it carries none.
        let expected = TagProfile {
            name: profile.name.clone(),
            providers: profile.providers.clone(),
            provider_refuses: None,
            ..built_in.clone()
        };
        assert_eq!(profile, &expected, "{provider}");
        if built_in.name != GENERIC.name {
            assert_eq!(
                (&profile.name, &profile.providers),
                (&built_in.name, &built_in.providers)
            );
        }
    }
}

/// A Crossplane v2 XR created with `spec.crossplane` in its manifest: a
/// composite resource from its CREATE on.
fn xr(provider: &str, labels: &[(String, String)]) -> AdmissionRequest {
    let labels: serde_json::Map<String, Value> =
        labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    AdmissionRequest::for_object(
        "CREATE",
        json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
               "metadata": {"name": "db", "namespace": "team", "labels": labels},
               "spec": {"crossplane": {}, "parameters": {"provider": provider},
                        "cloudTags": {"CostCenter": "42", "plexsphere:old/key": "x"}}}),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The whole decision (tags, skip records, warnings) is the same under
    /// a restated built-in as under the built-in itself, generic aside: its
    /// restatement reports its own name.
    #[test]
    fn a_restated_built_in_decides_exactly_like_the_built_in(pairs in label_sets(), b in 0usize..4) {
        let (built_in, entry) = &restated()[b];
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        let request = xr(&built_in.providers[0].to_uppercase(), &pairs);
        let lookup = MapLookup::default();
        let restated = evaluate(&request, &settings_with(&keys, &[entry]), &lookup);
        let built = evaluate(&request, &settings_with(&keys, &[]), &lookup);
        prop_assert_eq!(restated, built, "{}", built_in.name);
    }
}
