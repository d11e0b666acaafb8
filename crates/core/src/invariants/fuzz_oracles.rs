//! The oracles of the fuzz targets, each whole: on a request the policy
//! allowed (`mutated_objects`: which capability acted, the properties of
//! its mutation, `check_mutation`, the tag field and the skip annotation
//! of an infrastructure object or a managed resource, and the warning for
//! every removed tag), and on the transform under a prepared tag profile
//! (`settings_bytes`: labels reach it only through accepted settings, as
//! they reach it at admission).

use super::{Capability, Owned, check_mutation, check_removals_said, check_tag_field};
use super::{get, infrastructure_prefix, prefix_for, segments, take, transform_with};
use super::{
    is_managed_resource, managed_resource_family, managed_resource_left_alone,
    managed_resource_prefix,
};
use crate::json::fields::Path;
use crate::kube::kinds::KindMatch;
use crate::request::lookup::ObjectRef;
use crate::request::{AdmissionRequest, is_write};
use crate::settings::Settings;
use crate::tags::SKIPPED_ANNOTATION;
use crate::tags::decision::transform;
use crate::tags::targets::composing_xr;
use crate::tags::targets::covering_row::managed_resource;
use crate::tags::targets::mr_catalogue::{self, Family};
use crate::tags::targets::{COMPOSITE_RESOURCE, Match, TARGETS, Target};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Checks what the policy did to `request`, allowed under `settings` with
/// `after` (the request's object with the plan applied) and `warnings`:
/// on an infrastructure object of a row of the tag-target table, the tag
/// field (stamped when `cloudTags.capiInfrastructure` is on, on CREATE only
/// for a create-only row) and the skip annotation, then its CAPI metadata as
/// for any CAPI kind; on a managed resource the settings tag
/// (`managed_resource_row`), the tag field and the skip annotation, and
/// nothing else; on any other object the mutation of the capability
/// that acted (`Capability::of`); and on each, a warning for every
/// tag removed. Errs saying which property does not hold.
pub fn check_allowed(
    request: &AdmissionRequest,
    settings: &Settings,
    after: &Value,
    warnings: &[String],
) -> Result<(), String> {
    let kind = &request.kind;
    let capability = Capability::of(request, settings);
    let infra_row = target_for(&kind.group, &kind.kind, &kind.version);
    if let (Capability::Capi(_), Some(row)) = (capability, infra_row) {
        let stamped = settings.tags.capi_infrastructure()
            && !(row.create_only && request.operation != "CREATE");
        let target = stamped.then_some(row);
        // The prefix in force on the row's profile, in the contract's order.
        let prefix = infrastructure_prefix(row, settings);
        check_tagged(capability, target, prefix, &request.object, after)
            .map_err(|e| format!("cloud tags on infrastructure: {e}"))?;
        let owned = Owned {
            prefix,
            old_prefix: None,
        };
        let field = segments(&row.field);
        let (old, new) = (get(&request.object, &field), get(after, &field));
        check_removals_said(row, owned, old, new, warnings)
            .map_err(|e| format!("cloud tags on infrastructure: {e}"))?;
    } else if let (Capability::Unchanged, Some((row, prefix))) =
        (capability, managed_resource_row(request, settings))
    {
        // Left alone, the MR changes nothing at all.
        let target = (!managed_resource_left_alone(&request.object)).then_some(&row);
        check_tagged(capability, target, prefix, &request.object, after)
            .map_err(|e| format!("cloud tags on a managed resource: {e}"))?;
        let owned = Owned {
            prefix,
            old_prefix: None,
        };
        let field = segments(&row.field);
        let (old, new) = (get(&request.object, &field), get(after, &field));
        let mut old = old.cloned();
        if request.operation == "UPDATE" && settings.tags.mutates() && xr_unread(warnings) {
            // The XR could not be read: the policy's entries are set back to
            // the stored ones, under the one warning that says so; an entry
            // that was not stored goes without a removal warning of its own.
            // (Validate mode changes nothing.)
            let stored = stored_entries(&request.old_object, &field);
            check_as_stored(prefix, stored, old.as_ref(), new)
                .map_err(|e| format!("cloud tags on a managed resource: {e}"))?;
            if let Some(Value::Object(submitted)) = &mut old {
                submitted.retain(|key, _| new.and_then(|new| new.get(key)).is_some());
            }
        }
        check_removals_said(&row, owned, old.as_ref(), new, warnings)
            .map_err(|e| format!("cloud tags on a managed resource: {e}"))?;
    } else {
        check_mutation(capability, &request.object, after).map_err(|e| e.to_string())?;
        if let Capability::CloudTags { prefix, old_prefix } = capability {
            let owned = Owned { prefix, old_prefix };
            let composite = &COMPOSITE_RESOURCE;
            let field = segments(&composite.field);
            let (old, new) = (get(&request.object, &field), get(after, &field));
            check_removals_said(composite, owned, old, new, warnings).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The managed-resource row the settings give `request` and the prefix in
/// force on it, decided apart from the policy's routing
/// (docs/managed-resources.md): a write of an object with an MR's shape
/// (`is_managed_resource`), in a group of a family
/// (`managed_resource_family`) that `cloudTags.managedResources.families`
/// turns on, of a kind with a tag field (the settings' row for it, else the
/// catalogue's); the prefix, the one of the profile the family's name
/// selects (`managed_resource_prefix`). The families on, the settings' rows
/// and the catalogue are read as data.
fn managed_resource_row<'s>(
    request: &AdmissionRequest,
    settings: &'s Settings,
) -> Option<(Target, &'s str)> {
    let kind = &request.kind;
    let (family, group) = managed_resource_family(&kind.group)?;
    let managed = settings.tags.managed_resources()?;
    let on = managed.families.iter().any(|on| on.name() == family);
    if !on || !is_write(&request.operation) {
        return None;
    }
    if !is_managed_resource(&request.object, &request.namespace) {
        return None;
    }
    let catalogue = || {
        let row = mr_catalogue::find(&group, &kind.kind)?;
        let segments: Vec<&str> = row.field.split('.').collect();
        (CATALOGUE_FIELDS.into_iter())
            .find(|field| *field == segments)
            .map(Path::Static)
    };
    let row = (managed.kinds.iter()).find(|row| row.group == group && row.kind == kind.kind);
    let field = row.map(|row| row.field.clone()).or_else(catalogue)?;
    let prefix = managed_resource_prefix(family, settings.cloud_tags().ok()?);
    Some((managed_resource(Family::named(family)?, field), prefix))
}

/// Whether `warnings` say that the composite resource of a managed
/// resource could not be read (its kind may not be read, or the look-up
/// failed): on an UPDATE, the policy then keeps its entries as stored.
fn xr_unread(warnings: &[String]) -> bool {
    // What each warning opens with, whatever the XR: the text two of them
    // for different XRs share.
    let xr = |name: &str| ObjectRef {
        api_version: format!("{name}/v1"),
        kind: name.to_owned(),
        name: name.to_owned(),
        namespace: None,
    };
    let (a, b) = (xr("a"), xr("b"));
    let openings = [
        (composing_xr::denied(&a), composing_xr::denied(&b)),
        (composing_xr::failed(&a, "m"), composing_xr::failed(&b, "m")),
    ]
    .map(|(a, b)| a[..a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()].to_owned());
    (warnings.iter()).any(|w| {
        openings
            .iter()
            .any(|opening| w.starts_with(opening.as_str()))
    })
}

/// The entries of the map at `path` of the stored object `old`: none when
/// there is none (or `null`) on the way; `None` when it does not read as a
/// map of strings, or when there is no old object at all (an audit, or
/// `explain` of a bare object: nothing is known to be stored); then the
/// submitted entries stay.
fn stored_entries<'v>(old: &'v Value, path: &[&str]) -> Option<Option<&'v Map<String, Value>>> {
    if old.is_null() {
        return None;
    }
    let mut value = old;
    for key in path {
        value = match value {
            Value::Null => return Some(None),
            Value::Object(map) => map.get(*key).unwrap_or(&Value::Null),
            _ => return None,
        };
    }
    match value {
        Value::Null => Some(None),
        Value::Object(map) if map.values().all(Value::is_string) => Some(Some(map)),
        _ => None,
    }
}

