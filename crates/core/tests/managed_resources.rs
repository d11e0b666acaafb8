//! Cloud tags on Crossplane managed resources (docs/managed-resources.md),
//! through `evaluate`: every rule of the contract on MRs as Crossplane
//! composes them (test_data/managed-resources, checked against the
//! providers' CRDs by `make check-schemas`), with their composite resource
//! answered by a look-up.

use super::support;

use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::invariants::fuzz_oracles::check_allowed;
use metadata_propagation_core::lookup::{LookupError, MapLookup, ObjectRef};
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use rstest::rstest;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const DATA: &str = "test_data/managed-resources";
const SKIPPED: &str = "cloud-tags.plexsphere.io/skipped";
const LABELS: &str =
    r#""propagatingLabels": ["platform/env", "team", "aws:billing", "acme:cost/center"]"#;

fn settings(families: &str) -> Settings {
    let json =
        format!(r#"{{"cloudTags": {{{LABELS}, "managedResources": {{"families": {families}}}}}}}"#);
    Settings::from_json(json.as_bytes()).unwrap()
}

fn aws() -> Settings {
    settings(r#"["aws", "azure", "gcp"]"#)
}

fn object(name: &str) -> Value {
    let file = format!("{DATA}/{name}.json");
    serde_json::from_str(&support::read_repo_file(&file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The XRs the MRs name.
fn xrs() -> MapLookup {
    MapLookup::default()
        .with_object(object("xnetwork"))
        .with_object(object("network-v2"))
}

fn request(operation: &str, object: Value, old: Option<Value>) -> AdmissionRequest {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.split_once('/').unwrap();
    let namespace = object["metadata"]["namespace"].clone();
    serde_json::from_value(json!({
        "uid": "u", "operation": operation,
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "namespace": namespace.as_str().unwrap_or_default(),
        "object": object, "oldObject": old,
    }))
    .unwrap()
}

/// The outcome and the object as its plan leaves it, checked against the
/// CRD when one is vendored for the tests.
fn run(request: &AdmissionRequest, settings: &Settings, lookup: &MapLookup) -> (Outcome, Value) {
    let outcome = evaluate(request, settings, lookup);
    let mut mutated = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
    }
    if let Err(e) = support::crd_schema::check_output(&request.object, &mutated) {
        panic!("{e}");
    }
    (outcome, mutated)
}

fn created(name: &str) -> (Outcome, Value, MapLookup) {
    let lookup = xrs();
    let (outcome, mr) = run(&request("CREATE", object(name), None), &aws(), &lookup);
    (outcome, mr, lookup)
}

fn xnetwork() -> ObjectRef {
    ObjectRef {
        api_version: "platform.example.org/v1alpha1".into(),
        kind: "XNetwork".into(),
        name: "checkout-net".into(),
        namespace: None,
    }
}

fn unchanged(outcome: &Outcome) -> bool {
    matches!(&outcome.verdict, Verdict::Allow(plan) if plan.is_empty())
}

const AWS_SKIP: &str = "cloud tag skipped: label \"aws:billing\" did not become tag \
    \"plexsphere:aws:billing\" on provider profile aws: reserved-prefix (the key starts with the \
    reserved prefix \"aws:\")";

// ---------------------------------------------------------------------------
// the XR's labels become the MR's tags, in each family and scope
// ---------------------------------------------------------------------------

#[test]
fn a_v1_vpc_gets_its_xrs_tags_and_keeps_the_users() {
    let (outcome, vpc, lookup) = created("vpc-v1");
    // The XR's label set (its labels under its label-set annotation),
    // never the MR's own `platform/env: dev`; the stale prefixed entry goes.
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"],
        json!({"Name": "checkout", "plexsphere:platform/env": "prod", "plexsphere:team": "checkout",
               "plexsphere:acme:cost/center": "cc-4711"})
    );
    assert_eq!(
        vpc["metadata"]["annotations"][SKIPPED],
        r#"[{"qualifiedKey":"aws:billing","tagKey":"plexsphere:aws:billing","provider":"aws","reason":"reserved-prefix"}]"#
    );
    assert_eq!(
        outcome.warnings,
        [
            AWS_SKIP,
            "cloud tag removed from spec.forProvider.tags: \"plexsphere:stale\" (the policy owns \
             keys under prefix \"plexsphere:\" and no opted-in label gives this one)"
        ]
    );
    // The controller owner, once, masked to its label set.
    assert_eq!(lookup.requests(), [xnetwork()]);
    assert_eq!(
        lookup.field_masks(),
        [BTreeSet::from([
            "metadata.annotations".to_owned(),
            "metadata.labels".to_owned()
        ])]
    );
    // Nothing else of the MR changed.
    let mut rest = object("vpc-v1");
    rest["spec"]["forProvider"]["tags"] = vpc["spec"]["forProvider"]["tags"].clone();
    rest["metadata"]["annotations"][SKIPPED] = vpc["metadata"]["annotations"][SKIPPED].clone();
    assert_eq!(vpc, rest);
}

#[test]
fn a_namespaced_v2_vpc_reads_its_xr_in_its_namespace_and_keeps_the_providers_tags() {
    let (outcome, vpc, lookup) = created("vpc-v2");
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"],
        json!({"crossplane-kind": "vpc.ec2.aws.m.upbound.io", "crossplane-name": "checkout-net-x8k2w",
               "crossplane-providerconfig": "default",
               "plexsphere:platform/env": "prod", "plexsphere:team": "checkout"})
    );
    assert_eq!(outcome.warnings, Vec::<String>::new());
    let network = lookup.requests().pop().unwrap();
    assert_eq!(
        network.to_string(),
        "Network team-checkout/checkout-net (network.example.org/v1alpha1)"
    );
}

#[test]
fn gcp_and_azure_take_their_profiles_and_fields() {
    // GKE's Cluster keeps its labels in resourceLabels; GCP's profile
    // prefixes with `plexsphere-` and refuses `:` and `/` in keys.
    let (_, gke, _) = created("gke-cluster");
    assert_eq!(
        gke["spec"]["forProvider"]["resourceLabels"],
        json!({"plexsphere-team": "checkout"})
    );
    let skipped: Vec<Value> =
        serde_json::from_str(gke["metadata"]["annotations"][SKIPPED].as_str().unwrap()).unwrap();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    // Azure refuses `/` in tag keys.
    let (outcome, group, _) = created("resource-group");
    assert_eq!(
        group["spec"]["forProvider"]["tags"],
        json!({"plexsphere:team": "checkout", "plexsphere:aws:billing": "x"})
    );
    assert_eq!(outcome.warnings.len(), 2, "{:?}", outcome.warnings);
    assert!(outcome.warnings[0].contains("on provider profile azure"));
}

#[test]
fn an_update_recomputes_from_the_xrs_current_labels() {
    let (_, tagged, _) = created("vpc-v2");
    let mut xr = object("network-v2");
    xr["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("team");
    xr["metadata"]["labels"]["platform/env"] = json!("staging");
    let lookup = MapLookup::default().with_object(xr);
    // Crossplane's next compose applies the MR without the policy's tags
    // (it never owned them); the stored object still has them.
    let (outcome, vpc) = run(
        &request("UPDATE", tagged.clone(), Some(tagged)),
        &aws(),
        &lookup,
    );
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"]["plexsphere:platform/env"],
        "staging"
    );
    assert!(
        vpc["spec"]["forProvider"]["tags"]
            .get("plexsphere:team")
            .is_none()
    );
    assert_eq!(
        outcome.warnings,
        [
            "cloud tag removed from spec.forProvider.tags: \"plexsphere:team\" (the policy owns keys \
          under prefix \"plexsphere:\" and no opted-in label gives this one)"
        ]
    );
}

#[test]
fn settings_rows_override_the_catalogue() {
    let json = format!(
        r#"{{"cloudTags": {{{LABELS}, "managedResources": {{"families": ["gcp"], "kinds": [
            {{"group": "container.gcp.upbound.io", "kind": "Cluster", "field": "spec.forProvider.resourceLabels"}}]}}}}}}"#
    );
    let settings = Settings::from_json(json.as_bytes()).unwrap();
    let (_, gke) = run(
        &request("CREATE", object("gke-cluster"), None),
        &settings,
        &xrs(),
    );
    assert_eq!(
        gke["spec"]["forProvider"]["resourceLabels"],
        json!({"plexsphere-team": "checkout"})
    );
    // A kind of the family the catalogue lacks: a row makes it tagged.
    let mut odd = object("gke-cluster");
    odd["kind"] = json!("NodePool");
    let (outcome, pool) = run(&request("CREATE", odd.clone(), None), &settings, &xrs());
    assert!(
        unchanged(&outcome) && outcome.warnings.is_empty(),
        "{outcome:?}"
    );
    assert_eq!(pool, odd);
}

