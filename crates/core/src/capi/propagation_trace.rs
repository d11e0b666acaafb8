//! What the CAPI stage decided for one object, returned to the caller when
//! it asks for it, for [`super::propagation_why::render`] to put in words. The
//! decision records facts (which rule each offered key fell under, what
//! the edit did, each field decision); it words nothing.

use super::capi_explanation::NodeSync;
use super::in_place::FieldDecision;
use super::resolve::Resolved;
use super::rules::{KeyRule, MapFlow};
use crate::json::fields::StringMap;
use crate::request::plan::MapEdit;

/// The stage's decisions for one object, in rule order.
pub(crate) struct Trace<'r> {
    /// How the search for the parent ended; holds the parent when read.
    pub(super) resolved: Resolved,
    /// Each target map of each map flow, with every key the parent offers.
    pub(super) maps: Vec<MapStep>,
    /// Each in-place field decision.
    pub(super) fields: Vec<FieldDecision<'r>>,
    /// A Machine: which of its keys CAPI syncs to the Node, and by which
    /// criterion.
    pub(super) node_sync: Option<NodeSync>,
}

/// One target map of a map flow.
pub(super) struct MapStep {
    /// The flow that offered the keys.
    pub(super) flow: &'static MapFlow,
    /// The child's map.
    pub(super) path: &'static [&'static str],
    /// Every key the parent offered, in the parent's (sorted) order.
    pub(super) keys: Vec<OfferedKey>,
}

/// One key a parent offered to one target map, and what became of it.
pub(super) struct OfferedKey {
    pub(super) key: String,
    /// The parent's value.
    pub(super) value: String,
    /// The rule the key fell under ([`MapFlow::rule_for`]).
    pub(super) rule: KeyRule,
    /// The child's value before the edit.
    pub(super) child_value: Option<String>,
    /// `added`, `corrected` or `unchanged`, as `edit` decided.
    pub(super) change: &'static str,
}

impl MapStep {
    /// Records what one target map's `edit` made of the keys `offered`
    /// (each with the rule it fell under) against the child's `current`
    /// map.
    pub(super) fn record(
        flow: &'static MapFlow,
        path: &'static [&'static str],
        offered: &[(&str, &str, KeyRule)],
        current: &StringMap<'_>,
        edit: &MapEdit,
    ) -> Self {
        let keys = offered
            .iter()
            .map(|&(key, value, rule)| OfferedKey {
                key: key.to_owned(),
                value: value.to_owned(),
                rule,
                child_value: current.get(key).map(|v| (*v).to_owned()),
                change: match edit.set.contains_key(key) {
                    true => edit.change_of(key).name(),
                    false => "unchanged",
                },
            })
            .collect();
        Self { flow, path, keys }
    }
}
