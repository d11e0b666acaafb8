//! What the stages may look up for a kind: each object by its group and
//! kind, with the mask they read it through ([`crate::stage::Declared::lookup`]).
//! An audit that lists the cluster keeps of each possible parent only
//! what these masks keep, and the tests hold every look-up a request makes
//! to them.

use super::route::route;
use super::stage_list::stages;
use crate::request::GroupVersionKind;
use crate::settings::Settings;
use crate::stage::{Declared, DeclaredLookup, Part};

/// Every object the stages may look up for a write of `kind` under
/// `settings` (a CREATE or an UPDATE), with its mask, in the stages'
/// order.
pub fn declared_lookups(kind: &GroupVersionKind, settings: &Settings) -> Vec<DeclaredLookup> {
    let mut lookups = Vec::new();
    let mut routes = Vec::new();
    for operation in ["CREATE", "UPDATE"] {
        let route = route(kind, operation);
        if routes.contains(&route) {
            continue;
        }
        routes.push(route);
        let stages = stages(kind, route, settings);
        let mut declared = Declared::of(Part::Lookups);
        for stage in &stages {
            stage.reads(&mut declared);
        }
        lookups.extend(declared.into_lookups());
    }
    lookups
}
