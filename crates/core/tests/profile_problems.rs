//! Every problem of every user tag profile (`cloudTags.profiles`) at once,
//! as for the rest of the settings: every type error,
//! unknown field and missing field of every profile, each named by its
//! path, with what the checks find in the members that are valid, in the
//! one message `validate_settings` answers. A user with four mistakes in a
//! profile fixes them in one `kubectl apply`, not four.

use metadata_propagation_core::settings::{Settings, SettingsError};
use serde_json::{Value, json};

/// A valid profile with `edit` applied.
fn profile(edit: impl FnOnce(&mut Value)) -> Value {
    let mut profile = json!({"name": "acme", "providers": ["acme"], "keyMax": 63,
        "valueMax": 63, "unit": "runes", "cap": 10,
        "keyCharacters": {"sets": ["letters", "digits"], "extra": "-_.:/"}});
    edit(&mut profile);
    profile
}

/// The settings with `profiles`, refused: the error `validate_settings`
/// answers with.
fn refused(profiles: &[Value]) -> SettingsError {
    refused_text(&json!({"cloudTags": {"profiles": profiles}}).to_string())
}

fn refused_text(settings: &str) -> SettingsError {
    match Settings::from_json(settings.as_bytes()) {
        Ok(_) => panic!("{settings} is accepted"),
        Err(error) => error,
    }
}

fn lines(error: &SettingsError) -> Vec<String> {
    error.problems.iter().map(ToString::to_string).collect()
}

#[test]
fn four_mistakes_in_a_profile_are_four_problems_in_one_message() {
    let error = refused(&[profile(|p| {
        p["keyMax"] = json!("63");
        p["cap"] = json!("x");
        p["unit"] = json!("bits");
        p["providers"] = json!("aws");
    })]);
    // members in key order, as for the rest of the settings
    let expected = [
        "cloudTags.profiles[0].cap: invalid type: string \"x\", expected u64",
        "cloudTags.profiles[0].keyMax: invalid type: string \"63\", expected u64",
        "cloudTags.profiles[0].providers: invalid type: string \"aws\", expected a sequence",
        "cloudTags.profiles[0].unit: unknown variant `bits`, expected `runes` or `bytes`",
    ];
    assert_eq!(lines(&error), expected);
    assert_eq!(error.to_string(), expected.join("; "), "one message");
}

#[test]
fn two_profiles_with_two_mistakes_each_are_four_problems() {
    let first = profile(|p| {
        p["valueMax"] = json!(-1);
        p["keyCharacters"]["sets"] = json!(["alnum"]);
    });
    let second = profile(|p| {
        p["name"] = json!("other");
        p["providers"] = json!(["other"]);
        p["unit"] = json!("Runes");
        p["reservedPrefixes"] = json!([{"prefix": "x"}]);
    });
    assert_eq!(
        lines(&refused(&[first, second])),
        [
            "cloudTags.profiles[0].keyCharacters.sets[0]: unknown variant `alnum`, expected one of `letters`, `lowercase-letters`, `ascii-letters`, `ascii-lowercase-letters`, `digits`, `ascii-digits`, `non-control`, `printable`",
            "cloudTags.profiles[0].valueMax: invalid value: integer `-1`, expected u64",
            "cloudTags.profiles[1].reservedPrefixes[0]: missing field `ignoreCase`",
            "cloudTags.profiles[1].unit: unknown variant `Runes`, expected `runes` or `bytes`",
        ]
    );
}

#[test]
fn a_type_error_does_not_hide_what_the_checks_find_in_the_valid_members() {
    let error = refused(&[profile(|p| {
        p["keyMax"] = json!("63");
        p["cap"] = json!(5000);
        p["name"] = json!("gcp labels");
    })]);
    assert_eq!(
        lines(&error),
        [
            "cloudTags.profiles[0].keyMax: invalid type: string \"63\", expected u64",
            "cloudTags.profiles[0].name: \"gcp labels\" is not a profile name; use 1 to 63 ASCII letters, digits, \"-\", \"_\" or \".\", e.g. \"azure\"",
            "cloudTags.profiles[0].cap: 5000 is out of bounds; use a number from 1 to 1024",
        ]
    );
}

#[test]
fn a_profile_with_a_type_error_still_counts_in_the_checks_across_profiles() {
    // Its providers are valid: a later profile listing one of them is told.
    let first = profile(|p| p["cap"] = json!("10"));
    let second = profile(|p| {
        p["name"] = json!("other");
        p["providers"] = json!(["ACME"]);
    });
    assert_eq!(
        lines(&refused(&[first, second])),
        [
            "cloudTags.profiles[0].cap: invalid type: string \"10\", expected u64",
            "cloudTags.profiles[1].providers[0]: \"ACME\" is already listed in cloudTags.profiles[0].providers (ignoring case); a provider value selects one profile, remove one of them",
        ]
    );
}

