//! What the CAPI stage decided for one object, returned to the caller when
//! it asks for it, for [`super::propagation_why::render`] to put in words. The
//! decision records facts (which rule each offered key fell under, what
//! the edit did, each field decision); it words nothing.

use super::key_fates::NodeSync;
use crate::capi::in_place::FieldDecision;
use crate::capi::resolve::Resolved;
use crate::capi::rules::{KeyRule, MapFlow};
use crate::json::fields::StringMap;
use crate::request::plan::MapEdit;

/// The stage's decisions for one object, in rule order.
pub(crate) struct Trace<'r> {
    /// How the search for the parent ended; holds the parent when read.
    pub(in crate::capi) resolved: Resolved,
    /// Each target map of each map flow, with every key the parent offers.
    pub(in crate::capi) maps: Vec<MapStep>,
    /// Each in-place field decision.
    pub(in crate::capi) fields: Vec<FieldDecision<'r>>,
    /// A Machine: which of its keys CAPI syncs to the Node, and by which
    /// criterion.
    pub(in crate::capi) node_sync: Option<NodeSync>,
}

/// One target map of a map flow.
pub(in crate::capi) struct MapStep {
    /// The flow that offered the keys.
    pub(in crate::capi) flow: &'static MapFlow,
    /// The child's map.
    pub(in crate::capi) path: &'static [&'static str],
    /// Every key the parent offered, in the parent's (sorted) order.
    pub(in crate::capi) keys: Vec<OfferedKey>,
}

/// One key a parent offered to one target map, and what became of it.
pub(in crate::capi) struct OfferedKey {
    pub(in crate::capi) key: String,
    /// The parent's value.
    pub(in crate::capi) value: String,
    /// The rule the key fell under ([`MapFlow::rule_for`]).
    pub(in crate::capi) rule: KeyRule,
    /// The child's value before the edit.
    pub(in crate::capi) child_value: Option<String>,
    /// `added`, `corrected` or `unchanged`, as `edit` decided.
    pub(in crate::capi) change: &'static str,
}

impl MapStep {
    /// Records what one target map's `edit` made of the keys `offered`
    /// (each with the rule it fell under) against the child's `current`
    /// map.
    pub(in crate::capi) fn record(
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
