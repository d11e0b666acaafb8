//! Cloud tags on CAPI infrastructure (docs/infrastructure-tags.md): the
//! target table's rows on realistic objects, valid
//! against the providers' CRDs, through `evaluate`. The fixtures are the
//! e2e suite's (test_data/capi-infra, written by its gen.py), so both judge
//! the same objects; the expectations here are written from the contract.

use super::support;

use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::invariants::check_tag_field;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::request::lookup::{Lookup, LookupError, MapLookup, ObjectRef};
use metadata_propagation_core::request::outcome::{Outcome, Verdict};
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::targets::{Layout, TARGETS, Target};
use rstest::rstest;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const SKIPPED: &str = "cloud-tags.plexsphere.io/skipped";
const LABELS_ANNOTATION: &str = "cloud-tags.plexsphere.io/labels";
const DATA: &str = "test_data/capi-infra";

/// The e2e suite's settings: four opted-in labels, the feature on.
const ON: &str = r#"{"cloudTags":{"capiInfrastructure":true,"propagatingLabels":
    ["environment","cost-center","acme.io/team","acme:billing/owner"]}}"#;
/// The same labels, the feature at its default (off).
const OFF: &str = r#"{"cloudTags":{"propagatingLabels":
    ["environment","cost-center","acme.io/team","acme:billing/owner"]}}"#;

fn fixture(scenario: &str) -> AdmissionRequest {
    let file = format!("{DATA}/{scenario}.json");
    serde_json::from_str(&support::read_repo_file(&file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Every object of test_data/capi-infra/parents.
fn parents() -> MapLookup {
    support::lookup_of_folder(&format!("{DATA}/parents"))
}

fn settings(json: &str) -> Settings {
    Settings::from_json(json.as_bytes()).unwrap()
}

/// The outcome and the object as the plan leaves it (CRD-checked).
fn run(request: &AdmissionRequest, settings_json: &str, lookup: &MapLookup) -> (Outcome, Value) {
    let outcome = evaluate(request, &settings(settings_json), lookup);
    let mut mutated = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
    }
    if let Err(e) = support::crd_schema::check_output(&request.object, &mutated) {
        panic!("{e}");
    }
    (outcome, mutated)
}

fn cluster_ref(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "Cluster".into(),
        name: name.into(),
        namespace: Some("default".into()),
    }
}

fn rejection(outcome: &Outcome) -> (&str, u16) {
    match &outcome.verdict {
        Verdict::Reject { message, code } => (message, *code),
        Verdict::Allow(plan) => panic!("allowed with {plan:?}"),
    }
}

fn skipped(object: &Value) -> Value {
    object["metadata"]["annotations"][SKIPPED]
        .as_str()
        .map_or(Value::Null, |text| serde_json::from_str(text).unwrap())
}

// ---------------------------------------------------------------------------
// the Cluster's labels reach the cluster-level object; machines keep to theirs
// ---------------------------------------------------------------------------

#[test]
fn awscluster_created_under_a_topology_gets_the_clusters_tags() {
    let lookup = parents();
    let (outcome, aws) = run(&fixture("awscluster_create_topology"), ON, &lookup);
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"owner-email": "sre@acme.example", "plexsphere:environment": "prod",
               "plexsphere:cost-center": "cc-4711", "plexsphere:acme.io/team": "payments"})
    );
    // CAPA's webhook admits ASCII only, in values too.
    assert_eq!(
        skipped(&aws),
        json!([{"qualifiedKey": "acme:billing/owner", "tagKey": "plexsphere:acme:billing/owner",
                "provider": "capa", "reason": "value-character-class"}])
    );
    assert_eq!(
        outcome.warnings,
        [
            "cloud tag skipped: label \"acme:billing/owner\" did not become tag \
          \"plexsphere:acme:billing/owner\" on provider profile capa: value-character-class \
          (the value contains 'ü' (U+00FC))"
        ]
    );
    assert_eq!(lookup.requests(), [cluster_ref("aws-prod")]);
    // Only what the label set is read from.
    assert_eq!(
        lookup.field_masks(),
        [BTreeSet::from([
            "metadata.annotations".to_owned(),
            "metadata.labels".to_owned()
        ])]
    );
}

#[test]
fn a_cluster_label_change_reaches_the_awscluster_on_its_next_update() {
    let (_, aws) = run(
        &fixture("awscluster_update_cluster_label_changed"),
        ON,
        &parents(),
    );
    // environment corrected from staging, the stale project tag gone, the
    // object's own acme.io/team wins over the Cluster's, the user's tag kept.
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"owner-email": "sre@acme.example", "plexsphere:environment": "prod",
               "plexsphere:cost-center": "cc-4711", "plexsphere:acme.io/team": "payments-edge"})
    );
}

#[test]
fn an_awsmachine_keeps_to_its_own_labels_as_capi_propagates_them() {
    let lookup = parents();
    let request = fixture("awsmachine_create_from_machineset");
    let (_, machine) = run(&request, ON, &lookup);
    // One decision: the MachineSet's template labels flow (CAPI metadata),
    // and the node pool's cost centre becomes the machine's tag; the
    // Cluster's labels reach it through the AWSCluster, not here.
    assert_eq!(machine["metadata"]["labels"]["cost-center"], "cc-pool-a");
    assert_eq!(
        machine["spec"]["additionalTags"],
        json!({"plexsphere:cost-center": "cc-pool-a"})
    );
    let machine_set = ObjectRef {
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "MachineSet".into(),
        name: "aws-prod-md-0-7xk2p".into(),
        namespace: Some("default".into()),
    };
    assert_eq!(lookup.requests(), [machine_set]);
}

