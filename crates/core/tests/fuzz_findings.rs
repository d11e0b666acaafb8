//! The fuzz targets' findings (fuzz/regressions/, which `make fuzz` replays
//! through the targets first), each restated here on the policy's public API
//! with what it turned out to be: the rule that was wrong, and the rule that
//! holds now.

mod support;

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::invariants::{Capability, Violation, check_mutation};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::LABELS_ANNOTATION;
use serde_json::{Value, json};

/// fuzz/regressions/mutated_objects/crash-dc3701b8… (6,207,270 executions
/// into a 1,200 s campaign): a v1beta1 MachineDeployment whose
/// `metadata.annotations` carry the label-set annotation (value `""`, among
/// arbitrary keys), and its MachineSet created. The MachineDeployment →
/// MachineSet rule (mdutil `MachineSetAnnotationsFromMachineDeployment`)
/// copied the annotation to the MachineSet, as CAPI's controllers do; the
/// oracle forbade any change to that annotation on any kind. DESIGN §3
/// (turn 6): on CAPI objects it is an annotation like any other. The
/// oracle was wrong, not the policy.
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
    let outcome = evaluate(&request, &settings, &MapLookup::new().with_object(parent));
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
