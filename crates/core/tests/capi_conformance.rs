//! Conformance rows ported from Cluster API's own unit tests
//! (capi_conformance/*.yaml beside this file; each file names the upstream
//! test, and capi_conformance/README.md says how they were ported). They are
//! the primary test of what flows from CAPI parents to children: the other
//! CAPI tests (capi_metadata.rs, in_place_fields.rs, node_sync.rs) keep
//! only what a row cannot say.
//!
//! Each row: a child object, the parents a lookup can serve, settings, and
//! the child as it must be after the policy's mutation (plus, for Machines,
//! the Node-sync audit annotations). Failures name the file and the row.

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    comment: String,
    upstream: String,
    #[serde(default)]
    settings: Value,
    operation: String,
    object: Value,
    #[serde(default)]
    parents: Vec<Value>,
    expected: Expected,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expected {
    object: Value,
    #[serde(default)]
    audit_annotations: Option<BTreeMap<String, String>>,
}

fn run_row(file: &str, index: usize, row: &Row) -> Result<(), String> {
    let label = format!("{file}[{index}] {} ({})", row.upstream, row.comment);
    let settings_json = if row.settings.is_null() {
        "{}".to_owned()
    } else {
        row.settings.to_string()
    };
    let settings = Settings::from_json(settings_json.as_bytes())
        .map_err(|e| format!("{label}: settings: {e}"))?;
    let lookup = row
        .parents
        .iter()
        .fold(MapLookup::default(), |l, p| l.with_object(p.clone()));
    let request = AdmissionRequest::for_object(&row.operation, row.object.clone());
    let outcome = evaluate(&request, &settings, &lookup);
    let Verdict::Allow(plan) = &outcome.verdict else {
        return Err(format!("{label}: rejected: {:?}", outcome.verdict));
    };
    let mut object = row.object.clone();
    plan.apply(&mut object);
    if object != row.expected.object {
        return Err(format!(
            "{label}: object differs\n  got:      {}\n  expected: {}",
            serde_json::to_string(&object["metadata"]).unwrap_or_default()
                + " spec: "
                + &serde_json::to_string(&object["spec"]).unwrap_or_default(),
            serde_json::to_string(&row.expected.object["metadata"]).unwrap_or_default()
                + " spec: "
                + &serde_json::to_string(&row.expected.object["spec"]).unwrap_or_default(),
        ));
    }
    if let Some(audit) = &row.expected.audit_annotations
        && &outcome.audit_annotations != audit
    {
        return Err(format!(
            "{label}: audit annotations {:?}, expected {audit:?}",
            outcome.audit_annotations
        ));
    }
    // Applying the plan again must change nothing (the mutation is idempotent).
    let again = evaluate(
        &AdmissionRequest {
            object: object.clone(),
            ..request
        },
        &settings,
        &lookup,
    );
    if again.plan().is_some_and(|p| !p.is_empty()) {
        return Err(format!("{label}: not idempotent: {:?}", again.plan()));
    }
    Ok(())
}

#[test]
fn capi_conformance_rows() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/capi_conformance");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/capi_conformance exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no conformance files in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    let mut rows_run = 0;
    for path in &files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("readable");
        let rows: Vec<Row> = match serde_norway::from_str(&text) {
            Ok(rows) => rows,
            Err(e) => {
                failures.push(format!("{file}: cannot parse: {e}"));
                continue;
            }
        };
        if rows.is_empty() {
            failures.push(format!("{file}: no rows"));
        }
        for (index, row) in rows.iter().enumerate() {
            rows_run += 1;
            if let Err(e) = run_row(&file, index, row) {
                failures.push(e);
            }
        }
    }
    eprintln!("{rows_run} conformance rows from {} files", files.len());
    assert!(
        failures.is_empty(),
        "{} of {rows_run} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
