//! The fuzz targets' findings (fuzz/regressions/, which `make fuzz` replays
//! through the targets first), each restated here on the policy's public API
//! with what it turned out to be: the rule that was wrong, and the rule that
//! holds now.

use super::support;

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::invariants::{
    Capability, Violation, check_mutation, prefix_for, transform_with,
};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::request::lookup::MapLookup;
use metadata_propagation_core::request::outcome::Verdict;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::contract_names::LABELS_ANNOTATION;
use proptest::prelude::*;
use serde_json::{Value, json};

/// fuzz/regressions/mutated_objects/crash-dc3701b8… (6,207,270 executions
/// into a 1,200 s campaign): a v1beta1 MachineDeployment whose
/// `metadata.annotations` carry the label-set annotation (value `""`, among
/// arbitrary keys), and its MachineSet created. The MachineDeployment →
/// MachineSet rule (mdutil `MachineSetAnnotationsFromMachineDeployment`)
/// copied the annotation to the MachineSet, as CAPI's controllers do; the
/// oracle forbade any change to that annotation on any kind. On CAPI
/// objects it is an annotation like any other, as CAPI's controllers copy
/// it. The oracle was wrong, not the policy.
#[test]
fn mutated_objects_the_label_set_annotation_flows_to_a_machine_set_as_any_annotation() {
    let document: Value = serde_json::from_str(&support::read_repo_file(
        "test_data/capi/v1beta1/machineset_create_from_md.json",
    ))
    .unwrap();
    let request: AdmissionRequest = serde_json::from_value(document).unwrap();
    let mut parent: Value = serde_norway::from_str(&support::read_repo_file(
        "test_data/capi/v1beta1/parents/machinedeployment_capi-quickstart-md-1.yaml",
    ))
    .unwrap();
    // As the finding's input left the parent: its annotations replaced by
    // a map holding the label-set annotation.
    parent["metadata"]["annotations"] = json!({LABELS_ANNOTATION: "", "]": ""});
    let settings = Settings::from_json(b"{}").unwrap();
    let outcome = evaluate(
        &request,
        &settings,
        &MapLookup::default().with_object(parent),
    );
    let Verdict::Allow(plan) = &outcome.verdict else {
        panic!("{outcome:?}");
    };
    let mut after = request.object.clone();
    plan.apply(&mut after);
    // The policy copied it, as CAPI would.
    assert_eq!(after["metadata"]["annotations"][LABELS_ANNOTATION], "");
    assert_eq!(after["metadata"]["annotations"]["]"], "");
    let capability = Capability::of(&request, &settings);
    assert_eq!(capability, Capability::Capi(&request.kind));
    assert_eq!(check_mutation(capability, &request.object, &after), Ok(()));
    // The same change on a composite resource, which the policy only tags,
    // is still refused.
    let xr = |annotations: Value| {
        json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
               "metadata": {"name": "db", "annotations": annotations},
               "spec": {"crossplane": {}}})
    };
    let xr_request = AdmissionRequest::for_object("UPDATE", xr(json!({})));
    let capability = Capability::of(&xr_request, &settings);
    assert!(matches!(capability, Capability::CloudTags { .. }));
    assert!(matches!(
        check_mutation(
            capability,
            &xr(json!({})),
            &xr(json!({LABELS_ANNOTATION: ""}))
        ),
        Err(Violation::LabelSetChanged(_))
    ));
}

/// The 63 `x`s of the finding: the longest prefix generic's 63-rune keys
/// could hold if a tag key could be the prefix alone.
fn long_prefix() -> String {
    "x".repeat(63)
}

