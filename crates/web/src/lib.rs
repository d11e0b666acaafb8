//! The policy's `explain` and `audit` for the static web page in `web/`.
//!
//! A thin layer over the policy crate: it parses what the user pasted
//! (YAML or JSON, read by [`cluster_audit::dump`] as the CLI reads its
//! files), builds the [`AdmissionRequest`] the host would send, and
//! calls the same [`metadata_propagation_core::evaluate::explain`] the
//! policy and the runner call, then applies the plan and diffs the object
//! into an RFC 6902 patch the way the Kubewarden host does. A pasted dump
//! is audited by [`cluster_audit`], the crate behind `policy-runner audit`,
//! and rendered by its [`cluster_audit::render::json`]: the page shows the
//! JSON the CLI prints. Everything here is plain Rust, unit-tested
//! natively; the `#[wasm_bindgen]` exports are one-liners.

// The page's JavaScript calls these exports and renders these fields with no
// type checker between them: an undocumented public item fails the build,
// not only warns as the workspace's lint does.
#![deny(missing_docs)]

use cluster_audit::dump;
use metadata_propagation_core::evaluate;
use metadata_propagation_core::explain::Explanation;
use metadata_propagation_core::fields::type_name;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde::Serialize;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::thread::LocalKey;
use wasm_bindgen::prelude::wasm_bindgen;

/// Explains one object for the page: `object`, `parents` and `settings` are
/// YAML or JSON text, `operation` is CREATE, UPDATE, DELETE or CONNECT.
/// Returns a [`Report`] as JSON; never throws.
#[wasm_bindgen]
pub fn explain(object: &str, parents: &str, settings: &str, operation: &str) -> String {
    explain_json(object, parents, settings, operation)
}

/// Audits a pasted dump for the page: `dump` is what `kubectl get … -A -o
/// yaml` (or `-o json`) prints, `settings` YAML or JSON. Returns the JSON
/// report `policy-runner audit -o json` prints ([`audit_json`]); never
/// throws.
#[wasm_bindgen]
pub fn audit(dump: &str, settings: &str) -> String {
    audit_json(dump, settings)
}

/// What the page calls the pasted dump in the origins it reports
/// (`dump document 2 item 3`).
pub const DUMP_NAME: &str = "dump";

/// [`audit_report`], serialized; an input error becomes `{"error": …}`.
pub fn audit_json(dump: &str, settings: &str) -> String {
    let report = audit_report(dump, settings).unwrap_or_else(|error| {
        let mut out = serde_json::Map::new();
        out.insert("error".to_owned(), Value::String(error));
        Value::Object(out)
    });
    report.to_string()
}

/// Parses the dump and the settings, audits every object and renders the
/// report as `policy-runner audit -o json` does. `Err` names the input that
/// is wrong, with the CLI's words.
pub fn audit_report(dump: &str, settings: &str) -> Result<Value, String> {
    let settings = parsed_once(&AUDIT_SETTINGS, settings, |text| {
        cluster_audit::AuditSettings::from_json(&settings_json(text)?).map_err(|e| e.to_string())
    });
    let settings = (*settings).as_ref().map_err(Clone::clone)?;
    let objects =
        cluster_audit::dump::kubernetes_objects(dump, DUMP_NAME).map_err(|e| e.to_string())?;
    let report = cluster_audit::audit_objects(objects, settings).map_err(|e| e.to_string())?;
    Ok(cluster_audit::render::json(
        &report,
        cluster_audit::render::Form::Full,
    ))
}

/// What the page renders, serialized as camelCase JSON.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// False when the input could not be evaluated (see `error`).
    pub ok: bool,
    /// The admission decision; `None` when not evaluated.
    pub allowed: Option<bool>,
    /// The rejection message.
    pub message: Option<String>,
    /// The rejection code.
    pub code: Option<u16>,
    /// Admission warnings.
    pub warnings: Vec<String>,
    /// Audit annotations.
    pub audit_annotations: BTreeMap<String, String>,
    /// Why each key did or did not flow.
    pub explanation: Option<Explanation>,
    /// The explanation as readable text.
    pub explanation_text: String,
    /// RFC 6902 patch from the submitted object to the mutated one (`[]`:
    /// unchanged; `None` when rejected or not evaluated).
    pub patch: Option<Value>,
    /// The object after the policy's changes, when allowed.
    pub mutated: Option<Value>,
    /// Why the input could not be evaluated.
    pub error: Option<String>,
}

