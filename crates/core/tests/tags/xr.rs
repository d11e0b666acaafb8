//! The XR cloud-tag capability through `evaluate`, on Crossplane v1 (legacy,
//! claim-backed) and v2 (namespaced) composite resources.

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};

const SETTINGS: &str = r#"{"cloudTags":{"propagatingLabels":
    ["platform/env","acme:checkout/owner","team/cost center","aws:billing","platform/tier"]}}"#;

fn legacy_network() -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
        "metadata": {
            "name": "payments-network-7xk2p", "generation": 3, "uid": "1f0c",
            "labels": {"platform/env": "prod", "crossplane.io/claim-name": "payments-network",
                       "crossplane.io/claim-namespace": "team-payments",
                       "crossplane.io/composite": "payments-network-7xk2p", "team/cost center": "42"},
            "annotations": {"cloud-tags.plexsphere.io/labels": "{\"acme:checkout/owner\":\"payments\",\"aws:billing\":\"x\"}"},
            "finalizers": ["composite.apiextensions.crossplane.io"]
        },
        "spec": {
            "parameters": {"provider": "AWS", "region": "eu-central-1", "cidrBlock": "10.20.0.0/16"},
            "compositionRef": {"name": "xnetwork-aws"},
            "compositionRevisionRef": {"name": "xnetwork-aws-8d3f1a2"},
            "compositionUpdatePolicy": "Automatic",
            "claimRef": {"apiVersion": "platform.example.org/v1alpha1", "kind": "Network",
                         "name": "payments-network", "namespace": "team-payments"},
            "resourceRefs": [{"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC", "name": "payments-network-7xk2p"}],
            "writeConnectionSecretToRef": {"name": "payments-network-7xk2p-connection", "namespace": "crossplane-system"},
            "cloudTags": {"plexsphere:platform/stale": "old", "CostCenter": "42"}
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    })
}

fn run(object: Value, settings: &str) -> (Outcome, Value) {
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let request: AdmissionRequest = serde_json::from_value(json!({
        "uid": "u", "operation": "UPDATE",
        "kind": {"group": "platform.example.org", "version": "v1alpha1", "kind": object["kind"]},
        "object": object,
    }))
    .unwrap();
    let outcome = evaluate(&request, &settings, &MapLookup::default());
    let mut mutated = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
    }
    (outcome, mutated)
}

#[test]
fn legacy_xr_gets_tags_skips_and_keeps_user_entries() {
    let (outcome, xr) = run(legacy_network(), SETTINGS);
    assert_eq!(
        xr["spec"]["cloudTags"],
        json!({"CostCenter": "42", "plexsphere:platform/env": "prod",
               "plexsphere:acme:checkout/owner": "payments",
               "plexsphere:team/cost center": "42"})
    );
    assert_eq!(
        xr["metadata"]["annotations"]["cloud-tags.plexsphere.io/skipped"],
        r#"[{"qualifiedKey":"aws:billing","tagKey":"plexsphere:aws:billing","provider":"aws","reason":"reserved-prefix"}]"#
    );
    // The skip, then the stale entry the policy removed.
    assert_eq!(
        outcome.warnings,
        [
            "cloud tag skipped: label \"aws:billing\" did not become tag \"plexsphere:aws:billing\" \
          on provider profile aws: reserved-prefix (the key starts with the reserved prefix \"aws:\")",
            "cloud tag removed from spec.cloudTags: \"plexsphere:platform/stale\" (the policy owns \
          keys under prefix \"plexsphere:\" and no opted-in label gives this one)"
        ]
    );
    let mut rest = legacy_network();
    rest["spec"]["cloudTags"] = xr["spec"]["cloudTags"].clone();
    rest["metadata"]["annotations"] = xr["metadata"]["annotations"].clone();
    assert_eq!(
        xr, rest,
        "nothing but cloudTags and the skip annotation changes"
    );
}

#[test]
fn mutation_is_idempotent() {
    let (_, once) = run(legacy_network(), SETTINGS);
    let (again, twice) = run(once.clone(), SETTINGS);
    assert_eq!(again.plan(), Some(&Default::default()));
    assert_eq!(once, twice);
}

#[test]
fn stale_skip_annotation_and_empty_tag_map_are_removed() {
    let mut xr = legacy_network();
    xr["spec"]["cloudTags"] = json!({"plexsphere:platform/env": "old"});
    xr["metadata"]["annotations"] = json!({"cloud-tags.plexsphere.io/skipped": "[]", "other": "x"});
    let (_, out) = run(
        xr,
        r#"{"cloudTags":{"propagatingLabels":["nothing/here"]}}"#,
    );
    assert!(out["spec"].get("cloudTags").is_none(), "{}", out["spec"]);
    assert_eq!(out["metadata"]["annotations"], json!({"other": "x"}));
}

