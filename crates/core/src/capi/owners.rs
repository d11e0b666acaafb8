//! Reading `metadata.ownerReferences` and picking the one a rule follows.

use super::rules::{KindMatch, ParentLink};
use crate::api_version;
use crate::fields::{self, FieldError, FieldPath, Problem};
use serde_json::Value;

/// One ownerReference, borrowed from the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerRef<'a> {
    /// `group/version` of the owner.
    pub api_version: &'a str,
    /// Kind of the owner.
    pub kind: &'a str,
    /// Name of the owner (same namespace as the object).
    pub name: &'a str,
    /// `controller: true`.
    pub controller: bool,
}

impl OwnerRef<'_> {
    /// The API group of the owner ("" for the core group).
    pub fn group(&self) -> &str {
        api_version::group(self.api_version)
    }
}

/// Every ownerReference of the object. Entries missing `apiVersion`, `kind`
/// or `name` are reported by index: the API server would refuse them, and a
/// policy guessing the parent would be worse than one naming the problem.
pub fn owner_refs(object: &Value) -> Result<Vec<OwnerRef<'_>>, FieldError> {
    const PATH: &[&str] = &["metadata", "ownerReferences"];
    let entries = match fields::get(object, PATH)? {
        None => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(FieldError::expected(FieldPath::of(PATH), "an array", other));
        }
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let at =
                |field: &str| FieldPath::of(&[&format!("metadata.ownerReferences[{i}]"), field]);
            let text = |field: &'static str| -> Result<&str, FieldError> {
                match fields::string(entry, &[field]) {
                    Ok(Some(s)) if !s.is_empty() => Ok(s),
                    Ok(_) => Err(FieldError::new(at(field), Problem::Required)),
                    Err(e) => Err(FieldError::new(at(field), e.problem)),
                }
            };
            let controller = match fields::get(entry, &["controller"]) {
                Ok(None) => false,
                Ok(Some(Value::Bool(b))) => *b,
                Ok(Some(other)) => {
                    return Err(FieldError::expected(at("controller"), "a boolean", other));
                }
                Err(_) => {
                    return Err(FieldError::expected(
                        FieldPath::of(&[&format!("metadata.ownerReferences[{i}]")]),
                        "an object",
                        entry,
                    ));
                }
            };
            Ok(OwnerRef {
                api_version: text("apiVersion")?,
                kind: text("kind")?,
                name: text("name")?,
                controller,
            })
        })
        .collect()
}

/// The ownerReference `link` follows, if any.
pub fn find<'a>(refs: &[OwnerRef<'a>], link: &ParentLink) -> Option<OwnerRef<'a>> {
    let (want, controller): (&KindMatch, bool) = match link {
        ParentLink::ControllerOwner(kind) => (kind, true),
        ParentLink::NonControllerOwner(kind) => (kind, false),
        ParentLink::Topology(_) => return None,
    };
    refs.iter()
        .copied()
        .find(|r| r.controller == controller && want.matches(r.group(), r.kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::rules::{ANY_CONTROL_PLANE, MACHINE_SET};
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
