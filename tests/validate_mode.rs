//! Validate mode: a rejection that lists exactly the changes mutate mode
//! would make; compliant objects are accepted; skips stay warnings.

use metadata_propagation_policy::evaluate::evaluate;
use metadata_propagation_policy::lookup::MapLookup;
use metadata_propagation_policy::outcome::{Outcome, Verdict};
use metadata_propagation_policy::request::AdmissionRequest;
use metadata_propagation_policy::settings::Settings;
use serde_json::{Value, json};

fn request(object: &Value) -> AdmissionRequest {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap();
    serde_json::from_value(json!({
        "uid": "u", "operation": "UPDATE", "namespace": "default",
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "object": object,
    }))
    .unwrap()
}

/// (validate-mode outcome, object after mutate mode).
fn both_modes(object: &Value, lookup: &MapLookup, settings: &str) -> (Outcome, Value) {
    let mutate = Settings::from_json(settings.as_bytes()).unwrap();
    let mut validate_json: Value = serde_json::from_str(settings).unwrap();
    validate_json["mode"] = json!("validate");
    let validate = Settings::from_json(validate_json.to_string().as_bytes()).unwrap();

    let req = request(object);
    let mutated = evaluate(&req, &mutate, lookup);
    let mut after = object.clone();
    if let Verdict::Allow(plan) = &mutated.verdict {
        plan.apply(&mut after);
    }
    let checked = evaluate(&req, &validate, lookup);
    // The invariants: validate rejects exactly when mutate changes, and
    // validate accepts what mutate produced.
    assert_eq!(
        matches!(checked.verdict, Verdict::Reject { .. }),
        &after != object,
        "validate rejects iff mutate changes"
    );
    assert_eq!(checked.warnings, mutated.warnings, "skips stay warnings");
    let again = evaluate(&request(&after), &validate, lookup);
    assert!(
        matches!(again.verdict, Verdict::Allow(ref p) if p.is_empty()),
        "validate(mutate(x)) is accepted: {:?}",
        again.verdict
    );
    (checked, after)
}

fn message(outcome: &Outcome) -> &str {
    match &outcome.verdict {
        Verdict::Reject { message, .. } => message,
        Verdict::Allow(_) => panic!("expected a rejection"),
    }
}

fn fixture(path: &str) -> Value {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let parsed: Value = serde_json::from_str(&text).unwrap();
    if parsed.get("object").is_some() {
        parsed["object"].clone()
    } else {
        parsed
    }
}

fn settings(path: &str) -> String {
    fixture(path).to_string()
}

#[test]
fn xr_deviations_name_missing_differing_stale_and_invalid_tags() {
    let mut xr = fixture("test_data/xr/xnetwork_stale_update.json");
    // A user-supplied tag under the prefix that AWS reserves.
    xr["spec"]["cloudTags"]["plexsphere:aws:cost"] = json!("1");
    let (outcome, _) = both_modes(
        &xr,
        &MapLookup::new(),
        &settings("test_data/xr/settings_propagating.json"),
    );
    assert_eq!(
        message(&outcome),
        "the object deviates from the metadata propagation contract (validate mode): \
         metadata.annotations: remove \"cloud-tags.plexsphere.io/skipped\" (stale: no label was skipped); \
         spec.cloudTags: missing \"plexsphere:acme:checkout/owner\" (expected \"team-payments\"), \
         \"plexsphere:platform/env\" is \"staging\" (expected \"prod\"), \
         remove \"plexsphere:aws:cost\" (invalid for profile aws: reserved-prefix), \
         remove \"plexsphere:platform/retired\" (stale: no opted-in label produces it)"
    );
}

#[test]
fn xr_compliant_object_is_accepted_with_skip_warnings() {
    let xr = fixture("test_data/xr/examples/xdatabase_hetzner.json");
    let settings = settings("test_data/xr/examples/settings.json");
    let (_, mutated) = both_modes(&xr, &MapLookup::new(), &settings);
    let (outcome, _) = both_modes(&mutated, &MapLookup::new(), &settings);
    assert!(matches!(outcome.verdict, Verdict::Allow(ref p) if p.is_empty()));
    assert!(
        !outcome.warnings.is_empty(),
        "the example has a skipped label"
    );
}

#[test]
fn xr_empty_tag_map_must_be_absent() {
    let mut xr = fixture("test_data/xr/xnetwork_v1_aws.json");
    xr["spec"]["cloudTags"] = json!({});
    let (outcome, _) = both_modes(&xr, &MapLookup::new(), "{}");
    assert_eq!(
        message(&outcome),
        "the object deviates from the metadata propagation contract (validate mode): \
         spec.cloudTags: must be absent when empty"
    );
}
