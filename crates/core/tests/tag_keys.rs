//! Tag keys (docs, "Tag keys"): the prefix in force and the chosen bodies,
//! on composite resources and CAPI infrastructure alike, through the whole
//! policy; and the settings that name tags, refused with their field named.
//! The objects are the suites' CRD-valid fixtures; every mutation is checked
//! against its CRD and the ownership invariants.

use super::support;

use metadata_propagation_core::evaluate::{Route, evaluate, not_acted_on, route};
use metadata_propagation_core::invariants::{Capability, check_mutation};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::{AdmissionRequest, GroupVersionKind};
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::wire;
use rstest::rstest;
use serde_json::{Value, json};

fn request(path: &str) -> AdmissionRequest {
    let document: Value = serde_json::from_str(&support::read_repo_file(path)).unwrap();
    let request = document.get("request").unwrap_or(&document);
    serde_json::from_value(request.clone()).unwrap()
}

fn settings(json: &Value) -> Settings {
    Settings::from_json(json.to_string().as_bytes()).unwrap()
}

/// The object after the policy's answer, checked against its CRD and the
/// ownership invariants under the prefix in force.
fn mutated(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &MapLookup,
) -> (Outcome, Value) {
    let outcome = evaluate(request, settings, lookup);
    let mut after = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut after);
    }
    support::crd_schema::check_output(&request.object, &after).unwrap();
    if !metadata_propagation_core::capi::is_capi_group(&request.kind.group) {
        let capability = Capability::for_request(&request.kind, &request.object, settings);
        check_mutation(capability, &request.object, &after).unwrap();
    }
    (outcome, after)
}

fn cloud_tags(object: &Value) -> Value {
    object["spec"]["cloudTags"].clone()
}

const XR: &str = "test_data/xr/xnetwork_stale_update.json";

fn xr_settings(extra: Value) -> Value {
    let mut settings = json!({"cloudTags": {"propagatingLabels":
        ["platform/env", "platform/team", "acme:checkout/owner"]}});
    for (key, value) in extra.as_object().unwrap() {
        settings["cloudTags"][key] = value.clone();
    }
    settings
}

/// Changing `cloudTags.prefix` leaves the tags written under the old one on
/// the object, as the user's; the new prefix's tags are added beside them.
#[test]
fn old_prefix_entries_are_kept_as_the_users() {
    let (_, after) = mutated(
        &request(XR),
        &settings(&xr_settings(json!({"prefix": "corp:"}))),
        &MapLookup::default(),
    );
    assert_eq!(
        cloud_tags(&after),
        json!({"CostCenter": "42", "owner": "finops",
               "plexsphere:platform/env": "staging", "plexsphere:platform/retired": "yes",
               "plexsphere:platform/team": "payments",
               "corp:acme:checkout/owner": "team-payments", "corp:platform/env": "prod",
               "corp:platform/team": "payments"})
    );
}

/// A user profile's own prefix wins over `cloudTags.prefix`, and a chosen
/// body names the tag.
#[test]
fn a_profiles_own_prefix_wins_and_tag_keys_name_the_tag() {
    let profile = json!({"name": "aws-team", "providers": ["aws"], "keyMax": 128,
        "valueMax": 256, "unit": "runes", "cap": 50, "prefix": "team-",
        "keyCharacters": {"sets": ["letters", "digits"], "extra": " +-=._:/@"}});
    let settings = settings(&xr_settings(json!({
        "prefix": "corp:", "profiles": [profile],
        "tagKeys": {"acme:checkout/owner": "owner"}})));
    let (outcome, after) = mutated(&request(XR), &settings, &MapLookup::default());
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(
        cloud_tags(&after),
        json!({"CostCenter": "42", "owner": "finops",
               "plexsphere:platform/env": "staging", "plexsphere:platform/retired": "yes",
               "plexsphere:platform/team": "payments",
               "team-owner": "team-payments", "team-platform/env": "prod",
               "team-platform/team": "payments"})
    );
}

/// On the built-in profiles `cloudTags.tagKeys` gives a qualified key the
/// name its team chose, still checked whole against the profile.
#[test]
fn tag_keys_on_a_composite_resource() {
    let settings = settings(&xr_settings(
        json!({"tagKeys": {"acme:checkout/owner": "Owner"}}),
    ));
    let (_, after) = mutated(&request(XR), &settings, &MapLookup::default());
    let tags = cloud_tags(&after);
    assert_eq!(tags["plexsphere:Owner"], "team-payments");
    assert_eq!(tags.get("plexsphere:acme:checkout/owner"), None);
    assert_eq!(
        tags.get("plexsphere:platform/retired"),
        None,
        "stale, removed"
    );
}