// ---------------------------------------------------------------------------
// the cap: the user's entries and AWS's provider keys take room
// ---------------------------------------------------------------------------

#[test]
fn awss_provider_keys_take_room_from_create_on() {
    let profile = r#""profiles": [{"name": "tight", "providers": ["aws"], "cap": 5,
        "keyMax": 128, "valueMax": 256, "unit": "runes",
        "keyCharacters": {"sets": ["non-control"]}}]"#;
    let json = format!(
        r#"{{"cloudTags": {{{LABELS}, {profile}, "managedResources": {{"families": ["aws"]}}}}}}"#
    );
    let settings = Settings::from_json(json.as_bytes()).unwrap();
    // `Name` and the three provider keys, absent yet, leave one tag.
    let (_, vpc) = run(
        &request("CREATE", object("vpc-v1"), None),
        &settings,
        &xrs(),
    );
    let tags = vpc["spec"]["forProvider"]["tags"].as_object().unwrap();
    assert_eq!(tags.len(), 2, "{tags:?}");
    // With the provider's keys present, the same.
    let (_, vpc) = run(
        &request("CREATE", object("vpc-v2"), None),
        &settings,
        &xrs(),
    );
    let tags = vpc["spec"]["forProvider"]["tags"].as_object().unwrap();
    assert_eq!(tags.len(), 5, "{tags:?}");
}

