//! The ready-made tag profiles: AWS with room for upjet's default tags, read
//! from docs/cloud-tags.md itself, and the Azure and GCP-labels profiles the
//! page offered before Azure and GCP were built in, which settings written
//! then still list (support/ready_profiles.rs), on realistic Crossplane v2
//! XRs (test_data/xr, checked against the XRD in examples/crossplane by
//! scripts/check_schemas.py). Every expectation is written out from the
//! provider rules the docs cite.

use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};

use super::support::{self, crd_schema, read_repo_file, ready_profiles};

const SKIPPED: &str = "cloud-tags.plexsphere.io/skipped";

fn request(fixture: &str) -> AdmissionRequest {
    serde_json::from_str(&read_repo_file(&format!("test_data/xr/{fixture}"))).unwrap()
}

fn run(request: &AdmissionRequest, settings: &str) -> (Outcome, Value) {
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let outcome = evaluate(request, &settings, &MapLookup::default());
    let mut mutated = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
    }
    (outcome, mutated)
}

const OPTED_IN: &[&str] = &[
    "platform/env",
    "platform/team",
    "acme:cost-center",
    "acme:owner",
    "Microsoft:billing",
    "acme:ticket<id>",
];

fn all_ready() -> String {
    ready_profiles::settings(OPTED_IN, &["azure", "gcp-labels", "aws"])
}

#[test]
fn settings_fixture_is_the_readme_profiles() {
    // e2e-tests/xr.bats reads the fixture; its aws must say what the docs
    // say, its azure and gcp-labels what they said.
    let fixture: Value =
        serde_json::from_str(&read_repo_file("test_data/xr/settings_ready_profiles.json")).unwrap();
    assert_eq!(
        fixture,
        serde_json::from_str::<Value>(&all_ready()).unwrap()
    );
}

#[test]
fn azure_refuses_slash_reserved_prefixes_and_its_symbols() {
    let (outcome, xr) = run(&request("xdatabase_azure_profile.json"), &all_ready());
    assert_eq!(
        xr["spec"]["cloudTags"],
        json!({"plexsphere:acme:cost-center": "cc-4711", "plexsphere:acme:owner": "team-data"})
    );
    assert_eq!(
        xr["metadata"]["annotations"][SKIPPED],
        "[{\"qualifiedKey\":\"Microsoft:billing\",\"tagKey\":\"plexsphere:Microsoft:billing\",\"provider\":\"azure\",\"reason\":\"reserved-prefix\"},\
          {\"qualifiedKey\":\"acme:ticket<id>\",\"tagKey\":\"plexsphere:acme:ticket<id>\",\"provider\":\"azure\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/env\",\"tagKey\":\"plexsphere:platform/env\",\"provider\":\"azure\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/team\",\"tagKey\":\"plexsphere:platform/team\",\"provider\":\"azure\",\"reason\":\"key-character-class\"}]"
    );
    assert_eq!(outcome.warnings.len(), 4, "one warning per skip");
    assert_eq!(
        outcome.warnings[2],
        "cloud tag skipped: label \"platform/env\" did not become tag \"plexsphere:platform/env\" \
         on provider profile azure: key-character-class (the tag key contains '/' (U+002F))"
    );
    // The built-in azure profile states the same rules: without the
    // ready-made one, the same decision.
    let built_in = run(
        &request("xdatabase_azure_profile.json"),
        &ready_profiles::settings(OPTED_IN, &[]),
    );
    assert_eq!(built_in, (outcome, xr));
}

#[test]
fn azure_refuses_characters_that_are_not_printable() {
    // Azure's rule is "printable except < > % & \\ ? /": a line separator
    // and a soft hyphen are not printable, though neither is a control
    // character (the `non-control` set would admit both).
    let keys = [
        "acme:cost\u{2028}center",
        "acme:co\u{ad}op",
        "acme:équipe·日本",
    ];
    let mut request = request("xdatabase_azure_profile.json");
    request.object["metadata"]["annotations"]["cloud-tags.plexsphere.io/labels"] =
        json!(json!({keys[0]: "1", keys[1]: "2", keys[2]: "3"}).to_string());
    let (outcome, xr) = run(&request, &ready_profiles::settings(&keys, &["azure"]));
    assert_eq!(
        xr["spec"]["cloudTags"],
        json!({"plexsphere:acme:équipe·日本": "3"})
    );
    let details: Vec<&str> = outcome
        .warnings
        .iter()
        .map(|w| w.rsplit_once(": key-character-class ").unwrap().1)
        .collect();
    assert_eq!(
        details,
        [
            "(the tag key contains '\\u{2028}' (U+2028))",
            "(the tag key contains '\\u{ad}' (U+00AD))"
        ]
    );
}

