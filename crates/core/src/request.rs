//! The part of an AdmissionRequest the policy reads.
//!
//! Decoded directly from the waPC payload instead of through the SDK's
//! `ValidationRequest`: the policy needs five fields, and the SDK's decode
//! error quotes the whole payload back, which for a 1 MiB object is not a
//! message anyone can read.

pub mod lookup;
pub(crate) mod mode;
pub mod outcome;
pub mod plan;
pub(crate) mod reads;

use crate::json::fields::{self, FieldError};
use crate::kube::api_version;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The group, version and kind of an admission request's object, as the
/// API server writes them (`{"group": …, "version": …, "kind": …}`; the
/// core group is `""`). The same shape as the SDK's `GroupVersionKind`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// An admission request, reduced to what the policy reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Request UID.
    pub uid: String,
    /// Group, version and kind of the object.
    pub kind: GroupVersionKind,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: String,
    /// Namespace of the object ("" for cluster-scoped objects).
    pub namespace: String,
    /// The object as submitted (`null` on DELETE).
    pub object: Value,
    /// The object as stored before an UPDATE (`null` otherwise). The
    /// policy reads only which profile applied to it, and the waPC edge
    /// decodes it only when the settings let that matter
    /// (`crate::tags::CloudTagSettings::prefixes_vary`).
    pub old_object: Value,
}

/// True for the operations the policy acts on: CREATE and UPDATE.
pub(crate) fn is_write(operation: &str) -> bool {
    matches!(operation, "CREATE" | "UPDATE")
}

impl AdmissionRequest {
    /// The request the API server would send for `object`: group, version
    /// and kind from its `apiVersion` / `kind`, namespace from its metadata.
    /// Used by tools (explain, the web page) and tests that start from an
    /// object rather than a recorded request.
    pub fn for_object(operation: &str, object: Value) -> Self {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let api_version = text(&object["apiVersion"]);
        let (group, version) = api_version::split(&api_version);
        Self {
            uid: String::new(),
            kind: GroupVersionKind {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: text(&object["kind"]),
            },
            operation: operation.to_owned(),
            namespace: text(&object["metadata"]["namespace"]),
            object,
            old_object: Value::Null,
        }
    }

    /// True for the operations the policy acts on.
    pub(crate) fn is_write(&self) -> bool {
        is_write(&self.operation)
    }

    /// The namespace the object lives in: its own `metadata.namespace`, or
    /// the request's where the object leaves it out or empty (a CREATE may:
    /// the API server fills it in from the request).
    pub(crate) fn object_namespace(&self) -> Result<&str, FieldError> {
        Ok(fields::string(&self.object, &["metadata", "namespace"])?
            .filter(|ns| !ns.is_empty())
            .unwrap_or(&self.namespace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn group_version_kind_reads_and_writes_the_api_servers_shape() {
        let kind: GroupVersionKind =
            serde_json::from_value(json!({"group": "apps", "version": "v1", "kind": "Deployment"}))
                .unwrap();
        assert_eq!(
            kind,
            GroupVersionKind {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
            }
        );
        assert_eq!(
            serde_json::to_value(&kind).unwrap(),
            json!({"group": "apps", "version": "v1", "kind": "Deployment"})
        );
        // The core group is written as "" or left out.
        let core: GroupVersionKind =
            serde_json::from_value(json!({"version": "v1", "kind": "Pod"})).unwrap();
        assert_eq!(core.group, "");
    }

    #[test]
    fn the_objects_namespace_wins_and_an_empty_one_is_the_requests() {
        let request = |object| AdmissionRequest {
            namespace: "from-request".into(),
            object,
            ..AdmissionRequest::default()
        };
        let own = request(json!({"metadata": {"namespace": "own"}}));
        assert_eq!(own.object_namespace().unwrap(), "own");
        for object in [
            json!({"metadata": {"namespace": ""}}),
            json!({"metadata": {}}),
        ] {
            assert_eq!(request(object).object_namespace().unwrap(), "from-request");
        }
        let malformed = request(json!({"metadata": {"namespace": 3}}));
        assert_eq!(
            malformed.object_namespace().unwrap_err().to_string(),
            "metadata.namespace: expected a string, found a number"
        );
    }

    #[test]
    fn for_object_derives_kind_and_namespace() {
        let request = AdmissionRequest::for_object(
            "CREATE",
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                   "metadata": {"name": "ms", "namespace": "team-a"}}),
        );
        assert_eq!(
            (request.kind.group.as_str(), request.kind.version.as_str()),
            ("cluster.x-k8s.io", "v1beta2")
        );
        assert_eq!(request.kind.kind, "MachineSet");
        assert_eq!(request.namespace, "team-a");
        assert!(request.is_write());
        let core =
            AdmissionRequest::for_object("UPDATE", json!({"apiVersion": "v1", "kind": "Pod"}));
        assert_eq!(
            (core.kind.group.as_str(), core.kind.version.as_str()),
            ("", "v1")
        );
    }
}