/// [`run`], serialized; an input error becomes `{"ok": false, "error": …}`.
pub fn explain_json(object: &str, parents: &str, settings: &str, operation: &str) -> String {
    let report = run(object, parents, settings, operation).unwrap_or_else(|error| Report {
        error: Some(error),
        ..Report::default()
    });
    serde_json::to_string(&report).unwrap_or_else(|e| {
        serde_json::json!({"ok": false, "error": format!("cannot encode the report: {e}")})
            .to_string()
    })
}

/// Parses the inputs, evaluates with the policy's core and assembles the
/// report. `Err` names the input that is wrong.
pub fn run(object: &str, parents: &str, settings: &str, operation: &str) -> Result<Report, String> {
    let object = parse_object(object)?;
    let parents = parse_parents(parents)?;
    let settings = parsed_once(&EXPLAIN_SETTINGS, settings, parse_settings);
    let settings = (*settings).as_ref().map_err(Clone::clone)?;
    let request = admission_request(object, operation)?;
    let lookup = parents
        .into_iter()
        .fold(MapLookup::default(), MapLookup::with_object);

    let (outcome, explanation) = evaluate::explain(&request, settings, &lookup);
    let mut report = Report {
        ok: true,
        warnings: outcome.warnings,
        audit_annotations: outcome.audit_annotations,
        explanation_text: explanation.to_string(),
        explanation: Some(explanation),
        ..Report::default()
    };
    match outcome.verdict {
        Verdict::Allow(plan) => {
            let mut mutated = request.object.clone();
            plan.apply(&mut mutated);
            let patch = json_patch::diff(&request.object, &mutated);
            report.allowed = Some(true);
            report.patch = Some(serde_json::to_value(patch).map_err(|e| e.to_string())?);
            report.mutated = Some(mutated);
        }
        Verdict::Reject { message, code } => {
            report.allowed = Some(false);
            report.message = Some(message);
            report.code = Some(code);
        }
    }
    Ok(report)
}

/// Every document of `text`, empty ones dropped, read as the CLI reads its
/// files ([`dump::documents`]: JSON first, then a YAML stream). `Err` names
/// the input (`what`) and, past the first, the document that does not parse.
pub fn documents(text: &str, what: &str) -> Result<Vec<Value>, String> {
    let documents = dump::documents(text).map_err(|e| unreadable(what, &e))?;
    Ok(documents.into_iter().map(|(_, value)| value).collect())
}

/// `what: not valid YAML or JSON: …`, naming the document past the first.
fn unreadable(what: &str, error: &dump::Unreadable) -> String {
    let at = if error.document == 1 {
        String::new()
    } else {
        format!(" (document {})", error.document)
    };
    format!("{what}{at}: not valid YAML or JSON: {}", error.reason)
}

/// The object to evaluate: one document. An `AdmissionReview` or a bare
/// AdmissionRequest (as in `test_data/`) is unwrapped to its `object`.
pub fn parse_object(text: &str) -> Result<Value, String> {
    let mut docs = documents(text, "object")?;
    let mut object = match docs.len() {
        0 => return Err("object: empty; paste the object to evaluate (YAML or JSON)".into()),
        1 => docs.remove(0),
        n => {
            return Err(format!(
                "object: {n} documents; paste one object here and its parents below"
            ));
        }
    };
    if object.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        object = object["request"].take();
    }
    if object.get("apiVersion").is_none() && object.get("object").is_some_and(Value::is_object) {
        object = object["object"].take();
    }
    if !object.is_object() {
        return Err(format!(
            "object: expected a Kubernetes object, found {}",
            type_name(&object)
        ));
    }
    Ok(object)
}

