//! Validate mode: a rejection that lists exactly the changes mutate mode
//! would make; compliant objects are accepted; skips stay warnings.

use super::support;

use metadata_propagation_core::evaluate::deviations;
use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::SKIPPED_ANNOTATION;
use serde_json::{Value, json};
use support::crd_schema;

/// (validate-mode outcome, object after mutate mode).
fn both_modes(object: &Value, lookup: &MapLookup, settings: &str) -> (Outcome, Value) {
    let mutate = Settings::from_json(settings.as_bytes()).unwrap();
    let mut validate_json: Value = serde_json::from_str(settings).unwrap();
    validate_json["mode"] = json!("validate");
    let validate_json = validate_json.to_string();
    let validate = Settings::from_json(validate_json.as_bytes()).unwrap();

    let req = AdmissionRequest::for_object("UPDATE", object.clone());
    let mutated = evaluate(&req, &mutate, lookup);
    let mut after = object.clone();
    if let Verdict::Allow(plan) = &mutated.verdict {
        plan.apply(&mut after);
    }
    if let Err(e) = crd_schema::check_output(object, &after) {
        panic!("{e}");
    }
    let checked = evaluate(&req, &validate, lookup);
    // The invariants: validate rejects exactly when mutate changes what
    // the policy writes (the skip annotation only reports), and validate
    // accepts what mutate produced.
    let without_skips = |object: &Value| {
        let mut object = object.clone();
        if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
            annotations.remove(SKIPPED_ANNOTATION);
        }
        object
    };
    assert_eq!(
        matches!(checked.verdict, Verdict::Reject { .. }),
        without_skips(&after) != without_skips(object),
        "validate rejects iff mutate changes what the policy writes"
    );
    // Skips stay warnings in both modes. The entries mutate mode removes
    // from a tag field are warned of there only, one warning each in key
    // order after the rest; validate mode removes nothing and names each
    // in its rejection instead.
    let (removals, others): (Vec<&String>, Vec<&String>) =
        (mutated.warnings.iter()).partition(|w| w.starts_with(REMOVED_WARNING));
    assert_eq!(
        checked.warnings.iter().collect::<Vec<_>>(),
        others,
        "skips stay warnings"
    );
    let removed: Vec<String> = removed_cloud_tags(object, &after)
        .into_iter()
        .map(|key| format!("{REMOVED_WARNING}spec.cloudTags: {}", Value::from(key)))
        .collect();
    let named: Vec<String> = (removals.iter())
        .map(|w| w.split(" (the policy owns").next().unwrap().to_owned())
        .collect();
    assert_eq!(named, removed, "one removal warning per removed entry");
    // The rejection keeps the plan it was rendered from: the one decision
    // mutate mode applies, less the skip annotation.
    let applied = (mutated.plan().cloned())
        .map(deviations::judged)
        .filter(|p| !p.is_empty());
    assert_eq!(
        checked.refused_plan, applied,
        "validate mode's refused plan is mutate mode's"
    );
    let again = evaluate(
        &AdmissionRequest::for_object("UPDATE", after.clone()),
        &validate,
        lookup,
    );
    assert!(
        matches!(again.verdict, Verdict::Allow(ref p) if p.is_empty()),
        "validate(mutate(x)) is accepted: {:?}",
        again.verdict
    );
    (checked, after)
}

/// How the warning for an entry mutate mode removes from a tag field starts.
const REMOVED_WARNING: &str = "cloud tag removed from ";

/// The keys of `before`'s `spec.cloudTags` that `after` no longer has, in
/// key order.
fn removed_cloud_tags<'a>(before: &'a Value, after: &Value) -> Vec<&'a str> {
    let Some(tags) = before["spec"]["cloudTags"].as_object() else {
        return Vec::new();
    };
    let mut keys: Vec<&str> = (tags.keys())
        .filter(|key| after["spec"]["cloudTags"].get(key.as_str()).is_none())
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn message(outcome: &Outcome) -> &str {
    match &outcome.verdict {
        Verdict::Reject { message, .. } => message,
        Verdict::Allow(_) => panic!("expected a rejection"),
    }
}

