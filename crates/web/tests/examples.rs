//! The page's bundled examples (web/examples/) are the repository's fixtures,
//! and each one evaluates the way the page shows it.

use explain_web::{parse_object, parse_parents, run};
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

fn index() -> Vec<Value> {
    serde_json::from_str(&read("web/examples/index.json")).unwrap()
}

#[test]
fn the_issue_lists_these_examples() {
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
        let explanation = report.explanation.unwrap();
        if id.starts_with("xr-") {
            let tags = explanation.cloud_tags.expect("cloud tags");
            let skipped = tags
                .labels
                .iter()
                .filter(|l| {
                    matches!(
                        l.fate,
                        metadata_propagation_policy::explain::TagFate::Skipped { .. }
                    )
                })
                .count();
            assert!(skipped > 0, "{id}: no label is skipped");
            assert_eq!(
                report.warnings.len(),
                skipped,
                "{id}: one warning per skipped label"
            );
        } else {
            assert!(explanation.rule.is_some(), "{id}: rule");
        }
    }
}