/// A list the policy rewrites keeps the user's items whole: a field of an
/// item the policy does not read (one a newer CAPO might add) stays.
#[test]
fn a_rewritten_list_keeps_the_users_items_as_written() {
    let mut request = fixture("openstackmachine_create_from_machineset");
    request.object["spec"]["serverMetadata"][0]["note"] = json!("kept");
    let outcome = evaluate(&request, &settings(ON), &parents());
    let Verdict::Allow(plan) = &outcome.verdict else {
        panic!("{outcome:?}");
    };
    let mut machine = request.object.clone();
    plan.apply(&mut machine);
    assert_eq!(
        machine["spec"]["serverMetadata"][0],
        json!({"key": "role", "value": "gpu-worker", "note": "kept"})
    );
    assert_eq!(
        machine["spec"]["serverMetadata"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn an_openstackmachine_takes_the_clusters_labels_and_its_own_in_one_list() {
    let lookup = parents();
    let (outcome, machine) = run(
        &fixture("openstackmachine_create_from_machineset"),
        ON,
        &lookup,
    );
    assert_eq!(
        machine["spec"]["serverMetadata"],
        json!([{"key": "role", "value": "gpu-worker"},
               {"key": "plexsphere:cost-center", "value": "cc-0042"},
               {"key": "plexsphere:environment", "value": "lab"}])
    );
    assert_eq!(
        skipped(&machine),
        json!([{"qualifiedKey": "acme.io/team", "tagKey": "plexsphere:acme.io/team",
                "provider": "capo", "reason": "key-character-class"}])
    );
    assert_eq!(outcome.warnings.len(), 1);
    assert_eq!(
        lookup
            .requests()
            .iter()
            .map(|r| r.kind.as_str())
            .collect::<Vec<_>>(),
        ["MachineSet", "Cluster"]
    );
}

// ---------------------------------------------------------------------------
// room, CREATE-only, kinds not stamped, the off switch
// ---------------------------------------------------------------------------

#[test]
fn existing_user_entries_take_room_under_the_cap() {
    let mut request = fixture("awsmachine_create_from_machineset");
    let user: serde_json::Map<String, Value> = (0..44)
        .map(|i| (format!("user-{i:02}"), json!("x")))
        .collect();
    request.object["spec"]["additionalTags"] = Value::Object(user.clone());
    request.object["metadata"]["labels"]["environment"] = json!("prod");
    let (outcome, machine) = run(&request, ON, &parents());
    // 44 of CAPA's 45 are the user's: cost-center (lower) fits, environment not.
    let mut expected = user;
    expected.insert("plexsphere:cost-center".into(), json!("cc-pool-a"));
    assert_eq!(machine["spec"]["additionalTags"], Value::Object(expected));
    assert_eq!(
        skipped(&machine),
        json!([{"qualifiedKey": "environment", "tagKey": "plexsphere:environment",
                "provider": "capa", "reason": "count-cap"}])
    );
    assert!(
        outcome.warnings[0].contains(
            "count-cap (44 user entries of the field and 1 tag with lower-sorting keys already \
             reached the cap of 45)"
        ),
        "{:?}",
        outcome.warnings
    );
}

/// A tag the policy wrote before, whose label the profile now skips, goes,
/// and its removal warning points at the skip rather than saying that no
/// opted-in label gives it.
#[test]
fn a_tag_whose_label_is_now_skipped_goes_with_a_warning_naming_the_skip() {
    let mut request = fixture("awsmachine_create_from_machineset");
    let mut tags: serde_json::Map<String, Value> = (0..44)
        .map(|i| (format!("user-{i:02}"), json!("x")))
        .collect();
    tags.insert("plexsphere:environment".into(), json!("staging"));
    request.object["spec"]["additionalTags"] = Value::Object(tags);
    request.object["metadata"]["labels"]["environment"] = json!("prod");
    let (outcome, machine) = run(&request, ON, &parents());
    assert_eq!(
        machine["spec"]["additionalTags"].get("plexsphere:environment"),
        None
    );
    assert_eq!(
        outcome.warnings[1..],
        [
            "cloud tag removed from spec.additionalTags: \"plexsphere:environment\" (its label \
          \"environment\" was skipped, see above)"
        ]
    );
    assert!(
        outcome.warnings[0].contains("\"environment\""),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn a_user_profile_listing_capa_replaces_it() {
    let settings_json = r#"{"cloudTags":{"capiInfrastructure":true,
        "propagatingLabels":["environment","cost-center","acme.io/team","acme:billing/owner"],
        "profiles":[{"name":"aws-strict","providers":["capa"],"keyMax":128,"valueMax":256,
          "unit":"runes","cap":4,"keyCharacters":{"sets":["ascii-letters","ascii-digits"],
          "extra":" _.:=+-@/"}}]}}"#;
    let (_, aws) = run(
        &fixture("awscluster_create_room_taken"),
        settings_json,
        &parents(),
    );
    // Two user tags leave room for two: the lowest qualified keys. No
    // valueCharacters: the non-ASCII value is admitted.
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"owner-email": "sre@acme.example", "Name": "aws-prod",
               "plexsphere:acme.io/team": "payments", "plexsphere:acme:billing/owner": "Zürich AG"})
    );
    let reasons: Vec<_> = skipped(&aws)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["qualifiedKey"].clone(),
                r["provider"].clone(),
                r["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (
                json!("cost-center"),
                json!("aws-strict"),
                json!("count-cap")
            ),
            (
                json!("environment"),
                json!("aws-strict"),
                json!("count-cap")
            )
        ]
    );
}

#[test]
fn an_openstackmachine_is_tagged_on_create_only() {
    let lookup = parents();
    let request = fixture("openstackmachine_update_create_only");
    let (outcome, machine) = run(&request, ON, &lookup);
    assert_eq!(machine, request.object);
    assert!(outcome.warnings.is_empty());
    assert_eq!(lookup.requests(), []);
}

#[rstest]
#[case::machine_template("awsmachinetemplate_create_topology")]
#[case::hetzner_cluster("hetznercluster_create_topology")]
fn kinds_without_a_row_are_left_as_they_are(#[case] scenario: &str) {
    let lookup = parents();
    let request = fixture(scenario);
    let (outcome, object) = run(&request, ON, &lookup);
    assert_eq!(object, request.object);
    assert!(outcome.warnings.is_empty());
    assert_eq!(lookup.requests(), []);
}

#[test]
fn off_by_default_every_object_stays_as_it_was_without_the_feature() {
    let dir = support::repo_path(DATA);
    let mut scenarios: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    scenarios.sort();
    assert!(scenarios.len() > 10);
    for scenario in scenarios {
        let request = fixture(&scenario);
        let (off, with_off) = (parents(), parents());
        let default = evaluate(&request, &settings("{}"), &off);
        let labelled = evaluate(&request, &settings(OFF), &with_off);
        // Same answer as with no cloud-tag settings at all, and no read of
        // a Cluster's labels: a topology's Cluster is read for its topology
        // only.
        assert_eq!(labelled, default, "{scenario}");
        assert_eq!(with_off.requests(), off.requests(), "{scenario}");
        assert_eq!(with_off.field_masks(), off.field_masks(), "{scenario}");
        let reads = off.requests().into_iter().zip(off.field_masks());
        for (_, masks) in reads.filter(|(read, _)| read.kind == "Cluster") {
            assert!(!masks.contains("metadata.labels"), "{scenario}: {masks:?}");
        }
        if let Verdict::Allow(plan) = &labelled.verdict {
            assert!(
                plan.edits
                    .iter()
                    .all(|e| e.target().starts_with("metadata.")),
                "{scenario}: {plan:?}"
            );
            let mut object = request.object.clone();
            plan.apply(&mut object);
            assert_eq!(object["metadata"]["annotations"][SKIPPED], Value::Null);
        }
    }
}