// ---------------------------------------------------------------------------
// left alone: no look-up, no warning
// ---------------------------------------------------------------------------

#[rstest]
#[case::no_composite_label(|mr: &mut Value| { mr["metadata"]["labels"].as_object_mut().unwrap().remove("crossplane.io/composite"); })]
#[case::no_controller(|mr: &mut Value| { mr["metadata"]["ownerReferences"][0]["controller"] = json!(false); })]
#[case::being_deleted(|mr: &mut Value| { mr["metadata"]["deletionTimestamp"] = json!("2026-11-26T10:00:00Z"); })]
#[case::observe_only(|mr: &mut Value| { mr["spec"]["managementPolicies"] = json!(["Observe"]); })]
#[case::adopted(|mr: &mut Value| { mr["metadata"]["labels"]["platform/origin"] = json!("adopted"); })]
#[case::malformed_field_of_an_uncomposed_mr(|mr: &mut Value| {
    mr["metadata"]["labels"].as_object_mut().unwrap().remove("crossplane.io/composite");
    mr["spec"]["forProvider"]["tags"] = json!(["not", "a", "map"]);
})]
fn left_alone(#[case] change: fn(&mut Value)) {
    let mut mr = object("vpc-v1");
    change(&mut mr);
    let lookup = xrs();
    let outcome = evaluate(&request("CREATE", mr, None), &aws(), &lookup);
    assert!(unchanged(&outcome), "{outcome:?}");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let adopted = lookup.requests();
    assert!(adopted.is_empty(), "{adopted:?}");
}

#[test]
fn an_adopted_xr_leaves_its_mrs_alone() {
    let mut xr = object("xnetwork");
    xr["metadata"]["labels"]["platform/origin"] = json!("adopted");
    let lookup = MapLookup::default().with_object(xr);
    let outcome = evaluate(&request("CREATE", object("vpc-v1"), None), &aws(), &lookup);
    assert!(
        unchanged(&outcome) && outcome.warnings.is_empty(),
        "{outcome:?}"
    );
    assert_eq!(lookup.requests(), [xnetwork()]);
}