#[test]
fn unknown_and_missing_members_are_all_named() {
    let error = refused(
        &[json!({"name": "acme", "providers": ["acme"], "keymax": 63,
        "cpa": 10})],
    );
    let expected = "expected one of `name`, `providers`, `keyMax`, `valueMax`, `unit`, `cap`, \
                    `keyCharacters`, `valueCharacters`, `reservedPrefixes`, `prefix`";
    assert_eq!(
        lines(&error),
        [
            format!("cloudTags.profiles[0].cpa: unknown field `cpa`, {expected}"),
            format!("cloudTags.profiles[0].keymax: unknown field `keymax`, {expected}"),
            "cloudTags.profiles[0]: missing field `keyMax`".to_owned(),
            "cloudTags.profiles[0]: missing field `valueMax`".to_owned(),
            "cloudTags.profiles[0]: missing field `unit`".to_owned(),
            "cloudTags.profiles[0]: missing field `cap`".to_owned(),
            "cloudTags.profiles[0]: missing field `keyCharacters`".to_owned(),
        ]
    );
}

#[test]
fn profile_problems_come_with_the_rest_of_the_settings_problems() {
    let settings = json!({"mode": "audit", "cloudTags": {
        "propagatingLabels": ["platform/origin"],
        "profiles": ["azure", profile(|p| {
            p["keyMax"] = json!(true);
            p["valueCharacters"] = json!({"sets": "letters"});
        }), {"name": "b"}]}});
    assert_eq!(
        lines(&refused_text(&settings.to_string())),
        [
            "mode: unknown variant `audit`, expected `mutate` or `validate`",
            "cloudTags.propagatingLabels[0]: \"platform/origin\" is a seeded platform label and can never be opted into cloud-tag propagation; remove it from the list",
            "cloudTags.profiles[0]: invalid type: string \"azure\", expected a profile object such as {\"name\": \"azure\", \"providers\": [\"azure\"], …}",
            "cloudTags.profiles[1].keyMax: invalid type: boolean `true`, expected u64",
            "cloudTags.profiles[1].valueCharacters.sets: invalid type: string \"letters\", expected a sequence",
            "cloudTags.profiles[2]: missing field `providers`",
            "cloudTags.profiles[2]: missing field `keyMax`",
            "cloudTags.profiles[2]: missing field `valueMax`",
            "cloudTags.profiles[2]: missing field `unit`",
            "cloudTags.profiles[2]: missing field `cap`",
            "cloudTags.profiles[2]: missing field `keyCharacters`",
        ]
    );
}

#[test]
fn an_evaluation_reads_the_profiles_when_it_needs_them_and_finds_the_same_problems() {
    let settings = json!({"cloudTags": {"profiles": [profile(|p| {
        p["keyMax"] = json!("63");
        p["unit"] = json!("bits");
    })]}})
    .to_string();
    let parsed = Settings::parse(settings.as_bytes()).expect("profiles are read lazily");
    assert_eq!(
        parsed.cloud_tags().unwrap_err(),
        refused_text(&settings),
        "what an XR's evaluation says is what validate_settings said"
    );
}

/// A key written twice in a profile is refused, at any depth, naming it:
/// no reading of the document picks one of the two values for the user
/// (the first value is still checked, as every member is).
#[test]
fn a_key_written_twice_in_a_profile_is_refused_naming_it() {
    let text = |cap: &str, sets: &str| {
        format!(
            r#"{{"cloudTags":{{"profiles":[{{"name":"acme","providers":["acme"],"keyMax":63,
                "valueMax":63,"unit":"runes",{cap},"keyCharacters":{{{sets}}}}}]}}}}"#
        )
    };
    assert_eq!(
        lines(&refused_text(&text(
            r#""cap":20,"cap":20"#,
            r#""sets":["digits"],"sets":["digits"]"#
        ))),
        [
            "cloudTags.profiles[0].cap: duplicate field `cap`",
            "cloudTags.profiles[0].keyCharacters: duplicate field `sets`",
        ]
    );
    assert_eq!(
        lines(&refused_text(&text(
            r#""cap":"x","cap":20"#,
            r#""sets":"digits","sets":["digits"]"#
        ))),
        [
            "cloudTags.profiles[0].cap: invalid type: string \"x\", expected u64",
            "cloudTags.profiles[0].cap: duplicate field `cap`",
            "cloudTags.profiles[0].keyCharacters.sets: invalid type: string \"digits\", expected a sequence",
        ]
    );
}

#[test]
fn a_profile_written_as_a_list_is_still_read_by_serde_alone() {
    // serde's derive reads a struct written as the list of its fields; a
    // list that is not one gets serde's one message, as before.
    let error = refused(&[json!(["acme", ["acme"], "63"])]);
    assert_eq!(
        lines(&error),
        ["cloudTags.profiles[0][2]: invalid type: string \"63\", expected u64"]
    );
}