/// The parents: a multi-document YAML stream, a JSON array, or a `List`
/// (`kubectl get -o yaml`), flattened as `policy-runner explain` flattens
/// its parent files ([`dump::flattened`]); each must name itself
/// (apiVersion, kind, name).
pub fn parse_parents(text: &str) -> Result<Vec<Value>, String> {
    let documents = dump::documents(text).map_err(|e| unreadable("parents", &e))?;
    let parents: Vec<Value> = dump::flattened(documents, "parents")
        .into_iter()
        .map(|(_, parent)| parent)
        .collect();
    for (i, parent) in parents.iter().enumerate() {
        let named = parent["apiVersion"].is_string()
            && parent["kind"].is_string()
            && parent["metadata"]["name"].is_string();
        if !named {
            return Err(format!(
                "parents[{i}]: expected an object with apiVersion, kind and metadata.name, found {}",
                if parent.is_object() {
                    "an object without them".to_owned()
                } else {
                    type_name(parent).to_owned()
                }
            ));
        }
    }
    Ok(parents)
}

/// The settings, YAML or JSON; empty means defaults. Prepared by the
/// policy's own [`Settings::from_json`], so the page refuses what the policy
/// server would.
pub fn parse_settings(text: &str) -> Result<Settings, String> {
    Settings::from_json(&settings_json(text)?).map_err(|e| format!("settings are not valid: {e}"))
}

/// The last settings text an export was called with, and what it gave.
struct LastSettings<T> {
    text: String,
    parsed: Rc<Result<T, String>>,
}

thread_local! {
    /// `explain`'s settings.
    static EXPLAIN_SETTINGS: RefCell<Option<LastSettings<Settings>>> =
        const { RefCell::new(None) };
    /// `audit`'s settings.
    static AUDIT_SETTINGS: RefCell<Option<LastSettings<cluster_audit::AuditSettings>>> =
        const { RefCell::new(None) };
}

/// What `parse` gives for the settings `text`, read again only when the
/// text differs from the one `last` was given before: the page calls on
/// every edit of any of its inputs, the settings mostly as they were, and
/// reading and preparing them costs more than most evaluations.
fn parsed_once<T>(
    last: &'static LocalKey<RefCell<Option<LastSettings<T>>>>,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Rc<Result<T, String>> {
    last.with_borrow_mut(|last| {
        if let Some(last) = last.as_ref().filter(|last| last.text == text) {
            return Rc::clone(&last.parsed);
        }
        let parsed = Rc::new(parse(text));
        *last = Some(LastSettings {
            text: text.to_owned(),
            parsed: Rc::clone(&parsed),
        });
        parsed
    })
}

/// The settings text (YAML or JSON, empty for defaults) as the JSON the
/// policy's `validate_settings` receives.
fn settings_json(text: &str) -> Result<Vec<u8>, String> {
    let mut docs = documents(text, "settings")?;
    match docs.len() {
        0 => Ok(Vec::new()),
        1 => serde_json::to_vec(&docs.remove(0)).map_err(|e| format!("settings: {e}")),
        n => Err(format!("settings: {n} documents; expected one")),
    }
}