#[test]
fn kinds_of_an_enabled_family_without_a_tag_field_pass_silently() {
    let config = json!({"apiVersion": "aws.upbound.io/v1beta1", "kind": "ProviderConfig",
        "metadata": {"name": "default"}, "spec": {"credentials": {"source": "IRSA"}}});
    let mut no_tags = object("vpc-v1");
    no_tags["kind"] = json!("MainRouteTableAssociation");
    no_tags["apiVersion"] = json!("ec2.aws.upbound.io/v1beta1");
    for object in [config, no_tags] {
        let lookup = xrs();
        let outcome = evaluate(&request("CREATE", object, None), &aws(), &lookup);
        assert!(
            unchanged(&outcome) && outcome.warnings.is_empty(),
            "{outcome:?}"
        );
        assert!(lookup.requests().is_empty());
    }
}

#[test]
fn without_its_family_an_mr_keeps_todays_warning_byte_for_byte() {
    let vpc = object("vpc-v1");
    let today = evaluate(
        &request("CREATE", vpc.clone(), None),
        &Settings::from_json(b"{}").unwrap(),
        &xrs(),
    );
    let other_family = evaluate(
        &request("CREATE", vpc, None),
        &settings(r#"["gcp"]"#),
        &xrs(),
    );
    assert_eq!(today, other_family);
    assert!(unchanged(&today));
    assert_eq!(
        today.warnings,
        [
            "VPC (ec2.aws.upbound.io/v1beta1) is not a Crossplane composite resource (no \
          spec.crossplane, nor a cluster-scoped spec.compositionUpdatePolicy), so this policy \
          leaves it unchanged; a v2 XR is tagged once Crossplane writes spec.crossplane, any other \
          kind: remove it from the policy's rules"
        ]
    );
}

// ---------------------------------------------------------------------------
// when the XR cannot be read: an MR UPDATE is never refused
// ---------------------------------------------------------------------------

/// The v1 VPC as stored, tagged, and as the next write submits it with a
/// prefixed entry changed and one missing.
fn stored_and_submitted() -> (Value, Value) {
    let (_, stored, _) = created("vpc-v1");
    let mut submitted = stored.clone();
    let tags = submitted["spec"]["forProvider"]["tags"]
        .as_object_mut()
        .unwrap();
    tags.insert("plexsphere:platform/env".into(), json!("changed"));
    tags.remove("plexsphere:team");
    (stored, submitted)
}

#[test]
fn an_xr_that_is_not_found_leaves_the_mr_as_submitted() {
    let (stored, submitted) = stored_and_submitted();
    for (operation, old) in [("CREATE", None), ("UPDATE", Some(stored))] {
        let request = request(operation, submitted.clone(), old);
        let outcome = evaluate(&request, &aws(), &MapLookup::default());
        assert!(unchanged(&outcome), "{outcome:?}");
        assert_eq!(
            outcome.warnings,
            ["cloud tags: composite resource XNetwork checkout-net \
              (platform.example.org/v1alpha1) that composed this managed resource was not found, \
              so its tags are left as submitted"]
        );
    }
}

#[rstest]
#[case::denied(LookupError::Denied("Policy has not been granted access".into()), "contextAwareResources")]
#[case::failed(LookupError::Failed("ApiError: Forbidden (HTTP 403)".into()), "cannot read composite resource XNetwork checkout-net")]
fn an_update_whose_xr_cannot_be_read_keeps_the_stored_tags(
    #[case] error: LookupError,
    #[case] said: &str,
) {
    let (stored, submitted) = stored_and_submitted();
    let lookup = MapLookup::default().with_error(xnetwork(), error);
    let (outcome, vpc) = run(
        &request("UPDATE", submitted, Some(stored.clone())),
        &aws(),
        &lookup,
    );
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"],
        stored["spec"]["forProvider"]["tags"]
    );
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings[0].contains(said),
        "{}",
        outcome.warnings[0]
    );
}