// ---------------------------------------------------------------------------
// finding the Cluster
// ---------------------------------------------------------------------------

#[test]
fn a_cluster_that_is_not_found_leaves_the_objects_own_labels() {
    let lookup = parents();
    let (outcome, aws) = run(&fixture("awscluster_create_cluster_not_found"), ON, &lookup);
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"plexsphere:environment": "prod"})
    );
    assert_eq!(
        outcome.warnings,
        [
            "cloud tags: Cluster default/aws-gone (cluster.x-k8s.io/v1beta2) was not found, so \
             only this object's own labels became tags (CAPI 1.10 and older serve no v1beta2 Cluster)"
        ]
    );
    assert_eq!(lookup.requests(), [cluster_ref("aws-gone")]);
}

#[test]
fn a_cluster_look_up_that_fails_rejects_and_can_be_retried() {
    let lookup = parents().with_error(
        cluster_ref("aws-prod"),
        LookupError::Failed(
            "the server is currently unable to handle the request (HTTP 503)".into(),
        ),
    );
    let outcome = evaluate(
        &fixture("awscluster_create_lookup_unavailable"),
        &settings(ON),
        &lookup,
    );
    assert_eq!(
        rejection(&outcome),
        (
            "cannot read Cluster default/aws-prod (cluster.x-k8s.io/v1beta2), whose labels become \
             this object's cloud tags: the server is currently unable to handle the request (HTTP \
             503); the request can be retried once the policy can read it",
            500
        )
    );
}

#[test]
fn a_hand_made_infracluster_takes_its_own_labels_without_a_look_up() {
    let lookup = parents();
    let (_, aws) = run(&fixture("awscluster_create_handmade"), ON, &lookup);
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"plexsphere:environment": "sandbox"})
    );
    assert_eq!(lookup.requests(), []);
}

#[test]
fn the_cluster_owner_names_the_cluster_and_its_version() {
    let mut request = fixture("awscluster_create_handmade");
    request.object["metadata"]["ownerReferences"] = json!([{"apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster", "name": "aws-prod", "uid": "0b1c", "controller": false}]);
    let lookup = parents();
    let (_, aws) = run(&request, ON, &lookup);
    // The Cluster is served at v1beta2 only here: NotFound at v1beta1.
    assert_eq!(
        lookup.requests(),
        [ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            ..cluster_ref("aws-prod")
        }]
    );
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"plexsphere:environment": "sandbox"})
    );
}

#[test]
fn a_topology_control_plane_reads_its_cluster_once_for_its_rule_and_its_tags() {
    // The AWSManagedControlPlane's rule reads the Cluster's topology, its
    // tags the Cluster's labels: one look-up, through both masks, then the
    // ClusterClass.
    let request = fixture("awsmanagedcontrolplane_update_topology");
    let lookup = parents();
    let (outcome, eks) = run(&request, ON, &lookup);
    assert_eq!(outcome.warnings, Vec::<String>::new());
    let class = ObjectRef {
        kind: "ClusterClass".into(),
        ..cluster_ref("eks-default")
    };
    assert_eq!(lookup.requests(), [cluster_ref("eks-dev"), class]);
    let masks = lookup.field_masks();
    let cluster_masks: BTreeSet<&str> = masks[0].iter().map(String::as_str).collect();
    for mask in [
        "metadata.labels",
        "metadata.annotations",
        "spec.topology.classRef.name",
        "spec.topology.controlPlane.metadata.labels",
    ] {
        assert!(cluster_masks.contains(mask), "{mask} in {cluster_masks:?}");
    }
    // One plan: the topology's label lands on the control plane and, opted
    // in, becomes a tag beside the Cluster's.
    assert_eq!(eks["metadata"]["labels"]["acme.io/team"], "data");
    assert_eq!(
        eks["spec"]["additionalTags"],
        json!({"plexsphere:acme.io/team": "data", "plexsphere:cost-center": "cc-7002",
               "plexsphere:environment": "dev"})
    );
    // The look-up floor makes the same one look-up per object.
    let floor = parents();
    look_up(&request, &settings(ON), &floor);
    assert_eq!(floor.requests(), lookup.requests());
    assert_eq!(floor.field_masks(), lookup.field_masks());
}

// ---------------------------------------------------------------------------
// every profile's skip reasons; capg's summary
// ---------------------------------------------------------------------------

/// capg's default prefix is `plexsphere-` (GCP refuses the `:` of
/// `plexsphere:`); a `cloudTags.prefix` the settings set replaces it, as it
/// replaces every profile's default.
#[test]
fn under_capg_labels_propagate_with_its_own_prefix() {
    let (outcome, gcp) = run(&fixture("gcpcluster_create_topology"), ON, &parents());
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(skipped(&gcp), Value::Null);
    let labels = gcp["spec"]["additionalLabels"].as_object().unwrap();
    let keys: Vec<&str> = labels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["plexsphere-cost-center", "plexsphere-environment"]);

    let set = ON.replacen(
        "\"capiInfrastructure\":true,",
        "\"capiInfrastructure\":true,\"prefix\":\"acme-\",",
        1,
    );
    assert_ne!(set, ON);
    let (outcome, gcp) = run(&fixture("gcpcluster_create_topology"), &set, &parents());
    assert_eq!(outcome.warnings, Vec::<String>::new());
    let labels = gcp["spec"]["additionalLabels"].as_object().unwrap();
    let keys: Vec<&str> = labels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["acme-cost-center", "acme-environment"]);
}

