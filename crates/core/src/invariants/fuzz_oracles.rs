//! The oracles of the fuzz targets, each whole: on a request the policy
//! allowed (`mutated_objects`: which capability acted, the properties of
//! its mutation, `check_mutation`, the tag field and the skip annotation
//! of an infrastructure object, and the warning for every removed tag),
//! and on the transform under a prepared tag profile (`settings_bytes`:
//! labels reach it only through accepted settings, as they reach it at
//! admission).

use super::{Capability, Owned, check_mutation, check_removals_said, check_tag_field};
use super::{get, infrastructure_prefix, prefix_for, take};
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::settings::Settings;
use crate::tags::SKIPPED_ANNOTATION;
use crate::tags::targets::{COMPOSITE_RESOURCE, TARGETS, Target, target_for};
use crate::tags::transform;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Checks what the policy did to `request`, allowed under `settings` with
/// `after` (the request's object with the plan applied) and `warnings`:
/// on an infrastructure object of a row of the tag-target table, the tag
/// field (stamped when `cloudTags.capiInfrastructure` is on, on CREATE only
/// for a create-only row) and the skip annotation, then its CAPI metadata as
/// for any CAPI kind; on any other object the mutation of the capability
/// that acted (`Capability::of`); and on either, a warning for every
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
        check_infrastructure(kind, target, prefix, &request.object, after)
            .map_err(|e| format!("cloud tags on infrastructure: {e}"))?;
        let owned = Owned {
            prefix,
            old_prefix: None,
        };
        let (old, new) = (get(&request.object, row.field), get(after, row.field));
        check_removals_said(row, owned, old, new, warnings)
            .map_err(|e| format!("cloud tags on infrastructure: {e}"))?;
    } else {
        check_mutation(capability, &request.object, after).map_err(|e| e.to_string())?;
        if let Capability::CloudTags { prefix, old_prefix } = capability {
            let owned = Owned { prefix, old_prefix };
            let field = COMPOSITE_RESOURCE.field;
            let (old, new) = (get(&request.object, field), get(after, field));
            check_removals_said(&COMPOSITE_RESOURCE, owned, old, new, warnings)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
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
    (TARGETS
        .iter()
        .filter_map(|row| Some((row.kind()?, row.field))))
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
    let out = transform::transform_with(
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
/// row `target` (`None`: the feature is off, the kind has no row, or the
/// field is stamped on CREATE only and this is an UPDATE), the skip
/// annotation, and the CAPI metadata the rule table gives the kind. In the
/// tag field, the policy adds, corrects and removes the tags under the
/// prefix in force (`prefix`) only, writing strings; every other entry
/// stays as it was.
fn check_infrastructure(
    kind: &GroupVersionKind,
    target: Option<&Target>,
    prefix: &str,
    before: &Value,
    after: &Value,
) -> Result<(), String> {
    let (mut before, mut after) = (before.clone(), after.clone());
    if let Some(target) = target {
        let old = take(&mut before, target.field);
        let new = take(&mut after, target.field);
        if old != new {
            check_tag_field(target, prefix, old.as_ref(), new.as_ref()).map_err(|problem| {
                format!(
                    "{problem}\n before: {}\n after:  {}",
                    old.unwrap_or_default(),
                    new.unwrap_or_default()
                )
            })?;
        }
        restore_created(&mut after, &before, target.field);
        let skipped = ["metadata", "annotations", SKIPPED_ANNOTATION];
        let old = take(&mut before, &skipped);
        let new = take(&mut after, &skipped);
        if old != new && new.as_ref().is_some_and(|v| !v.is_string()) {
            return Err(format!("{SKIPPED_ANNOTATION} written as {new:?}"));
        }
        restore_created(&mut after, &before, &skipped);
    }
    check_mutation(Capability::Capi(kind), &before, &after).map_err(|e| e.to_string())
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
