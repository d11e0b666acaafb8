//! The wire on whole payloads, as the waPC edge hands them over: it decodes
//! an object only for requests the policy acts on, and that shortcut never
//! changes an answer.

use super::support;
use metadata_propagation_core::evaluate::{Route, evaluate, route};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Outcome;
use metadata_propagation_core::request::{AdmissionRequest, GroupVersionKind};
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::wire;
use serde_json::{Map, Value, json};

fn read(path: &str) -> Value {
    serde_json::from_str(&support::read_repo_file(path)).unwrap()
}

/// Whether the policy acts on a request of this kind and operation at all
/// (what `AdmissionRequest::acted_on` answers).
fn acts_on(kind: &GroupVersionKind, operation: &str) -> bool {
    route(kind, operation) != Route::NotActedOn
}

/// The policy's `validate` on requests that read no parent: the edge's
/// look-up is never called, so none answers here.
fn validate(payload: &[u8]) -> Vec<u8> {
    wire::validate_with(payload, &MapLookup::default())
}

/// `{"request": …, "settings": …}` as the host sends it.
fn payload(request: &Value, settings: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap()
}

/// The request with `object` moved to the front, before `kind` and
/// `operation` (serde_json keeps insertion order only for maps it builds, so
/// the text is assembled by hand).
fn object_first(request: &Value) -> Vec<u8> {
    let fields: &Map<String, Value> = request.as_object().unwrap();
    let mut parts = vec![format!("\"object\":{}", fields["object"])];
    parts.extend(
        fields
            .iter()
            .filter(|(key, _)| *key != "object")
            .map(|(key, value)| format!("{}:{value}", Value::from(key.as_str()))),
    );
    format!("{{\"request\":{{{}}},\"settings\":{{}}}}", parts.join(",")).into_bytes()
}

#[test]
fn kinds_the_policy_does_not_act_on_are_allowed_unchanged_without_reading_anything() {
    let cluster = read("test_data/bench/unhandled-cluster.request.json");
    let request: AdmissionRequest = serde_json::from_value(cluster.clone()).unwrap();
    assert!(!acts_on(&request.kind, &request.operation));
    // evaluate, which reads the object, agrees with the shortcut
    let lookup = MapLookup::default();
    assert_eq!(
        evaluate(&request, &Settings::default(), &lookup),
        Outcome::allow()
    );
    assert!(lookup.requests().is_empty());
    assert_eq!(
        validate(&payload(&cluster, &json!({}))),
        br#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#
    );
    // a DELETE of a kind the policy does act on
    let mut delete = read("test_data/bench/xr-aws-5.request.json");
    delete["operation"] = json!("DELETE");
    delete["oldObject"] = delete["object"].take();
    let request: AdmissionRequest = serde_json::from_value(delete).unwrap();
    assert!(!acts_on(&request.kind, &request.operation));
}

#[test]
fn kinds_the_policy_acts_on() {
    for (group, kind) in [
        ("cluster.x-k8s.io", "MachineSet"),
        ("cluster.x-k8s.io", "Machine"),
        ("cluster.x-k8s.io", "MachineDeployment"),
        ("cluster.x-k8s.io", "MachinePool"),
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
        ("infrastructure.cluster.x-k8s.io", "DockerMachine"),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig"),
        ("platform.example.org", "XNetwork"),
    ] {
        let kind =
            serde_json::from_value(json!({"group": group, "version": "v1beta2", "kind": kind}))
                .unwrap();
        assert!(acts_on(&kind, "CREATE"), "{kind:?}");
        assert!(acts_on(&kind, "UPDATE"), "{kind:?}");
        assert!(!acts_on(&kind, "DELETE"), "{kind:?}");
    }
    for kind in ["Cluster", "ClusterClass", "MachineHealthCheck"] {
        let kind = serde_json::from_value(
            json!({"group": "cluster.x-k8s.io", "version": "v1beta2", "kind": kind}),
        )
        .unwrap();
        assert!(!acts_on(&kind, "CREATE"), "{kind:?}");
    }
}

