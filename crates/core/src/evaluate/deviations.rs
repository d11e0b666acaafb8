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
use serde_json::Value;

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
        Some(was) => match (key_value_pairs(was), key_value_pairs(&edit.value)) {
            (Some(was), Some(expected)) => {
                format!("{}, from {}", describe_pairs(&was, &expected), edit.source)
            }
            _ => format!("is {was} (expected {}, from {})", edit.value, edit.source),
        },
    }
}

/// A list of `{key, value}` string pairs (a tag list such as
/// OpenStackMachine's `spec.serverMetadata`), as pairs; `None` for any
/// other value, taints among them (they carry an `effect`).
fn key_value_pairs(value: &Value) -> Option<Vec<(&str, &str)>> {
    (value.as_array()?.iter())
        .map(|item| {
            let item = item.as_object().filter(|item| item.len() == 2)?;
            Some((item.get("key")?.as_str()?, item.get("value")?.as_str()?))
        })
        .collect()
}

/// A tag list's deviations entry by entry, in the words of a map's
/// ([`describe`]); when only the order differs, the keys in the order
/// expected (the user's entries first, then the policy's).
fn describe_pairs(was: &[(&str, &str)], expected: &[(&str, &str)]) -> String {
    fn value_of<'a>(pairs: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
        (pairs.iter()).find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
    let mut items: Vec<String> = Vec::new();
    for &(key, value) in expected {
        match value_of(was, key) {
            None => items.push(format!(
                "missing {} (expected {})",
                quoted(key),
                quoted(value)
            )),
            Some(found) if found != value => items.push(format!(
                "{} is {} (expected {})",
                quoted(key),
                quoted(found),
                quoted(value)
            )),
            Some(_) => {}
        }
    }
    for &(key, _) in was {
        if value_of(expected, key).is_none() {
            items.push(format!("remove {}", quoted(key)));
        }
    }
    if items.is_empty() {
        let order: Vec<String> = (expected.iter())
            .map(|(key, _)| quoted(key).to_string())
            .collect();
        items.push(format!("out of order (expected {})", order.join(", ")));
    }
    items.join(", ")
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
    use serde_json::json;

    fn tag_list_edit(was: Value, value: Value) -> FieldEdit {
        FieldEdit {
            path: crate::json::fields::Path::Static(&["spec", "serverMetadata"]),
            entry: None,
            value,
            was: Some(was),
            source: "the labels".to_owned(),
        }
    }

    #[test]
    fn a_tag_list_is_described_entry_by_entry() {
        let edit = tag_list_edit(
            json!([{"key": "b", "value": "1"}, {"key": "p:old", "value": "x"},
                   {"key": "p:env", "value": "dev"}]),
            json!([{"key": "b", "value": "1"}, {"key": "p:env", "value": "prod"},
                   {"key": "p:team", "value": "a\"b"}]),
        );
        assert_eq!(
            describe_field(&edit),
            r#""p:env" is "dev" (expected "prod"), missing "p:team" (expected "a\"b"), remove "p:old", from the labels"#
        );
        let edit = tag_list_edit(
            json!([{"key": "p:env", "value": "dev"}, {"key": "b", "value": "1"}]),
            json!([{"key": "b", "value": "1"}, {"key": "p:env", "value": "dev"}]),
        );
        assert_eq!(
            describe_field(&edit),
            r#"out of order (expected "b", "p:env"), from the labels"#
        );
        // Taints carry an effect: a list of other objects is shown whole.
        let taints = tag_list_edit(
            json!([{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            json!([]),
        );
        assert_eq!(
            describe_field(&taints),
            r#"is [{"effect":"NoSchedule","key":"k","value":"v"}] (expected [], from the labels)"#
        );
    }

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
