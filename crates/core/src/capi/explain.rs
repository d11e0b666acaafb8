//! Filling the [`Explanation`] for Cluster API objects. Called only when an
//! explanation was asked for.

use super::in_place::FieldDecision;
use super::node_sync;
use super::rules::{Endpoint, KeyRule, MapFlow, Rule};
use super::{Offered, Parent, Resolved};
use crate::explain::{
    Explanation, Fate, FieldExplanation, KeyFate, NodeKey, NodeSync, PathExplanation, RuleUsed,
};
use crate::fields::StringMap;
use crate::key_pattern::KeyPattern;
use crate::lookup::ObjectRef;
use crate::plan::MapEdit;

/// Records how the search for a parent ended.
pub(super) fn note_resolution(explain: &mut Explanation, resolved: &Resolved) {
    match resolved {
        Resolved::Parent(rule, Parent { reference, .. }) => {
            explain.rule = Some(RuleUsed {
                family: rule.family.to_owned(),
                parent: reference.to_string(),
                upstream: rule.upstream.to_owned(),
            });
        }
        Resolved::NoRule => explain.notes.push(
            "no propagation rule applies: no matching owner reference and not topology-owned; \
             no look-up made"
                .to_owned(),
        ),
        Resolved::NotFound(rule, reference) => explain.notes.push(format!(
            "{reference} (parent of this {}) not found: allowed unchanged",
            rule.family
        )),
        Resolved::NoTopologyEntry(rule, cluster) => explain.notes.push(format!(
            "{cluster} has no topology entry for this {}: allowed unchanged",
            rule.family
        )),
    }
}

/// Records the fate of every key one flow offers to one target map, as
/// `decide` decided it: each key's rule in `offered`, what was added or
/// corrected in `edit`.
pub(super) fn flow(
    explain: &mut Explanation,
    rule: &Rule,
    parent: &ObjectRef,
    flow: &MapFlow,
    offered: &[Offered<'_>],
    current: &StringMap<'_>,
    edit: &MapEdit,
) {
    let from = format!("{parent} {}", flow.from.join("."));
    let keys = offered
        .iter()
        .map(|&(key, value, key_rule)| {
            let fate = match key_rule {
                KeyRule::NeverCopied => Fate::NotPropagated {
                    rule: format!("never copied along this path ({})", rule.upstream),
                },
                KeyRule::Bookkeeping => Fate::KeptBookkeeping {
                    child_value: current.get(key).map(|v| (*v).to_owned()),
                },
                KeyRule::Copied => Fate::Flows {
                    value: value.to_owned(),
                    from: from.clone(),
                    change: if edit.set.contains_key(key) {
                        edit.change_of(key).name()
                    } else {
                        "unchanged"
                    }
                    .to_owned(),
                },
            };
            KeyFate {
                key: key.to_owned(),
                fate,
            }
        })
        .collect();
    explain.paths.push(PathExplanation {
        path: edit.path.join("."),
        keys,
    });
}

/// Records each in-place field decision, as `decide` made it.
pub(super) fn fields(
    explain: &mut Explanation,
    decisions: &[FieldDecision],
    source: &dyn Fn(&Endpoint) -> String,
) {
    explain
        .fields
        .extend(decisions.iter().map(|decision| FieldExplanation {
            path: decision.target(),
            field: decision.field.to_owned(),
            from: source(decision.from),
            value: decision.expected.clone(),
            found: decision.found.cloned(),
            change: decision.change().to_owned(),
        }));
}

/// Records, for every key of a Machine as stored, whether CAPI syncs it to
/// the Node and by which criterion.
pub(super) fn node_sync(
    explain: &mut Explanation,
    labels: &StringMap<'_>,
    annotations: &StringMap<'_>,
    label_regexes: &[KeyPattern],
    annotation_regexes: &[KeyPattern],
) {
    let keys = |map: &StringMap<'_>, criterion: &dyn Fn(&str) -> Option<String>| {
        map.keys()
            .map(|key| NodeKey {
                key: (*key).to_owned(),
                synced_by: criterion(key),
            })
            .collect()
    };
    explain.node_sync = Some(NodeSync {
        labels: keys(labels, &|k| {
            node_sync::label_sync_criterion(k, label_regexes)
        }),
        annotations: keys(annotations, &|k| {
            node_sync::annotation_sync_criterion(k, annotation_regexes)
        }),
    });
}