/// A user profile that replaces `capg` without a prefix of its own, under
/// settings that set no `cloudTags.prefix`, takes a user profile's default
/// `plexsphere:`, whose `:` GCP refuses: one summary warning, and every
/// label still recorded.
#[test]
fn a_profile_that_can_never_admit_its_prefix_gives_one_summary_warning() {
    let settings = r#"{"cloudTags":{"capiInfrastructure":true,
        "propagatingLabels":["environment","cost-center","acme.io/team","acme:billing/owner"],
        "profiles":[{"name":"gcp-plain","providers":["capg"],"keyMax":63,"valueMax":63,
          "unit":"bytes","cap":62,"keyCharacters":{"sets":["lowercase-letters","digits"],
          "extra":"_-"}}]}}"#;
    let (outcome, gcp) = run(&fixture("gcpcluster_create_topology"), settings, &parents());
    assert_eq!(gcp["spec"].get("additionalLabels"), None);
    assert_eq!(
        outcome.warnings,
        [
            "cloud tags skipped: no tag can ever propagate under provider profile capg: its key \
          characters (lowercase-letters, digits and \"_-\") refuse \":\" of the mandated prefix \
          \"plexsphere:\"; 2 opted-in label(s) skipped, each recorded in annotation \
          cloud-tags.plexsphere.io/skipped"
        ]
        .map(|w| w.replace("profile capg", "profile gcp-plain"))
    );
    assert_eq!(
        skipped(&gcp),
        json!([{"qualifiedKey": "cost-center", "tagKey": "plexsphere:cost-center",
                "provider": "gcp-plain", "reason": "key-character-class"},
               {"qualifiedKey": "environment", "tagKey": "plexsphere:environment",
                "provider": "gcp-plain", "reason": "key-character-class"}])
    );
}

/// A prefix in force that opens with a prefix the provider reserves would
/// have CAPA's webhook deny every write the policy tags (`aws:env`), so it
/// is refused like a prefix of refused characters: one summary warning,
/// every label recorded, no tag written; the user's `aws:`-free entries
/// stay. A prefix that makes only some tag keys reserved (`a` before a
/// label `ws:x`) skips just those.
#[test]
fn a_prefix_in_force_the_provider_reserves_writes_no_tag() {
    for prefix in ["aws:", "AWS:team-"] {
        let set = ON.replacen(
            "\"capiInfrastructure\":true,",
            &format!("\"capiInfrastructure\":true,\"prefix\":\"{prefix}\","),
            1,
        );
        assert_ne!(set, ON);
        let (outcome, aws) = run(&fixture("awscluster_create_topology"), &set, &parents());
        assert_eq!(
            aws["spec"]["additionalTags"],
            json!({"owner-email": "sre@acme.example"}),
            "{prefix}"
        );
        assert_eq!(
            outcome.warnings,
            [format!(
                "cloud tags skipped: no tag can ever propagate under provider profile capa: the \
                 mandated prefix \"{prefix}\" starts with its reserved prefix \"aws:\"; 4 \
                 opted-in label(s) skipped, each recorded in annotation \
                 cloud-tags.plexsphere.io/skipped"
            )]
        );
        let skips = skipped(&aws);
        let reasons: Vec<&str> = (skips.as_array().unwrap().iter())
            .map(|skip| skip["reason"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["reserved-prefix"; 4], "{prefix}");
    }

    let set = r#"{"cloudTags":{"capiInfrastructure":true,"prefix":"a",
        "propagatingLabels":["environment","ws:x"]}}"#;
    let mut request = fixture("awscluster_create_handmade");
    request.object["metadata"]["annotations"] =
        json!({LABELS_ANNOTATION: r#"{"environment":"prod","ws:x":"y"}"#});
    let (outcome, aws) = run(&request, set, &MapLookup::default());
    assert_eq!(
        aws["spec"]["additionalTags"],
        json!({"aenvironment": "prod"})
    );
    assert_eq!(
        skipped(&aws),
        json!([{"qualifiedKey": "ws:x", "tagKey": "aws:x", "provider": "capa",
                "reason": "reserved-prefix"}])
    );
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
}

/// An object of each row's kind, created by hand (no Cluster), carrying
/// `labels` in its label-set annotation and `tags` in its tag field.
fn row_object(kind: &str, labels: &Value, tags: Option<Value>) -> Value {
    let annotations = json!({LABELS_ANNOTATION: labels.to_string()});
    let (api_version, spec, field) = match kind {
        "AWSCluster" => (
            "infrastructure.cluster.x-k8s.io/v1beta2",
            json!({"region": "eu-central-1"}),
            "additionalTags",
        ),
        "AWSMachine" => (
            "infrastructure.cluster.x-k8s.io/v1beta2",
            json!({"instanceType": "m6i.large"}),
            "additionalTags",
        ),
        "AzureMachine" => (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            json!({"vmSize": "Standard_D2s_v5", "osDisk": {"osType": "Linux", "diskSizeGB": 30}}),
            "additionalTags",
        ),
        "GCPMachine" => (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            json!({"instanceType": "n2-standard-4"}),
            "additionalLabels",
        ),
        "OpenStackMachine" => (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            json!({"flavor": "m1.large", "image": {"filter": {"name": "ubuntu-2404"}}}),
            "serverMetadata",
        ),
        other => panic!("no object for {other}"),
    };
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "x-1", "namespace": "default", "annotations": annotations},
        "spec": spec});
    if let Some(tags) = tags {
        object["spec"][field] = tags;
    }
    object
}

fn settings_for(keys: &[&str]) -> String {
    json!({"cloudTags": {"capiInfrastructure": true, "propagatingLabels": keys}}).to_string()
}

#[rstest]
#[case::capa_reserved_prefix("AWSMachine", "AWS:cost", "x", "reserved-prefix")]
#[case::capa_key_too_long("AWSMachine", &"k".repeat(118), "x", "key-too-long")]
#[case::capa_value_too_long("AWSMachine", "team", &"v".repeat(257), "value-too-long")]
#[case::capa_key_character_class("AWSMachine", "team#1", "x", "key-character-class")]
#[case::capa_value_character_class("AWSMachine", "team", "café", "value-character-class")]
#[case::capz_key_too_long("AzureMachine", &"k".repeat(502), "x", "key-too-long")]
#[case::capz_value_too_long("AzureMachine", "team", &"v".repeat(257), "value-too-long")]
#[case::capz_key_character_class("AzureMachine", "team/a", "x", "key-character-class")]
#[case::capz_any_value("AzureMachine", "team", "<ok>/%", "")]
#[case::capg_key_character_class(
    "GCPMachine",
    "team.example.com/cost-center",
    "x",
    "key-character-class"
)]
#[case::capg_value_character_class("GCPMachine", "team", "Shop", "value-character-class")]
#[case::capg_propagates("GCPMachine", "team", "shop", "")]
#[case::capo_key_too_long("OpenStackMachine", &"k".repeat(245), "x", "key-too-long")]
#[case::capo_value_too_long_in_bytes("OpenStackMachine", "team", &"é".repeat(128), "value-too-long")]
#[case::capo_key_character_class("OpenStackMachine", "team/a", "x", "key-character-class")]
#[case::capo_any_value("OpenStackMachine", "team", "a/b,c", "")]
fn each_profile_skips_what_its_provider_refuses(
    #[case] kind: &str,
    #[case] key: &str,
    #[case] value: &str,
    #[case] reason: &str,
) {
    let request =
        AdmissionRequest::for_object("CREATE", row_object(kind, &json!({key: value}), None));
    let (_, object) = run(&request, &settings_for(&[key]), &MapLookup::default());
    let records = skipped(&object);
    if reason.is_empty() {
        assert_eq!(records, Value::Null);
    } else {
        assert_eq!(records[0]["reason"], reason, "{records}");
    }
}

