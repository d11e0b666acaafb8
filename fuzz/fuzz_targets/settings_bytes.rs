//! The settings document, two ways: arbitrary bytes, and (to reach
//! `cloudTags.profiles`, which random bytes almost never spell) a settings
//! document built from arbitrary tag profiles, with the arbitrary labels'
//! keys opted in. Either way `validate_settings` must answer
//! `{"valid": bool, …}` and never panic, and under accepted settings the
//! profile a provider selects must then transform the labels without
//! panicking, every label ending as one tag or one skip under that profile,
//! under the prefix in force in the contract's order, and none when the
//! profile can never admit that prefix.
//!
//! The labels reach the transform only through the settings, as they reach
//! it at admission: their keys are the document's `propagatingLabels`, so
//! a key the settings refuse (an empty one) ends the case with the document
//! refused. An empty key reaching the transform directly gave a tag key of
//! the prefix alone, which "the prefix blocks every tag" rightly never
//! counts on (fuzz/regressions/settings_bytes/crash-c920…).
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use metadata_propagation_core::invariants::fuzz_oracles::check_profile_transform;
use metadata_propagation_core::settings::Settings;
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Debug, Arbitrary)]
enum Input<'a> {
    Bytes(&'a [u8]),
    Profiles {
        profiles: Vec<Profile>,
        provider: String,
        labels: BTreeMap<String, String>,
        /// `cloudTags.prefix`; `None`: the default.
        prefix: Option<String>,
    },
}

#[derive(Debug, Arbitrary)]
struct Profile {
    name: String,
    providers: Vec<String>,
    key_max: u64,
    value_max: u64,
    bytes: bool,
    cap: u64,
    /// Indexes into SETS (out of range: an unknown set name).
    sets: Vec<u8>,
    extra: String,
    except: String,
    reserved: Vec<(String, bool)>,
    /// The profile's own `prefix`.
    prefix: Option<String>,
}

const SETS: [&str; 8] = [
    "letters",
    "lowercase-letters",
    "ascii-letters",
    "ascii-lowercase-letters",
    "digits",
    "ascii-digits",
    "non-control",
    "printable",
];

fn profile_json(p: &Profile) -> serde_json::Value {
    let sets: Vec<&str> = p
        .sets
        .iter()
        .map(|&i| SETS.get(usize::from(i)).copied().unwrap_or("alnum"))
        .collect();
    let reserved: Vec<_> = p
        .reserved
        .iter()
        .map(|(prefix, ignore_case)| json!({"prefix": prefix, "ignoreCase": ignore_case}))
        .collect();
    let mut profile = json!({
        "name": p.name, "providers": p.providers,
        "keyMax": p.key_max % 5000, "valueMax": p.value_max % 70000,
        "unit": if p.bytes { "bytes" } else { "runes" }, "cap": p.cap % 1100,
        "keyCharacters": {"sets": sets, "extra": p.extra, "except": p.except},
        "reservedPrefixes": reserved,
    });
    if let Some(prefix) = &p.prefix {
        profile["prefix"] = json!(prefix);
    }
    profile
}

fn answers_json(document: &[u8]) -> bool {
    let response = metadata_propagation_core::wire::validate_settings(document);
    let decoded: serde_json::Value =
        serde_json::from_slice(&response).expect("validate_settings always answers JSON");
    decoded["valid"].as_bool().expect("valid is a boolean")
}

fuzz_target!(|input: Input<'_>| {
    let (profiles, provider, labels, prefix) = match input {
        Input::Bytes(data) => {
            answers_json(data);
            return;
        }
        Input::Profiles {
            profiles,
            provider,
            labels,
            prefix,
        } => (profiles, provider, labels, prefix),
    };
    let profiles: Vec<_> = profiles.iter().map(profile_json).collect();
    let opted_in: Vec<&String> = labels.keys().collect();
    let mut document = json!({"cloudTags": {"profiles": profiles, "propagatingLabels": opted_in}});
    if let Some(prefix) = prefix {
        document["cloudTags"]["prefix"] = json!(prefix);
    }
    let document = document.to_string();
    let valid = answers_json(document.as_bytes());
    let settings = Settings::from_json(document.as_bytes());
    assert_eq!(
        valid,
        settings.is_ok(),
        "validate_settings and from_json agree"
    );
    let Ok(settings) = settings else { return };
    check_profile_transform(&settings, &provider, &labels);
});
