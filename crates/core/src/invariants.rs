//! Properties every mutation must have, as checks over (before, after).
//!
//! Used by the property tests and the fuzz targets, so both hold the policy
//! to one definition of "changes only what the contract names":
//! - *contained*: outside the maps the capability owns, nothing changes (no
//!   field added, removed, rewritten or reordered in value);
//! - *conservative*: inside them, no key is removed unless the policy owns
//!   the key itself (`plexsphere:` tags and the skip annotation), and keys
//!   the policy does not own keep their values unless the contract says the
//!   parent wins (CAPI maps);
//! - *typed*: a CAPI in-place field the policy writes holds the type its
//!   CRD declares, and no entry of a keyed list goes.
//!
//! The CAPI maps and fields are read from the rule table
//! ([`rules::contract_targets_for`]: the rules for the request's kind whose
//! parent link the object has, each field at the request's API version),
//! never listed a second time.

use crate::capi::rules::{self, Endpoint, ParentLink, Unit};
use crate::capi::{duration, owners};
use crate::fields::FieldPath;
use crate::keyed_list;
use crate::request::GroupVersionKind;
use crate::settings::Settings;
use crate::tags::tag_key::DEFAULT_PREFIX;
use crate::tags::targets::COMPOSITE_RESOURCE;
use crate::tags::{LABELS_ANNOTATION, SKIPPED_ANNOTATION};
use serde_json::{Map, Value};

mod tag_field;
mod violation;
pub use tag_field::check_tag_field;
pub use violation::Violation;

/// Which capability produced the mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability<'a> {
    /// Cluster API propagation on an object of this kind and API version:
    /// adds and corrects keys, never removes.
    Capi(&'a GroupVersionKind),
    /// XR cloud tags: owns the tags under the prefix in force and the skip
    /// annotation only (the tag field is checked as every row's is:
    /// [`check_tag_field`]).
    CloudTags {
        /// The prefix in force on the object.
        prefix: &'a str,
    },
}

const TAG_MAPS: &[&[&str]] = &[&["metadata", "annotations"]];

impl<'a> Capability<'a> {
    /// The capability for a request's kind, owning on a composite resource
    /// (`object`) the tags under the prefix `settings` put in force there.
    pub fn for_request(
        kind: &'a GroupVersionKind,
        object: &Value,
        settings: &'a Settings<'_>,
    ) -> Self {
        if crate::capi::is_capi_group(&kind.group) {
            return Capability::Capi(kind);
        }
        let prefix = settings.cloud_tags().map_or(DEFAULT_PREFIX, |cloud_tags| {
            crate::tags::prefix_in_force(object, cloud_tags)
        });
        Capability::CloudTags { prefix }
    }

    /// The string maps and typed fields the capability may write on
    /// `before`: for CAPI, only the rules whose parent link `before` has
    /// (a Machine owned by a MachineSet may not get what a control plane's
    /// Machine gets), and each field at the object's own API version.
    fn targets(self, before: &Value) -> (Vec<&'static [&'static str]>, Vec<Endpoint>) {
        match self {
            Capability::Capi(kind) => {
                let refs = owners::owner_refs(before).unwrap_or_default();
                rules::contract_targets_for(&kind.group, &kind.kind, &kind.version, |rule| {
                    match &rule.parent {
                        ParentLink::Topology(_) => true,
                        owned => owners::find(&refs, owned).is_some(),
                    }
                })
            }
            Capability::CloudTags { .. } => (TAG_MAPS.to_vec(), Vec::new()),
        }
    }

    /// Whether the policy may remove or rewrite `key` in the map at `path`.
    fn owns(self, path: &[&str], key: &str) -> bool {
        match self {
            Capability::Capi(_) => false,
            Capability::CloudTags { .. } => {
                path == ["metadata", "annotations"] && key == SKIPPED_ANNOTATION
            }
        }
    }

    /// Whether the policy may change the value of an existing key it does
    /// not own (CAPI: the parent's value wins).
    fn may_correct(self) -> bool {
        matches!(self, Capability::Capi(_))
    }
}