#[rstest]
#[case::capa("AWSMachine", 45)]
#[case::capz("AzureMachine", 46)]
#[case::capo("OpenStackMachine", 128)]
fn each_profile_caps_the_tags_it_writes(#[case] kind: &str, #[case] cap: usize) {
    let keys: Vec<String> = (0..=cap).map(|i| format!("label-{i:03}")).collect();
    let labels: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.clone(), json!("v"))).collect();
    let request =
        AdmissionRequest::for_object("CREATE", row_object(kind, &Value::Object(labels), None));
    let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let (_, object) = run(&request, &settings_for(&key_refs), &MapLookup::default());
    assert_eq!(
        skipped(&object),
        json!([{"qualifiedKey": keys[cap], "tagKey": format!("plexsphere:{}", keys[cap]),
                "provider": object_profile(kind), "reason": "count-cap"}])
    );
}

fn object_profile(kind: &str) -> &'static str {
    match kind {
        "AWSMachine" | "AWSCluster" => "capa",
        "AzureMachine" => "capz",
        "GCPMachine" => "capg",
        _ => "capo",
    }
}

// ---------------------------------------------------------------------------
// CREATE and UPDATE per target row
// ---------------------------------------------------------------------------

/// A minimal object of each row's kind its CRD accepts: every row's CRD is
/// vendored, so an object it would refuse fails here rather than going
/// unchecked.
fn minimal(kind: &str, api_version: &str) -> Value {
    let object = minimal_unchecked(kind, api_version);
    assert_eq!(
        support::crd_schema::failures(&object),
        Some(Vec::new()),
        "{api_version} {kind}: not an object its CRD accepts"
    );
    object
}

fn minimal_unchecked(kind: &str, api_version: &str) -> Value {
    let spec = match kind {
        "AWSMachine" => json!({"instanceType": "m6i.large"}),
        "AWSMachinePool" => json!({"minSize": 1, "maxSize": 3,
            "awsLaunchTemplate": {"instanceType": "m6i.large"}}),
        "AzureCluster" => json!({"location": "westeurope"}),
        "AzureMachine" => {
            json!({"vmSize": "Standard_D2s_v5", "osDisk": {"osType": "Linux", "diskSizeGB": 30}})
        }
        "AzureMachinePool" => json!({"location": "westeurope",
            "template": {"vmSize": "Standard_D2s_v5", "osDisk": {"osType": "Linux"}}}),
        "GCPCluster" => json!({"project": "p-1", "region": "europe-west3"}),
        "GCPMachine" => json!({"instanceType": "n2-standard-4"}),
        "OpenStackMachine" => json!({"image": {"filter": {"name": "ubuntu-2404"}}}),
        _ => json!({}),
    };
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "x-1", "namespace": "default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "c", "environment": "own"}},
        "spec": spec})
}

fn cluster_with_label(value: &str) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "default",
                     "labels": {"environment": "cluster", "cost-center": value}}})
}

#[test]
fn every_row_is_stamped_on_create_and_restamped_on_update() {
    let settings_json = settings_for(&["environment", "cost-center"]);
    for (target, (kind_match, version)) in TARGETS.iter().filter_map(|t| Some((t, t.kind()?))) {
        let kind = kind_match.kind.unwrap();
        let api_version = format!("{}/{version}", kind_match.group);
        let from_cluster = target.labels
            == metadata_propagation_core::tags::targets::LabelSource::ClusterAndObject;
        // Every row stamps; GCP's under its own prefix.
        let stamps = true;
        let prefix = if target.profile_name() == Some("capg") {
            "plexsphere-"
        } else {
            "plexsphere:"
        };
        let read = |object: &Value| -> Value {
            let mut field = object.clone();
            for segment in target.field.segments() {
                field = field[segment].clone();
            }
            field
        };
        let expected = |cost_center: &str| -> Value {
            let mut tags = vec![(format!("{prefix}environment"), "own")];
            if from_cluster {
                tags.insert(0, (format!("{prefix}cost-center"), cost_center));
            }
            match target.field.segments().last() {
                Some("serverMetadata") => Value::Array(
                    tags.iter()
                        .map(|(k, v)| json!({"key": k, "value": v}))
                        .collect(),
                ),
                _ => tags
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            }
        };

        let lookup = MapLookup::default().with_object(cluster_with_label("cc-1"));
        let create = AdmissionRequest::for_object("CREATE", minimal(kind, &api_version));
        let (outcome, created) = run(&create, &settings_json, &lookup);
        assert!(
            matches!(outcome.verdict, Verdict::Allow(_)),
            "{kind}: {outcome:?}"
        );
        let want = if stamps {
            expected("cc-1")
        } else {
            Value::Null
        };
        assert_eq!(read(&created), want, "{kind} CREATE");
        assert_eq!(lookup.requests().len(), usize::from(from_cluster), "{kind}");

        // The Cluster's label changes; the object is updated.
        let lookup = MapLookup::default().with_object(cluster_with_label("cc-2"));
        let update = AdmissionRequest::for_object("UPDATE", created.clone());
        let (_, updated) = run(&update, &settings_json, &lookup);
        let want = match (stamps, target.create_only) {
            (false, _) => Value::Null,
            (true, true) => expected("cc-1"),
            (true, false) => expected("cc-2"),
        };
        assert_eq!(read(&updated), want, "{kind} UPDATE");
    }
}

#[test]
fn an_absent_field_stays_absent_when_there_is_nothing_to_write() {
    let request =
        AdmissionRequest::for_object("CREATE", row_object("AWSMachine", &json!({}), None));
    let (outcome, object) = run(&request, ON, &MapLookup::default());
    assert_eq!(object, request.object);
    assert_eq!(outcome.plan().map(|p| p.edits.len()), Some(0));
}

