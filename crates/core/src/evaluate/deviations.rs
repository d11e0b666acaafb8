//! Validate mode: the changes `mutate` would make, reported instead of made.
//!
//! The report is rendered from the same [`Plan`] the mutation applies, so
//! "validate rejects" and "mutate changes something" cannot disagree: each
//! edit carries what it replaces, and nothing here reads the object again.

use crate::json::fields::quoted;
use crate::request::outcome::{Outcome, Verdict};
use crate::request::plan::{Change, Edit, FieldEdit, MapEdit, Plan};
use crate::settings::Mode;
use crate::tags::said::clip;
use crate::tags::{ANNOTATIONS, SKIPPED_ANNOTATION};

/// The longest warning kube-apiserver passes on whole, in characters.
const WARNING_MAX: usize = 255;

/// Start of every validate-mode rejection.
pub(crate) const REPORT_PREFIX: &str =
    "the object deviates from the metadata propagation contract (validate mode): ";

/// Applies the mode to an outcome: in validate mode a plan that changes
/// anything but the skip annotation becomes a rejection listing every
/// deviation, and is kept as the refused plan; one that changes only the
/// skip annotation is no deviation, and the object is allowed as it is.
/// Warnings (the skips among them) and audit annotations stay.
///
/// Where a deviation must not refuse the request (`refuses` false: a
/// managed resource's UPDATE), it is allowed unchanged and the report is a
/// warning.
pub(crate) fn enforce(outcome: Outcome, mode: Mode, refuses: bool) -> Outcome {
    match (mode, outcome.verdict) {
        (Mode::Validate, Verdict::Allow(plan)) => match judged(plan) {
            plan if plan.is_empty() => Outcome {
                verdict: Verdict::Allow(plan),
                ..outcome
            },
            plan if !refuses => {
                let mut warnings = outcome.warnings;
                warnings.push(clip(&report(&plan), WARNING_MAX).into_owned());
                Outcome {
                    verdict: Verdict::Allow(Plan::default()),
                    warnings,
                    refused_plan: Some(plan),
                    ..outcome
                }
            }
            plan => Outcome {
                verdict: Verdict::Reject {
                    message: report(&plan),
                    code: 400,
                },
                refused_plan: Some(plan),
                ..outcome
            },
        },
        (_, verdict) => Outcome { verdict, ..outcome },
    }
}

/// What validate mode and the audit judge of a plan: what the policy
/// writes, not what it reports. The skip annotation reports what mutate
/// mode skipped, so a missing or different one is never a deviation.
pub(crate) fn judged(mut plan: Plan) -> Plan {
    for edit in &mut plan.edits {
        if let Edit::Map(edit) = edit
            && edit.path == ANNOTATIONS
        {
            edit.set.remove(SKIPPED_ANNOTATION);
            edit.replaced.remove(SKIPPED_ANNOTATION);
            edit.remove.remove(SKIPPED_ANNOTATION);
        }
    }
    plan.edits.retain(|edit| !edit.is_empty());
    plan
}

/// Every deviation, by path (sorted), then by key (sorted).
pub(crate) fn report(plan: &Plan) -> String {
    format!("{REPORT_PREFIX}{}", lines(plan).join("; "))
}

impl Plan {
    /// The deviations validate mode reports for this plan, one per target
    /// map or field, sorted by path: what the audit lists line by line.
    pub fn deviations(&self) -> Vec<String> {
        lines(self)
    }
}

/// The parts of `report`, one per target map or field, sorted by path.
fn lines(plan: &Plan) -> Vec<String> {
    let mut lines: Vec<(String, String)> = plan
        .edits
        .iter()
        .map(|edit| {
            let described = match edit {
                Edit::Map(edit) => describe(edit),
                Edit::Field(edit) => describe_field(edit),
            };
            (edit.target(), described)
        })
        .collect();
    lines.sort();
    lines
        .into_iter()
        .map(|(target, described)| format!("{target}: {described}"))
        .collect()
}

/// `missing (expected 300, from …)` or `is "10s" (expected "5m0s", from …)`.
fn describe_field(edit: &FieldEdit) -> String {
    if edit.value.is_null() {
        let was = edit
            .was
            .as_ref()
            .map_or("absent".to_owned(), ToString::to_string);
        return format!("is {was} (expected absent: {})", edit.source);
    }
    match &edit.was {
        None => format!("missing (expected {}, from {})", edit.value, edit.source),
        Some(was) => format!("is {was} (expected {}, from {})", edit.value, edit.source),
    }
}

/// `missing "k" (expected "v")`, `"k" is "w" (expected "v")`,
/// `remove "k" (why)`: keys and values quoted as JSON strings.
fn describe(edit: &MapEdit) -> String {
    let mut items: Vec<String> = Vec::new();
    for (key, expected) in edit.entries() {
        let (expected, quoted_key) = (quoted(expected), quoted(key));
        items.push(match edit.change_of(key) {
            Change::Added => format!("missing {quoted_key} (expected {expected})"),
            Change::Corrected { was } => {
                format!("{quoted_key} is {} (expected {expected})", quoted(was))
            }
        });
    }
    for (key, why) in &edit.remove {
        items.push(format!("remove {} ({why})", quoted(key)));
    }
    if edit.drop_when_empty {
        items.push("must be absent when empty".to_owned());
    }
    items.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_quotes_keys_and_values_as_json() {
        let mut edit = MapEdit::new(crate::json::fields::LABELS);
        edit.set.insert("a\"b".into(), "v\u{1}".into());
        edit.set.insert("c".into(), "new".into());
        edit.replaced.insert("c".into(), "o\\ld".into());
        edit.remove.insert("d\n".into(), "stale".into());
        let mut plan = Plan::default();
        plan.push(edit);
        assert_eq!(
            report(&plan).strip_prefix(REPORT_PREFIX),
            Some(
                r#"metadata.labels: missing "a\"b" (expected "v\u0001"), "c" is "o\\ld" (expected "new"), remove "d\n" (stale)"#
            )
        );
    }
}
