//! The part of an AdmissionRequest the policy reads.
//!
//! Decoded directly from the waPC payload instead of through the SDK's
//! `ValidationRequest`: the policy needs five fields, and the SDK's decode
//! error quotes the whole payload back, which for a 1 MiB object is not a
//! message anyone can read.

use kubewarden_policy_sdk::request::GroupVersionKind;
use serde::Deserialize;
use serde_json::Value;

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
}

impl AdmissionRequest {
    /// True for the operations the policy acts on.
    pub fn is_write(&self) -> bool {
        matches!(self.operation.as_str(), "CREATE" | "UPDATE")
    }
}