fn fixture(path: &str) -> Value {
    let parsed: Value = serde_json::from_str(&support::read_repo_file(path)).unwrap();
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
        &MapLookup::default(),
        &settings("test_data/xr/settings_propagating.json"),
    );
    assert_eq!(
        message(&outcome),
        "the object deviates from the metadata propagation contract (validate mode): \
         spec.cloudTags: missing \"plexsphere:acme:checkout/owner\" (expected \"team-payments\"), \
         \"plexsphere:platform/env\" is \"staging\" (expected \"prod\"), \
         remove \"plexsphere:aws:cost\" (invalid for profile aws: reserved-prefix), \
         remove \"plexsphere:platform/retired\" (stale: no opted-in label produces it)"
    );
    assert_eq!(outcome.warnings, Vec::<String>::new(), "nothing skipped");
    // Mutate mode removes both entries, and says so, one warning each.
    let text = settings("test_data/xr/settings_propagating.json");
    let settings = Settings::from_json(text.as_bytes()).unwrap();
    let mutated = evaluate(
        &AdmissionRequest::for_object("UPDATE", xr),
        &settings,
        &MapLookup::default(),
    );
    assert_eq!(
        mutated.warnings,
        [
            "cloud tag removed from spec.cloudTags: \"plexsphere:aws:cost\" (the policy owns keys \
             under prefix \"plexsphere:\" and no opted-in label gives this one)",
            "cloud tag removed from spec.cloudTags: \"plexsphere:platform/retired\" (the policy \
             owns keys under prefix \"plexsphere:\" and no opted-in label gives this one)"
        ]
    );
}

#[test]
fn xr_compliant_object_is_accepted_with_skip_warnings() {
    let xr = fixture("test_data/xr/examples/xdatabase_hetzner.json");
    let settings = settings("test_data/xr/examples/settings.json");
    let (_, mutated) = both_modes(&xr, &MapLookup::default(), &settings);
    let (outcome, _) = both_modes(&mutated, &MapLookup::default(), &settings);
    assert!(matches!(outcome.verdict, Verdict::Allow(ref p) if p.is_empty()));
    assert!(
        !outcome.warnings.is_empty(),
        "the example has a skipped label"
    );
    // Right tags without the skip annotation: accepted, the skips warned.
    let mut unannotated = mutated.clone();
    let annotations = unannotated["metadata"]["annotations"]
        .as_object_mut()
        .unwrap();
    assert!(annotations.remove(SKIPPED_ANNOTATION).is_some());
    let (without, _) = both_modes(&unannotated, &MapLookup::default(), &settings);
    assert!(matches!(without.verdict, Verdict::Allow(ref p) if p.is_empty()));
    assert_eq!(without.warnings, outcome.warnings);
}

#[test]
fn xr_empty_tag_map_must_be_absent() {
    let mut xr = fixture("test_data/xr/xnetwork_v1_aws.json");
    xr["spec"]["cloudTags"] = json!({});
    let (outcome, _) = both_modes(&xr, &MapLookup::default(), "{}");
    assert_eq!(
        message(&outcome),
        "the object deviates from the metadata propagation contract (validate mode): \
         spec.cloudTags: must be absent when empty"
    );
}

/// Every parent of the CAPI fixtures of one API version, as a lookup.
fn capi_parents(version: &str) -> MapLookup {
    let dir = support::repo_path(&format!("test_data/capi/{version}/parents"));
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths.iter().fold(MapLookup::default(), |lookup, path| {
        let text = std::fs::read_to_string(path).unwrap();
        lookup.with_object(serde_norway::from_str(&text).unwrap())
    })
}

