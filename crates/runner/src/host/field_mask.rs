//! `get_resource` field masks, applied as policy-evaluator applies them
//! (`callback_handler/kubernetes/field_mask.rs`, kubewarden-controller
//! v1.35; docs/runner.md, "Hosted as policy-server hosts"): dot paths prune
//! everything but `apiVersion`, `kind` and `metadata`; the end of a mask
//! keeps its subtree, arrays are transparent, and a node that ends one mask
//! but continues in another (`a` with `a.b`) is pruned to the longer one.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// Top-level fields outside the masked data (kube-rs `DynamicObject`'s
/// `types` and `metadata`).
const NEVER_MASKED: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The masks as a tree.
#[derive(Debug, Default)]
pub struct FieldMask {
    children: BTreeMap<String, FieldMask>,
    terminal: bool,
}

impl FieldMask {
    /// The tree of `masks` (dot paths).
    pub fn new<'a>(masks: impl IntoIterator<Item = &'a str>) -> FieldMask {
        let mut root = FieldMask::default();
        for mask in masks {
            let mut node = &mut root;
            for part in mask.split('.') {
                node = node.children.entry(part.to_owned()).or_default();
            }
            node.terminal = true;
        }
        root
    }

    /// Prunes a whole object as the host does: `apiVersion`, `kind` and
    /// `metadata` stay, the rest is pruned by the masks.
    pub fn prune_object(&self, object: &mut Value) {
        match object {
            Value::Object(map) => self.retain(map, &NEVER_MASKED),
            other => self.prune(other),
        }
    }

    fn prune(&self, value: &mut Value) {
        if self.terminal && self.children.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => self.retain(map, &[]),
            Value::Array(items) => items.iter_mut().for_each(|item| self.prune(item)),
            _ => {}
        }
    }

    /// Keeps the members `whole`, and those on a mask's path, pruned below.
    fn retain(&self, map: &mut Map<String, Value>, whole: &[&str]) {
        map.retain(|key, value| match self.children.get(key) {
            _ if whole.contains(&key.as_str()) => true,
            Some(child) => {
                child.prune(value);
                true
            }
            None => false,
        });
    }
}

/// `object` pruned by `masks`, or unchanged when there are none (`None` or
/// an empty set: the whole object, as in policy-evaluator).
pub fn prune(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    let mut object = object.clone();
    if let Some(masks) = masks.filter(|m| !m.is_empty()) {
        FieldMask::new(masks.iter().map(String::as_str)).prune_object(&mut object);
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn masks(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn metadata_api_version_and_kind_always_arrive_whole() {
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                        "metadata": {"name": "md-0", "labels": {"a": "1"},
                                     "managedFields": [{"manager": "capi"}]},
                        "spec": {"replicas": 3, "template": {"metadata": {"labels": {"x": "1"}},
                                                             "spec": {"version": "v1.31.0"}}},
                        "status": {"phase": "Running"}});

        let pruned = prune(
            &md,
            Some(&masks(&[
                "metadata.annotations",
                "spec.template.metadata.labels",
            ])),
        );

        assert_eq!(
            pruned,
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                   "metadata": {"name": "md-0", "labels": {"a": "1"},
                                "managedFields": [{"manager": "capi"}]},
                   "spec": {"template": {"metadata": {"labels": {"x": "1"}}}}})
        );
    }

    #[test]
    fn arrays_are_transparent() {
        let cluster = json!({"kind": "Cluster", "spec": {"topology": {"workers": {"machineDeployments": [
            {"name": "md-0", "class": "default-worker", "replicas": 2, "metadata": {"labels": {"x": "1"}}},
            {"name": "md-1", "class": "default-worker"}]}}}});

        let pruned = prune(
            &cluster,
            Some(&masks(&[
                "spec.topology.workers.machineDeployments.name",
                "spec.topology.workers.machineDeployments.metadata.labels",
            ])),
        );

        assert_eq!(
            pruned,
            json!({"kind": "Cluster", "spec": {"topology": {"workers": {"machineDeployments": [
                {"name": "md-0", "metadata": {"labels": {"x": "1"}}}, {"name": "md-1"}]}}}})
        );
    }

    #[test]
    fn no_masks_or_empty_masks_keep_everything() {
        let object = json!({"kind": "X", "spec": {"a": 1}, "status": {}});
        assert_eq!(prune(&object, None), object);
        assert_eq!(prune(&object, Some(&BTreeSet::new())), object);
    }

    #[test]
    fn a_mask_ending_where_another_continues_keeps_only_the_longer_one() {
        // policy-evaluator's FieldMaskNode: `spec` is terminal but has a child.
        let object = json!({"spec": {"a": {"b": 1, "c": 2}, "d": 3}});
        assert_eq!(
            prune(&object, Some(&masks(&["spec", "spec.a.b"]))),
            json!({"spec": {"a": {"b": 1}}})
        );
    }
}
