//! `policy-runner audit` agrees with the policy, request by request.
//!
//! For every bundled dump (test_data/dumps), the built binary audits the
//! dump (`-o json`); this test then reads the dump itself (serde_norway,
//! its own `List` flattening), sends every object to the policy's core as
//! the API server would send it (an UPDATE AdmissionRequest decoded from
//! JSON, as the edge decodes one) with settings whose `mode` is `validate`,
//! its look-ups answered by a `MapLookup` of the whole dump, and checks that
//! the audit's verdict, message, code, warnings and audit annotations are the
//! policy's; that the audit's patch is mutate mode's and, applied, leaves an
//! object validate mode accepts; and which objects deviate, with their
//! deviation lines (metadata, in-place fields and cloud tags on CAPI
//! infrastructure), literally.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use metadata_propagation_core::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde::Deserialize;
use serde_json::{Value, json};

const RUNNER: &str = env!("CARGO_BIN_EXE_policy-runner");

/// One bundled dump: its settings, the audit's exit code, the objects that
/// deviate (`Kind namespace/name`), and the deviation lines of those whose
/// lines are pinned here (the XRs' are in e2e-tests/audit.bats).
struct Case {
    dump: &'static str,
    settings: Option<&'static str>,
    exit: i32,
    deviating: &'static [&'static str],
    deviations: &'static [(&'static str, &'static [&'static str])],
}

/// test_data/dumps/gen.py's planted drift: three metadata drifts and three
/// in-place field drifts on five objects. Not among them: the v1beta1 KCP
/// and Machine capi-quickstart-md-0-p6hg9-v7bqn-tt4kd, whose
/// nodeVolumeDetachTimeout "5m" equals the "5m0s" CAPI writes, and the
/// MachineSet's and Machines' minReadySeconds 30, passed on from the
/// drifted MachineDeployment.
const DRIFT: &[&str] = &[
    "Machine default/capi-quickstart-md-1-x7k2p-6nbqt",
    "Machine default/capi-quickstart-md-1-x7k2p-9ttvz",
    "MachineDeployment default/capi-quickstart-md-0-p6hg9",
    "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn",
    "MachineSet default/capi-quickstart-md-1-x7k2p",
];