#[test]
fn empty_settings_propagate_nothing_and_leave_absent_maps_absent() {
    let mut xr = legacy_network();
    xr["spec"].as_object_mut().unwrap().remove("cloudTags");
    let (outcome, _) = run(xr, "{}");
    assert_eq!(outcome, Outcome::allow());
}

#[test]
fn adopted_resources_are_left_as_submitted() {
    let mut xr = legacy_network();
    xr["metadata"]["labels"]["platform/origin"] = json!("adopted");
    let (outcome, _) = run(xr, SETTINGS);
    assert_eq!(outcome, Outcome::allow());
}

/// "Left exactly as submitted" comes before the tag field is read: an
/// adopted composite resource is never refused for its tags, whoever wrote
/// them; the label-set annotation saying so counts as its labels do.
#[test]
fn adopted_resources_are_not_refused_for_their_tag_field() {
    let mut xr = legacy_network();
    xr["spec"]["cloudTags"] = json!(["not", "a", "map"]);
    let (outcome, _) = run(xr.clone(), SETTINGS);
    assert!(
        matches!(&outcome.verdict, Verdict::Reject { code: 400, message }
            if message.contains("spec.cloudTags")),
        "{outcome:?}"
    );
    xr["metadata"]["annotations"] =
        json!({"cloud-tags.plexsphere.io/labels": r#"{"platform/origin":"adopted"}"#});
    let (outcome, _) = run(xr, SETTINGS);
    assert_eq!(outcome, Outcome::allow());
}

/// The label set decides adoption, and an annotation entry wins over a
/// label: with the annotation malformed the policy cannot tell, so the XR
/// is refused naming the annotation, even when its labels say adopted
/// (docs/cloud-tags.md, "The seed's vocabulary").
#[test]
fn a_malformed_label_set_is_refused_even_when_the_labels_say_adopted() {
    let mut xr = legacy_network();
    xr["metadata"]["labels"]["platform/origin"] = json!("adopted");
    xr["metadata"]["annotations"] = json!({"cloud-tags.plexsphere.io/labels": "{not json"});
    let (outcome, _) = run(xr, SETTINGS);
    assert!(
        matches!(&outcome.verdict, Verdict::Reject { code: 400, message }
            if message.contains(r#"metadata.annotations["cloud-tags.plexsphere.io/labels"]"#)),
        "{outcome:?}"
    );
}

#[test]
fn provider_path_setting_and_case_insensitive_match() {
    let mut xr = legacy_network();
    xr["spec"]["parameters"]
        .as_object_mut()
        .unwrap()
        .remove("provider");
    xr["spec"]["cloud"] = json!({"vendor": "HETZNER"});
    let settings = r#"{"cloudTags":{"propagatingLabels":["team/cost center","platform/env"],
                       "providerPath":"spec.cloud.vendor"}}"#;
    let (_, out) = run(xr, settings);
    assert_eq!(
        out["metadata"]["annotations"]["cloud-tags.plexsphere.io/skipped"],
        r#"[{"qualifiedKey":"team/cost center","tagKey":"plexsphere:team/cost center","provider":"hetzner","reason":"key-character-class"}]"#
    );
}

#[test]
fn resolve_failures_reject_naming_the_field() {
    let cases = [
        (
            json!("not json"),
            "cannot compute cloud tags: metadata.annotations[\"cloud-tags.plexsphere.io/labels\"]: \
             not valid JSON (expected ident at line 1 column 2); expected an object such as \
             {\"acme:team/owner\":\"payments\"}",
        ),
        (
            json!("[\"a\"]"),
            "cannot compute cloud tags: metadata.annotations[\"cloud-tags.plexsphere.io/labels\"]: \
             expected a JSON object of label keys to string values, found an array",
        ),
        (
            json!("{\"team/x\":{\"nested\":\"1\"}}"),
            "cannot compute cloud tags: metadata.annotations[\"cloud-tags.plexsphere.io/labels\"][\"team/x\"]: \
             expected a string value, found an object",
        ),
    ];
    for (annotation, message) in cases {
        let mut xr = legacy_network();
        xr["metadata"]["annotations"]["cloud-tags.plexsphere.io/labels"] = annotation;
        let (outcome, _) = run(xr, SETTINGS);
        assert_eq!(
            outcome.verdict,
            Verdict::Reject {
                message: message.into(),
                code: 400
            }
        );
    }
    let mut xr = legacy_network();
    xr["spec"]["parameters"]["provider"] = json!(7);
    let (outcome, _) = run(xr, SETTINGS);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot compute cloud tags: spec.parameters.provider: expected a string, found a number".into(),
            code: 400
        }
    );
}

