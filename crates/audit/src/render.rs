//! The audit report as text for people and as one JSON document for scripts,
//! in two forms ([`Form`]).
//!
//! Full text: the ownership tree, one line per object with its verdict
//! (`✗ DEVIATES` / `✗ REJECTED` marks the objects that fail) and, for a
//! Machine, the keys CAPI syncs to its Node; then, for every object the
//! policy acts on, in tree order, its deviations, look-ups and explanation
//! and the patch mutate mode would apply; last, the summary line. Compact
//! text: the same for the objects that fail, drawn in their tree with the
//! parents that place them; the others counted per kind.
//!
//! Full JSON: `{"summary", "tree", "objects"}`. `tree` nests `{"id",
//! "children"}`; `objects` lists every object once, in tree order, with its
//! details. Compact JSON: `{"summary", "objects"}`, every object with its
//! identity, parent and status, and the details of an object that fails.

use std::fmt::Write as _;

use metadata_propagation_core::outcome::Verdict;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use crate::dump_answers::{Answer, LookupRecord};
use crate::report::{Audited, Evaluation, Report, Status};

/// How much of a report to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Every object with its details.
    Full,
    /// The objects that fail with their details, in their tree; the others
    /// counted per kind (text) or with their status only (JSON).
    Compact,
}

/// Whether an object is printed whole in `form`: every object in full, and
/// the objects that fail in compact.
fn detailed(object: &Audited, form: Form) -> bool {
    form == Form::Full || matches!(object.status(), Status::Deviates | Status::Rejected)
}

/// The objects drawn in `form`: every one in full; in compact, the objects
/// that fail and their ancestors.
fn drawn(report: &Report, form: Form) -> Vec<bool> {
    let mut drawn: Vec<bool> = (report.objects.iter())
        .map(|object| detailed(object, form))
        .collect();
    for (index, _) in report.tree.walk().into_iter().rev() {
        if let (true, Some(parent)) = (drawn[index], report.tree.parent[index]) {
            drawn[parent] = true;
        }
    }
    drawn
}

/// The report as text.
pub fn text(report: &Report, form: Form) -> String {
    let mut out = String::new();
    let drawn = drawn(report, form);
    tree_text(report, &drawn, &mut out);
    for (index, _) in report.tree.walk() {
        let object = &report.objects[index];
        if let Some(evaluation) = object
            .evaluation
            .as_ref()
            .filter(|_| detailed(object, form))
        {
            out.push('\n');
            details_text(object, evaluation, &mut out);
        }
    }
    if form == Form::Compact {
        counted_text(report, &mut out);
    }
    let summary = report.summary();
    let plural = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let _ = write!(
        out,
        "\n{} {} audited, {} {}",
        summary.audited,
        plural(summary.audited, "object", "objects"),
        summary.deviating,
        plural(summary.deviating, "deviates", "deviate"),
    );
    if summary.rejected > 0 {
        let _ = write!(out, ", {} rejected", summary.rejected);
    }
    let not_evaluated = summary.objects - summary.audited;
    if not_evaluated > 0 {
        let _ = write!(
            out,
            " ({not_evaluated} more not evaluated: the policy does not act on their kind)"
        );
    }
    out.push('\n');
    out
}

/// In compact text, the objects that do not fail, counted per status and
/// kind: `compliant: 7 Machine, 2 MachineSet; not evaluated: 1 Cluster`.
fn counted_text(report: &Report, out: &mut String) {
    let mut parts = Vec::new();
    for (status, name) in [
        (Status::Compliant, "compliant"),
        (Status::NotEvaluated, "not evaluated"),
    ] {
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for object in report.objects.iter().filter(|o| o.status() == status) {
            *kinds.entry(object.reference.kind.as_str()).or_default() += 1;
        }
        if !kinds.is_empty() {
            let counts: Vec<String> = kinds
                .iter()
                .map(|(kind, n)| format!("{n} {kind}"))
                .collect();
            parts.push(format!("{name}: {}", counts.join(", ")));
        }
    }
    if !parts.is_empty() {
        let _ = write!(out, "\n{} (--full lists each)\n", parts.join("; "));
    }
}