/// fuzz/regressions/settings_bytes/crash-c920… (21,148 executions): no
/// profiles (`generic`), `cloudTags.prefix` of 63 `x`, and labels
/// `{"", "dڂ", "t", "ttބϭ"}` handed to the transform directly. "The prefix
/// blocks every tag" measures the shortest tag key as the prefix and one
/// unit of body, and said none fits; the empty key's tag key, the prefix
/// alone, fitted. No request can get there: the target now draws its
/// labels through the settings, as admission does.
///
/// What an empty body means: nothing, since none can reach the transform.
/// A body is a `tagKeys` body or the qualified label key, and the settings
/// refuse an empty key in `propagatingLabels` and an empty body in
/// `tagKeys`; so every tag key is the prefix and at least one unit more,
/// which is what the rule measures.
#[test]
fn settings_bytes_an_empty_body_never_reaches_the_transform() {
    let prefix = long_prefix();
    let document = json!({"cloudTags": {"prefix": prefix,
        "propagatingLabels": ["", "dڂ", "t", "ttބϭ"]}})
    .to_string();
    let refused = Settings::from_json(document.as_bytes())
        .and_then(|settings| settings.cloud_tags().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("cloudTags.propagatingLabels[0]: empty label key"),
        "{refused}"
    );
    let document = json!({"cloudTags": {"propagatingLabels": ["team"],
        "tagKeys": {"team": ""}}})
    .to_string();
    let refused = Settings::from_json(document.as_bytes())
        .and_then(|settings| settings.cloud_tags().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("cloudTags.tagKeys"), "{refused}");

    // The keys the settings accept: the prefix blocks every one.
    let labels = ["dڂ", "t", "ttބϭ"];
    let document =
        json!({"cloudTags": {"prefix": prefix, "propagatingLabels": labels}}).to_string();
    let settings = Settings::from_json(document.as_bytes()).unwrap();
    let cloud_tags = settings.cloud_tags().unwrap();
    let (profile, origin) = cloud_tags.profiles.resolve(Some(""));
    assert_eq!(profile.name, "generic");
    let keys = cloud_tags.tag_keys(profile);
    assert_eq!(keys.prefix, prefix_for(profile, origin, cloud_tags));
    assert!(profile.blocks_every_tag(keys.prefix).is_some());
    let out = transform_with(labels.map(|key| (key, "")), profile, &keys, 0);
    assert!(out.tags.is_empty(), "{:?}", out.tags);
    assert_eq!(out.skipped.len(), labels.len());
}

/// Providers that select each built-in profile, and none.
const PROVIDERS: &[&str] = &["aws", "hetzner", "openstack", "gcp", "azure", "ibm", ""];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// "The prefix blocks every tag" and the transform agree on every label
    /// key and `tagKeys` body the settings accept: when the rule says no
    /// tag fits under the prefix in force, none is made. Prefixes and keys
    /// around the built-in limits (63 and 128 units, 63 bytes), in runes of
    /// one to three bytes.
    #[test]
    fn the_prefix_blocking_every_tag_and_the_transform_agree_on_accepted_keys(
        prefix in proptest::option::of("[x:/ڂ-]{1,3}|x{60,64}|ڂ{20,32}"),
        labels in proptest::collection::btree_map("[a-zڂ/:.-]{0,3}", "[a-z]{0,2}", 1..5),
        bodies in proptest::collection::vec((0..5usize, "[a-zڂ-]{0,2}"), 0..3),
        provider in proptest::sample::select(PROVIDERS),
    ) {
        let keys_of: Vec<&String> = labels.keys().collect();
        let bodies: serde_json::Map<String, Value> = bodies
            .into_iter()
            .map(|(i, body)| (keys_of[i % keys_of.len()].clone(), Value::String(body)))
            .collect();
        let mut cloud = json!({"propagatingLabels": keys_of, "tagKeys": bodies});
        if let Some(prefix) = &prefix {
            cloud["prefix"] = json!(prefix);
        }
        let document = json!({"cloudTags": cloud}).to_string();
        let Ok(settings) = Settings::from_json(document.as_bytes()) else {
            // Refused (an empty key or body among them): nothing reaches
            // the transform.
            return Ok(());
        };
        let cloud_tags = settings.cloud_tags().unwrap();
        let (profile, origin) = cloud_tags.profiles.resolve(Some(provider));
        let keys = cloud_tags.tag_keys(profile);
        prop_assert_eq!(keys.prefix, prefix_for(profile, origin, cloud_tags));
        let out = transform_with(
            labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            profile,
            &keys,
            0,
        );
        if let Some(reason) = profile.blocks_every_tag(keys.prefix) {
            prop_assert!(out.tags.is_empty(), "{reason:?} yet {:?}", out.tags);
        }
    }
}