#[test]
fn gcp_labels_give_one_summary_warning_and_complete_skip_records() {
    let request = request("xdatabase_gcp_labels_profile.json");
    let (outcome, xr) = run(&request, &all_ready());
    assert!(xr["spec"].get("cloudTags").is_none());
    assert_eq!(
        xr["metadata"]["annotations"][SKIPPED],
        "[{\"qualifiedKey\":\"acme:cost-center\",\"tagKey\":\"plexsphere:acme:cost-center\",\"provider\":\"gcp-labels\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"acme:owner\",\"tagKey\":\"plexsphere:acme:owner\",\"provider\":\"gcp-labels\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/env\",\"tagKey\":\"plexsphere:platform/env\",\"provider\":\"gcp-labels\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/team\",\"tagKey\":\"plexsphere:platform/team\",\"provider\":\"gcp-labels\",\"reason\":\"key-character-class\"}]"
    );
    assert_eq!(
        outcome.warnings,
        [
            "cloud tags skipped: no tag can ever propagate under provider profile gcp-labels: its key \
             characters (lowercase-letters, digits and \"_-\") refuse \":\" of the mandated prefix \
             \"plexsphere:\"; 4 opted-in label(s) skipped, each recorded in annotation \
             cloud-tags.plexsphere.io/skipped"
        ]
    );
    let settings = all_ready();
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let (_, explanation) = explain(&request, &settings, &MapLookup::default());
    let tags = support::cloud_tags(&explanation).unwrap();
    assert_eq!(
        (
            tags.profile.as_str(),
            tags.origin.as_str(),
            tags.why.as_str()
        ),
        (
            "gcp-labels",
            "user-defined",
            "provider \"gcp\" is listed in cloudTags.profiles[1].providers"
        )
    );
    assert_eq!(
        tags.no_tag_can_propagate.as_deref(),
        Some(
            "no tag can ever propagate under provider profile gcp-labels: its key characters \
             (lowercase-letters, digits and \"_-\") refuse \":\" of the mandated prefix \"plexsphere:\""
        )
    );
}

/// Without the ready-made gcp-labels profile, provider `gcp` selects the
/// built-in `gcp` profile: GCP's label rules, under its own default prefix
/// `plexsphere-` (GCP keys refuse the `:` of `plexsphere:`). Qualified keys
/// still hold `/` or `:`, which `cloudTags.tagKeys` renames.
#[test]
fn gcp_without_the_profile_gets_the_built_in_gcp_profile() {
    let request = request("xdatabase_gcp_labels_profile.json");
    let settings = ready_profiles::settings(OPTED_IN, &["azure"]);
    let (outcome, xr) = run(&request, &settings);
    assert!(xr["spec"].get("cloudTags").is_none());
    assert_eq!(
        xr["metadata"]["annotations"][SKIPPED],
        "[{\"qualifiedKey\":\"acme:cost-center\",\"tagKey\":\"plexsphere-acme:cost-center\",\"provider\":\"gcp\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"acme:owner\",\"tagKey\":\"plexsphere-acme:owner\",\"provider\":\"gcp\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/env\",\"tagKey\":\"plexsphere-platform/env\",\"provider\":\"gcp\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/team\",\"tagKey\":\"plexsphere-platform/team\",\"provider\":\"gcp\",\"reason\":\"key-character-class\"}]"
    );
    assert_eq!(
        outcome.warnings.len(),
        4,
        "one warning per skip, no fallback"
    );
    assert_eq!(
        outcome.warnings[2],
        "cloud tag skipped: label \"platform/env\" did not become tag \"plexsphere-platform/env\" \
         on provider profile gcp: key-character-class (the tag key contains '/' (U+002F))"
    );
    let parsed = Settings::from_json(settings.as_bytes()).unwrap();
    let tags = support::cloud_tags(&explain(&request, &parsed, &MapLookup::default()).1).unwrap();
    assert_eq!(
        (
            tags.profile.as_str(),
            tags.origin.as_str(),
            tags.why.as_str()
        ),
        (
            "gcp",
            "built-in",
            "provider \"gcp\" selects the built-in profile gcp"
        )
    );
    assert_eq!(tags.no_tag_can_propagate, None);

    // Tag-key bodies without '/' or ':' become GCP labels.
    let mut named: Value = serde_json::from_str(&settings).unwrap();
    named["cloudTags"]["tagKeys"] = json!({"platform/env": "env", "acme:owner": "owner"});
    let (outcome, xr) = run(&request, &named.to_string());
    assert_eq!(
        xr["spec"]["cloudTags"],
        json!({"plexsphere-env": "staging", "plexsphere-owner": "team-data"})
    );
    assert_eq!(
        outcome.warnings.len(),
        2,
        "acme:cost-center and platform/team"
    );
}