const DRIFT_V1BETA1: &[(&str, &[&str])] = &[
    (
        "MachineDeployment default/capi-quickstart-md-0-p6hg9",
        &[
            r#"spec.minReadySeconds: is 30 (expected 5, from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta1) spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds)"#,
            r#"spec.template.metadata.annotations: missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue")"#,
        ],
    ),
    (
        "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn",
        &[
            r#"spec.template.spec.nodeDrainTimeout: is "5m0s" (expected "10m0s", from MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta1) spec.template.spec.nodeDrainTimeout)"#,
        ],
    ),
    (
        "MachineSet default/capi-quickstart-md-1-x7k2p",
        &[r#"metadata.labels: missing "nodepool" (expected "pool1")"#],
    ),
    (
        "Machine default/capi-quickstart-md-1-x7k2p-6nbqt",
        &[r#"metadata.labels: "nodepool" is "pool0" (expected "pool1")"#],
    ),
    (
        "Machine default/capi-quickstart-md-1-x7k2p-9ttvz",
        &[
            r#"spec.readinessGates[conditionType="ops.example.com/ApprovedForProduction"]: missing (expected {"conditionType":"ops.example.com/ApprovedForProduction"}, from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta1) spec.template.spec.readinessGates)"#,
        ],
    ),
];

const DRIFT_V1BETA2: &[(&str, &[&str])] = &[
    (
        "MachineDeployment default/capi-quickstart-md-0-p6hg9",
        &[
            r#"spec.template.metadata.annotations: missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue")"#,
            r#"spec.template.spec.minReadySeconds: is 30 (expected 5, from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds)"#,
        ],
    ),
    (
        "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn",
        &[
            r#"spec.template.spec.deletion.nodeDrainTimeoutSeconds: is 300 (expected 600, from MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2) spec.template.spec.deletion.nodeDrainTimeoutSeconds)"#,
        ],
    ),
    (
        "MachineSet default/capi-quickstart-md-1-x7k2p",
        &[r#"metadata.labels: missing "nodepool" (expected "pool1")"#],
    ),
    (
        "Machine default/capi-quickstart-md-1-x7k2p-6nbqt",
        &[r#"metadata.labels: "nodepool" is "pool0" (expected "pool1")"#],
    ),
    (
        "Machine default/capi-quickstart-md-1-x7k2p-9ttvz",
        &[
            r#"spec.readinessGates[conditionType="ops.example.com/ApprovedForProduction"]: missing (expected {"conditionType":"ops.example.com/ApprovedForProduction"}, from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2) spec.template.spec.readinessGates)"#,
        ],
    ),
];

/// test_data/dumps/gen.py's planted tag drift on CAPI infrastructure: a
/// Cluster label changed under its AWSCluster's tag, an AWSMachine's tag
/// lost, a stale tag on an AzureCluster. Not among them: the
/// OpenStackMachine missing a tag, whose field the policy stamps on CREATE
/// only.
const INFRA_DRIFT: &[(&str, &[&str])] = &[
    (
        "AWSCluster default/aws-prod",
        &[
            r#"spec.additionalTags: "plexsphere:acme.io/team" is "payments" (expected "payments-core")"#,
        ],
    ),
    (
        "AWSMachine default/aws-prod-md-0-7xk2p-b6j3q",
        &[r#"spec.additionalTags: missing "plexsphere:cost-center" (expected "cc-pool-a")"#],
    ),
    (
        "AzureCluster default/azure-dev",
        &[
            r#"spec.additionalTags: remove "plexsphere:project" (stale: no opted-in label produces it)"#,
        ],
    ),
];

const CASES: &[Case] = &[
    Case {
        dump: "capi_infra_clean.yaml",
        settings: Some(INFRA_SETTINGS),
        exit: 0,
        deviating: &[],
        deviations: &[],
    },
    Case {
        dump: "capi_infra_drift.yaml",
        settings: Some(INFRA_SETTINGS),
        exit: 1,
        deviating: &[
            "AWSCluster default/aws-prod",
            "AWSMachine default/aws-prod-md-0-7xk2p-b6j3q",
            "AzureCluster default/azure-dev",
        ],
        deviations: INFRA_DRIFT,
    },
    Case {
        dump: "quickstart_v1beta1_clean.yaml",
        settings: None,
        exit: 0,
        deviating: &[],
        deviations: &[],
    },
    Case {
        dump: "quickstart_v1beta1_drift.yaml",
        settings: None,
        exit: 1,
        deviating: DRIFT,
        deviations: DRIFT_V1BETA1,
    },
    Case {
        dump: "quickstart_v1beta2_clean.yaml",
        settings: None,
        exit: 0,
        deviating: &[],
        deviations: &[],
    },
    Case {
        dump: "quickstart_v1beta2_drift.yaml",
        settings: None,
        exit: 1,
        deviating: DRIFT,
        deviations: DRIFT_V1BETA2,
    },
    Case {
        dump: "xr_providers.yaml",
        settings: Some("test_data/xr/settings_propagating.json"),
        exit: 1,
        deviating: &[
            "XDatabase team-data/analytics-db",
            "XDatabase team-orders/orders-db",
        ],
        deviations: &[],
    },
];

/// The settings of the infrastructure dumps (`capiInfrastructure: true`);
/// not a dump.
const INFRA_SETTINGS: &str = "test_data/dumps/capi_infra.settings.json";

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn every_bundled_dump_has_a_case() {
    let mut dumps: Vec<String> = std::fs::read_dir(repo("test_data/dumps"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".yaml") || name.ends_with(".json"))
        .filter(|name| !name.ends_with(".settings.json"))
        .collect();
    dumps.sort();
    let cases: Vec<&str> = CASES.iter().map(|c| c.dump).collect();
    assert_eq!(dumps, cases);
}

#[test]
fn audit_agrees_with_the_policy_request_by_request() {
    for case in CASES {
        check_case(case);
    }
}

fn check_case(case: &Case) {
    let dump_path = repo(&format!("test_data/dumps/{}", case.dump));
    let mut args = vec![
        "audit".to_owned(),
        "--full".to_owned(),
        "-o".to_owned(),
        "json".to_owned(),
        "-f".to_owned(),
        dump_path.display().to_string(),
    ];
    if let Some(settings) = case.settings {
        args.extend([
            "--settings-path".to_owned(),
            repo(settings).display().to_string(),
        ]);
    }
    let output = Command::new(RUNNER).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(case.exit),
        "{}: {stderr}",
        case.dump
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();

    let objects = read_dump(&dump_path);
    let audited = report["objects"].as_array().unwrap();
    assert_eq!(audited.len(), objects.len(), "{}", case.dump);
    let lookup = objects.iter().fold(MapLookup::default(), |lookup, o| {
        lookup.with_object(o.clone())
    });
    let validate = settings(case.settings, "validate");

    let mut deviating = BTreeSet::new();
    for object in &objects {
        let name = format!(
            "{} {}",
            object["kind"].as_str().unwrap(),
            match object["metadata"]["namespace"].as_str() {
                Some(ns) => format!("{ns}/{}", object["metadata"]["name"].as_str().unwrap()),
                None => object["metadata"]["name"].as_str().unwrap().to_owned(),
            }
        );
        let at = format!("{}: {name}", case.dump);
        let entry = find(audited, object).unwrap_or_else(|| panic!("{at}: not in the audit"));
        let request = update_request(object);
        if !request.acted_on() {
            assert_eq!(entry["status"], "not-evaluated", "{at}");
            continue;
        }
        let outcome = evaluate::evaluate(&request, &validate, &lookup);
        let (allowed, message, code) = match &outcome.verdict {
            Verdict::Allow(_) => (true, Value::Null, Value::Null),
            Verdict::Reject { message, code } => (false, json!(message), json!(code)),
        };
        assert_eq!(entry["allowed"], json!(allowed), "{at}");
        assert_eq!(entry["message"], message, "{at}");
        assert_eq!(entry["code"], code, "{at}");
        assert_eq!(entry["warnings"], json!(outcome.warnings), "{at}");
        assert_eq!(
            entry["auditAnnotations"],
            json!(outcome.audit_annotations),
            "{at}"
        );
        // Validate mode rejects a deviation keeping the plan it refused.
        let deviates = outcome.refused_plan.is_some();
        let expected_status = match (allowed, deviates) {
            (true, _) => "compliant",
            (false, true) => "deviates",
            (false, false) => "rejected",
        };
        assert_eq!(entry["status"], expected_status, "{at}");
        if let Some((_, lines)) = case.deviations.iter().find(|(object, _)| *object == name) {
            assert_eq!(entry["deviations"], json!(lines), "{at}");
        }
        if deviates {
            deviating.insert(name);
        }
        check_patch(&at, entry, &request, &validate, &lookup);
    }
    let expected: BTreeSet<String> = case.deviating.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(deviating, expected, "{}", case.dump);
    for (object, _) in case.deviations {
        assert!(expected.contains(*object), "{}: {object}", case.dump);
    }
    assert_eq!(
        report["summary"]["deviating"],
        json!(expected.len()),
        "{}",
        case.dump
    );
}

/// The audit's patch is the one mutate mode's plan gives, as validate mode
/// judges it (the skip annotation is what the policy reports, never drift);
/// applied to the object, it leaves one validate mode accepts.
fn check_patch(
    at: &str,
    entry: &Value,
    request: &AdmissionRequest,
    validate: &Settings,
    lookup: &MapLookup,
) {
    // What mutate mode would change, as validate mode judges it: the plan
    // validate mode refuses.
    let judged = evaluate::evaluate(request, validate, lookup).refused_plan;
    let expected = match judged {
        Some(plan) if entry["status"] == "deviates" => {
            let mut mutated = request.object.clone();
            plan.apply(&mut mutated);
            serde_json::to_value(json_patch::diff(&request.object, &mutated)).unwrap()
        }
        _ => json!([]),
    };
    assert_eq!(entry["patch"], expected, "{at}");
    if entry["status"] == "deviates" {
        let patch: json_patch::Patch = serde_json::from_value(entry["patch"].clone()).unwrap();
        let mut fixed = request.object.clone();
        json_patch::patch(&mut fixed, &patch).unwrap();
        let again = evaluate::evaluate(&update_request(&fixed), validate, lookup);
        assert!(allowed(&again), "{at}: still deviates after the patch");
    }
}

fn allowed(outcome: &Outcome) -> bool {
    matches!(outcome.verdict, Verdict::Allow(_))
}

/// The UPDATE request the API server sends for `object`, decoded as the
/// policy's edge decodes one.
fn update_request(object: &Value) -> AdmissionRequest {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    serde_json::from_value(json!({
        "uid": "audit-agreement",
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "operation": "UPDATE",
        "namespace": object["metadata"]["namespace"].as_str().unwrap_or_default(),
        "object": object,
        "oldObject": object,
    }))
    .unwrap()
}

/// The settings file (or `{}`) with `mode` set.
fn settings(path: Option<&str>, mode: &str) -> Settings {
    let mut raw = match path {
        Some(path) => serde_json::from_str(&std::fs::read_to_string(repo(path)).unwrap()).unwrap(),
        None => json!({}),
    };
    raw["mode"] = json!(mode);
    Settings::from_json(raw.to_string().as_bytes()).unwrap()
}

/// Every object of a dump: each YAML document, or each item of a `List`.
fn read_dump(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut objects = Vec::new();
    for document in serde_norway::Deserializer::from_str(&text) {
        let value = Value::deserialize(document).unwrap();
        match value["kind"].as_str() {
            Some("List") => objects.extend(value["items"].as_array().unwrap().iter().cloned()),
            _ if value.is_object() => objects.push(value),
            _ => {}
        }
    }
    objects
}

/// The audit's entry for `object`.
fn find<'a>(audited: &'a [Value], object: &Value) -> Option<&'a Value> {
    let matches = |entry: &&Value| {
        entry["apiVersion"] == object["apiVersion"]
            && entry["kind"] == object["kind"]
            && entry["name"] == object["metadata"]["name"]
            && entry["namespace"] == object["metadata"]["namespace"]
    };
    let mut found = audited.iter().filter(matches);
    let entry = found.next();
    assert!(found.next().is_none(), "listed twice: {object}");
    entry
}
