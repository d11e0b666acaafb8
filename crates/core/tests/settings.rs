//! Settings as a request uses them: prepared lazily, per capability. Their
//! parsing and its error messages are unit tests of
//! crates/core/src/settings.rs; crates/core/tests/questions_ui.rs checks
//! the Rancher form and the README's table against them.

use super::support;

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};
use support::quick_start::{machine_deployment, machine_set};

/// On a fresh instance every request pays for what it prepares, so each
/// capability prepares only the settings it reads: a settings document whose
/// regex would not compile (which `validate_settings` refuses when the
/// policy is loaded) shows which requests compile the regexes at all.
#[test]
fn each_request_prepares_only_the_settings_it_reads() {
    let bad_regex = Settings::parse(
        br#"{"capi":{"additionalSyncMachineLabels":["("]},"cloudTags":{"propagatingLabels":["platform/origin"]}}"#,
    )
    .unwrap();
    let evaluate_with = |object: Value, lookup: &MapLookup| {
        evaluate(
            &AdmissionRequest::for_object("UPDATE", object),
            &bad_regex,
            lookup,
        )
    };

    // A MachineSet whose template labels CAPI syncs by its own rules
    // (node-role.kubernetes.io) needs neither the regexes nor the cloud-tag
    // settings.
    let mut ms = machine_set("v1beta2");
    ms["spec"]["template"]["metadata"]["labels"] = json!({"machine-template-hash": "1"});
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    let outcome = evaluate_with(ms.clone(), &lookup);
    assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{outcome:?}");

    // Under a parent whose template carries a Kubernetes label CAPI does not
    // sync by itself, the label is checked against the regexes.
    let mut md = machine_deployment("v1beta2");
    md["spec"]["template"]["metadata"]["labels"] =
        json!({"node.kubernetes.io/exclude-from-external-load-balancers": "true"});
    let outcome = evaluate_with(ms, &MapLookup::default().with_object(md));
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "policy settings are not valid: capi.additionalSyncMachineLabels[0]: \
                      invalid regex \"(\": found open group without closing ')'"
                .into(),
            code: 500
        }
    );
}
