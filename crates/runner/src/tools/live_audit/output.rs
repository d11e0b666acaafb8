//! What a live audit prints: each policy's report as the dump audit prints
//! it, the kinds not listed, and the fix's outcomes, as text or as one
//! JSON document.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Duration;

use cluster_audit::render;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

use super::deployed::Audit;
use super::exit::Exit;
use super::fix::{FixRun, Outcome};
use super::listing::Unlisted;

pub(super) fn audit_text(
    audits: &[Audit],
    unlisted: &BTreeSet<Unlisted>,
    form: render::Form,
) -> String {
    let mut out = String::new();
    for (i, audit) in audits.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let policy = &audit.policy;
        let _ = writeln!(
            out,
            "policy {} (mode {}, from {})",
            policy.name, policy.mode, policy.source
        );
        out.push_str(&render::text(&audit.report, form));
        if audit.unselected > 0 {
            let _ = writeln!(
                out,
                "{} listed objects not audited: outside the namespaceSelector or objectSelector of {}, \
                 so its webhook is never called for them",
                audit.unselected, policy.scope.from
            );
        }
    }
    let (served, not_served): (Vec<&Unlisted>, Vec<&Unlisted>) =
        unlisted.iter().partition(|missing| missing.served);
    if !served.is_empty() {
        out.push_str("\nnot listed:\n");
        for missing in served {
            let _ = writeln!(out, "  {}: {}", missing.resource, missing.message);
        }
    }
    if !not_served.is_empty() {
        let names: Vec<&str> = not_served.iter().map(|m| m.resource.as_str()).collect();
        let _ = writeln!(
            out,
            "\nnot served by this cluster (the rules name them; this fails nothing): {}",
            names.join(", ")
        );
    }
    out
}

/// The live audit's JSON document: `fields`, and each policy's report
/// under `policies`, serialised as it is written (a report of 100,000
/// objects built as a value first is hundreds of MB).
pub(super) fn audit_json<'a>(
    audits: &'a [Audit],
    unlisted: &BTreeSet<Unlisted>,
    form: render::Form,
    mut fields: Map<String, Value>,
) -> Spliced<Vec<Spliced<render::Json<'a>>>> {
    let policies = (audits.iter())
        .map(|audit| Spliced {
            fields: json_map(json!({
                "name": audit.policy.name,
                "mode": audit.policy.mode,
                "source": audit.policy.source,
                "module": audit.policy.module,
                "unselected": audit.unselected,
                "selectorsFrom": audit.policy.scope.from,
            })),
            key: "report",
            value: render::Json {
                report: &audit.report,
                form,
            },
        })
        .collect();
    let unlisted: Vec<Value> = (unlisted.iter())
        .map(|missing| {
            json!({"resource": missing.resource, "verb": missing.verb,
                "message": missing.message, "served": missing.served})
        })
        .collect();
    fields.insert("unlisted".to_owned(), Value::Array(unlisted));
    Spliced {
        fields,
        key: "policies",
        value: policies,
    }
}

fn json_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A JSON object of `fields` and one more entry, `key`, whose value is
/// serialised as it is written; its keys in the order a JSON value sorts
/// them, so the bytes are the document's as a value.
pub(super) struct Spliced<T> {
    pub(super) fields: Map<String, Value>,
    pub(super) key: &'static str,
    pub(super) value: T,
}

impl<T: Serialize> Serialize for Spliced<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut spliced = false;
        for (key, value) in &self.fields {
            if !spliced && key.as_str() > self.key {
                map.serialize_entry(self.key, &self.value)?;
                spliced = true;
            }
            map.serialize_entry(key, value)?;
        }
        if !spliced {
            map.serialize_entry(self.key, &self.value)?;
        }
        map.end()
    }
}

/// `run`'s outcomes counted, each of [`Outcome::ALL`] in its order.
fn outcome_counts(run: &FixRun) -> Vec<(Outcome, usize)> {
    Outcome::ALL
        .iter()
        .map(|&outcome| {
            let n = run.done.iter().filter(|d| d.outcome == outcome).count();
            (outcome, n)
        })
        .collect()
}

/// The fix's section of the text report: one line per object, its outcome
/// first, and the changes admission made (or, in a dry run, would make) on
/// the lines under it; then the count.
pub(super) fn fix_text(run: &FixRun, dry_run: bool, out: &mut String) {
    out.push('\n');
    if !run.refused.is_empty() {
        let _ = writeln!(out, "fix: nothing written; before the first write:");
        for why in &run.refused {
            let _ = writeln!(out, "  {why}");
        }
        return;
    }
    if run.done.is_empty() {
        let _ = writeln!(out, "fix: nothing deviates; nothing written");
        return;
    }
    let _ = writeln!(
        out,
        "fix{}, parents before children:",
        if dry_run {
            " (dry run: nothing was stored)"
        } else {
            ""
        }
    );
    for done in &run.done {
        let _ = writeln!(
            out,
            "  {:<13} {}: {}",
            done.outcome.as_str(),
            done.id,
            done.message
        );
        for change in done.changes.as_array().into_iter().flatten() {
            let _ = writeln!(out, "      {change}");
        }
    }
    let counts: Vec<String> = outcome_counts(run)
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(outcome, n)| format!("{n} {outcome}"))
        .collect();
    let _ = writeln!(
        out,
        "fix: {} deviating{}: {}",
        run.deviating,
        after_parent(run),
        counts.join(", ")
    );
}

/// ", and N more once their parent was written", when there were.
fn after_parent(run: &FixRun) -> String {
    match run.after_parent {
        0 => String::new(),
        n => format!(", and {n} more once their parent was written"),
    }
}