/// One line per drawn object, drawn as a tree.
fn tree_text(report: &Report, drawn: &[bool], out: &mut String) {
    // (object, prefix of its line, prefix of its children's lines)
    let mut stack: Vec<(usize, String, String)> = report
        .tree
        .roots
        .iter()
        .filter(|&&root| drawn[root])
        .rev()
        .map(|&root| (root, String::new(), String::new()))
        .collect();
    while let Some((index, prefix, child_prefix)) = stack.pop() {
        let _ = writeln!(out, "{prefix}{}", headline(&report.objects[index]));
        let children: Vec<usize> = (report.tree.children[index].iter())
            .copied()
            .filter(|&child| drawn[child])
            .collect();
        for (k, &child) in children.iter().enumerate().rev() {
            let last = k + 1 == children.len();
            let (connector, continuation) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            stack.push((
                child,
                format!("{child_prefix}{connector}"),
                format!("{child_prefix}{continuation}"),
            ));
        }
    }
}

fn marker(status: Status) -> &'static str {
    match status {
        Status::Compliant => "✓ compliant",
        Status::Deviates => "✗ DEVIATES",
        Status::Rejected => "✗ REJECTED",
        Status::NotEvaluated => "not evaluated",
    }
}

/// `Kind namespace/name (apiVersion): verdict`, and a Machine's Node keys.
fn headline(object: &Audited) -> String {
    let mut line = format!("{}: {}", object.reference, marker(object.status()));
    if let Some((labels, annotations)) = object
        .evaluation
        .as_ref()
        .and_then(|e| e.detail.as_ref())
        .and_then(|d| d.explanation.synced_to_node())
    {
        let list = |keys: Vec<&str>| {
            if keys.is_empty() {
                "none".to_owned()
            } else {
                keys.join(", ")
            }
        };
        let _ = write!(
            line,
            "; Node labels: {}; Node annotations: {}",
            list(labels),
            list(annotations)
        );
    }
    line
}

fn details_text(object: &Audited, evaluation: &Evaluation, out: &mut String) {
    let _ = writeln!(out, "{}: {}", object.reference, marker(object.status()));
    let _ = writeln!(out, "  read from {}", object.origin);
    for deviation in &evaluation.deviations {
        let _ = writeln!(out, "  deviation: {deviation}");
    }
    if let (Status::Rejected, Verdict::Reject { message, .. }) =
        (object.status(), &evaluation.outcome.verdict)
    {
        let _ = writeln!(out, "  rejected: {message}");
    }
    for warning in &evaluation.outcome.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if let Some(detail) = &evaluation.detail {
        for lookup in &detail.lookups {
            let _ = writeln!(
                out,
                "  look-up: {}: {}",
                lookup.reference,
                answer_text(lookup)
            );
        }
        for line in detail.explanation.to_string().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(ops) = evaluation.patch.as_array().filter(|ops| !ops.is_empty()) {
        let _ = writeln!(out, "  patch (what mutate mode would apply):");
        for op in ops {
            let _ = writeln!(out, "    {op}");
        }
    }
}

fn answer_text(lookup: &LookupRecord) -> String {
    match &lookup.answer {
        Answer::Found => "found".to_owned(),
        Answer::NotFound { in_dump_at: None } => "not in the dump".to_owned(),
        Answer::NotFound {
            in_dump_at: Some(at),
        } => format!(
            "not in the dump at this version; the dump lists it at {at}, which an API server \
             would convert and the audit cannot"
        ),
        Answer::Failed(message) => format!("failed: {message}"),
    }
}

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
            let roots = report.tree.roots.iter();
            let tree: Vec<Value> = roots.map(|&r| tree_json(report, r)).collect();
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
            let parent = report.tree.parent[index].map(|p| report.objects[p].reference.to_string());
            let object = &report.objects[index];
            let id = object.reference.to_string();
            match detailed(object, form) {
                true => seq.serialize_element(&object_json(object, &id, parent, depth))?,
                false => seq.serialize_element(&Lean {
                    api_version: &object.reference.api_version,
                    id,
                    kind: &object.reference.kind,
                    name: &object.reference.name,
                    namespace: object.reference.namespace.as_deref(),
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
    let children: Vec<Value> = report.tree.children[index]
        .iter()
        .map(|&c| tree_json(report, c))
        .collect();
    json!({"id": report.objects[index].reference.to_string(), "children": children})
}

fn object_json(object: &Audited, id: &str, parent: Option<String>, depth: usize) -> Value {
    let reference = &object.reference;
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    out.insert("apiVersion".into(), json!(reference.api_version));
    out.insert("kind".into(), json!(reference.kind));
    out.insert("namespace".into(), json!(reference.namespace));
    out.insert("name".into(), json!(reference.name));
    let source = match object.origin.listed_from() {
        Some(list) => json!({"list": list}),
        None => json!({"file": object.origin.file,
                       "document": object.origin.document, "items": object.origin.items}),
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
        out.insert("explanation".into(), json!(detail.explanation));
    }
    out.insert("patch".into(), evaluation.patch.clone());
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
