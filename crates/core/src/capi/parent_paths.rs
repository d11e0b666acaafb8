//! What a look-up of a parent asks for: the paths its rule reads, which
//! are the look-up's field masks and the projection its answer is decoded
//! with.

use super::rules::{Flow, ParentLink, Rule};
use super::topology;
use crate::json::projection::Projection;
use crate::kube::kinds;
use crate::stage::Declared;
use crate::stage::LookupGroup::Named;

/// Declares in `reads` each parent `rules` may look up: an owner of the
/// kinds a rule names, or the topology's Cluster and ClusterClass, through
/// every path the rule may read of it.
pub(super) fn declare_lookups(rules: &'static [Rule], in_place: bool, reads: &mut Declared<'_>) {
    for rule in rules {
        match rule.parent {
            ParentLink::ControllerOwner(parent)
            | ParentLink::NonControllerOwner(parent)
            | ParentLink::AnyOwner(parent) => {
                let paths = declared_read_paths(rule, in_place);
                reads.lookup(Named(parent.group), parent.kind, Projection::of(&paths));
            }
            ParentLink::Topology(entry) => {
                let fields = all_field_sources(rule, in_place);
                for shape in topology::SHAPES {
                    let [cluster, class] = shape.projections(entry, &fields);
                    reads.lookup(Named(kinds::CORE), Some("Cluster"), cluster);
                    reads.lookup(Named(kinds::CORE), Some("ClusterClass"), class);
                }
            }
        }
    }
}

/// The parent paths `rule` reads of a `kind` parent at the API version
/// `version`: every map flow's source, and with `in_place` every field
/// flow's source there. They are the look-up's field masks, so a new field
/// flow widens the mask by itself. A parent read by a shape its kind and
/// version do not name (`ReadAt::Shape`) is read at both versions' paths
/// and at the path that tells them apart: its shape is known only once it
/// is read.
pub(super) fn read_paths(
    rule: &Rule,
    kind: &str,
    version: &str,
    in_place: bool,
) -> Vec<&'static [&'static str]> {
    let maps = rule.flows().filter_map(|flow| match flow {
        Flow::Map(map) => Some(map.from),
        Flow::Field(_) => None,
    });
    let mut paths: Vec<_> = maps.collect();
    match rule.read_at.known_version(kind, version) {
        Some(version) => paths.extend(field_sources(rule, version, in_place)),
        None => {
            let fields: Vec<_> = ["v1beta1", "v1beta2"]
                .into_iter()
                .flat_map(|version| field_sources(rule, version, in_place))
                .collect();
            if !fields.is_empty() {
                paths.extend(rule.read_at.probe());
            }
            for path in fields {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
    }
    paths
}

/// Every parent path `rule` may read, whatever the parent's kind and
/// version: what a look-up of its parent is declared to read
/// ([`crate::stage::Declared::lookup`]).
fn declared_read_paths(rule: &Rule, in_place: bool) -> Vec<&'static [&'static str]> {
    let mut paths = Vec::new();
    for version in VERSIONS {
        // No kind: a parent read by its shape is read at both versions'
        // paths and at its probe, as when its kind and version name none.
        for path in read_paths(rule, "", version, in_place) {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// The field flows' sources of `rule` at every version a parent is read
/// at.
fn all_field_sources(rule: &Rule, in_place: bool) -> Vec<&'static [&'static str]> {
    let mut paths = Vec::new();
    for version in VERSIONS {
        for path in field_sources(rule, version, in_place) {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// The versions the rules' field flows name paths at.
const VERSIONS: [&str; 2] = ["v1beta1", "v1beta2"];

/// The field flows' sources of `rule` at `version` (none without `in_place`).
pub(super) fn field_sources(
    rule: &Rule,
    version: &str,
    in_place: bool,
) -> Vec<&'static [&'static str]> {
    rule.flows()
        .filter_map(|flow| match flow {
            Flow::Field(field) if in_place => field.from.at(version).map(|from| from.path),
            _ => None,
        })
        .collect()
}