/// Checks that `after` is `before` changed only as `capability` may change it.
pub fn check_mutation(
    capability: Capability<'_>,
    before: &Value,
    after: &Value,
) -> Result<(), Violation> {
    let mut outside_before = before.clone();
    let mut outside_after = after.clone();
    if let Capability::CloudTags { prefix } = capability {
        let path = COMPOSITE_RESOURCE.field;
        let old = take(&mut outside_before, path);
        let new = take(&mut outside_after, path);
        check_tag_field(&COMPOSITE_RESOURCE, prefix, old.as_ref(), new.as_ref())?;
        prune_created_parents(&mut outside_after, &outside_before, path);
        drop_null_parents(&mut outside_before, path);
        drop_null_parents(&mut outside_after, path);
    }
    let (maps, fields) = capability.targets(before);
    for path in &maps {
        let old = take(&mut outside_before, path);
        let new = take(&mut outside_after, path);
        check_map(capability, path, old.as_ref(), new.as_ref())?;
        prune_created_parents(&mut outside_after, &outside_before, path);
        drop_null_parents(&mut outside_before, path);
        drop_null_parents(&mut outside_after, path);
    }
    let mut paths: Vec<&[&str]> = fields.iter().map(|field| field.path).collect();
    paths.dedup();
    for path in paths {
        let old = take(&mut outside_before, path);
        let new = take(&mut outside_after, path);
        if old != new {
            let units = fields.iter().filter(|f| f.path == path).map(|f| f.unit);
            check_field(path, units, old.as_ref(), new.as_ref())?;
        }
        prune_created_parents(&mut outside_after, &outside_before, path);
        drop_null_parents(&mut outside_before, path);
        drop_null_parents(&mut outside_after, path);
    }
    if outside_before != outside_after {
        return Err(Violation::OutsideChanged {
            before: outside_before,
            after: outside_after,
        });
    }
    Ok(())
}

fn check_map(
    capability: Capability,
    path: &[&str],
    before: Option<&Value>,
    after: Option<&Value>,
) -> Result<(), Violation> {
    let empty = Map::new();
    let old = before.and_then(Value::as_object).unwrap_or(&empty);
    let new = after.and_then(Value::as_object).unwrap_or(&empty);
    let at = FieldPath::of(path);
    if before.is_some_and(|v| !v.is_object() && !v.is_null()) && before != after {
        return Err(Violation::NotAMapRewritten(at));
    }
    for (key, old_value) in old {
        let owned = capability.owns(path, key);
        match new.get(key) {
            None if !owned => return Err(Violation::Removed(at.key(key))),
            Some(new_value) if new_value != old_value && !owned && !capability.may_correct() => {
                return Err(Violation::Rewritten(at.key(key)));
            }
            _ => {}
        }
    }
    for (key, value) in new {
        // The policy writes only strings; a value it left as submitted is
        // the submitter's (the API server judges it), even when it is not.
        if !value.is_string() && old.get(key) != Some(value) {
            return Err(Violation::NotAString(at.key(key)));
        }
        if !old.contains_key(key)
            && matches!(capability, Capability::CloudTags { .. })
            && !capability.owns(path, key)
        {
            return Err(Violation::AddedUnowned(at.key(key)));
        }
    }
    if path == ["metadata", "annotations"]
        && old.get(LABELS_ANNOTATION) != new.get(LABELS_ANNOTATION)
    {
        return Err(Violation::LabelSetChanged(at.key(LABELS_ANNOTATION)));
    }
    Ok(())
}

