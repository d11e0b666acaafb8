//! Picking the ownerReference a rule follows.

use super::rules::{KindMatch, ParentLink};
use crate::kube::owners::OwnerRef;

/// The ownerReference `link` follows, if any.
pub(crate) fn find<'a>(refs: &[OwnerRef<'a>], link: &ParentLink) -> Option<OwnerRef<'a>> {
    let (want, controller): (&KindMatch, Option<bool>) = match link {
        ParentLink::ControllerOwner(kind) => (kind, Some(true)),
        ParentLink::NonControllerOwner(kind) => (kind, Some(false)),
        ParentLink::AnyOwner(kind) => (kind, None),
        ParentLink::Topology(_) => return None,
    };
    refs.iter()
        .copied()
        .find(|r| controller.is_none_or(|c| r.controller == c) && want.matches(r.group(), r.kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::rules::{ANY_CONTROL_PLANE, MACHINE_SET};
    use crate::kube::owners::owner_refs;
    use serde_json::json;

    #[test]
    fn owner_refs_reads_controller_flag() {
        let obj = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet", "name": "ms-1", "uid": "u"},
            {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
             "name": "cp", "controller": true, "blockOwnerDeletion": true, "uid": "v"}]}});
        let refs = owner_refs(&obj).unwrap();
        assert_eq!(
            find(&refs, &ParentLink::NonControllerOwner(MACHINE_SET)),
            Some(OwnerRef {
                api_version: "cluster.x-k8s.io/v1beta2",
                kind: "MachineSet",
                name: "ms-1",
                controller: false
            })
        );
        assert_eq!(
            find(&refs, &ParentLink::ControllerOwner(ANY_CONTROL_PLANE)).map(|r| r.name),
            Some("cp")
        );
        assert_eq!(find(&refs, &ParentLink::ControllerOwner(MACHINE_SET)), None);
        // Either flag: the control plane as controller, the MachineSet not.
        assert_eq!(
            find(&refs, &ParentLink::AnyOwner(ANY_CONTROL_PLANE)).map(|r| r.name),
            Some("cp")
        );
        assert_eq!(
            find(&refs, &ParentLink::AnyOwner(MACHINE_SET)).map(|r| r.name),
            Some("ms-1")
        );
    }

    #[test]
    fn owner_refs_missing_name_is_named_by_index() {
        let obj = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"},
            {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet"}]}});
        assert_eq!(
            owner_refs(&obj).unwrap_err().to_string(),
            "metadata.ownerReferences[1].name: required, and missing or empty"
        );
    }

    #[test]
    fn owner_refs_wrong_types_are_named() {
        let not_array = json!({"metadata": {"ownerReferences": {"kind": "x"}}});
        assert_eq!(
            owner_refs(&not_array).unwrap_err().to_string(),
            "metadata.ownerReferences: expected an array, found an object"
        );
        let bad_flag = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "name": "m", "controller": "yes"}]}});
        assert_eq!(
            owner_refs(&bad_flag).unwrap_err().to_string(),
            "metadata.ownerReferences[0].controller: expected a boolean, found a string"
        );
        let scalar = json!({"metadata": {"ownerReferences": ["ms"]}});
        assert_eq!(
            owner_refs(&scalar).unwrap_err().to_string(),
            "metadata.ownerReferences[0]: expected an object, found a string"
        );
    }
}
