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
//!   CRD declares, and no entry of a keyed list goes;
//! - *only composite resources are tagged*: an object that is not
//!   one by its shape (`is_composite_resource`) never gains
//!   `spec.cloudTags`; outside CAPI's groups it is left as submitted;
//! - *nothing removed silently*: every entry removed from a tag
//!   field comes with its warning (`check_removals_said`);
//! - *ownership follows the prefix in force*, in the contract's
//!   order (`prefix_for`).
//!
//! The CAPI maps and fields are read from the rule table
//! (`contract_targets_for`: the rules for the request's kind whose
//! parent link the object has, each field at the request's API version),
//! never listed a second time. On CAPI objects the label-set annotation is
//! an annotation like any other (CAPI's rules propagate it as CAPI's
//! controllers would); on a composite resource, which the policy
//! only tags, it never changes.

use crate::capi::owner_link;
use crate::capi::rules::{self, CAPI_RULES, Endpoint, Flow, ParentLink, Rule, Unit};
use crate::evaluate::route::{is_kubernetes_group, is_sig_group};
use crate::json::fields::{ANNOTATIONS, FieldPath};
use crate::json::go_duration as duration;
use crate::json::keyed_list;
use crate::json::sorted_map;
use crate::kube::owners;
use crate::request::{AdmissionRequest, GroupVersionKind, is_write};
use crate::settings::Settings;
use crate::tags::SKIPPED_ANNOTATION;
use crate::tags::contract_names::LABELS_ANNOTATION;
use crate::tags::decision::transform::{self, Transformed};
use crate::tags::keys::tag_naming::TagKeys;
use crate::tags::profiles::provider_limits::TagProfile;
use crate::tags::targets::COMPOSITE_RESOURCE;
use serde_json::{Map, Value};

pub mod fuzz_oracles;
mod tag_field;
mod tagged;
mod value_paths;
mod violation;
pub(crate) use tag_field::{Owned, check_owned_field, check_removals_said, check_tag_field};
pub(crate) use tagged::{
    composite_prefix, infrastructure_prefix, is_composite_resource, prefix_for,
};
pub(crate) use tagged::{is_managed_resource, managed_resource_family};
pub(crate) use tagged::{managed_resource_left_alone, managed_resource_prefix};
use value_paths::{drop_null_parents, get, prune_created_parents};
pub(crate) use value_paths::{segments, take};
pub(crate) use violation::Violation;

/// The tag-key prefix the built-in profiles put in force by default
/// (`plexsphere:`), for inputs that write tags the policy owns.
pub const DEFAULT_PREFIX: &str = crate::tags::profiles::provider_limits::DEFAULT_PREFIX;

/// Which capability produced the mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capability<'a> {
    /// Cluster API propagation on an object of this kind and API version:
    /// adds and corrects keys, never removes.
    Capi(&'a GroupVersionKind),
    /// XR cloud tags on a composite resource: owns the tags under the
    /// prefix in force and the skip annotation only (the tag field is
    /// checked as every row's is: [`check_tag_field`]).
    CloudTags {
        /// The prefix in force on the object.
        prefix: &'a str,
        /// On an UPDATE that moved the object to a profile with another
        /// prefix, the old object's: its entries are the policy's to
        /// remove.
        old_prefix: Option<&'a str>,
    },
    /// Nothing: the object is left as submitted (a kind of Kubernetes' or
    /// a SIG's groups, an object outside CAPI's groups that is not a
    /// composite resource by its shape, an operation the policy does not
    /// act on).
    Unchanged,
}

const TAG_MAPS: &[&[&str]] = &[ANNOTATIONS];

impl<'a> Capability<'a> {
    /// The capability that may change `request`'s object: its kind's group,
    /// the operation and, outside CAPI's groups, the object's shape
    /// (`is_composite_resource`, with the request's namespace); on a
    /// composite resource, owning the tags under the prefix `settings` put
    /// in force there (`composite_prefix`).
    pub(crate) fn of(request: &'a AdmissionRequest, settings: &'a Settings) -> Self {
        if !is_write(&request.operation) {
            return Capability::Unchanged;
        }
        let old = Some(&request.old_object).filter(|old| !old.is_null());
        Self::classify(
            &request.kind,
            &request.object,
            &request.namespace,
            old,
            settings,
        )
    }

