//! Reading and cutting an object along a path, for the checks: what the
//! policy may have written is taken out of both sides before they are
//! compared.

use crate::json::fields::Path;
use serde_json::{Map, Value};

/// The value at `path`, if any.
pub(super) fn get<'v>(root: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(root, |value, key| value.get(*key))
}

/// The segments of `path`, as the checks here take them.
pub(crate) fn segments(path: &Path) -> Vec<&str> {
    path.segments().collect()
}

/// Removes and returns the value at `path` (also for the fuzz target's own
/// check of the fields it takes out before this module's).
pub(crate) fn take(root: &mut Value, path: &[&str]) -> Option<Value> {
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
pub(super) fn prune_created_parents(after: &mut Value, before: &Value, path: &[&str]) {
    if let Some((_map, parents)) = path.split_last() {
        prune(after, Some(before), parents);
    }
}

/// `null` along a map's parent chain means absent (the policy may fill it).
pub(super) fn drop_null_parents(root: &mut Value, path: &[&str]) {
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