/// The AdmissionRequest the API server would send for `object`
/// ([`AdmissionRequest::for_object`]), once the operation and the object's
/// apiVersion and kind are checked.
pub fn admission_request(object: Value, operation: &str) -> Result<AdmissionRequest, String> {
    let operation = operation.trim().to_ascii_uppercase();
    if !matches!(
        operation.as_str(),
        "CREATE" | "UPDATE" | "DELETE" | "CONNECT"
    ) {
        return Err(format!(
            "operation: {operation:?} is not one of CREATE, UPDATE, DELETE, CONNECT"
        ));
    }
    if !object["apiVersion"].is_string() {
        return Err("object: apiVersion is missing or not a string".into());
    }
    if !object["kind"].is_string() {
        return Err("object: kind is missing or not a string".into());
    }
    Ok(AdmissionRequest::for_object(&operation, object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MACHINESET_YAML: &str = "\
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: ms-0
  namespace: default
  labels:
    nodepool: pool0
  ownerReferences:
  - apiVersion: cluster.x-k8s.io/v1beta2
    kind: MachineDeployment
    name: md-0
    uid: 4b691dc1-e237-5ec3-bf12-a86b6e2ee54a
    controller: true
spec:
  clusterName: c
";

    const MD_YAML: &str = "\
# a comment, as in test_data/capi/*/parents
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: md-0
  namespace: default
spec:
  template:
    metadata:
      labels:
        nodepool: pool1
";

    fn patch_of(report: &Report) -> Vec<(String, String)> {
        report
            .patch
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|op| {
                (
                    op["op"].as_str().unwrap().to_owned(),
                    op["path"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn yaml_and_json_objects_parse_alike() {
        let from_yaml = parse_object(MACHINESET_YAML).unwrap();
        let from_json = parse_object(&from_yaml.to_string()).unwrap();
        assert_eq!(from_yaml, from_json);
        assert_eq!(from_yaml["metadata"]["labels"]["nodepool"], "pool0");
    }

    #[test]
    fn json_with_tab_indentation_parses() {
        let object =
            parse_object("{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"ConfigMap\"\n}").unwrap();
        assert_eq!(object["kind"], "ConfigMap");
    }

    #[test]
    fn admission_wrappers_are_unwrapped() {
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        let request = json!({"uid": "u", "operation": "CREATE", "object": object});
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
        assert_eq!(parse_object(&request.to_string()).unwrap(), object);
        assert_eq!(parse_object(&review.to_string()).unwrap(), object);
    }

    #[test]
    fn object_errors_name_the_input() {
        assert_eq!(
            parse_object("  \n").unwrap_err(),
            "object: empty; paste the object to evaluate (YAML or JSON)"
        );
        assert!(
            parse_object("kind: [")
                .unwrap_err()
                .starts_with("object: not valid YAML or JSON: ")
        );
        assert!(
            parse_object("{\"kind\": ")
                .unwrap_err()
                .starts_with("object: not valid YAML or JSON: ")
        );
        assert_eq!(
            parse_object("[1]").unwrap_err(),
            "object: expected a Kubernetes object, found an array"
        );
        assert_eq!(
            parse_object("a: 1\n---\nb: 2\n").unwrap_err(),
            "object: 2 documents; paste one object here and its parents below"
        );
        assert_eq!(
            parse_object("{\"a\": 1}\n{\"b\": }").unwrap_err(),
            "object (document 2): not valid YAML or JSON: expected value at line 2 column 7"
        );
    }

    #[test]
    fn parents_accept_streams_arrays_and_lists() {
        let md = parse_object(MD_YAML).unwrap();
        let stream = format!("{MD_YAML}---\n{MD_YAML}---\n");
        assert_eq!(parse_parents(&stream).unwrap(), [md.clone(), md.clone()]);
        let array = json!([md, md]).to_string();
        assert_eq!(parse_parents(&array).unwrap(), [md.clone(), md.clone()]);
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [md]}).to_string();
        assert_eq!(parse_parents(&list).unwrap(), vec![md.clone()]);
        // Nested lists and arrays are flattened, `null` items dropped, and
        // JSON documents may follow each other, as in the CLI's files.
        let nested = json!({"apiVersion": "v1", "kind": "List", "items": [[md], null]}).to_string();
        assert_eq!(parse_parents(&nested).unwrap(), vec![md.clone()]);
        let json_stream = format!("{md} {md}");
        assert_eq!(parse_parents(&json_stream).unwrap(), [md.clone(), md]);
        assert!(parse_parents("").unwrap().is_empty());
        assert!(parse_parents("# nothing\n---\n").unwrap().is_empty());
    }

    #[test]
    fn parents_must_name_themselves() {
        assert_eq!(
            parse_parents(&format!("{MD_YAML}---\nkind: Cluster\n")).unwrap_err(),
            "parents[1]: expected an object with apiVersion, kind and metadata.name, found an object without them"
        );
        assert_eq!(
            parse_parents("[1]").unwrap_err(),
            "parents[0]: expected an object with apiVersion, kind and metadata.name, found a number"
        );
        assert!(
            parse_parents(&format!("{MD_YAML}---\nkind: [\n"))
                .unwrap_err()
                .starts_with("parents (document 2): not valid YAML or JSON: ")
        );
    }

    #[test]
    fn settings_yaml_json_and_empty() {
        let yaml = parse_settings("cloudTags:\n  propagatingLabels: [platform/env]\n").unwrap();
        let json =
            parse_settings(r#"{"cloudTags":{"propagatingLabels":["platform/env"]}}"#).unwrap();
        // Settings read alike print alike.
        let read = |s: &Settings| format!("{s:?}");
        assert!(read(&yaml).contains(r#"propagating_labels: ["platform/env"]"#));
        assert_eq!(read(&yaml), read(&json));
        let defaults = read(&parse_settings("{}").unwrap());
        assert_eq!(read(&parse_settings("").unwrap()), defaults);
        assert_eq!(read(&parse_settings("# defaults\n").unwrap()), defaults);
    }

    #[test]
    fn settings_errors_come_from_the_policy() {
        assert_eq!(
            parse_settings("cloudTags:\n  propagatingLabels: [platform/origin]\n").unwrap_err(),
            "settings are not valid: cloudTags.propagatingLabels[0]: \"platform/origin\" is a seeded \
             platform label and can never be opted into cloud-tag propagation; remove it from the list"
        );
        assert!(
            parse_settings("cloudTag: {}\n")
                .unwrap_err()
                .contains("unknown field `cloudTag`")
        );
    }

    #[test]
    fn settings_are_read_once_per_text() {
        let reads = std::cell::Cell::new(0);
        let read = |text: &str| {
            reads.set(reads.get() + 1);
            parse_settings(text)
        };
        let first = parsed_once(&EXPLAIN_SETTINGS, "mode: validate", read);
        let again = parsed_once(&EXPLAIN_SETTINGS, "mode: validate", read);
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!(reads.get(), 1);
        let other = parsed_once(&EXPLAIN_SETTINGS, "mode: mutate", read);
        assert!(!Rc::ptr_eq(&first, &other));
        assert_eq!(reads.get(), 2);
        // A text that does not read is kept with its error.
        let wrong = "cloudTag: {}\n";
        let refused = parsed_once(&EXPLAIN_SETTINGS, wrong, read);
        assert!(Rc::ptr_eq(
            &refused,
            &parsed_once(&EXPLAIN_SETTINGS, wrong, read)
        ));
        assert_eq!(reads.get(), 3);
        // Kept settings answer as freshly read ones do.
        assert_eq!(
            run(MACHINESET_YAML, MD_YAML, wrong, "UPDATE").unwrap_err(),
            parse_settings(wrong).unwrap_err()
        );
        let answer = |settings| explain_json(MACHINESET_YAML, MD_YAML, settings, "UPDATE");
        let read = answer("mode: validate");
        assert_eq!(answer("mode: validate"), read);
        let audited = |settings| audit_json(MD_YAML, settings);
        let read = audited("mode: mutate");
        assert_eq!(audited("mode: mutate"), read);
    }

    #[test]
    fn request_from_object() {
        let object = parse_object(MACHINESET_YAML).unwrap();
        let request = admission_request(object.clone(), " update ").unwrap();
        assert_eq!(request.kind.group, "cluster.x-k8s.io");
        assert_eq!(request.kind.version, "v1beta2");
        assert_eq!(request.kind.kind, "MachineSet");
        assert_eq!(request.operation, "UPDATE");
        assert_eq!(request.namespace, "default");
        assert_eq!(request.object, object);

        let core =
            admission_request(json!({"apiVersion": "v1", "kind": "ConfigMap"}), "CREATE").unwrap();
        assert_eq!(
            (core.kind.group.as_str(), core.kind.version.as_str()),
            ("", "v1")
        );
        assert_eq!(core.namespace, "");
    }

    #[test]
    fn request_errors() {
        let object = parse_object(MACHINESET_YAML).unwrap();
        assert_eq!(
            admission_request(object, "PATCH").unwrap_err(),
            "operation: \"PATCH\" is not one of CREATE, UPDATE, DELETE, CONNECT"
        );
        assert_eq!(
            admission_request(json!({"kind": "X"}), "CREATE").unwrap_err(),
            "object: apiVersion is missing or not a string"
        );
        assert_eq!(
            admission_request(json!({"apiVersion": "v1"}), "CREATE").unwrap_err(),
            "object: kind is missing or not a string"
        );
    }

    #[test]
    fn run_corrects_a_drifted_label_and_explains_it() {
        let report = run(MACHINESET_YAML, MD_YAML, "", "UPDATE").unwrap();
        assert!(report.ok);
        assert_eq!(report.allowed, Some(true));
        assert_eq!(
            patch_of(&report),
            [
                ("replace".to_owned(), "/metadata/labels/nodepool".to_owned()),
                ("add".to_owned(), "/spec/template".to_owned()),
            ]
        );
        assert_eq!(report.patch.as_ref().unwrap()[0]["value"], "pool1");
        assert_eq!(
            report.mutated.as_ref().unwrap()["metadata"]["labels"]["nodepool"],
            "pool1"
        );
        assert!(report.explanation_text.contains(
            "\"nodepool\" = \"pool1\": flows from MachineDeployment default/md-0 (cluster.x-k8s.io/v1beta2) \
             spec.template.metadata.labels (corrected)"
        ));
        let explanation = serde_json::to_value(report.explanation.as_ref().unwrap()).unwrap();
        assert_eq!(explanation["rule"]["family"], "MachineSet");
    }

    #[test]
    fn run_without_the_parent_allows_unchanged() {
        let report = run(MACHINESET_YAML, "", "", "UPDATE").unwrap();
        assert_eq!(report.allowed, Some(true));
        assert_eq!(report.patch, Some(json!([])));
        assert!(
            report.explanation_text.contains("not found"),
            "{}",
            report.explanation_text
        );
    }

    #[test]
    fn run_in_validate_mode_rejects_without_a_patch() {
        let report = run(MACHINESET_YAML, MD_YAML, "mode: validate", "UPDATE").unwrap();
        assert!(report.ok);
        assert_eq!(report.allowed, Some(false));
        assert_eq!(report.code, Some(400));
        assert!(
            report
                .message
                .as_deref()
                .unwrap()
                .contains("missing \"nodepool\"")
        );
        assert_eq!((report.patch, report.mutated), (None, None));
    }

    #[test]
    fn delete_is_allowed_unchanged() {
        let report = run(MACHINESET_YAML, MD_YAML, "", "DELETE").unwrap();
        assert_eq!(report.patch, Some(json!([])));
        let explanation = serde_json::to_value(report.explanation.unwrap()).unwrap();
        assert_eq!(
            explanation["notes"],
            json!(["DELETE requests are allowed unchanged"])
        );
    }

    #[test]
    fn explain_json_reports_input_errors_as_json() {
        let out: Value = serde_json::from_str(&explain_json("kind: [", "", "", "UPDATE")).unwrap();
        assert_eq!(out["ok"], false);
        assert_eq!(out["allowed"], Value::Null);
        assert!(
            out["error"]
                .as_str()
                .unwrap()
                .starts_with("object: not valid YAML or JSON")
        );

        let out: Value =
            serde_json::from_str(&explain(MACHINESET_YAML, MD_YAML, "{}", "UPDATE")).unwrap();
        assert_eq!(out["ok"], true);
        assert_eq!(out["error"], Value::Null);
        for key in [
            "allowed",
            "warnings",
            "auditAnnotations",
            "explanation",
            "explanationText",
            "patch",
            "mutated",
        ] {
            assert!(out.get(key).is_some(), "missing {key}");
        }
    }
}