    fn classify(
        kind: &'a GroupVersionKind,
        object: &Value,
        namespace: &str,
        old: Option<&Value>,
        settings: &'a Settings,
    ) -> Self {
        let group = &kind.group;
        if crate::capi::is_capi_group(group) {
            return Capability::Capi(kind);
        }
        if is_kubernetes_group(group)
            || is_sig_group(group)
            || !is_composite_resource(object, namespace)
        {
            return Capability::Unchanged;
        }
        let Ok(cloud_tags) = settings.cloud_tags() else {
            // Refused settings: the policy rejects every request.
            return Capability::CloudTags {
                prefix: DEFAULT_PREFIX,
                old_prefix: None,
            };
        };
        let prefix = composite_prefix(object, cloud_tags);
        let old_prefix = old
            .map(|old| composite_prefix(old, cloud_tags))
            .filter(|old| *old != prefix);
        Capability::CloudTags { prefix, old_prefix }
    }

    /// The string maps and typed fields the capability may write on
    /// `before`: for CAPI, only the rules whose parent link `before` has
    /// (a Machine owned by a MachineSet may not get what a control plane's
    /// Machine gets), and each field at the object's own API version.
    fn targets(self, before: &Value) -> (Vec<&'static [&'static str]>, Vec<Endpoint>) {
        match self {
            Capability::Capi(kind) => {
                let refs = owners::owner_refs(before).unwrap_or_default();
                contract_targets_for(&kind.group, &kind.kind, &kind.version, |rule| {
                    match &rule.parent {
                        ParentLink::Topology(_) => true,
                        owned => owner_link::find(&refs, owned).is_some(),
                    }
                })
            }
            Capability::CloudTags { .. } => (TAG_MAPS.to_vec(), Vec::new()),
            Capability::Unchanged => (Vec::new(), Vec::new()),
        }
    }

    /// Whether the policy may remove or rewrite `key` in the map at `path`.
    fn owns(self, path: &[&str], key: &str) -> bool {
        match self {
            Capability::Capi(_) | Capability::Unchanged => false,
            Capability::CloudTags { .. } => path == ANNOTATIONS && key == SKIPPED_ANNOTATION,
        }
    }

    /// Whether the policy may change the value of an existing key it does
    /// not own (CAPI: the parent's value wins).
    fn may_correct(self) -> bool {
        matches!(self, Capability::Capi(_))
    }
}

/// Checks that `after` is `before` changed only as `capability` may change it.
pub(crate) fn check_mutation(
    capability: Capability<'_>,
    before: &Value,
    after: &Value,
) -> Result<(), Violation> {
    let composite = &COMPOSITE_RESOURCE;
    let cloud_tags = &segments(&composite.field)[..];
    if !matches!(capability, Capability::CloudTags { .. })
        && get(before, cloud_tags) != get(after, cloud_tags)
    {
        return Err(Violation::TaggedNotComposite(FieldPath::of(cloud_tags)));
    }
    let mut outside_before = before.clone();
    let mut outside_after = after.clone();
    if let Capability::CloudTags { prefix, old_prefix } = capability {
        let path = cloud_tags;
        let old = take(&mut outside_before, path);
        let new = take(&mut outside_after, path);
        let owned = Owned { prefix, old_prefix };
        check_owned_field(composite, owned, old.as_ref(), new.as_ref())?;
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
    // On a composite resource only users write the label-set annotation;
    // on CAPI objects it is an annotation like any other (the CAPI rules
    // may add or correct it, never remove it, as any other).
    if matches!(capability, Capability::CloudTags { .. })
        && path == ANNOTATIONS
        && old.get(LABELS_ANNOTATION) != new.get(LABELS_ANNOTATION)
    {
        return Err(Violation::LabelSetChanged(at.key(LABELS_ANNOTATION)));
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
        // Only a field whose absence is a value (0) may go.
        return match units.any(|unit| unit == Unit::IntegerOmitZero) {
            true => Ok(()),
            false => Err(Violation::Removed(field)),
        };
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

/// What the contract lets the policy write on one child: the targets in
/// [`CAPI_RULES`] of the rules for its `group`/`kind` that `applies` keeps
/// (the caller knows its parent links), each field at its `version` only,
/// less what its CRD lacks. The invariant checks and fuzz targets hold it.
fn contract_targets_for(
    group: &str,
    kind: &str,
    version: &str,
    applies: impl Fn(&Rule) -> bool,
) -> (Vec<&'static [&'static str]>, Vec<Endpoint>) {
    let rules = CAPI_RULES
        .iter()
        .filter(|rule| rule.child.matches(group, kind) && applies(rule));
    let mut maps: Vec<&'static [&'static str]> = Vec::new();
    let mut fields: Vec<Endpoint> = Vec::new();
    for flow in rules.flat_map(Rule::flows) {
        match flow {
            Flow::Map(map) => maps.extend(map.to.iter().copied()),
            Flow::Field(field) => fields.extend(field.to.at(version).copied()),
        }
    }
    let lacks = rules::lacked_by(group, kind, version);
    maps.retain(|to| !rules::is_lacked(lacks, to));
    fields.retain(|to| !rules::is_lacked(lacks, to.path));
    maps.sort();
    maps.dedup();
    fields.sort_by_key(|e| e.path);
    fields.dedup();
    (maps, fields)
}

/// The transform of opted-in labels (qualified key, value) under
/// `profile` and `keys`, into a tag field that already holds `taken`
/// entries of the user's, which count against the profile's cap (the CAPI
/// infrastructure kinds: the cloud limits the tags of a resource, whoever
/// wrote them), for labels in any order: they are visited in qualified-key
/// order, so the count cap keeps the lowest-sorting valid keys and the
/// result is a pure function of the label set. Should a key repeat, its
/// last pair wins, as in a map built from the pairs. The labels are
/// opted-in ones, as the settings check them: no two end with one tag key.
pub(crate) fn transform_with<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    profile: &'a TagProfile,
    keys: &TagKeys<'_>,
    taken: usize,
) -> Transformed<'a> {
    // Byte-wise `str` order is Go's string order (`sort.Strings`): the
    // count cap keeps the lowest qualified keys in byte order (docs/cloud-tags.md).
    // Labels that come sorted, each key once, are taken as they come;
    // others are sorted, the last of equal keys kept.
    let labels = sorted_pairs(labels.into_iter().collect());
    transform::transform_sorted(&labels, profile, keys, taken)
}