pub(super) fn fix_json(run: &FixRun, dry_run: bool) -> Value {
    let ok = run.done.iter().filter(|d| d.outcome.succeeded()).count();
    json!({
        "dryRun": dry_run,
        "refused": run.refused,
        "objects": run.done.iter().map(|done| json!({
            "id": done.id,
            "outcome": done.outcome.as_str(),
            "message": done.message,
            "attempts": done.attempts,
            "changes": done.changes,
        })).collect::<Vec<_>>(),
        "summary": {
            "deviating": run.deviating,
            "afterParent": run.after_parent,
            "fixed": ok,
            "notFixed": run.done.len() - ok,
        },
    })
}

/// What a live audit's scope left out: with `-n`, the cluster-scoped kinds
/// the policies' rules match (listed only with `--cluster-scoped`).
pub(super) struct Scope<'a> {
    pub(super) namespace: Option<&'a str>,
    pub(super) left_out: &'a BTreeSet<String>,
    /// The kinds listed again from their first page after their continue
    /// token expired (410).
    pub(super) relisted: &'a BTreeSet<String>,
}

pub(super) fn scope_text(scope: &Scope<'_>, out: &mut String) {
    if let (Some(namespace), false) = (scope.namespace, scope.left_out.is_empty()) {
        let names: Vec<&str> = scope.left_out.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "\nleft out by -n {namespace}: {} (cluster-scoped: in no namespace; --cluster-scoped \
             audits and fixes them too)",
            names.join(", ")
        );
    }
    if !scope.relisted.is_empty() {
        let names: Vec<&str> = scope.relisted.iter().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "\nlisted again from the first page, its continue token having expired (410): {} \
             (each object audited once)",
            names.join(", ")
        );
    }
}

pub(super) fn scope_json(scope: &Scope<'_>) -> Value {
    json!({"namespace": scope.namespace, "leftOut": scope.left_out, "relisted": scope.relisted})
}

/// The run in one object, for a log pipeline: how it ended, what it found
/// and did, what it cost. `-o json` carries it as `summary`; the text
/// report ends with it on one line, `summary: ` and the object.
pub(super) struct Summary<'a> {
    pub(super) exit: Exit,
    pub(super) audits: &'a [Audit],
    pub(super) deviating: usize,
    pub(super) fix: Option<&'a FixRun>,
    pub(super) not_listed: usize,
    pub(super) left_out: usize,
    pub(super) interrupted: Option<&'a str>,
    pub(super) requests: &'a BTreeMap<&'static str, usize>,
    pub(super) elapsed: Duration,
}

pub(super) fn summary_json(summary: &Summary<'_>) -> Value {
    let (audited, rejected) = summary.audits.iter().fold((0, 0), |(a, r), audit| {
        let counts = audit.report.summary();
        (a + counts.audited, r + counts.rejected)
    });
    let outcomes = summary.fix.map(|run| {
        outcome_counts(run)
            .into_iter()
            .map(|(outcome, n)| (outcome.as_str().to_owned(), json!(n)))
            .collect::<serde_json::Map<String, Value>>()
    });
    // Tenths of a second: a log line that reads as a duration.
    let seconds = (summary.elapsed.as_secs_f64() * 10.0).round() / 10.0;
    json!({
        "result": summary.exit.as_str(),
        "exitCode": summary.exit.code(),
        "audited": audited,
        "deviating": summary.deviating,
        "afterParent": summary.fix.map_or(0, |run| run.after_parent),
        "rejected": rejected,
        "outcomes": outcomes,
        "fixRefused": summary.fix.is_some_and(|run| !run.refused.is_empty()),
        "notListed": summary.not_listed,
        "leftOut": summary.left_out,
        "interrupted": summary.interrupted,
        "requests": summary.requests,
        "seconds": seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::live_audit::fix::Done;

    fn done(outcome: Outcome, changes: Value) -> Done {
        Done {
            id: "MachineSet default/ms (cluster.x-k8s.io/v1beta2)".to_owned(),
            outcome,
            message: "admission changed 1 field".to_owned(),
            attempts: 1,
            changes,
            after: None,
        }
    }

    #[test]
    fn a_fix_shows_each_objects_changes_and_one_count_of_deviating_objects() {
        let run = FixRun {
            done: vec![
                done(
                    Outcome::Fixed,
                    json!([{"op": "add", "path": "/metadata/labels/a", "value": "1"}]),
                ),
                done(Outcome::Gone, json!([])),
            ],
            deviating: 1,
            after_parent: 1,
            refused: Vec::new(),
        };
        let mut out = String::new();
        fix_text(&run, false, &mut out);
        assert_eq!(
            out,
            "\nfix, parents before children:\n  \
             fixed         MachineSet default/ms (cluster.x-k8s.io/v1beta2): admission changed 1 field\n      \
             {\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"1\"}\n  \
             gone          MachineSet default/ms (cluster.x-k8s.io/v1beta2): admission changed 1 field\n\
             fix: 1 deviating, and 1 more once their parent was written: 1 fixed, 1 gone\n"
        );
    }

    #[test]
    fn no_section_header_stands_alone() {
        let mut out = String::new();
        fix_text(&FixRun::default(), false, &mut out);
        assert_eq!(out, "\nfix: nothing deviates; nothing written\n");
        let refused = FixRun {
            deviating: 2,
            refused: vec!["the webhook of ClusterAdmissionPolicy p: not registered".to_owned()],
            ..FixRun::default()
        };
        let mut out = String::new();
        fix_text(&refused, false, &mut out);
        assert_eq!(
            out,
            "\nfix: nothing written; before the first write:\n  \
             the webhook of ClusterAdmissionPolicy p: not registered\n"
        );
    }
}