/// An UPDATE that moves a composite resource to a profile with another
/// prefix: the old profile's entries were the policy's, and go.
#[test]
fn an_update_to_another_profile_removes_the_old_prefixes_entries() {
    let profile = json!({"name": "hetzner-team", "providers": ["hetzner"], "keyMax": 63,
        "valueMax": 63, "unit": "runes", "cap": 64, "prefix": "team-",
        "keyCharacters": {"sets": ["letters", "digits"], "extra": "-_./"}});
    let settings_json = xr_settings(json!({"profiles": [profile]}));
    let document: Value = serde_json::from_str(&support::read_repo_file(XR)).unwrap();
    let mut request = document.get("request").unwrap_or(&document).clone();
    // The object moves from aws (plexsphere:) to hetzner (team-).
    request["object"]["spec"]["parameters"]["provider"] = json!("hetzner");
    request["oldObject"]["spec"]["parameters"]["provider"] = json!("aws");
    let payload = json!({"request": request, "settings": settings_json}).to_string();
    let answer: Value = serde_json::from_slice(&wire::validate_with(
        payload.as_bytes(),
        &MapLookup::default(),
    ))
    .unwrap();
    assert_eq!(answer["accepted"], true, "{answer}");
    let tags = &answer["mutated_object"]["spec"]["cloudTags"];
    assert_eq!(
        tags,
        &json!({"CostCenter": "42", "owner": "finops", "team-platform/env": "prod",
                "team-platform/team": "payments"}),
        "{answer}"
    );
    // The same object created fresh keeps the plexsphere: entries: they are
    // the user's under a profile whose prefix is team-.
    request["operation"] = json!("CREATE");
    request.as_object_mut().unwrap().remove("oldObject");
    let payload = json!({"request": request, "settings": settings_json}).to_string();
    let answer: Value = serde_json::from_slice(&wire::validate_with(
        payload.as_bytes(),
        &MapLookup::default(),
    ))
    .unwrap();
    assert_eq!(
        answer["mutated_object"]["spec"]["cloudTags"]["plexsphere:platform/retired"],
        "yes"
    );
}

// ---------------------------------------------------------------------------
// CAPI infrastructure: every built-in profile, with tagKeys
// ---------------------------------------------------------------------------

fn parents() -> MapLookup {
    support::lookup_of_folder("test_data/capi-infra/parents")
}

fn read(object: &Value, field: &[&str]) -> Value {
    field
        .iter()
        .fold(object.clone(), |value, segment| value[*segment].clone())
}

/// `acme.io/team` is a qualified key no GCP, Azure or OpenStack key admits
/// whole (`.` or `/`); with a chosen body every built-in profile tags it.
#[rstest]
#[case::capa("awscluster_create_topology", &["spec", "additionalTags"], "plexsphere:team", "payments")]
#[case::capz("azurecluster_create_topology", &["spec", "additionalTags"], "plexsphere:team", "payments")]
#[case::capg("gcpcluster_create_topology", &["spec", "additionalLabels"], "plexsphere-team", "payments")]
#[case::capo(
    "openstackmachine_create_from_machineset",
    &["spec", "serverMetadata"],
    "plexsphere:team",
    "research-gpu"
)]
fn tag_keys_on_every_infrastructure_profile(
    #[case] scenario: &str,
    #[case] field: &[&str],
    #[case] tag_key: &str,
    #[case] expected: &str,
) {
    let labels = ["environment", "cost-center", "acme.io/team"];
    let settings_json = json!({"cloudTags": {"capiInfrastructure": true,
        "propagatingLabels": labels, "tagKeys": {"acme.io/team": "team"}}});
    let mut request = request(&format!("test_data/capi-infra/{scenario}.json"));
    // The team label on the object itself, so every row's label source has
    // it (a MachineSet's template value, which CAPI propagates, wins).
    request.object["metadata"]["labels"]["acme.io/team"] = json!("payments");
    let (outcome, after) = mutated(&request, &settings(&settings_json), &parents());
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
    let tags = read(&after, field);
    let value = match &tags {
        Value::Array(items) => items
            .iter()
            .find(|item| item["key"] == tag_key)
            .map(|item| item["value"].clone()),
        map => map.get(tag_key).cloned(),
    };
    assert_eq!(value, Some(json!(expected)), "{scenario}: {tags}");
}

/// A GCPCluster whose Cluster carries an opted-in label gets it as a GCP
/// label under `plexsphere-`; a qualified key without a chosen body is still
/// skipped, and the skip names its whole tag key.
#[test]
fn gcp_labels_propagate_and_a_qualified_key_is_skipped_until_it_has_a_body() {
    let labels = ["environment", "cost-center", "acme.io/team"];
    let settings_json =
        json!({"cloudTags": {"capiInfrastructure": true, "propagatingLabels": labels}});
    let mut request = request("test_data/capi-infra/gcpcluster_create_topology.json");
    request.object["metadata"]["labels"]["acme.io/team"] = json!("payments");
    let (outcome, after) = mutated(&request, &settings(&settings_json), &parents());
    let tags = read(&after, &["spec", "additionalLabels"]);
    assert!(tags.get("plexsphere-environment").is_some(), "{tags}");
    assert_eq!(
        outcome.warnings,
        [
            "cloud tag skipped: label \"acme.io/team\" did not become tag \"plexsphere-acme.io/team\" \
          on provider profile capg: key-character-class (the tag key contains '.' (U+002E))"
        ]
    );
}

// ---------------------------------------------------------------------------
// settings that name tags, refused naming the field
// ---------------------------------------------------------------------------