/// On a managed resource whose XR could not be read, the entries under
/// `prefix` the policy leaves (`new`) are the stored ones (`stored`, as
/// [`stored_entries`] reads them), or the submitted ones (`old`) when the
/// stored field does not read.
fn check_as_stored(
    prefix: &str,
    stored: Option<Option<&Map<String, Value>>>,
    old: Option<&Value>,
    new: Option<&Value>,
) -> Result<(), String> {
    let policys = |field: Option<&Map<String, Value>>| -> Vec<(String, Value)> {
        (field.into_iter().flatten())
            .filter(|(key, _)| key.starts_with(prefix))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    };
    let expected = match stored {
        Some(stored) => policys(stored),
        None => policys(old.and_then(Value::as_object)),
    };
    let left = policys(new.and_then(Value::as_object));
    if left != expected {
        return Err(format!(
            "the XR could not be read, and the entries under {prefix:?} are not the stored \
             ones\n stored: {expected:?}\n after:  {left:?}"
        ));
    }
    Ok(())
}

/// Every field the catalogue names (a row naming another would leave its
/// MRs to the checks of an untagged object, which fails loudly).
const CATALOGUE_FIELDS: [&[&str]; 3] = [
    &["spec", "forProvider", "tags"],
    &["spec", "forProvider", "labels"],
    &["spec", "forProvider", "resourceLabels"],
];