#[test]
fn a_create_whose_xr_cannot_be_read_is_refused_only_when_a_retry_may_help() {
    let (_, submitted) = stored_and_submitted();
    let denied = MapLookup::default().with_error(xnetwork(), LookupError::Denied("no".into()));
    let outcome = evaluate(&request("CREATE", submitted.clone(), None), &aws(), &denied);
    assert!(unchanged(&outcome), "{outcome:?}");
    assert!(outcome.warnings[0].contains("spec.contextAwareResources"));
    let failed = MapLookup::default().with_error(xnetwork(), LookupError::Failed("timeout".into()));
    let outcome = evaluate(&request("CREATE", submitted, None), &aws(), &failed);
    match outcome.verdict {
        Verdict::Reject { message, code } => {
            assert_eq!(code, 500);
            assert_eq!(
                message,
                "cannot read XNetwork checkout-net (platform.example.org/v1alpha1), whose labels \
                 become this object's cloud tags: timeout; the request can be retried once the \
                 policy can read it"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_malformed_xr_refuses_a_create_and_keeps_an_update_as_stored() {
    let (stored, submitted) = stored_and_submitted();
    let mut xr = object("xnetwork");
    xr["metadata"]["annotations"]["cloud-tags.plexsphere.io/labels"] = json!("{not json");
    let lookup = || MapLookup::default().with_object(xr.clone());
    let outcome = evaluate(
        &request("CREATE", submitted.clone(), None),
        &aws(),
        &lookup(),
    );
    // The MR's author (Crossplane) does not own the XR: not the request's
    // fault, and Crossplane's next compose retries it once the XR is mended
    // (docs/managed-resources.md, "When the look-up fails").
    match outcome.verdict {
        Verdict::Reject { message, code } => {
            assert_eq!(code, 500);
            assert!(
                message.starts_with(
                    "cannot use XNetwork checkout-net (platform.example.org/v1alpha1), whose \
                     labels become this object's cloud tags: metadata.annotations[\"cloud-tags.\
                     plexsphere.io/labels\"]: "
                ),
                "{message}"
            );
            assert!(
                message.ends_with("; the request can be retried once that object is corrected"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    let (outcome, vpc) = run(
        &request("UPDATE", submitted, Some(stored.clone())),
        &aws(),
        &lookup(),
    );
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"],
        stored["spec"]["forProvider"]["tags"]
    );
    assert_eq!(outcome.warnings.len(), 1);
}

#[test]
fn a_tag_field_that_is_not_a_map_of_strings_is_refused_even_on_update() {
    let mut mr = object("vpc-v1");
    mr["spec"]["forProvider"]["tags"] = json!({"Name": 7});
    for operation in ["CREATE", "UPDATE"] {
        let old = (operation == "UPDATE").then(|| object("vpc-v1"));
        let outcome = evaluate(&request(operation, mr.clone(), old), &aws(), &xrs());
        assert!(
            matches!(&outcome.verdict, Verdict::Reject { code: 400, message } if message.contains("spec.forProvider.tags")),
            "{outcome:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// validate mode, explain
// ---------------------------------------------------------------------------

#[test]
fn validate_mode_refuses_a_create_and_warns_on_an_update() {
    let validating = aws().validating();
    let create = evaluate(
        &request("CREATE", object("vpc-v1"), None),
        &validating,
        &xrs(),
    );
    assert!(
        matches!(&create.verdict, Verdict::Reject { code: 400, message } if message.contains("spec.forProvider.tags")),
        "{create:?}"
    );
    let vpc = object("vpc-v1");
    let update = evaluate(
        &request("UPDATE", vpc.clone(), Some(vpc)),
        &validating,
        &xrs(),
    );
    assert!(unchanged(&update), "{update:?}");
    // The plan it did not apply stays, for the audit to report.
    assert!(update.refused_plan.is_some());
    let last = update.warnings.last().unwrap();
    assert!(
        last.starts_with(
            "the object deviates from the metadata propagation contract (validate mode): "
        ),
        "{last}"
    );
    assert!(last.chars().count() <= 255);
}

#[test]
fn explain_names_the_xr_the_tags_come_from() {
    let (_, explanation) = explain(&request("CREATE", object("vpc-v1"), None), &aws(), &xrs());
    let text = explanation.to_string();
    assert!(
        text.contains(
            "family aws, labels of XNetwork checkout-net (platform.example.org/v1alpha1)"
        ),
        "{text}"
    );
    assert!(text.contains("spec.forProvider.tags"), "{text}");
    let mut lone = object("vpc-v1");
    lone["spec"]["managementPolicies"] = json!(["Observe"]);
    let (_, explanation) = explain(&request("CREATE", lone, None), &aws(), &xrs());
    assert!(
        explanation.to_string().contains("managementPolicies"),
        "{explanation}"
    );
}

#[test]
fn the_same_request_gives_the_same_answer() {
    let request = request("CREATE", object("vpc-v2"), None);
    let first = evaluate(&request, &aws(), &xrs());
    assert_eq!(first, evaluate(&request, &aws(), &xrs()));
}

// ---------------------------------------------------------------------------
// the fuzz targets' oracle knows MRs
// ---------------------------------------------------------------------------

/// What `mutated_objects` asks of an allowed request: the oracle's verdict
/// on the object the plan leaves and the request's warnings.
fn oracle(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &MapLookup,
) -> (Result<(), String>, Value, Vec<String>) {
    let (outcome, after) = run(request, settings, lookup);
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
    let verdict = check_allowed(request, settings, &after, &outcome.warnings);
    (verdict, after, outcome.warnings)
}

#[rstest]
fn the_oracle_accepts_what_the_policy_does_to_every_fixture(
    #[values("vpc-v1", "vpc-v2", "gke-cluster", "resource-group")] name: &str,
    #[values("CREATE", "UPDATE")] operation: &str,
    #[values(r#"["aws", "azure", "gcp"]"#, "[]")] families: &str,
) {
    let settings = settings(families);
    let (stored, submitted) = stored_and_submitted();
    let old = (operation == "UPDATE").then(|| object(name));
    let cases = [
        (request(operation, object(name), old.clone()), xrs()),
        // The XR not found.
        (
            request(operation, object(name), old.clone()),
            MapLookup::default(),
        ),
        // The v1 VPC as stored, its look-up denied or failing.
        (
            request("UPDATE", submitted.clone(), Some(stored.clone())),
            MapLookup::default().with_error(xnetwork(), LookupError::Denied("no".into())),
        ),
        (
            request("UPDATE", submitted, Some(stored)),
            MapLookup::default().with_error(xnetwork(), LookupError::Failed("503".into())),
        ),
    ];
    for (request, lookup) in cases {
        let (verdict, ..) = oracle(&request, &settings, &lookup);
        assert_eq!(verdict, Ok(()), "{request:?}");
    }
}

#[test]
fn the_oracle_holds_an_update_whose_xr_cannot_be_read_to_the_stored_entries() {
    // An entry under the prefix that is not stored goes under the one
    // warning that the XR could not be read, without a removal warning.
    let (stored, mut submitted) = stored_and_submitted();
    submitted["spec"]["forProvider"]["tags"]["plexsphere:new"] = json!("x");
    let lookup = MapLookup::default().with_error(xnetwork(), LookupError::Denied("no".into()));
    let request = request("UPDATE", submitted.clone(), Some(stored.clone()));
    let (verdict, vpc, warnings) = oracle(&request, &aws(), &lookup);
    assert_eq!(verdict, Ok(()));
    assert_eq!(
        vpc["spec"]["forProvider"]["tags"],
        stored["spec"]["forProvider"]["tags"]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // Left as submitted, the entries are not the stored ones.
    let kept = check_allowed(&request, &aws(), &submitted, &warnings).unwrap_err();
    assert!(kept.contains("not the stored ones"), "{kept}");
}

#[test]
fn the_oracle_rejects_a_forged_mutation_of_an_mr() {
    let request = request("CREATE", object("vpc-v1"), None);
    let (verdict, vpc, warnings) = oracle(&request, &aws(), &xrs());
    assert_eq!(verdict, Ok(()));
    let check = |forge: fn(&mut Value)| {
        let mut forged = vpc.clone();
        forge(&mut forged);
        check_allowed(&request, &aws(), &forged, &warnings).unwrap_err()
    };
    // The user's entry rewritten, removed; an entry outside the prefix added.
    let rewritten = check(|vpc| vpc["spec"]["forProvider"]["tags"]["Name"] = json!("forged"));
    assert!(
        rewritten.contains("spec.forProvider.tags was rewritten"),
        "{rewritten}"
    );
    let removed = check(|vpc| {
        let tags = vpc["spec"]["forProvider"]["tags"].as_object_mut().unwrap();
        tags.remove("Name");
    });
    assert!(
        removed.contains("spec.forProvider.tags was rewritten"),
        "{removed}"
    );
    let added = check(|vpc| vpc["spec"]["forProvider"]["tags"]["team"] = json!("x"));
    assert!(
        added.contains("spec.forProvider.tags was rewritten"),
        "{added}"
    );
    // A tag that is not a string.
    let typed = check(|vpc| vpc["spec"]["forProvider"]["tags"]["plexsphere:team"] = json!(1));
    assert!(typed.contains("plexsphere:team"), "{typed}");
    // A field outside the tag field, beside it and in the metadata.
    let region = check(|vpc| vpc["spec"]["forProvider"]["region"] = json!("us-east-1"));
    assert!(region.contains("us-east-1"), "{region}");
    let labelled = check(|vpc| vpc["metadata"]["labels"]["team"] = json!("checkout"));
    assert!(labelled.contains("team"), "{labelled}");
    let tagged = check(|vpc| vpc["spec"]["cloudTags"] = json!({"plexsphere:team": "checkout"}));
    assert!(tagged.contains("spec.cloudTags"), "{tagged}");
    // A removal the warnings do not say.
    let mut unsaid = warnings.clone();
    unsaid.retain(|w| !w.starts_with("cloud tag removed"));
    let silent = check_allowed(&request, &aws(), &vpc, &unsaid).unwrap_err();
    assert!(silent.contains("plexsphere:stale"), "{silent}");
}

#[rstest]
#[case::family_off(r#"["azure"]"#, |_: &mut Value| {})]
#[case::not_composed(r#"["aws"]"#, |vpc: &mut Value| vpc["metadata"]["labels"]["crossplane.io/composite"] = json!(""))]
#[case::observe_only(r#"["aws"]"#, |vpc: &mut Value| vpc["spec"]["managementPolicies"] = json!(["Observe"]))]
#[case::no_shape(r#"["aws"]"#, |vpc: &mut Value| vpc["spec"]["providerConfigRef"] = json!("default"))]
#[case::no_tag_field(r#"["aws"]"#, |vpc: &mut Value| vpc["kind"] = json!("NotInTheCatalogue"))]
fn the_oracle_lets_no_untagged_mr_change(#[case] families: &str, #[case] change: fn(&mut Value)) {
    let mut vpc = object("vpc-v1");
    change(&mut vpc);
    let request = request("CREATE", vpc, None);
    let settings = settings(families);
    let (verdict, ..) = oracle(&request, &settings, &xrs());
    assert_eq!(verdict, Ok(()));
    // What the policy does to a tagged one is a violation here.
    let (_, tagged, warnings) = oracle(
        &self::request("CREATE", object("vpc-v1"), None),
        &aws(),
        &xrs(),
    );
    let mut forged = request.object.clone();
    forged["spec"]["forProvider"]["tags"] = tagged["spec"]["forProvider"]["tags"].clone();
    assert!(check_allowed(&request, &settings, &forged, &warnings).is_err());
}

/// The example ClusterAdmissionPolicy's settings load, turn a family on, and
/// its contextAwareResources name the XR kinds its ClusterRole grants (the
/// grants are checked by `make check-docs`).
#[test]
fn the_example_policy_s_settings_load_and_turn_the_families_on() {
    let text = support::read_repo_file("examples/mr-policy.yaml");
    let policy: Value = serde_norway::from_str(&text).unwrap();
    let settings = policy["spec"]["settings"].to_string();
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let (outcome, vpc) = run(
        &request("CREATE", object("vpc-v1"), None),
        &settings,
        &xrs(),
    );
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
    assert_ne!(
        vpc,
        object("vpc-v1"),
        "an AWS MR is tagged under the example"
    );
    let grants = policy["spec"]["contextAwareResources"].as_array().unwrap();
    assert!(!grants.is_empty());
}
