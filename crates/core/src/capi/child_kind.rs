//! What the CAPI stage knows of a request's kind before its object is read,
//! found once, when the request is routed, and carried from there: the
//! contract's rules for the kind, the label map CAPI syncs from it to
//! Nodes, whether it is a Machine, and what the stage reads of such an
//! object.

use super::rules::{CAPI_RULES, Flow, MACHINE, NODE_BOUND_LABELS, Rule};
use crate::json::fields;

/// The rules and checks that apply to one child kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChildKind {
    /// Where the rules whose child is this kind start in the table, and
    /// how many there are: they are adjacent there (`capi/rules/table.rs`).
    rules: (usize, usize),
    /// The label map CAPI syncs from objects of this kind to Nodes, if any.
    pub(crate) node_bound: Option<&'static [&'static str]>,
    /// Whether the kind is a Machine, whose labels and annotations CAPI
    /// syncs to its Node.
    pub(crate) machine: bool,
}

impl ChildKind {
    /// The rules and checks for `group`/`kind`, or `None` when the policy
    /// does nothing for objects of this kind: no rule propagates to it and
    /// CAPI syncs none of its labels to Nodes.
    pub(crate) fn of(group: &str, kind: &str) -> Option<Self> {
        let child = |rule: &Rule| rule.child.matches(group, kind);
        let rules = match CAPI_RULES.iter().position(child) {
            Some(start) => {
                let len = CAPI_RULES[start..].iter().take_while(|r| child(r)).count();
                (start, len)
            }
            None => (0, 0),
        };
        let node_bound = (NODE_BOUND_LABELS.iter())
            .find(|(kinds, _)| kinds.matches(group, kind))
            .map(|(_, path)| *path);
        let machine = MACHINE.matches(group, kind);
        (rules.1 > 0 || node_bound.is_some() || machine).then_some(Self {
            rules,
            node_bound,
            machine,
        })
    }

    /// The rules whose child is this kind, in the table's order.
    pub(crate) fn rules(&self) -> &'static [Rule] {
        let (start, len) = self.rules;
        &CAPI_RULES[start..start + len]
    }

    /// The paths of an object of this kind the stage reads or writes, at
    /// every API version: the metadata every route reads ([`OBJECT_PATHS`]),
    /// each flow's targets and the Node-bound label map. What the wire
    /// decodes of a request's object; the rest passes through as text.
    pub(crate) fn object_paths(&self) -> impl Iterator<Item = &'static [&'static str]> {
        let flows = self.rules().iter().flat_map(Rule::flows);
        let targets = flows.flat_map(|flow| {
            let (maps, fields) = match flow {
                Flow::Map(map) => (Some(map.to.iter().copied()), None),
                Flow::Field(field) => (None, Some(field.to.endpoints().map(|e| e.path))),
            };
            maps.into_iter()
                .flatten()
                .chain(fields.into_iter().flatten())
        });
        OBJECT_PATHS
            .into_iter()
            .chain(targets)
            .chain(self.node_bound)
    }
}

/// What every route to the CAPI rules reads of an object besides its
/// rules' paths: its kind and its metadata. `managedFields`, the largest
/// part of the metadata, is not among them.
const OBJECT_PATHS: [&[&str]; 7] = [
    &["apiVersion"],
    &["kind"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    fields::LABELS,
    fields::ANNOTATIONS,
    &["metadata", "ownerReferences"],
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind a rule, a Node-bound map or the Machine check names: its
    /// rules are adjacent in the table (so the slice holds them all), and
    /// at most one Node-bound map is its.
    #[test]
    fn a_kinds_rules_are_one_slice_and_its_node_bound_map_one() {
        let kinds = (CAPI_RULES.iter().map(|rule| rule.child))
            .chain(NODE_BOUND_LABELS.iter().map(|(kinds, _)| *kinds))
            .chain([MACHINE]);
        for kinds in kinds {
            let kind = kinds.kind.unwrap_or("AnyKind");
            let found = ChildKind::of(kinds.group, kind).unwrap();
            let all: Vec<_> = (CAPI_RULES.iter().enumerate())
                .filter(|(_, rule)| rule.child.matches(kinds.group, kind))
                .map(|(at, _)| at)
                .collect();
            let (start, len) = found.rules;
            assert_eq!((start..start + len).collect::<Vec<_>>(), all, "{kinds:?}");
            let bound = NODE_BOUND_LABELS.iter();
            let bound = bound.filter(|(k, _)| k.matches(kinds.group, kind));
            assert!(bound.count() <= 1, "{kinds:?}");
        }
        assert_eq!(ChildKind::of("cluster.x-k8s.io", "Cluster"), None);
    }
}