#[test]
fn annotation_entries_win_over_labels() {
    let mut xr = legacy_network();
    xr["metadata"]["annotations"]["cloud-tags.plexsphere.io/labels"] =
        json!("{\"platform/env\":\"staging\"}");
    let (_, out) = run(
        xr,
        r#"{"cloudTags":{"propagatingLabels":["platform/env"]}}"#,
    );
    assert_eq!(
        out["spec"]["cloudTags"]["plexsphere:platform/env"],
        "staging"
    );
}

/// The warning for a kind routed to the cloud tags without a composite
/// resource's shape.
fn not_a_composite_resource(kind: &str, api_version: &str) -> String {
    format!(
        "{kind} ({api_version}) is not a Crossplane composite resource (no spec.crossplane, nor a \
         cluster-scoped spec.compositionUpdatePolicy), so this policy leaves it unchanged; a v2 XR \
         is tagged once Crossplane writes spec.crossplane, any other kind: remove it from the \
         policy's rules"
    )
}

/// Which objects are composite resources is told by their shape
/// (docs/cloud-tags.md, "Which kinds are composite resources"): a v2 XR has `spec.crossplane`,
/// a v1 or LegacyCluster XR is cluster-scoped with
/// `spec.compositionUpdatePolicy`. Anything else outside the Cluster API
/// and Kubernetes groups is allowed unchanged, with one warning naming it.
#[test]
fn only_objects_shaped_as_composite_resources_are_tagged() {
    let settings = r#"{"cloudTags":{"propagatingLabels":["platform/env","platform/team"]}}"#;
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let certificate: Value = serde_norway::from_str(&super::support::read_repo_file(
        "test_data/xr/certificate_opted_in_labels.yaml",
    ))
    .unwrap();
    // A v2 XR whose manifest leaves spec.crossplane out: until Crossplane
    // writes it, nothing tells it from any other namespaced kind.
    let bare_v2 = json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
        "metadata": {"name": "db", "namespace": "team-a", "labels": {"platform/env": "prod"}},
        "spec": {"parameters": {"provider": "aws"}}});
    // A claim: namespaced, so its compositionUpdatePolicy says nothing.
    let claim = json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "Network",
        "metadata": {"name": "net", "namespace": "team-a", "labels": {"platform/env": "prod"}},
        "spec": {"parameters": {"provider": "aws"}, "compositionUpdatePolicy": "Automatic",
                 "compositeDeletePolicy": "Background"}});
    // A managed resource: cluster-scoped, but no update policy.
    let managed = json!({"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC",
        "metadata": {"name": "vpc", "labels": {"platform/env": "prod"}},
        "spec": {"forProvider": {"region": "eu-central-1"}, "providerConfigRef": {"name": "default"}}});
    for (object, kind, api_version) in [
        (certificate, "Certificate", "cert-manager.io/v1"),
        (
            bare_v2.clone(),
            "XDatabase",
            "platform.example.org/v1alpha1",
        ),
        (claim, "Network", "platform.example.org/v1alpha1"),
        (managed, "VPC", "ec2.aws.upbound.io/v1beta1"),
    ] {
        for operation in ["CREATE", "UPDATE"] {
            let request = AdmissionRequest::for_object(operation, object.clone());
            let outcome = evaluate(&request, &settings, &MapLookup::default());
            assert_eq!(
                outcome,
                Outcome {
                    warnings: vec![not_a_composite_resource(kind, api_version)],
                    ..Outcome::allow()
                },
                "{kind} {operation}"
            );
        }
    }
    // The same v2 XR with spec.crossplane (its manifest's `{}`, or what
    // Crossplane writes) and the v1 XR are tagged.
    let mut v2 = bare_v2;
    v2["spec"]["crossplane"] = json!({});
    let v1 = legacy_network();
    for object in [v2, v1] {
        let request = AdmissionRequest::for_object("CREATE", object);
        let outcome = evaluate(&request, &settings, &MapLookup::default());
        let Verdict::Allow(plan) = &outcome.verdict else {
            panic!("{outcome:?}");
        };
        let mut tagged = request.object.clone();
        plan.apply(&mut tagged);
        assert_eq!(
            tagged["spec"]["cloudTags"]["plexsphere:platform/env"],
            "prod"
        );
    }
}