impl Target {
    /// The group and kind a kind row covers, and the served version.
    pub(crate) fn kind(&self) -> Option<(KindMatch, &'static str)> {
        match self.matches {
            Match::Kind { kind, version } => Some((kind, version)),
            Match::CompositeResource | Match::ManagedResource => None,
        }
    }
}

/// The kind row for an object of `group`/`kind` at API `version`, if any.
pub(crate) fn target_for(group: &str, kind: &str, version: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| {
        t.kind()
            .is_some_and(|(k, v)| v == version && k.matches(group, kind))
    })
}

/// Each kind row of the tag-target table, in table order, as (group, kind,
/// served version, tag field), the kind `None` for every kind of the
/// group: the infrastructure kinds a fuzz input may turn an object into,
/// and the tag field the policy stamps on an object of one (the first row
/// whose group, kind and version it has).
#[allow(clippy::type_complexity)]
pub fn infrastructure_rows() -> Vec<(
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static [&'static str],
)> {
    // The table's own rows hold its own, static, paths.
    let field = |row: &'static Target| match row.field {
        Path::Static(field) => Some(field),
        Path::Dotted(_) => None,
    };
    (TARGETS
        .iter()
        .filter_map(|row| Some((row.kind()?, field(row)?))))
    .map(|((kind, version), field)| (kind.group, kind.kind, version, field))
    .collect()
}

