//! The CAPI stage's [`Trace`] in words, for an [`Explanation`]: the rule
//! and the parent it read, the fate of every key the parent offered, each
//! in-place field, and a Machine's Node sync.

use super::key_fates::{
    CapiExplanation, Fate, FieldExplanation, KeyFate, NodeKey, NodeSync, PathExplanation, RuleUsed,
};
use super::propagation_trace::{MapStep, Trace};
use crate::capi::in_place::FieldDecision;
use crate::capi::key_pattern::KeyPattern;
use crate::capi::node_sync;
use crate::capi::parent::Parent;
use crate::capi::resolve::Resolved;
use crate::capi::rules::{Endpoint, KeyRule, LABELS, MapFlow};
use crate::capi::topology::KeySources;
use crate::json::fields;
use crate::json::fields::{StringMap, quoted};
use crate::request::lookup::ObjectRef;
use serde_json::Value;

/// Puts `trace`, the stage's decisions for `object`, into the stage's
/// `part` of an explanation and its `notes`.
pub(crate) fn render(
    trace: Trace<'_>,
    object: &Value,
    part: &mut CapiExplanation,
    notes: &mut Vec<String>,
) {
    note_resolution(part, notes, &trace.resolved);
    let Resolved::Parent(rule, parent) = &trace.resolved else {
        return;
    };
    // A flow's target maps are consecutive steps: where each key comes from
    // is worked out once per flow. Topology parents merge two objects: an
    // explanation names the one each key comes from.
    for steps in trace.maps.chunk_by(|a, b| std::ptr::eq(a.flow, b.flow)) {
        let flow = steps[0].flow;
        let sources = key_sources(parent, flow, object);
        let from = key_from(&parent.reference, flow, sources.as_ref());
        (part.paths).extend(steps.iter().map(|step| map(step, rule.upstream, &from)));
    }
    fields(part, &trace.fields, &|from| parent.source(from));
    part.node_sync = trace.node_sync;
}

/// Records how the search for a parent ended.
fn note_resolution(part: &mut CapiExplanation, notes: &mut Vec<String>, resolved: &Resolved) {
    match resolved {
        Resolved::Parent(rule, Parent { reference, .. }) => {
            part.rule = Some(RuleUsed {
                family: rule.family.to_owned(),
                parent: reference.to_string(),
                upstream: rule.upstream.to_owned(),
            });
        }
        Resolved::NoRule => notes.push(
            "no propagation rule applies: no matching owner reference and not topology-owned; \
             no parent looked up for its metadata"
                .to_owned(),
        ),
        Resolved::NotFound(rule, reference) => notes.push(format!(
            "{reference} (parent of this {}) not found: allowed unchanged",
            rule.family
        )),
        Resolved::NoTopologyEntry(rule, cluster) => notes.push(format!(
            "{cluster} has no topology entry for this {}: allowed unchanged",
            rule.family
        )),
    }
}

/// Explanations only: for a topology parent, where each key of the
/// merged map `flow` reads comes from, each side named in full
/// (`Cluster default/c (…) spec.topology.controlPlane.metadata.labels`).
/// `None` for any other parent. `child` names the child's entry.
fn key_sources<'a>(parent: &'a Parent, flow: &MapFlow, child: &'a Value) -> Option<KeySources<'a>> {
    let topology = parent.topology.as_ref()?;
    let labels = fields::string_map(child, LABELS).ok()?;
    let entry_name = crate::capi::resolve::entry_name(&labels, topology.entry)?;
    let sources = crate::capi::topology::key_sources(
        topology.shape,
        topology.entry,
        &topology.cluster,
        &topology.class,
        entry_name,
        flow.from.last()?,
    )?;
    let cluster = &parent.reference;
    let namespace = cluster.namespace.as_deref().unwrap_or_default();
    let class = crate::capi::resolve::class_reference(topology.shape, &topology.cluster, namespace)
        .ok()??;
    Some(KeySources {
        topology: (
            sources.topology.0,
            format!("{cluster} {}", sources.topology.1),
        ),
        class: (sources.class.0, format!("{class} {}", sources.class.1)),
    })
}

/// The fate of every key one flow offered to one target map, as the
/// decision recorded it; `from` names where a key's value comes from
/// ([`key_from`]).
fn map(step: &MapStep, upstream: &str, from: &dyn Fn(&str) -> String) -> PathExplanation {
    let keys = step
        .keys
        .iter()
        .map(|offered| {
            let fate = match offered.rule {
                KeyRule::NeverCopied => Fate::NotPropagated {
                    rule: format!("never copied along this path ({upstream})"),
                },
                KeyRule::Bookkeeping => Fate::KeptBookkeeping {
                    child_value: offered.child_value.clone(),
                },
                KeyRule::Copied => Fate::Flows {
                    value: offered.value.clone(),
                    from: from(&offered.key),
                    change: offered.change.to_owned(),
                },
            };
            KeyFate {
                key: offered.key.clone(),
                fate,
            }
        })
        .collect();
    PathExplanation {
        path: step.path.join("."),
        keys,
    }
}

/// Where the value of each key a map flow offers comes from: the parent's
/// map, or for a topology parent, which of the Cluster's topology and the
/// ClusterClass sets it ([`key_source`]).
fn key_from<'a>(
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
fn fields(
    explain: &mut CapiExplanation,
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

/// For every key of a Machine as stored, whether CAPI syncs it to the Node
/// and by which criterion.
pub(in crate::capi) fn node_sync(
    labels: &StringMap<'_>,
    annotations: &StringMap<'_>,
    label_regexes: &[KeyPattern],
    annotation_regexes: &[KeyPattern],
) -> NodeSync {
    let keys = |map: &StringMap<'_>, criterion: &dyn Fn(&str) -> Option<String>| {
        map.keys()
            .map(|key| NodeKey {
                key: (*key).to_owned(),
                synced_by: criterion(key),
            })
            .collect()
    };
    NodeSync {
        labels: keys(labels, &|k| {
            node_sync::label_sync_criterion(k, label_regexes)
        }),
        annotations: keys(annotations, &|k| {
            node_sync::annotation_sync_criterion(k, annotation_regexes)
        }),
    }
}