#[test]
fn the_answer_does_not_depend_on_where_the_object_is_in_the_request() {
    for (request, settings) in [
        (
            "test_data/bench/xr-aws-50.request.json",
            "test_data/bench/xr-aws-50.settings.json",
        ),
        (
            "test_data/bench/unhandled-cluster.request.json",
            "test_data/bench/unhandled-cluster.settings.json",
        ),
    ] {
        let request = read(request);
        let settings = read(settings);
        let usual = validate(&payload(&request, &settings));
        let reordered = object_first(&request);
        let text = String::from_utf8(reordered.clone()).unwrap();
        assert!(text.starts_with("{\"request\":{\"object\":"), "{text:.40}");
        let reordered = String::from_utf8(reordered)
            .unwrap()
            .replace(",\"settings\":{}}", &format!(",\"settings\":{settings}}}"))
            .into_bytes();
        assert_eq!(
            String::from_utf8(validate(&reordered)).unwrap(),
            String::from_utf8(usual).unwrap()
        );
    }
}

/// A ConfigMap with an opted-in label, as a `kubectl create` sends it.
fn config_map_request() -> Value {
    json!({
        "uid": "3b1f6a4e-1d0c-4a57-9b5e-2f4d8c1e7a90",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": "payments-settings",
        "namespace": "payments",
        "operation": "CREATE",
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "payments-settings", "namespace": "payments",
                         "labels": {"platform/env": "prod"}},
            "data": {"region": "eu-central-1"}
        },
        "oldObject": null,
        "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
    })
}

#[test]
fn kubernetes_kinds_are_allowed_unchanged_with_a_warning_naming_the_kind() {
    let settings = json!({"cloudTags": {"propagatingLabels": ["platform/env"]}});
    let config_map = config_map_request();
    let request: AdmissionRequest = serde_json::from_value(config_map.clone()).unwrap();
    assert!(!acts_on(&request.kind, &request.operation));
    let warning = "ConfigMap (v1) is a Kubernetes kind, neither a Cluster API object nor a \
                   Crossplane composite resource, so this policy leaves it unchanged; remove it \
                   from the policy's rules";
    let expected = Outcome {
        warnings: vec![warning.to_owned()],
        ..Outcome::allow()
    };
    let text = settings.to_string();
    let prepared = Settings::from_json(text.as_bytes()).unwrap();
    assert_eq!(
        evaluate(&request, &prepared, &MapLookup::default()),
        expected
    );
    let reply: Value = serde_json::from_slice(&validate(&payload(&config_map, &settings))).unwrap();
    assert_eq!(
        reply,
        json!({"accepted": true, "message": null, "code": null, "mutated_object": null,
               "audit_annotations": null, "warnings": [warning]})
    );

    // apps/v1 and a k8s.io group, too
    for (group, kind, api_version) in [
        ("apps", "Deployment", "apps/v1"),
        ("networking.k8s.io", "Ingress", "networking.k8s.io/v1"),
    ] {
        let kind =
            serde_json::from_value(json!({"group": group, "version": "v1", "kind": kind})).unwrap();
        let outcome = metadata_propagation_core::evaluate::not_acted_on(&kind, "UPDATE");
        assert!(
            outcome.warnings[0].contains(&format!("({api_version})")),
            "{outcome:?}"
        );
        assert!(!acts_on(&kind, "UPDATE"));
    }
}

/// A payload or a settings document that is not UTF-8 is refused, saying
/// so and where, before anything is decoded: every decode reads text,
/// checked once as a whole.
#[test]
fn input_that_is_not_utf8_is_refused_naming_the_byte() {
    let request = read("test_data/bench/xr-aws-5.request.json");
    let mut bytes = payload(&request, &json!({}));
    let at = bytes.windows(4).position(|w| w == b"prod").unwrap();
    bytes[at] = 0xff;
    let reply: Value = serde_json::from_slice(&validate(&bytes)).unwrap();
    assert_eq!(reply["accepted"], false, "{reply}");
    assert_eq!(
        reply["message"],
        format!("cannot decode the admission request: not UTF-8: invalid byte at offset {at}")
    );

    let settings = b"{\"cloudTags\":{\"propagatingLabels\":[\"team\xff\"]}}";
    let error = Settings::from_json(settings).unwrap_err().to_string();
    assert_eq!(error, "settings: not UTF-8: invalid byte at offset 40");
    let reply: Value = serde_json::from_slice(&metadata_propagation_core::wire::validate_settings(
        settings,
    ))
    .unwrap();
    assert_eq!(reply["valid"], false, "{reply}");
    assert!(
        reply["message"].as_str().unwrap().contains("not UTF-8"),
        "{reply}"
    );
}
