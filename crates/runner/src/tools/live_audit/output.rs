//! What a live audit prints: each policy's report as the dump audit prints
//! it, the kinds not listed, and the fix's outcomes, as text or as one
//! JSON document.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use cluster_audit::render;
use serde_json::{Value, json};

use super::deployed::Audit;
use super::fix::Done;
use super::listing::Unlisted;

pub(super) fn audit_text(audits: &[Audit], unlisted: &BTreeSet<Unlisted>) -> String {
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
        out.push_str(&render::text(&audit.report));
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

pub(super) fn audit_json(audits: &[Audit], unlisted: &BTreeSet<Unlisted>) -> Value {
    json!({
        "policies": audits.iter().map(|audit| json!({
            "name": audit.policy.name,
            "mode": audit.policy.mode,
            "source": audit.policy.source,
            "report": render::json(&audit.report),
            "unselected": audit.unselected,
            "selectorsFrom": audit.policy.scope.from,
        })).collect::<Vec<_>>(),
        "unlisted": unlisted.iter().map(|missing| json!({
            "resource": missing.resource, "verb": missing.verb, "message": missing.message,
            "served": missing.served,
        })).collect::<Vec<_>>(),
    })
}

fn fix_summary(fixed: &[Done]) -> (usize, usize) {
    let ok = fixed.iter().filter(|done| done.outcome.succeeded()).count();
    (ok, fixed.len() - ok)
}

pub(super) fn fix_text(fixed: &[Done], dry_run: bool, out: &mut String) {
    let _ = writeln!(
        out,
        "\nfix{}:",
        if dry_run {
            " (dry run: nothing was stored)"
        } else {
            ""
        }
    );
    for done in fixed {
        let _ = writeln!(
            out,
            "  {:<13} {}: {}",
            done.outcome.as_str(),
            done.id,
            done.message
        );
        if dry_run {
            for change in done.changes.as_array().into_iter().flatten() {
                let _ = writeln!(out, "      {change}");
            }
        }
    }
    let (ok, not) = fix_summary(fixed);
    let verb = if dry_run { "would be fixed" } else { "fixed" };
    let _ = writeln!(
        out,
        "fix: {} deviating, {ok} {verb}, {not} not fixed",
        fixed.len()
    );
}

pub(super) fn fix_json(fixed: &[Done], dry_run: bool) -> Value {
    let (ok, not) = fix_summary(fixed);
    json!({
        "dryRun": dry_run,
        "objects": fixed.iter().map(|done| json!({
            "id": done.id,
            "outcome": done.outcome.as_str(),
            "message": done.message,
            "attempts": done.attempts,
            "changes": done.changes,
        })).collect::<Vec<_>>(),
        "summary": {"deviating": fixed.len(), "fixed": ok, "notFixed": not},
    })
}