#[test]
fn capi_deviation_messages_per_kind() {
    // (fixture, the full deviation list after the common prefix)
    let cases = [
        (
            "machineset_update_drifted_from_md",
            r#"metadata.labels: missing "node-role.kubernetes.io/worker" (expected ""), "nodepool" is "pool0" (expected "pool1"); spec.template.metadata.labels: "nodepool" is "pool0" (expected "pool1")"#,
        ),
        (
            "machine_create_from_machineset",
            r#"metadata.annotations: missing "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes" (expected "storage-operator"); metadata.labels: missing "node-role.kubernetes.io/worker" (expected ""), missing "nodepool" (expected "pool1")"#,
        ),
        (
            "dockermachine_create_from_machineset",
            r#"metadata.annotations: missing "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes" (expected "storage-operator"); metadata.labels: missing "node-role.kubernetes.io/worker" (expected ""), missing "nodepool" (expected "pool1")"#,
        ),
        (
            "kubeadmconfig_create_from_kcp",
            r#"metadata.annotations: missing "Cluster.topology.controlPlane.annotation" (expected "Cluster.topology.controlPlane.annotationValue"), missing "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io" (expected "Cluster.topology.controlPlane.nodeAnnotationValue"), missing "ClusterClass.controlPlane.annotation" (expected "ClusterClass.controlPlane.annotationValue"), missing "ControlPlaneTemplate.machineTemplate.annotation" (expected "ControlPlaneTemplate.machineTemplate.annotationValue"), missing "pre-drain.delete.hook.machine.cluster.x-k8s.io/kcp-ready-check" (expected "true"); metadata.labels: missing "Cluster.topology.controlPlane.label" (expected "Cluster.topology.controlPlane.labelValue"), missing "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io" (expected "Cluster.topology.controlPlane.nodeLabelValue"), missing "ClusterClass.controlPlane.label" (expected "ClusterClass.controlPlane.labelValue"), missing "ControlPlaneTemplate.machineTemplate.label" (expected "ControlPlaneTemplate.machineTemplate.labelValue"), missing "topology.cluster.x-k8s.io/owned" (expected "")"#,
        ),
        (
            "kubeadmcontrolplane_update_topology_no_machine_infrastructure",
            r#"metadata.annotations: "Cluster.topology.controlPlane.annotation" is "previous-value" (expected "Cluster.topology.controlPlane.annotationValue"), missing "ClusterClass.controlPlane.annotation" (expected "ClusterClass.controlPlane.annotationValue"); metadata.labels: missing "Cluster.topology.controlPlane.label" (expected "Cluster.topology.controlPlane.labelValue"), "environment" is "class-default" (expected "production")"#,
        ),
        (
            "machinedeployment_create_topology",
            r#"metadata.annotations: missing "Cluster.topology.machineDeployment.annotation" (expected "Cluster.topology.machineDeployment.annotationValue"), missing "Cluster.topology.md.annotation.node.cluster.x-k8s.io" (expected "Cluster.topology.machineDeployment.nodeAnnotationValue"), missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue"); metadata.labels: missing "Cluster.topology.machineDeployment.label" (expected "Cluster.topology.machineDeployment.labelValue"), missing "Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io" (expected "Cluster.topology.machineDeployment.nodeLabelValue"), missing "ClusterClass.machineDeployment.label" (expected "ClusterClass.machineDeployment.labelValue"); spec.template.metadata.annotations: missing "Cluster.topology.machineDeployment.annotation" (expected "Cluster.topology.machineDeployment.annotationValue"), missing "Cluster.topology.md.annotation.node.cluster.x-k8s.io" (expected "Cluster.topology.machineDeployment.nodeAnnotationValue"), missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue"); spec.template.metadata.labels: missing "Cluster.topology.machineDeployment.label" (expected "Cluster.topology.machineDeployment.labelValue"), missing "Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io" (expected "Cluster.topology.machineDeployment.nodeLabelValue"), missing "ClusterClass.machineDeployment.label" (expected "ClusterClass.machineDeployment.labelValue")"#,
        ),
    ];
    for (name, deviations) in cases {
        let object = fixture(&format!("test_data/capi/v1beta2/{name}.json"));
        let (outcome, _) = both_modes(&object, &capi_parents("v1beta2"), "{}");
        assert_eq!(
            message(&outcome),
            format!(
                "the object deviates from the metadata propagation contract (validate mode): {deviations}"
            ),
            "{name}"
        );
    }
}

#[test]
fn capi_compliant_objects_are_accepted_in_both_versions() {
    for version in ["v1beta1", "v1beta2"] {
        let object = fixture(&format!(
            "test_data/capi/{version}/machineset_create_from_md.json"
        ));
        let (_, mutated) = both_modes(&object, &capi_parents(version), "{}");
        let (outcome, _) = both_modes(&mutated, &capi_parents(version), "{}");
        assert!(
            matches!(outcome.verdict, Verdict::Allow(ref p) if p.is_empty()),
            "{version}"
        );
    }
}
