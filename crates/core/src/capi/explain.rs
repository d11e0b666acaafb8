//! Filling the [`Explanation`] for Cluster API objects. Called only when an
//! explanation was asked for.

use super::in_place::FieldDecision;
use super::node_sync;
use super::parent::Parent;
use super::resolve::Resolved;
use super::rules::{Endpoint, KeyRule, LABELS, MapFlow, Rule};
use super::topology::KeySources;
use crate::explain::{
    Explanation, Fate, FieldExplanation, KeyFate, NodeKey, NodeSync, PathExplanation, RuleUsed,
};
use crate::fields;
use crate::fields::{StringMap, quoted};
use crate::key_pattern::KeyPattern;
use crate::lookup::ObjectRef;
use crate::plan::MapEdit;
use serde_json::Value;

/// A key a parent offers to a target map, its value, and what the rule
/// decides for it.
pub(super) type Offered<'a> = (&'a str, &'a str, KeyRule);

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
             no parent looked up for its metadata"
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

/// Explanations only: for a topology parent, where each key of the
/// merged map `flow` reads comes from, each side named in full
/// (`Cluster default/c (…) spec.topology.controlPlane.metadata.labels`).
/// `None` for any other parent. `child` names the child's entry.
pub(super) fn key_sources<'a>(
    parent: &'a Parent,
    flow: &MapFlow,
    child: &'a Value,
) -> Option<KeySources<'a>> {
    let topology = parent.topology.as_ref()?;
    let labels = fields::string_map(child, LABELS).ok()?;
    let entry_name = super::resolve::entry_name(&labels, topology.entry)?;
    let sources = super::topology::key_sources(
        topology.shape,
        topology.entry,
        &topology.cluster,
        &topology.class,
        entry_name,
        flow.from.last()?,
    )?;
    let cluster = &parent.reference;
    let namespace = cluster.namespace.as_deref().unwrap_or_default();
    let class =
        super::resolve::class_reference(topology.shape, &topology.cluster, namespace).ok()??;
    Some(KeySources {
        topology: (
            sources.topology.0,
            format!("{cluster} {}", sources.topology.1),
        ),
        class: (sources.class.0, format!("{class} {}", sources.class.1)),
    })
}

/// Records the fate of every key one flow offers to one target map, as
/// `decide` decided it: each key's rule in `offered`, what was added or
/// corrected in `edit`; `from` names where a key's value comes from
/// ([`key_from`]).
pub(super) fn flow(
    explain: &mut Explanation,
    rule: &Rule,
    from: &dyn Fn(&str) -> String,
    offered: &[Offered<'_>],
    current: &StringMap<'_>,
    edit: &MapEdit,
) {
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
                    from: from(key),
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

/// Where the value of each key a map flow offers comes from: the parent's
/// map, or for a topology parent, which of the Cluster's topology and the
/// ClusterClass sets it ([`key_source`]).
pub(super) fn key_from<'a>(
    parent: &ObjectRef,
    flow: &MapFlow,
    sources: Option<&'a KeySources<'a>>,
) -> impl Fn(&str) -> String + 'a {
    let whole = format!("{parent} {}", flow.from.join("."));
    move |key| {
        sources
            .and_then(|sources| key_source(sources, key))
            .unwrap_or_else(|| whole.clone())
    }
}

/// Where a topology parent's `key` comes from: the topology when it sets
/// the key (saying so when it overrides the ClusterClass's value), else the
/// ClusterClass.
fn key_source(sources: &KeySources<'_>, key: &str) -> Option<String> {
    let (topology, class) = (&sources.topology, &sources.class);
    match (topology.0.get(key), class.0.get(key)) {
        (Some(ours), Some(theirs)) if ours != theirs => Some(format!(
            "{}, overriding the ClusterClass's {}",
            topology.1,
            quoted(theirs)
        )),
        (Some(_), Some(_)) => Some(format!(
            "{}, overriding the ClusterClass's identical value",
            topology.1
        )),
        (Some(_), None) => Some(topology.1.clone()),
        (None, Some(_)) => Some(class.1.clone()),
        (None, None) => None,
    }
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