/// A provider no profile lists falls back to the strict generic profile,
/// and the first warning says so (an opted-in label is in the label set).
#[test]
fn an_unlisted_provider_falls_back_to_generic_and_explains_why() {
    let mut request = request("xdatabase_gcp_labels_profile.json");
    request.object["spec"]["parameters"]["provider"] = json!("ibm");
    let settings = ready_profiles::settings(OPTED_IN, &["azure"]);
    let (outcome, xr) = run(&request, &settings);
    assert_eq!(
        xr["spec"]["cloudTags"],
        json!({"plexsphere:acme:cost-center": "cc-4711", "plexsphere:acme:owner": "team-data",
               "plexsphere:platform/env": "staging", "plexsphere:platform/team": "data"}),
        "generic emits keys the cloud may reject: why the fallback warns"
    );
    assert_eq!(
        outcome.warnings,
        [
            "cloud tags: provider \"ibm\" at spec.parameters.provider selects no tag profile, so \
             the strict generic profile applies; list the provider in a profile of \
             cloudTags.profiles"
        ]
    );
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let tags = support::cloud_tags(&explain(&request, &settings, &MapLookup::default()).1).unwrap();
    assert_eq!(
        (
            tags.profile.as_str(),
            tags.origin.as_str(),
            tags.why.as_str()
        ),
        (
            "generic",
            "fallback",
            "provider \"ibm\" is listed by no profile, so the fallback generic applies"
        )
    );
    assert_eq!(tags.no_tag_can_propagate, None);
}

/// The Azure fixture switched to AWS, with `n` more opted-in labels
/// `cost/item-NN`.
fn aws_xr_with(n: usize) -> (AdmissionRequest, Vec<String>) {
    let mut request = request("xdatabase_azure_profile.json");
    let object = &mut request.object;
    object["spec"]["parameters"]["provider"] = json!("aws");
    object["spec"]["parameters"]["region"] = json!("eu-central-1");
    let crossplane = &mut object["spec"]["crossplane"];
    crossplane["compositionRef"]["name"] = json!("xdatabase-aws");
    crossplane["compositionRevisionRef"]["name"] = json!("xdatabase-aws-5c976ad");
    crossplane["resourceRefs"][0] = json!({"apiVersion": "rds.aws.m.upbound.io/v1beta1", "kind": "Instance", "name": "payments-db-7d9fk"});
    let mut opted: Vec<String> = OPTED_IN.iter().map(|k| (*k).to_owned()).collect();
    for i in 0..n {
        let key = format!("cost/item-{i:02}");
        object["metadata"]["labels"][&key] = json!(format!("v{i}"));
        opted.push(key);
    }
    (request, opted)
}

#[test]
fn aws_ready_profile_leaves_room_for_upjets_three_tags() {
    // 6 fixture labels, of which `acme:ticket<id>` is refused ('<'), plus 43:
    // 48 valid, one over the cap of 47. The highest key in byte order goes.
    let (request, opted) = aws_xr_with(43);
    let opted: Vec<&str> = opted.iter().map(String::as_str).collect();
    let (outcome, xr) = run(&request, &ready_profiles::settings(&opted, &["aws"]));
    let tags = xr["spec"]["cloudTags"].as_object().unwrap();
    assert_eq!(tags.len(), 47);
    assert!(
        tags.contains_key("plexsphere:Microsoft:billing"),
        "not reserved on AWS"
    );
    assert!(!tags.contains_key("plexsphere:platform/team"));
    assert_eq!(
        xr["metadata"]["annotations"][SKIPPED],
        "[{\"qualifiedKey\":\"acme:ticket<id>\",\"tagKey\":\"plexsphere:acme:ticket<id>\",\"provider\":\"aws\",\"reason\":\"key-character-class\"},\
          {\"qualifiedKey\":\"platform/team\",\"tagKey\":\"plexsphere:platform/team\",\"provider\":\"aws\",\"reason\":\"count-cap\"}]"
    );
    assert_eq!(outcome.warnings.len(), 2);
    assert!(
        outcome.warnings[1]
            .ends_with("count-cap (47 tags with lower-sorting keys already reached the cap of 47)")
    );
    // The built-in aws profile (cap 50) would have kept all 48.
    let (_, builtin) = run(&request, &ready_profiles::settings(&opted, &[]));
    assert_eq!(builtin["spec"]["cloudTags"].as_object().unwrap().len(), 48);
}

#[test]
fn every_ready_profile_output_is_a_valid_xr() {
    let (aws, opted) = aws_xr_with(43);
    let opted: Vec<&str> = opted.iter().map(String::as_str).collect();
    for (profile, request, settings) in [
        (
            "azure",
            request("xdatabase_azure_profile.json"),
            all_ready(),
        ),
        (
            "gcp-labels",
            request("xdatabase_gcp_labels_profile.json"),
            all_ready(),
        ),
        ("aws", aws, ready_profiles::settings(&opted, &["aws"])),
    ] {
        // check_output accepts any output of an invalid input: the inputs
        // must be objects a cluster would store for this to prove anything.
        assert_eq!(
            crd_schema::failures(&request.object),
            Some(Vec::new()),
            "the {profile} input"
        );
        let (_, mutated) = run(&request, &settings);
        crd_schema::check_output(&request.object, &mutated).unwrap();
    }
}
