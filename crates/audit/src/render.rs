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

use crate::dump_answers::{Answer, LookupRecord};
use crate::report::{Audited, Evaluation, Report, Status};

mod form;
mod report_json;

pub use form::Form;
use form::detailed;
pub use report_json::{Json, json};

/// The objects drawn in `form`: every one in full; in compact, the objects
/// that fail and their ancestors.
fn drawn(report: &Report, form: Form) -> Vec<bool> {
    let mut drawn: Vec<bool> = (report.objects.iter())
        .map(|object| detailed(object, form))
        .collect();
    let walk: Vec<(usize, usize)> = report.tree.walk().collect();
    for &(index, _) in walk.iter().rev() {
        if let (true, Some(parent)) = (drawn[index], report.tree.parent(index)) {
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
            *kinds.entry(object.identity.kind()).or_default() += 1;
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
    let mut stack: Vec<(usize, String, String)> = (report.tree.roots())
        .filter(|&root| drawn[root])
        .rev()
        .map(|root| (root, String::new(), String::new()))
        .collect();
    while let Some((index, prefix, child_prefix)) = stack.pop() {
        let _ = writeln!(out, "{prefix}{}", headline(&report.objects[index]));
        let children: Vec<usize> = (report.tree.children(index))
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
    let mut line = format!("{}: {}", object.reference(), marker(object.status()));
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
    let _ = writeln!(out, "{}: {}", object.reference(), marker(object.status()));
    let _ = writeln!(out, "  read from {}", object.origin());
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
    let patch = evaluation.patch.value();
    if let Some(ops) = patch.as_array().filter(|ops| !ops.is_empty()) {
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