/// Checks, under accepted `settings` whose `cloudTags.propagatingLabels`
/// are the keys of `labels`, that the profile `provider` selects
/// transforms `labels` without panicking: every label ends as one tag or
/// one skip, no more tags than the profile's cap, every tag the prefix in
/// force (in the contract's order: `prefix_for`) and its label's key with
/// its label's value, and no tag at all when the profile can never admit
/// that prefix. Panics naming the property that does not hold.
pub fn check_profile_transform(
    settings: &Settings,
    provider: &str,
    labels: &BTreeMap<String, String>,
) {
    let cloud_tags = settings.cloud_tags().expect("accepted settings prepare");
    let (profile, origin) = cloud_tags.profiles.resolve(Some(provider));
    let keys = cloud_tags.tag_keys(profile);
    // The prefix in force: the profile's own, else `cloudTags.prefix` when
    // set, else the profile's default.
    assert_eq!(keys.prefix, prefix_for(profile, origin, cloud_tags));
    // Every label is opted in: its key is one the settings accepted.
    let opted_in = &cloud_tags.propagating_labels;
    assert!(labels.keys().all(|key| opted_in.iter().any(|k| k == key)));
    let out = transform_with(
        labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        profile,
        &keys,
        0,
    );
    assert_eq!(out.tags.len() + out.skipped.len(), labels.len());
    assert!(out.tags.len() <= profile.cap);
    for (tag, value) in &out.tags {
        // Every tag is the prefix in force and its label's key.
        let label = keys
            .qualified_key_of(tag)
            .expect("a tag starts with the prefix in force");
        assert_eq!(labels.get(label).map(String::as_str), Some(value.as_str()));
        assert_eq!(transform::check(profile, &keys, label, tag, value), None);
    }
    // A profile that refuses the prefix refuses everything.
    if profile.blocks_every_tag(keys.prefix).is_some() {
        assert!(out.tags.is_empty());
    }
}

/// Checks that `after` is `before` changed only in the tag field of the
/// row `target` (`None`: the feature is off, the kind has no row, the
/// field is stamped on CREATE only and this is an UPDATE, or a managed
/// resource is left alone), the skip annotation, and what `rest` may
/// change (an infrastructure object's CAPI metadata the rule table gives
/// its kind; on a managed resource, nothing). In the tag field, the policy
/// adds, corrects and removes the tags under the prefix in force
/// (`prefix`) only, writing strings; every other entry stays as it was.
fn check_tagged(
    rest: Capability<'_>,
    target: Option<&Target>,
    prefix: &str,
    before: &Value,
    after: &Value,
) -> Result<(), String> {
    let (mut before, mut after) = (before.clone(), after.clone());
    if let Some(target) = target {
        let field = segments(&target.field);
        let old = take(&mut before, &field);
        let new = take(&mut after, &field);
        if old != new {
            check_tag_field(target, prefix, old.as_ref(), new.as_ref()).map_err(|problem| {
                format!(
                    "{problem}\n before: {}\n after:  {}",
                    old.unwrap_or_default(),
                    new.unwrap_or_default()
                )
            })?;
        }
        restore_created(&mut after, &before, &field);
        let skipped = ["metadata", "annotations", SKIPPED_ANNOTATION];
        let old = take(&mut before, &skipped);
        let new = take(&mut after, &skipped);
        if old != new && new.as_ref().is_some_and(|v| !v.is_string()) {
            return Err(format!("{SKIPPED_ANNOTATION} written as {new:?}"));
        }
        restore_created(&mut after, &before, &skipped);
    }
    check_mutation(rest, &before, &after).map_err(|e| e.to_string())
}

/// The maps on the way to `path` the policy created to write there (empty
/// in `after` once the field is taken out, absent or `null` in `before`)
/// are put back as `before` has them.
fn restore_created(after: &mut Value, before: &Value, path: &[&str]) {
    for depth in (1..path.len()).rev() {
        let (last, parents) = (path[depth - 1], &path[..depth - 1]);
        let old = get(before, &path[..depth]);
        if old.is_some_and(|v| !v.is_null()) {
            continue;
        }
        let Some(parent) = get_mut(after, parents) else {
            continue;
        };
        if parent
            .get(last)
            .is_some_and(|v| v.as_object().is_some_and(Map::is_empty))
        {
            match old {
                Some(old) => {
                    parent.insert(last.to_owned(), old.clone());
                }
                None => {
                    parent.remove(last);
                }
            }
        }
    }
}

/// The map at `path` of `root`, if there is one.
fn get_mut<'v>(root: &'v mut Value, path: &[&str]) -> Option<&'v mut Map<String, Value>> {
    path.iter()
        .try_fold(root, |value, key| value.get_mut(*key))?
        .as_object_mut()
}