/// A field the policy changed must hold a value of one of the `units` the
/// table gives its path (the CRD's type), and a keyed list keeps every entry.
fn check_field(
    path: &[&str],
    mut units: impl Iterator<Item = Unit>,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Result<(), Violation> {
    let field = FieldPath::of(path);
    let Some(after) = after else {
        return Err(Violation::Removed(field));
    };
    if units.any(|unit| holds(unit, before, after)) {
        Ok(())
    } else {
        Err(Violation::Mistyped {
            field,
            value: after.clone(),
        })
    }
}

/// Whether `after` is a value of `unit` (and, for a keyed list, keeps
/// every entry of `before`).
fn holds(unit: Unit, before: Option<&Value>, after: &Value) -> bool {
    match unit {
        Unit::Duration => after.as_str().is_some_and(|t| duration::parse(t).is_ok()),
        Unit::Seconds | Unit::Integer => after.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        Unit::IntegerOmitZero => after
            .as_i64()
            .is_some_and(|n| n != 0 && i32::try_from(n).is_ok()),
        Unit::Enum => after.as_str().is_some_and(|t| !t.is_empty()),
        Unit::Object => after.is_object(),
        Unit::KeyedList(keys) => {
            let Some(entries) = after.as_array() else {
                return false;
            };
            // Indexed, not scanned per entry: the fuzz targets and the
            // property tests check long lists too.
            let index = keyed_list::Index::of(keys, entries);
            let kept = before
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .all(|old| index.position_of(old).is_some());
            kept && entries.iter().all(Value::is_object)
        }
    }
}

/// Removes and returns the value at `path` (also for the fuzz target's own
/// check of the fields it takes out before this module's).
pub fn take(root: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut current = root;
    for segment in parents {
        current = current.as_object_mut()?.get_mut(*segment)?;
    }
    current.as_object_mut()?.remove(*last)
}

/// A mutation may create the parents of a map it adds (e.g.
/// `spec.template.metadata`); once the maps are taken out, drop parents that
/// are empty in `after` and absent in `before`.
fn prune_created_parents(after: &mut Value, before: &Value, path: &[&str]) {
    if let Some((_map, parents)) = path.split_last() {
        prune(after, Some(before), parents);
    }
}

/// `null` along a map's parent chain means absent (the policy may fill it).
fn drop_null_parents(root: &mut Value, path: &[&str]) {
    let mut current = root;
    for segment in &path[..path.len().saturating_sub(1)] {
        let Some(map) = current.as_object_mut() else {
            return;
        };
        if map.get(*segment).is_some_and(Value::is_null) {
            map.remove(*segment);
            return;
        }
        match map.get_mut(*segment) {
            Some(next) => current = next,
            None => return,
        }
    }
}

fn prune(after: &mut Value, before: Option<&Value>, parents: &[&str]) {
    let Some((first, rest)) = parents.split_first() else {
        return;
    };
    let Some(map) = after.as_object_mut() else {
        return;
    };
    // `null` reads as absent everywhere in the policy (fields::get).
    let before_child = before.and_then(|b| b.get(*first)).filter(|v| !v.is_null());
    if let Some(child) = map.get_mut(*first) {
        prune(child, before_child, rest);
        if before_child.is_none() && child.as_object().is_some_and(Map::is_empty) {
            map.remove(*first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cloud tags under the default prefix.
    const XR: Capability<'static> = Capability::CloudTags {
        prefix: DEFAULT_PREFIX,
    };
    use serde_json::json;

    fn kind(group: &str, version: &str, kind: &str) -> GroupVersionKind {
        GroupVersionKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// `object` owned (as controller) by `owner` of `api_version`.
    fn owned_by(api_version: &str, owner: &str, mut object: Value) -> Value {
        object["metadata"]["ownerReferences"] = json!([{"apiVersion": api_version,
            "kind": owner, "name": "parent", "uid": "u", "controller": true}]);
        object
    }

    /// A v1beta2 MachineSet owned by its MachineDeployment.
    fn machine_set(object: Value) -> Value {
        owned_by("cluster.x-k8s.io/v1beta2", "MachineDeployment", object)
    }

    /// The violation's text, which the tests pin.
    fn violation(capability: Capability, before: &Value, after: &Value) -> Option<String> {
        check_mutation(capability, before, after)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn capi_may_add_and_correct_but_not_remove() {
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let before =
            machine_set(json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"x": 1}}));
        let ok = machine_set(
            json!({"metadata": {"labels": {"a": "9", "b": "2", "c": "3"}}, "spec": {"x": 1}}),
        );
        assert_eq!(check_mutation(Capability::Capi(&ms), &before, &ok), Ok(()));
        let removed = machine_set(json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}}));
        assert_eq!(
            violation(Capability::Capi(&ms), &before, &removed).as_deref(),
            Some("metadata.labels[\"b\"] was removed")
        );
    }

    #[test]
    fn capi_created_template_parents_are_allowed() {
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let before = machine_set(json!({"metadata": {}, "spec": {"template": {"spec": {}}}}));
        let after = machine_set(json!({"metadata": {},
            "spec": {"template": {"spec": {}, "metadata": {"labels": {"a": "1"}}}}}));
        assert_eq!(
            check_mutation(Capability::Capi(&ms), &before, &after),
            Ok(())
        );
    }

    // Found by the mutated_objects fuzz target: `spec: null` is absent.
    #[test]
    fn capi_null_parent_replaced_by_created_map_is_allowed() {
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let before = machine_set(json!({"metadata": {"name": "ms"}, "spec": null}));
        let after = machine_set(json!({"metadata": {"name": "ms"},
                           "spec": {"template": {"metadata": {"labels": {"a": "1"}}}}}));
        assert_eq!(
            check_mutation(Capability::Capi(&ms), &before, &after),
            Ok(())
        );
    }

    // Found by the mutated_objects fuzz target
    // (fuzz/fuzz_targets/mutated_objects.rs): a MachineSet carrying a null
    // annotation value is allowed unchanged; the policy wrote nothing, so
    // nothing it wrote is malformed.
    #[test]
    fn a_non_string_value_left_as_submitted_is_not_the_policys() {
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let before = machine_set(
            json!({"metadata": {"annotations": {"\u{0}": null}, "labels": {"a": "1"}}}),
        );
        assert_eq!(
            check_mutation(Capability::Capi(&ms), &before, &before),
            Ok(())
        );
        let corrected = machine_set(
            json!({"metadata": {"annotations": {"\u{0}": null}, "labels": {"a": "2"}}}),
        );
        assert_eq!(
            check_mutation(Capability::Capi(&ms), &before, &corrected),
            Ok(())
        );
        let written =
            machine_set(json!({"metadata": {"annotations": {"\u{0}": 1}, "labels": {"a": "1"}}}));
        assert_eq!(
            violation(Capability::Capi(&ms), &before, &written).as_deref(),
            Some(r#"metadata.annotations["\u0000"] is not a string"#)
        );
    }

    #[test]
    fn capi_fields_are_checked_against_their_type_and_keep_list_entries() {
        let machine = kind("cluster.x-k8s.io", "v1beta2", "Machine");
        let capi = Capability::Capi(&machine);
        let of_ms = |spec: Value| {
            owned_by(
                "cluster.x-k8s.io/v1beta2",
                "MachineSet",
                json!({"metadata": {}, "spec": spec}),
            )
        };
        let before = of_ms(json!({"readinessGates": [{"conditionType": "Mine"}]}));
        let ok = of_ms(json!({"deletion": {"nodeDrainTimeoutSeconds": 300},
            "readinessGates": [{"conditionType": "Mine"}, {"conditionType": "X"}]}));
        assert_eq!(check_mutation(capi, &before, &ok), Ok(()));
        let wrong_type = of_ms(json!({"deletion": {"nodeDrainTimeoutSeconds": "5m"},
            "readinessGates": [{"conditionType": "Mine"}]}));
        assert!(check_mutation(capi, &before, &wrong_type).is_err());
        let dropped = of_ms(json!({"readinessGates": [{"conditionType": "X"}]}));
        assert!(check_mutation(capi, &before, &dropped).is_err());
        let elsewhere =
            of_ms(json!({"readinessGates": [{"conditionType": "Mine"}], "replicas": 1}));
        assert!(check_mutation(capi, &before, &elsewhere).is_err());
    }

    // What another kind, version or parent may get is not allowed here
    // (the checks used to take every rule's targets at every version).
    #[test]
    fn capi_targets_follow_the_kind_the_version_and_the_parent_link() {
        // MachineSet -> Machine carries minReadySeconds; a control plane's
        // Machine never gets it.
        let machine = kind("cluster.x-k8s.io", "v1beta2", "Machine");
        let with_min_ready = |owner_api: &str, owner: &str| {
            let before = owned_by(owner_api, owner, json!({"metadata": {}, "spec": {}}));
            let mut after = before.clone();
            after["spec"]["minReadySeconds"] = json!(30);
            check_mutation(Capability::Capi(&machine), &before, &after)
        };
        assert_eq!(
            with_min_ready("cluster.x-k8s.io/v1beta2", "MachineSet"),
            Ok(())
        );
        assert!(
            with_min_ready(
                "controlplane.cluster.x-k8s.io/v1beta2",
                "KubeadmControlPlane"
            )
            .is_err()
        );
        // A v1beta1 MachineSet never gets minReadySeconds: 0 (v1beta2
        // Machines declare an integer at another path; MachineDeployments
        // may hold 0 at the same path).
        let v1beta1_ms = kind("cluster.x-k8s.io", "v1beta1", "MachineSet");
        let before = owned_by(
            "cluster.x-k8s.io/v1beta1",
            "MachineDeployment",
            json!({"metadata": {}, "spec": {"minReadySeconds": 5}}),
        );
        let mut zero = before.clone();
        zero["spec"]["minReadySeconds"] = json!(0);
        assert!(matches!(
            check_mutation(Capability::Capi(&v1beta1_ms), &before, &zero),
            Err(Violation::Mistyped { .. })
        ));
        // Topology gives a MachinePool no readiness gates.
        let pool = kind("cluster.x-k8s.io", "v1beta2", "MachinePool");
        let before = json!({"metadata": {}, "spec": {"template": {"spec": {}}}});
        let mut gated = before.clone();
        gated["spec"]["template"]["spec"]["readinessGates"] = json!([{"conditionType": "X"}]);
        assert!(check_mutation(Capability::Capi(&pool), &before, &gated).is_err());
        // Without its parent link a MachineSet gets nothing.
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let orphan = json!({"metadata": {"labels": {"a": "1"}}});
        let relabelled = json!({"metadata": {"labels": {"a": "2"}}});
        assert!(check_mutation(Capability::Capi(&ms), &orphan, &relabelled).is_err());
    }

    #[test]
    fn any_change_outside_the_maps_is_caught() {
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let before = json!({"metadata": {"name": "x"}, "spec": {"replicas": 1}});
        let after = json!({"metadata": {"name": "x"}, "spec": {"replicas": 2}});
        assert!(check_mutation(Capability::Capi(&ms), &before, &after).is_err());
        let dropped = json!({"metadata": {"name": "x"}});
        assert!(check_mutation(XR, &before, &dropped).is_err());
    }

    #[test]
    fn cloud_tags_own_only_prefixed_tags_and_the_skip_annotation() {
        let before = json!({"metadata": {"annotations": {"team": "a", SKIPPED_ANNOTATION: "[]"}},
                            "spec": {"cloudTags": {"plexsphere:old": "1", "CostCenter": "42"}}});
        let ok = json!({"metadata": {"annotations": {"team": "a"}},
                        "spec": {"cloudTags": {"plexsphere:new": "2", "CostCenter": "42"}}});
        assert_eq!(check_mutation(XR, &before, &ok), Ok(()));
        let user_removed = json!({"metadata": {"annotations": {"team": "a"}},
                                  "spec": {"cloudTags": {"plexsphere:new": "2"}}});
        assert_eq!(
            violation(XR, &before, &user_removed).as_deref(),
            Some("spec.cloudTags[\"CostCenter\"] was removed")
        );
        let rewritten = json!({"metadata": {"annotations": {"team": "b"}},
                               "spec": {"cloudTags": {"CostCenter": "42"}}});
        assert_eq!(
            violation(XR, &before, &rewritten).as_deref(),
            Some("metadata.annotations[\"team\"] was rewritten")
        );
    }
}
