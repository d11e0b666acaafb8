//! The report as one JSON document, in either [`Form`].

use metadata_propagation_core::outcome::Verdict;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::form::{Form, detailed};
use crate::dump_answers::{Answer, LookupRecord};
use crate::report::{Audited, Report};

/// The report as one JSON document.
pub fn json(report: &Report, form: Form) -> Value {
    serde_json::to_value(Json { report, form }).expect("a report always serialises")
}

/// The report as one JSON document, serialised as it is written: the
/// compact form's entries are never built as values, which at 100,000
/// objects are hundreds of MB (`serde_json::to_writer` it where the
/// document is large).
pub struct Json<'a> {
    /// The report.
    pub report: &'a Report,
    /// Its form.
    pub form: Form,
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let report = self.report;
        // Keys in the order a JSON value sorts them: the same bytes as
        // the document built as a value.
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("objects", &Entries(self))?;
        map.serialize_entry("summary", &summary_json(report))?;
        if self.form == Form::Full {
            let roots = report.tree.roots();
            let tree: Vec<Value> = roots.map(|r| tree_json(report, r)).collect();
            map.serialize_entry("tree", &tree)?;
        }
        map.end()
    }
}

/// Every object of the report, in tree order, one at a time.
struct Entries<'a>(&'a Json<'a>);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Json { report, form } = *self.0;
        let walk = report.tree.walk();
        let mut seq = serializer.serialize_seq(Some(walk.len()))?;
        for (index, depth) in walk {
            let parent =
                (report.tree.parent(index)).map(|p| report.objects[p].reference().to_string());
            let object = &report.objects[index];
            let id = object.reference().to_string();
            match detailed(object, form) {
                true => seq.serialize_element(&object_json(object, &id, parent, depth))?,
                false => seq.serialize_element(&Lean {
                    api_version: object.api_version(),
                    id,
                    kind: object.identity.kind(),
                    name: object.identity.name(),
                    namespace: object.identity.namespace(),
                    parent,
                    status: object.status().as_str(),
                })?,
            }
        }
        seq.end()
    }
}

/// A compact entry: the object's identity, parent and status, its keys
/// sorted as a JSON value sorts them.
#[derive(serde::Serialize)]
struct Lean<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    id: String,
    kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    parent: Option<String>,
    status: &'static str,
}

fn summary_json(report: &Report) -> Value {
    let summary = report.summary();
    json!({
        "objects": summary.objects,
        "audited": summary.audited,
        "compliant": summary.compliant,
        "deviating": summary.deviating,
        "rejected": summary.rejected,
        "notEvaluated": summary.objects - summary.audited,
    })
}

fn tree_json(report: &Report, index: usize) -> Value {
    let children: Vec<Value> = (report.tree.children(index))
        .map(|c| tree_json(report, c))
        .collect();
    json!({"id": report.objects[index].reference().to_string(), "children": children})
}

fn object_json(object: &Audited, id: &str, parent: Option<String>, depth: usize) -> Value {
    let reference = &object.reference();
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    out.insert("apiVersion".into(), json!(reference.api_version));
    out.insert("kind".into(), json!(reference.kind));
    out.insert("namespace".into(), json!(reference.namespace));
    out.insert("name".into(), json!(reference.name));
    let origin = object.origin();
    let source = match origin.listed_from() {
        Some(list) => json!({"list": list}),
        None => json!({"file": origin.file, "document": origin.document, "items": origin.items}),
    };
    out.insert("source".into(), source);
    out.insert("parent".into(), json!(parent));
    out.insert("depth".into(), json!(depth));
    out.insert("status".into(), json!(object.status().as_str()));
    let Some(evaluation) = &object.evaluation else {
        out.insert(
            "note".into(),
            json!(format!(
                "the policy does not act on {} objects",
                reference.kind
            )),
        );
        return Value::Object(out);
    };
    let outcome = &evaluation.outcome;
    let (allowed, message, code) = match &outcome.verdict {
        Verdict::Allow(_) => (true, None, None),
        Verdict::Reject { message, code } => (false, Some(message), Some(code)),
    };
    out.insert("allowed".into(), json!(allowed));
    out.insert("message".into(), json!(message));
    out.insert("code".into(), json!(code));
    out.insert("deviations".into(), json!(evaluation.deviations));
    out.insert("warnings".into(), json!(outcome.warnings));
    out.insert("auditAnnotations".into(), json!(outcome.audit_annotations));
    if let Some(detail) = &evaluation.detail {
        if let Some((labels, annotations)) = detail.explanation.synced_to_node() {
            out.insert(
                "nodeKeys".into(),
                json!({"labels": labels, "annotations": annotations}),
            );
        }
        let lookups: Vec<Value> = detail.lookups.iter().map(lookup_json).collect();
        out.insert("lookups".into(), json!(lookups));
        out.insert("explanation".into(), detail.explanation.json());
    }
    out.insert("patch".into(), evaluation.patch.value());
    Value::Object(out)
}

fn lookup_json(lookup: &LookupRecord) -> Value {
    let reference = &lookup.reference;
    let mut out = json!({
        "apiVersion": reference.api_version,
        "kind": reference.kind,
        "namespace": reference.namespace,
        "name": reference.name,
        "fieldMasks": lookup.field_masks,
    });
    let (answer, extra) = match &lookup.answer {
        Answer::Found => ("found", None),
        Answer::NotFound { in_dump_at } => (
            "not-found",
            in_dump_at.as_ref().map(|at| ("inDumpAt", json!(at))),
        ),
        Answer::Failed(message) => ("failed", Some(("message", json!(message)))),
    };
    out["answer"] = json!(answer);
    if let Some((key, value)) = extra {
        out[key] = value;
    }
    out
}