#[test]
fn a_field_holding_only_stale_tags_goes_and_a_users_empty_field_stays() {
    let stale = row_object(
        "AWSMachine",
        &json!({}),
        Some(json!({"plexsphere:gone": "x"})),
    );
    let (_, object) = run(
        &AdmissionRequest::for_object("UPDATE", stale),
        ON,
        &MapLookup::default(),
    );
    assert_eq!(object["spec"].get("additionalTags"), None);
    let empty = row_object("AWSMachine", &json!({}), Some(json!({})));
    let (_, object) = run(
        &AdmissionRequest::for_object("UPDATE", empty),
        ON,
        &MapLookup::default(),
    );
    assert_eq!(object["spec"]["additionalTags"], json!({}));
}

#[test]
fn a_list_keeps_the_users_order_and_puts_the_tags_after_it_sorted() {
    let tags = json!([{"key": "plexsphere:environment", "value": "old"},
                      {"key": "zone", "value": "a"}, {"key": "app", "value": "db"}]);
    let object = row_object(
        "OpenStackMachine",
        &json!({"environment": "lab", "cost-center": "cc-1"}),
        Some(tags),
    );
    let (_, object) = run(
        &AdmissionRequest::for_object("CREATE", object),
        &settings_for(&["environment", "cost-center"]),
        &MapLookup::default(),
    );
    assert_eq!(
        object["spec"]["serverMetadata"],
        json!([{"key": "zone", "value": "a"}, {"key": "app", "value": "db"},
               {"key": "plexsphere:cost-center", "value": "cc-1"},
               {"key": "plexsphere:environment", "value": "lab"}])
    );
}

// ---------------------------------------------------------------------------
// bad input
// ---------------------------------------------------------------------------

#[test]
fn a_map_field_of_the_wrong_shape_is_rejected_naming_it() {
    let outcome = evaluate(
        &fixture("awsmachine_update_bad_tags"),
        &settings(ON),
        &parents(),
    );
    assert_eq!(
        rejection(&outcome),
        (
            "cannot compute cloud tags: AWSMachine default/aws-prod-md-0-7xk2p-b6j3q \
             (infrastructure.cluster.x-k8s.io/v1beta2) spec.additionalTags: expected an object, \
             found an array",
            400
        )
    );
}

#[rstest]
#[case::map_value_not_a_string("AWSMachine", json!({"a": 1}),
    "spec.additionalTags[\"a\"]: expected a string value, found a number")]
#[case::list_is_a_map("OpenStackMachine", json!({"a": "b"}),
    "spec.serverMetadata: expected a list of {key, value} objects, found an object")]
#[case::list_entry_without_key("OpenStackMachine", json!([{"value": "b"}]),
    "spec.serverMetadata[0].key: required, and missing")]
#[case::list_value_not_a_string("OpenStackMachine", json!([{"key": "a", "value": 2}]),
    "spec.serverMetadata[0].value: expected a string, found a number")]
#[case::list_entry_not_an_object("OpenStackMachine", json!(["a=b"]),
    "spec.serverMetadata[0]: expected a {key, value} object, found a string")]
fn tag_fields_of_the_wrong_shape_are_rejected(
    #[case] kind: &str,
    #[case] tags: Value,
    #[case] problem: &str,
) {
    let request = AdmissionRequest::for_object("CREATE", row_object(kind, &json!({}), Some(tags)));
    let outcome = evaluate(&request, &settings(ON), &MapLookup::default());
    let (message, code) = rejection(&outcome);
    assert!(message.ends_with(problem), "{message}");
    assert_eq!(code, 400);
}

#[test]
fn a_malformed_label_set_annotation_is_rejected_naming_the_object() {
    let mut object = row_object("AWSMachine", &json!({}), None);
    object["metadata"]["annotations"][LABELS_ANNOTATION] = json!("[1]");
    let outcome = evaluate(
        &AdmissionRequest::for_object("CREATE", object),
        &settings(ON),
        &MapLookup::default(),
    );
    assert_eq!(
        rejection(&outcome).0,
        "cannot compute cloud tags: AWSMachine default/x-1 (infrastructure.cluster.x-k8s.io/v1beta2) \
         metadata.annotations[\"cloud-tags.plexsphere.io/labels\"]: expected a JSON object of \
         label keys to string values, found an array"
    );
}

#[test]
fn a_malformed_label_set_annotation_on_the_cluster_is_rejected_naming_the_cluster() {
    let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "aws-prod", "namespace": "default",
                     "annotations": {LABELS_ANNOTATION: "{\"a\": 1}"}}});
    let outcome = evaluate(
        &fixture("awscluster_create_topology"),
        &settings(ON),
        &MapLookup::default().with_object(cluster),
    );
    assert_eq!(
        rejection(&outcome),
        (
            "cannot compute cloud tags: Cluster default/aws-prod (cluster.x-k8s.io/v1beta2) \
             metadata.annotations[\"cloud-tags.plexsphere.io/labels\"][\"a\"]: expected a string \
             value, found a number",
            400
        )
    );
}

// ---------------------------------------------------------------------------
// reporting: validate mode and the explanation
// ---------------------------------------------------------------------------

#[test]
fn validate_mode_lists_the_tag_deviations() {
    let settings_json = r#"{"mode":"validate","cloudTags":{"capiInfrastructure":true,
        "propagatingLabels":["environment","cost-center","acme.io/team","acme:billing/owner"]}}"#;
    let outcome = evaluate(
        &fixture("awscluster_update_cluster_label_changed"),
        &settings(settings_json),
        &parents(),
    );
    let (message, _) = rejection(&outcome);
    // The skip annotation is never a deviation: the skip is a warning.
    assert_eq!(
        outcome.warnings,
        [
            "cloud tag skipped: label \"acme:billing/owner\" did not become tag \
          \"plexsphere:acme:billing/owner\" on provider profile capa: value-character-class \
          (the value contains 'ü' (U+00FC))"
        ]
    );
    assert_eq!(
        message,
        "the object deviates from the metadata propagation contract (validate mode): \
         spec.additionalTags: \"plexsphere:acme.io/team\" is \"payments\" (expected \
         \"payments-edge\"), \"plexsphere:environment\" is \"staging\" (expected \"prod\"), \
         remove \"plexsphere:project\" (stale: no opted-in label produces it)"
    );
}