/// `pairs` sorted by key, the last of equal keys kept, as
/// `sorted_map::map_of` keeps them; pairs that come sorted, each key once,
/// are taken as they come.
fn sorted_pairs<'a>(pairs: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    if pairs.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        pairs
    } else {
        sorted_map::map_of(pairs).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Here, where `classify` is in reach; the core's tests call it too.
    impl<'a> Capability<'a> {
        /// [`Capability::of`] a write of `object` as `kind`, in the namespace
        /// the object names (as `AdmissionRequest::for_object` builds the
        /// request), with no old object.
        pub(crate) fn for_request(
            kind: &'a GroupVersionKind,
            object: &Value,
            settings: &'a Settings,
        ) -> Self {
            let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
            Self::classify(kind, object, namespace, None, settings)
        }
    }

    /// Cloud tags under the default prefix.
    const XR: Capability<'static> = Capability::CloudTags {
        prefix: DEFAULT_PREFIX,
        old_prefix: None,
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

    // What another kind, version or parent may get is not allowed here:
    // the checks take only the rules of this kind, at this version, whose
    // parent link the object has.
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

    /// A v1beta1 MachineSet owned by its MachineDeployment.
    fn v1beta1_machine_set(object: Value) -> Value {
        owned_by("cluster.x-k8s.io/v1beta1", "MachineDeployment", object)
    }

    // Found by the mutated_objects fuzz target
    // (fuzz/regressions/mutated_objects/crash-dc3701b8…): a
    // MachineDeployment whose annotations carry the label-set annotation;
    // the MachineDeployment → MachineSet rule (mdutil
    // MachineSetAnnotationsFromMachineDeployment) copied it to the
    // MachineSet as CAPI's controllers do, and the check forbade any change
    // to it on any kind. On CAPI objects it is an annotation like any other,
    // as CAPI's controllers copy it; on a composite resource it never changes.
    #[test]
    fn capi_propagates_the_label_set_annotation_like_any_other_annotation() {
        let ms = kind("cluster.x-k8s.io", "v1beta1", "MachineSet");
        let capi = Capability::Capi(&ms);
        let before = v1beta1_machine_set(json!({"metadata": {"annotations": {
            "machinedeployment.clusters.x-k8s.io/revision": "2"}}}));
        let with = |value: &str| {
            v1beta1_machine_set(json!({"metadata": {"annotations": {
                "machinedeployment.clusters.x-k8s.io/revision": "2",
                LABELS_ANNOTATION: value}}}))
        };
        // Added from the parent (the finding: the parent's value was "").
        assert_eq!(check_mutation(capi, &before, &with("")), Ok(()));
        // Corrected to the parent's value.
        let corrected = with(r#"{"team":"a"}"#);
        assert_eq!(check_mutation(capi, &with(""), &corrected), Ok(()));
        // Never removed, as no other annotation is.
        assert_eq!(
            violation(capi, &with(""), &before).as_deref(),
            Some(r#"metadata.annotations["cloud-tags.plexsphere.io/labels"] was removed"#)
        );
        // Not where no rule of the object's parent link writes annotations.
        let orphan = json!({"metadata": {"annotations": {}}});
        let gained = json!({"metadata": {"annotations": {LABELS_ANNOTATION: ""}}});
        assert!(check_mutation(capi, &orphan, &gained).is_err());
        // On a composite resource, which the policy only tags: never.
        let xr = |annotations: Value| json!({"metadata": {"annotations": annotations}, "spec": {"crossplane": {}}});
        for (old, new) in [
            (json!({}), json!({LABELS_ANNOTATION: "{}"})),
            (
                json!({LABELS_ANNOTATION: "{}"}),
                json!({LABELS_ANNOTATION: "{\"a\":\"1\"}"}),
            ),
            (json!({LABELS_ANNOTATION: "{}"}), json!({})),
        ] {
            assert_eq!(
                violation(XR, &xr(old), &xr(new)).as_deref(),
                Some(r#"metadata.annotations["cloud-tags.plexsphere.io/labels"] changed"#)
            );
        }
    }

    fn settings(text: &str) -> Settings {
        Settings::from_json(text.as_bytes()).unwrap()
    }

    /// Only a composite resource by its shape is tagged; every
    /// other object outside CAPI's groups is left as submitted.
    #[test]
    fn only_a_composite_resource_by_its_shape_gains_cloud_tags() {
        let settings = settings("{}");
        let certificate = kind("cert-manager.io", "v1", "Certificate");
        let before = json!({"metadata": {"namespace": "default"}, "spec": {"secretName": "tls"}});
        let capability = Capability::for_request(&certificate, &before, &settings);
        assert_eq!(capability, Capability::Unchanged);
        let mut tagged = before.clone();
        tagged["spec"]["cloudTags"] = json!({"plexsphere:team": "a"});
        assert_eq!(
            violation(capability, &before, &tagged).as_deref(),
            Some("spec.cloudTags changed on an object that is not a composite resource")
        );
        let mut labelled = before.clone();
        labelled["metadata"]["labels"] = json!({"a": "1"});
        assert!(check_mutation(capability, &before, &labelled).is_err());
        // Nor a CAPI object, whatever else its rules may write.
        let ms = kind("cluster.x-k8s.io", "v1beta2", "MachineSet");
        let object = machine_set(json!({"metadata": {}, "spec": {}}));
        let mut capi_tagged = object.clone();
        capi_tagged["spec"]["cloudTags"] = json!({});
        assert_eq!(
            violation(Capability::Capi(&ms), &object, &capi_tagged).as_deref(),
            Some("spec.cloudTags changed on an object that is not a composite resource")
        );

        let xr_kind = kind("platform.example.org", "v1alpha1", "XDatabase");
        let shapes = [
            // v2: spec.crossplane is an object, namespaced or not.
            (
                json!({"metadata": {"namespace": "team-a"}, "spec": {"crossplane": {}}}),
                true,
            ),
            // v1 or LegacyCluster: cluster-scoped, with the defaulted policy.
            (
                json!({"metadata": {}, "spec": {"compositionUpdatePolicy": "Manual"}}),
                true,
            ),
            // A namespaced claim has the policy, but a namespace.
            (
                json!({"metadata": {"namespace": "team-a"},
                    "spec": {"compositionUpdatePolicy": "Automatic"}}),
                false,
            ),
            (
                json!({"metadata": {}, "spec": {"crossplane": "yes"}}),
                false,
            ),
            (json!({"metadata": {}, "spec": {"forProvider": {}}}), false),
        ];
        for (object, composite) in shapes {
            let capability = Capability::for_request(&xr_kind, &object, &settings);
            assert_eq!(
                matches!(capability, Capability::CloudTags { .. }),
                composite,
                "{object}"
            );
            assert_eq!(
                crate::tags::targets::composite::is_composite_resource(&object, ""),
                is_composite_resource(&object, ""),
                "the policy's shape rule and the contract's: {object}"
            );
        }
        // Kubernetes' and SIG groups are never composite resources.
        let shaped = json!({"metadata": {}, "spec": {"crossplane": {}}});
        for group in [
            "",
            "apps",
            "gateway.networking.k8s.io",
            "ipam.cluster.x-k8s.io",
        ] {
            let k = kind(group, "v1", "Kind");
            assert_eq!(
                Capability::for_request(&k, &shaped, &settings),
                Capability::Unchanged
            );
        }
        // The request's namespace makes the object namespaced.
        let request = AdmissionRequest {
            kind: xr_kind.clone(),
            operation: "CREATE".to_owned(),
            namespace: "team-a".to_owned(),
            object: json!({"metadata": {}, "spec": {"compositionUpdatePolicy": "Automatic"}}),
            ..AdmissionRequest::default()
        };
        assert_eq!(Capability::of(&request, &settings), Capability::Unchanged);
    }

    /// Every entry removed from a tag field has its warning, once,
    /// and no removal warning names anything else.
    #[test]
    fn every_removal_from_a_tag_field_comes_with_its_warning() {
        use crate::tags::said::removed;
        use crate::tags::targets::TARGETS;
        let owned = Owned {
            prefix: "acme-",
            old_prefix: Some("plexsphere:"),
        };
        let field = COMPOSITE_RESOURCE.field.dotted();
        let check = |old: Value, new: Value, warnings: &[String]| {
            check_removals_said(&COMPOSITE_RESOURCE, owned, Some(&old), Some(&new), warnings)
                .map_err(|e| e.to_string())
        };
        let old = json!({"acme-billing-account": "1", "plexsphere:team": "a", "acme-env": "p",
                         "CostCenter": "42"});
        let new = json!({"acme-env": "p", "CostCenter": "42"});
        let said = [
            "some other warning".to_owned(),
            removed(&field, "plexsphere:team", "plexsphere:", None),
            removed(&field, "acme-billing-account", "acme-", None),
        ];
        assert_eq!(check(old.clone(), new.clone(), &said), Ok(()));
        assert_eq!(
            check(old.clone(), new.clone(), &said[..2]),
            Err(r#"spec.cloudTags["acme-billing-account"] was removed without its warning"#.into())
        );
        // Said under the wrong prefix: not its warning.
        let wrong = [
            removed(&field, "plexsphere:team", "acme-", None),
            said[2].clone(),
        ];
        assert!(check(old.clone(), new.clone(), &wrong).is_err());
        // Said twice, or said of an entry that stayed.
        let twice = [said[1].clone(), said[1].clone(), said[2].clone()];
        assert!(check(old.clone(), new.clone(), &twice).is_err());
        let kept = [removed(&field, "acme-env", "acme-", None)];
        assert!(check(old.clone(), old.clone(), &kept).is_err());
        assert_eq!(check(old.clone(), old, &[]), Ok(()));
        // A list-shaped field (CAPO): by key; a corrected entry is no removal.
        let capo = TARGETS
            .iter()
            .find(|t| t.layout == crate::tags::targets::Layout::KeyValueList)
            .unwrap();
        let list_field = capo.field.dotted();
        let old = json!([{"key": "acme-a", "value": "1"}, {"key": "acme-b", "value": "2"},
                         {"key": "Name", "value": "n"}]);
        let new = json!([{"key": "Name", "value": "n"}, {"key": "acme-b", "value": "3"}]);
        let list_owned = Owned {
            prefix: "acme-",
            old_prefix: None,
        };
        let said = [removed(&list_field, "acme-a", "acme-", None)];
        let list = |warnings: &[String]| {
            check_removals_said(capo, list_owned, Some(&old), Some(&new), warnings)
        };
        assert_eq!(list(&said), Ok(()));
        assert!(list(&[]).is_err());
    }

    /// On an UPDATE that changed the profile, the entries under the
    /// old prefix are the policy's to remove, never to write.
    #[test]
    fn the_old_prefix_is_removed_never_written() {
        let xr = Capability::CloudTags {
            prefix: "plexsphere-",
            old_prefix: Some("plexsphere:"),
        };
        let object = |tags: Value| json!({"spec": {"crossplane": {}, "cloudTags": tags}});
        let before = object(json!({"plexsphere:team": "a", "Owner": "o"}));
        let moved = object(json!({"plexsphere-team": "a", "Owner": "o"}));
        assert_eq!(check_mutation(xr, &before, &moved), Ok(()));
        let rewritten = object(json!({"plexsphere:team": "b", "Owner": "o"}));
        assert_eq!(
            violation(xr, &before, &rewritten).as_deref(),
            Some(r#"spec.cloudTags["plexsphere:team"] was added but the policy does not own it"#)
        );
    }

    #[test]
    fn sorted_pairs_keeps_the_last_of_equal_keys() {
        assert_eq!(
            sorted_pairs(vec![("a", "1"), ("b", "2")]),
            [("a", "1"), ("b", "2")]
        );
        assert_eq!(
            sorted_pairs(vec![("b", "1"), ("a", "2"), ("b", "3")]),
            [("a", "2"), ("b", "3")]
        );
    }

    /// The prefix in force: a user profile's own prefix, else
    /// `cloudTags.prefix` when set (even when it spells a default), else the
    /// profile's default (`plexsphere-` for the built-in `capg` and `gcp`).
    /// The contract's order ([`prefix_for`]) and the policy's
    /// (`support::prefix_in_force`, `TagKeys`) agree.
    #[test]
    fn the_prefix_in_force_follows_the_contracts_order() {
        use crate::tags::targets::TARGETS;
        let gcp_own = r#"{"name":"mine","providers":["gcp","capg"],"keyMax":63,"valueMax":63,
            "unit":"bytes","cap":63,"keyCharacters":{"sets":["lowercase-letters","digits"],
            "extra":"_-"},"prefix":"corp_"}"#;
        let gcp_plain = r#"{"name":"mine","providers":["gcp","capg"],"keyMax":63,"valueMax":63,
            "unit":"bytes","cap":63,"keyCharacters":{"sets":["lowercase-letters","digits"],
            "extra":"_-"}}"#;
        let cases: [(String, [&str; 4]); 6] = [
            // (settings, prefix on aws, gcp, an unknown provider, capg rows)
            (
                "{}".into(),
                ["plexsphere:", "plexsphere-", "plexsphere:", "plexsphere-"],
            ),
            (
                r#"{"cloudTags":{"prefix":"acme-"}}"#.into(),
                ["acme-", "acme-", "acme-", "acme-"],
            ),
            (
                r#"{"cloudTags":{"prefix":"plexsphere:"}}"#.into(),
                ["plexsphere:", "plexsphere:", "plexsphere:", "plexsphere:"],
            ),
            (
                format!(r#"{{"cloudTags":{{"prefix":"acme-","profiles":[{gcp_own}]}}}}"#),
                ["acme-", "corp_", "acme-", "corp_"],
            ),
            (
                format!(r#"{{"cloudTags":{{"profiles":[{gcp_plain}]}}}}"#),
                ["plexsphere:", "plexsphere:", "plexsphere:", "plexsphere:"],
            ),
            (
                format!(r#"{{"cloudTags":{{"prefix":"acme_","profiles":[{gcp_plain}]}}}}"#),
                ["acme_", "acme_", "acme_", "acme_"],
            ),
        ];
        let capg_rows: Vec<_> = TARGETS
            .iter()
            .filter(|t| t.profile_name() == Some("capg"))
            .collect();
        assert!(!capg_rows.is_empty());
        for (text, [aws, gcp, unknown, capg]) in &cases {
            let parsed = settings(text);
            let cloud_tags = parsed.cloud_tags().unwrap();
            for (provider, expected) in [("aws", aws), ("GCP", gcp), ("ibm", unknown)] {
                let xr = json!({"spec": {"crossplane": {}, "parameters": {"provider": provider}}});
                assert_eq!(
                    composite_prefix(&xr, cloud_tags),
                    *expected,
                    "{text} {provider}"
                );
                assert_eq!(
                    crate::behaviour::support::prefix_in_force(&xr, cloud_tags),
                    *expected,
                    "{text} {provider}"
                );
            }
            for row in &capg_rows {
                assert_eq!(infrastructure_prefix(row, &parsed), *capg, "{text}");
                let (profile, _) = cloud_tags.profiles.infrastructure("capg").unwrap();
                assert_eq!(cloud_tags.tag_keys(profile).prefix, *capg, "{text}");
            }
        }
    }
}