#[rstest]
#[case::empty_prefix(json!({"prefix": ""}), "cloudTags.prefix: empty prefix")]
#[case::long_prefix(json!({"prefix": "p".repeat(65)}), "cloudTags.prefix: the prefix is 65 bytes, at most 64")]
#[case::control_prefix(json!({"prefix": "acme\t"}), "cloudTags.prefix: \"acme\\t\" contains the control character U+0009")]
#[case::profile_prefix(
    json!({"profiles": [{"name": "x", "providers": ["x"], "keyMax": 63, "valueMax": 63,
        "unit": "bytes", "cap": 5, "keyCharacters": {"sets": ["digits"]}, "prefix": ""}]}),
    "cloudTags.profiles[0].prefix: empty prefix"
)]
#[case::not_opted_in(
    json!({"tagKeys": {"platform/tier": "tier"}}),
    "cloudTags.tagKeys[\"platform/tier\"]: \"platform/tier\" is not in cloudTags.propagatingLabels"
)]
#[case::empty_body(
    json!({"tagKeys": {"platform/env": ""}}),
    "cloudTags.tagKeys[\"platform/env\"]: empty tag-key body for label \"platform/env\""
)]
#[case::shared_body(
    json!({"tagKeys": {"platform/env": "env", "platform/team": "env"}}),
    "cloudTags.tagKeys[\"platform/team\"]: labels \"platform/env\" and \"platform/team\" both get the tag-key body \"env\""
)]
#[case::body_is_another_labels_key(
    json!({"tagKeys": {"platform/env": "platform/team"}}),
    "cloudTags.tagKeys[\"platform/env\"]: labels \"platform/env\" and \"platform/team\" both get the tag-key body \"platform/team\" (\"platform/team\" has no tagKeys entry, so its body is its own key), so they would write one tag; give each label a body of its own"
)]
fn settings_that_name_tags_are_refused_naming_the_field(
    #[case] extra: Value,
    #[case] starts: &str,
) {
    let document = xr_settings(extra).to_string();
    let error = Settings::from_json(document.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(error.starts_with(starts), "{error}");
    // validate_settings answers the same, every problem at once.
    let answer: Value =
        serde_json::from_slice(&wire::validate_settings(document.as_bytes())).unwrap();
    assert_eq!(answer["valid"], false);
    assert_eq!(answer["message"], error.as_str());
}

#[test]
fn every_tag_key_problem_is_reported_with_the_others() {
    let document = json!({"capi": {"additionalSyncMachineLabels": ["("]},
        "cloudTags": {"propagatingLabels": ["platform/env"], "prefix": "",
                      "tagKeys": {"platform/env": "", "platform/tier": "tier"}}});
    let error = Settings::from_json(document.to_string().as_bytes()).unwrap_err();
    let fields: Vec<String> = error.problems.iter().map(|p| p.field.to_string()).collect();
    assert_eq!(
        fields,
        [
            "capi.additionalSyncMachineLabels[0]",
            "cloudTags.prefix",
            "cloudTags.tagKeys[\"platform/env\"]",
            "cloudTags.tagKeys[\"platform/tier\"]",
        ]
    );
}

// ---------------------------------------------------------------------------
// kinds that are not composite resources
// ---------------------------------------------------------------------------

#[rstest]
#[case::cluster_resource_set("addons.cluster.x-k8s.io", "v1beta2", "ClusterResourceSet")]
#[case::ip_address_claim("ipam.cluster.x-k8s.io", "v1beta2", "IPAddressClaim")]
#[case::extension_config("runtime.cluster.x-k8s.io", "v1alpha1", "ExtensionConfig")]
fn x_k8s_io_kinds_are_left_alone_with_a_warning_naming_the_kind(
    #[case] group: &str,
    #[case] version: &str,
    #[case] kind: &str,
) {
    let gvk = GroupVersionKind {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
    };
    assert_eq!(route(&gvk, "CREATE"), Route::NotActedOn);
    let outcome = not_acted_on(&gvk, "CREATE");
    assert!(matches!(outcome.verdict, Verdict::Allow(ref plan) if plan.is_empty()));
    assert_eq!(
        outcome.warnings,
        [format!(
            "{kind} ({group}/{version}) is a Kubernetes SIG kind (an x-k8s.io group) the policy \
             does not handle, neither a Cluster API object nor a Crossplane composite resource, \
             so this policy leaves it unchanged; remove it from the policy's rules"
        )]
    );
    // CAPI's own groups are still routed to the propagation rules, and any
    // other group to the cloud tags, where the object's shape decides
    // whether it is a composite resource.
    let capi = GroupVersionKind {
        group: "cluster.x-k8s.io".to_owned(),
        ..gvk.clone()
    };
    assert_eq!(not_acted_on(&capi, "CREATE").warnings, Vec::<String>::new());
    let certificate = GroupVersionKind {
        group: "cert-manager.io".to_owned(),
        version: "v1".to_owned(),
        kind: "Certificate".to_owned(),
    };
    assert_eq!(route(&certificate, "CREATE"), Route::CloudTags);
}