/// A list-shaped tag field is reported entry by entry, and one whose only
/// fault is its order says so, naming the order expected.
#[test]
fn validate_mode_reports_a_tag_list_entry_by_entry() {
    let validate = ON.replacen("{\"cloudTags\"", "{\"mode\":\"validate\",\"cloudTags\"", 1);
    assert_ne!(validate, ON);
    let request = fixture("openstackmachine_create_from_machineset");
    let (_, mutated) = run(&request, ON, &parents());
    let tags = mutated["spec"]["serverMetadata"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(tags[0], json!({"key": "role", "value": "gpu-worker"}));
    let deviation = |tags: Vec<Value>| {
        let mut request = request.clone();
        request.object = mutated.clone();
        request.object["spec"]["serverMetadata"] = Value::Array(tags);
        let outcome = evaluate(&request, &settings(&validate), &parents());
        let (message, _) = rejection(&outcome);
        let at = message.find("spec.serverMetadata: ").expect(message);
        message[at..].to_owned()
    };

    // The user's entry last: only the order is wrong.
    let mut reordered = tags.clone();
    reordered.rotate_left(1);
    let keys: Vec<String> = (tags.iter())
        .map(|tag| format!("\"{}\"", tag["key"].as_str().unwrap()))
        .collect();
    let said = deviation(reordered);
    assert!(
        said.starts_with(&format!(
            "spec.serverMetadata: out of order (expected {}), from ",
            keys.join(", ")
        )),
        "{said}"
    );

    // A policy entry changed, another gone, a stale one added.
    let mut changed = tags.clone();
    let second = changed[1]["key"].as_str().unwrap().to_owned();
    changed[1]["value"] = json!("edited");
    let third = changed.remove(2);
    changed.push(json!({"key": "plexsphere:old", "value": "x"}));
    let said = deviation(changed);
    let expected = format!(
        "spec.serverMetadata: \"{second}\" is \"edited\" (expected {}), missing \"{}\" \
         (expected {}), remove \"plexsphere:old\", from ",
        tags[1]["value"],
        third["key"].as_str().unwrap(),
        third["value"]
    );
    assert!(said.starts_with(&expected), "{said}\n{expected}");
}

#[test]
fn the_explanation_shows_the_tags_decision() {
    let (_, explanation) = explain(
        &fixture("awscluster_update_cluster_label_changed"),
        &settings(ON),
        &parents(),
    );
    let text = explanation.to_string();
    for line in [
        "cloud tags: profile capa (the labels of Cluster default/aws-prod (cluster.x-k8s.io/v1beta2), \
         then this object's labels under profile capa)",
        "  profile built-in: AWSCluster (infrastructure.cluster.x-k8s.io/v1beta2) keeps its tags in \
         spec.additionalTags under the built-in profile capa",
        "  \"acme.io/team\" (metadata.labels): tag \"plexsphere:acme.io/team\"",
        "  \"environment\" (Cluster default/aws-prod (cluster.x-k8s.io/v1beta2) metadata.labels): tag \
         \"plexsphere:environment\"",
        "  \"acme:billing/owner\" (Cluster default/aws-prod (cluster.x-k8s.io/v1beta2) annotation \
         cloud-tags.plexsphere.io/labels): skipped, value-character-class: the value contains 'ü' \
         (U+00FC)",
        "  \"plexsphere:project\": removed from spec.additionalTags (stale: no opted-in label \
         produces it)",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

#[test]
fn value_characters_are_checked_after_key_characters_and_before_the_cap() {
    let labels = json!({"a#": "é", "b": "é", "c": "ok"});
    let request = AdmissionRequest::for_object("CREATE", row_object("AWSMachine", &labels, None));
    let (_, object) = run(
        &request,
        &settings_for(&["a#", "b", "c"]),
        &MapLookup::default(),
    );
    let reasons: Vec<Value> = skipped(&object)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].clone())
        .collect();
    assert_eq!(
        reasons,
        [json!("key-character-class"), json!("value-character-class")]
    );
    assert_eq!(
        object["spec"]["additionalTags"],
        json!({"plexsphere:c": "ok"})
    );
}

#[test]
fn the_look_up_floor_makes_the_look_ups_the_decision_makes() {
    for scenario in [
        "openstackmachine_create_from_machineset",
        "awscluster_create_topology",
        "awsmachine_create_from_machineset",
        "openstackmachine_update_create_only",
    ] {
        let request = fixture(scenario);
        let (floor, decided) = (parents(), parents());
        look_up(&request, &settings(ON), &floor);
        evaluate(&request, &settings(ON), &decided);
        assert_eq!(floor.requests(), decided.requests(), "{scenario}");
        assert_eq!(floor.field_masks(), decided.field_masks(), "{scenario}");
    }
}

// ---------------------------------------------------------------------------
// the contract's corners: names, the order of checks, emptied lists
// ---------------------------------------------------------------------------

/// A Cluster name that is no DNS-1123 subdomain (an empty label, a label
/// opening with `-`) names no Cluster: nothing is looked up, and the tags
/// come from the object's own labels.
#[rstest]
#[case::empty_label("a..b")]
#[case::label_starting_with_a_dash("a.-b")]
fn a_cluster_name_that_is_no_object_name_is_not_looked_up(#[case] name: &str) {
    let mut request = fixture("awscluster_create_topology");
    request.object["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = json!(name);
    let lookup = parents();
    let (outcome, _) = run(&request, ON, &lookup);
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
    assert_eq!(lookup.requests(), Vec::<ObjectRef>::new());
}

/// A tag field of the wrong shape is the object's fault: refused with 400
/// before the Cluster look-up, which here would fail retryably.
#[test]
fn a_malformed_tag_field_is_refused_before_any_look_up() {
    let mut request = fixture("awscluster_create_topology");
    request.object["spec"]["additionalTags"] = json!(["not", "a", "map"]);
    let lookup = MapLookup::default().with_error(
        cluster_ref("aws-prod"),
        LookupError::Failed("503 Service Unavailable".to_owned()),
    );
    let outcome = evaluate(&request, &settings(ON), &lookup);
    let (message, code) = rejection(&outcome);
    assert_eq!(code, 400, "{message}");
    assert!(message.contains("spec.additionalTags"), "{message}");
    assert_eq!(lookup.requests(), Vec::<ObjectRef>::new());
}

/// The CAPI rules name what they read before the tags do: an InfraMachine
/// whose ownerReferences and tag field are both malformed is refused for
/// its ownerReferences, with 400, before any look-up.
#[test]
fn malformed_owner_references_are_named_before_a_malformed_tag_field() {
    let mut object = row_object("AWSMachine", &json!({}), Some(json!(["not", "a", "map"])));
    object["metadata"]["ownerReferences"] = json!("not a list");
    let request = AdmissionRequest::for_object("CREATE", object);
    let lookup = MapLookup::default();
    let outcome = evaluate(&request, &settings(ON), &lookup);
    let (message, code) = rejection(&outcome);
    assert_eq!(code, 400, "{message}");
    assert!(message.contains("metadata.ownerReferences"), "{message}");
    assert!(!message.contains("additionalTags"), "{message}");
    assert_eq!(lookup.requests(), Vec::<ObjectRef>::new());
}

/// A list-shaped tag field that held only the policy's tags goes with the
/// last of them, as a map does; one with a user entry keeps it.
#[test]
fn a_list_left_with_only_stale_policy_entries_goes() {
    let stale = json!([{"key": "plexsphere:retired", "value": "x"}]);
    let object = row_object("OpenStackMachine", &json!({}), Some(stale));
    let request = AdmissionRequest::for_object("CREATE", object);
    let (outcome, after) = run(&request, ON, &MapLookup::default());
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
    assert_eq!(after["spec"].get("serverMetadata"), None, "{after}");

    let kept =
        json!([{"key": "role", "value": "gpu"}, {"key": "plexsphere:retired", "value": "x"}]);
    let object = row_object("OpenStackMachine", &json!({}), Some(kept));
    let request = AdmissionRequest::for_object("CREATE", object);
    let (_, after) = run(&request, ON, &MapLookup::default());
    assert_eq!(
        after["spec"]["serverMetadata"],
        json!([{"key": "role", "value": "gpu"}])
    );
}

// ---------------------------------------------------------------------------
// One property for every row of the tag table
// ---------------------------------------------------------------------------

/// Label keys a real object can carry, opted in or not.
const ROW_LABEL_KEYS: &[&str] = &["environment", "cost-center", "acme.io/team", "team", "tier"];

/// The object of `row` with `labels`, its tag field holding `entries` (in
/// the row's shape) and, for the composite resource, `provider`.
fn row_with(row: &Target, labels: &Value, entries: &[(String, String)], provider: &str) -> Value {
    let mut object = match row.kind() {
        Some((kind_match, version)) => {
            let kind = kind_match.kind.unwrap();
            minimal(kind, &format!("{}/{version}", kind_match.group))
        }
        None => {
            let file = "test_data/xr/xdatabase_stale_only_prefixed.json";
            let request: Value = serde_json::from_str(&support::read_repo_file(file)).unwrap();
            let mut object = request["object"].clone();
            object["spec"]["parameters"]["provider"] = json!(provider);
            object
        }
    };
    let own = object["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut all = labels.as_object().cloned().unwrap_or_default();
    all.extend(
        own.into_iter()
            .filter(|(k, _)| k == "cluster.x-k8s.io/cluster-name"),
    );
    object["metadata"]["labels"] = Value::Object(all);
    let field = &mut object;
    let (last, parents) = row.field.split_last().unwrap();
    let mut at = field;
    for segment in parents {
        at = &mut at[segment];
    }
    match (row.layout, entries.is_empty()) {
        (_, true) => {
            if let Some(map) = at.as_object_mut() {
                map.remove(last);
            }
        }
        (Layout::Map, false) => {
            at[last] = entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        }
        (Layout::KeyValueList, false) => {
            at[last] = entries
                .iter()
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect();
        }
    }
    object
}

fn field_of<'v>(row: &Target, object: &'v Value) -> Option<&'v Value> {
    row.field
        .segments()
        .try_fold(object, |at, segment| at.get(segment))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Every row of the tag table, the composite resource's included, maps
    /// and lists, under each row's profile: the user's entries survive (a
    /// list's whole and in their order), every entry the policy writes is a
    /// string under the prefix in force ([`check_tag_field`], the property
    /// the fuzz target checks too), the result is an object its CRD accepts,
    /// and evaluating it again changes nothing.
    #[test]
    fn every_row_holds_the_tag_field_property(
        row in 0..TARGETS.len(),
        labels in proptest::collection::btree_map(
            proptest::sample::select(ROW_LABEL_KEYS), "[a-z0-9]{0,8}", 0..5),
        user in proptest::collection::btree_map("[A-Z][a-z]{0,5}", "[a-z0-9]{0,6}", 0..4),
        stale in proptest::collection::btree_map("[a-z]{1,6}", "[a-z0-9]{0,6}", 0..3),
        provider in proptest::sample::select(&support::PROVIDERS[..]),
        operation in proptest::sample::select(&["CREATE", "UPDATE"][..]),
    ) {
        let target = &TARGETS[row];
        let settings_json = settings_for(&["environment", "cost-center", "acme.io/team"]);
        let parsed = settings(&settings_json);
        let cloud_tags = parsed.cloud_tags().unwrap();
        let labels = json!(labels);
        let probe = row_with(target, &labels, &[], provider);
        let prefix = match target.profile_name() {
            Some(name) => {
                let (profile, _) = cloud_tags.profiles.infrastructure(name).unwrap();
                cloud_tags.tag_keys(profile).prefix
            }
            None => support::prefix_in_force(&probe, cloud_tags),
        };
        // The user's entries, then entries under the prefix no label makes.
        let mut entries: Vec<(String, String)> = user.into_iter().collect();
        entries.extend(stale.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)));
        let object = row_with(target, &labels, &entries, provider);
        let lookup = MapLookup::default().with_object(cluster_with_label("cc-1"));
        let request = AdmissionRequest::for_object(operation, object.clone());
        let (outcome, mutated) = run(&request, &settings_json, &lookup);
        proptest::prop_assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");
        if let Err(violation) =
            check_tag_field(target, prefix, field_of(target, &object), field_of(target, &mutated))
        {
            proptest::prop_assert!(false, "{violation}\n before: {object}\n after: {mutated}");
        }
        let again = AdmissionRequest::for_object("UPDATE", mutated.clone());
        let (second, _) = run(&again, &settings_json, &lookup);
        proptest::prop_assert!(
            second.plan().is_some_and(|plan| plan.is_empty()),
            "not idempotent: {:?}", second.verdict
        );
    }
}

/// The look-up floor's look-ups for `request`, through the policy's route
/// and stages.
fn look_up(request: &AdmissionRequest, settings: &Settings, lookup: &dyn Lookup) {
    use metadata_propagation_core::evaluate::{self, route};
    let route = route(&request.kind, &request.operation);
    let stages = evaluate::stages(&request.kind, route, settings);
    evaluate::look_up(request, route, &stages, lookup).unwrap();
}
