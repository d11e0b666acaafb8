//! The page's bundled examples (web/examples/) are the repository's fixtures,
//! and each one evaluates the way the page shows it: an explain example as
//! `explain`, an audit example (`"view": "audit"`) as `policy-runner audit`.

use explain_web::{DUMP_NAME, audit, parse_object, parse_parents, run};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

const LABEL_SET: &str = "cloud-tags.plexsphere.io/labels";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: impl AsRef<Path>) -> String {
    let path = root().join(path);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn example_file(entry: &Value, field: &str) -> String {
    entry[field]
        .as_str()
        .map_or_else(String::new, |f| read(format!("web/examples/{f}")))
}

fn all_examples() -> Vec<Value> {
    serde_json::from_str(&read("web/examples/index.json")).unwrap()
}

fn is_audit(entry: &Value) -> bool {
    entry["view"] == "audit"
}

/// The explain examples.
fn index() -> Vec<Value> {
    all_examples()
        .into_iter()
        .filter(|e| !is_audit(e))
        .collect()
}

/// The audit examples.
fn audit_examples() -> Vec<Value> {
    all_examples().into_iter().filter(is_audit).collect()
}

/// The page keeps its core examples (web/examples/gen.py writes them): a
/// MachineSet, a topology MachineDeployment, a Machine's Node labels, an
/// XR for each cloud-tag provider, for the generic profile and for a
/// user-defined profile (the README's ready-made gcp-labels), and an AWS
/// and an OpenStack infrastructure object with cloud tags, and a managed
/// resource tagged from its XR.
#[test]
fn index_has_the_capi_and_xr_examples() {
    let ids: Vec<String> = index()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    for id in [
        "machineset",
        "topology-md",
        "machine-node-labels",
        "xr-aws",
        "xr-hetzner",
        "xr-openstack",
        "xr-generic",
        "xr-gcp-labels",
        "infra-awscluster",
        "infra-openstackmachine",
        "mr-vpc",
    ] {
        assert!(ids.iter().any(|i| i == id), "missing example {id}");
    }
}

#[test]
fn examples_are_the_fixtures() {
    for entry in index() {
        let id = entry["id"].as_str().unwrap();
        let source = &entry["source"];
        let request: Value =
            serde_json::from_str(&read(source["request"].as_str().unwrap())).unwrap();
        assert_eq!(entry["operation"], request["operation"], "{id}: operation");

        let mut expected = request["object"].clone();
        if let Some(added) = entry["derived"]["addedLabels"].as_object() {
            let annotations = &mut expected["metadata"]["annotations"];
            let mut labels: serde_json::Map<String, Value> =
                serde_json::from_str(annotations[LABEL_SET].as_str().unwrap_or("{}")).unwrap();
            labels.extend(added.clone());
            let object = parse_object(&example_file(&entry, "object")).unwrap();
            let got: serde_json::Map<String, Value> = serde_json::from_str(
                object["metadata"]["annotations"][LABEL_SET]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(got, labels, "{id}: label set = fixture's + addedLabels");
            annotations[LABEL_SET] = object["metadata"]["annotations"][LABEL_SET].clone();
        }
        let object = parse_object(&example_file(&entry, "object")).unwrap();
        assert_eq!(object, expected, "{id}: object");

        let parents: Vec<Value> = source["parents"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| parse_parents(&read(p.as_str().unwrap())).unwrap())
            .collect();
        assert_eq!(
            parse_parents(&example_file(&entry, "parents")).unwrap(),
            parents,
            "{id}: parents"
        );

        let settings: Value = serde_json::from_str(&example_file(&entry, "settings")).unwrap();
        match source["settings"].as_str() {
            Some(path) if path.ends_with(".json") => {
                let mut expected: Value = serde_json::from_str(&read(path)).unwrap();
                if let Some(added) = entry["derived"]["addedLabels"].as_object() {
                    let opted = expected["cloudTags"]["propagatingLabels"]
                        .as_array_mut()
                        .unwrap();
                    opted.extend(added.keys().map(|k| Value::String(k.clone())));
                }
                // Opted-in keys are a set.
                let sorted = |v: &Value| {
                    let mut v = v.clone();
                    if let Some(keys) = v["cloudTags"]["propagatingLabels"].as_array_mut() {
                        keys.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    }
                    v
                };
                assert_eq!(sorted(&settings), sorted(&expected), "{id}: settings");
            }
            Some(_) => assert!(settings.is_object(), "{id}: settings"),
            None => assert_eq!(settings, serde_json::json!({}), "{id}: default settings"),
        }
    }
}

#[test]
fn every_example_is_allowed_with_a_patch_and_explained() {
    for entry in index() {
        let id = entry["id"].as_str().unwrap();
        let report = run(
            &example_file(&entry, "object"),
            &example_file(&entry, "parents"),
            &example_file(&entry, "settings"),
            entry["operation"].as_str().unwrap(),
        )
        .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(report.allowed, Some(true), "{id}");
        assert!(
            !report.patch.unwrap().as_array().unwrap().is_empty(),
            "{id}: patch"
        );
        let explanation = serde_json::to_value(report.explanation.unwrap()).unwrap();
        if id == "infra-openstackmachine" {
            // Also a CAPI child: its MachineSet's rule, in the same answer.
            assert!(explanation.get("rule").is_some(), "{id}: rule");
        }
        if id.starts_with("mr-") {
            // A managed resource: every label comes from its XR, and each
            // skip and each stale entry removed is a warning.
            let tags = explanation.get("cloudTags").expect("cloud tags");
            let labels = tags["labels"].as_array().expect("labels");
            assert!(
                (labels.iter()).all(|l| l["source"].as_str().unwrap().starts_with("XNetwork ")),
                "{id}: {labels:?}"
            );
            let skipped = labels.iter().filter(|l| l["fate"] == "skipped").count();
            let removed = (tags["removed"].as_array().map(Vec::len))
                .or_else(|| tags["removed"].as_object().map(|r| r.len()))
                .unwrap_or(0);
            assert_eq!(report.warnings.len(), skipped + removed, "{id}: warnings");
            continue;
        }
        if id.starts_with("xr-") || id.starts_with("infra-") {
            let tags = explanation.get("cloudTags").expect("cloud tags");
            let skipped = (tags["labels"].as_array().expect("labels").iter())
                .filter(|l| l["fate"] == "skipped")
                .count();
            assert!(skipped > 0, "{id}: no label is skipped");
            // Under a profile that refuses every tag (xr-gcp-labels), one
            // summary warning instead of one per label (docs/settings.md,
            // "User-defined tag profiles").
            let skips = if tags.get("noTagCanPropagate").is_some() {
                1
            } else {
                skipped
            };
            // An XR whose provider no profile lists (xr-generic) is told so
            // first, once.
            let fallback = usize::from(tags["origin"] == "fallback");
            assert_eq!(
                report.warnings.len(),
                skips + fallback,
                "{id}: one warning per skipped label, or one summary warning, and the fallback's"
            );
        } else {
            assert!(explanation.get("rule").is_some(), "{id}: rule");
        }
    }
}

#[test]
fn audit_examples_are_the_bundled_dumps() {
    let examples = audit_examples();
    assert_eq!(examples.len(), 1);
    for entry in examples {
        let id = entry["id"].as_str().unwrap();
        let source = entry["source"]["dump"].as_str().unwrap();
        assert!(source.starts_with("test_data/dumps/"), "{id}: {source}");
        assert_eq!(example_file(&entry, "dump"), read(source), "{id}: dump");
        let settings: Value = serde_json::from_str(&example_file(&entry, "settings")).unwrap();
        assert_eq!(settings, serde_json::json!({}), "{id}: default settings");
    }
}

/// The page's `audit` is `cluster_audit`'s evaluation rendered by its
/// `render::json`, the JSON `policy-runner audit -o json` prints.
#[test]
fn audit_of_the_example_dump_is_the_cli_json_report() {
    let entry = &audit_examples()[0];
    let dump = example_file(entry, "dump");
    let settings = example_file(entry, "settings");
    let page: Value = serde_json::from_str(&audit(&dump, &settings)).unwrap();

    let objects = cluster_audit::dump::kubernetes_objects(&dump, DUMP_NAME).unwrap();
    let audit_settings = cluster_audit::AuditSettings::from_json(settings.as_bytes()).unwrap();
    let report = cluster_audit::audit_objects(objects, &audit_settings).unwrap();
    assert_eq!(
        page,
        cluster_audit::render::json(&report, cluster_audit::render::Form::Full)
    );

    // What the page marks, read by hand from test_data/dumps/gen.py's planted drift.
    assert_eq!(
        page["summary"],
        serde_json::json!({"objects": 29, "audited": 27, "compliant": 22, "deviating": 5,
            "rejected": 0, "notEvaluated": 2})
    );
    let deviating: Vec<&str> = page["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["status"] == "deviates")
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        deviating,
        [
            "MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2)",
            // In-place field drifts: a drain timeout, a missing readiness gate.
            "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta2)",
            "MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2)",
            "Machine default/capi-quickstart-md-1-x7k2p-6nbqt (cluster.x-k8s.io/v1beta2)",
            "Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta2)",
        ]
    );
    let first = &page["objects"][0];
    assert_eq!(first["source"]["file"], "dump");
}

#[test]
fn audit_input_errors_are_the_cli_messages() {
    let error = |dump: &str, settings: &str| -> String {
        let out: Value = serde_json::from_str(&audit(dump, settings)).unwrap();
        out["error"].as_str().unwrap().to_owned()
    };
    assert!(
        error("kind: List\nitems: []\n---\nkind: [\n", "")
            .starts_with("dump document 2: not valid YAML or JSON: ")
    );
    assert_eq!(
        error(
            r#"{"kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap"}]}"#,
            ""
        ),
        "dump document 1 item 1: not a Kubernetes object: `metadata` is missing"
    );
    assert!(
        error("", "cloudTags:\n  propagatingLabels: [platform/origin]\n")
            .starts_with("Provided settings are not valid: cloudTags.propagatingLabels[0]: ")
    );
    let empty: Value = serde_json::from_str(&audit("", "")).unwrap();
    assert_eq!(empty["summary"]["objects"], 0);
}
