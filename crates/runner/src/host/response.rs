//! The guest's `ValidationResponse` turned into the AdmissionResponse kwctl
//! prints, as policy-evaluator `admission_response.rs` does: the host
//! computes the JSONPatch as `json_patch::diff(request.object,
//! mutated_object)` (a dropped field becomes a `remove`), base64-encoded.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// kwctl's answer when a policy mutates a request whose object is null
/// (DELETE): policy-evaluator `AdmissionResponse::from_policy_validation_response`.
pub const MUTATION_OF_NULL_OBJECT: &str = "Incoming object is null, which happens only with DELETE operations, but the policy is attempting a mutation. This is not allowed";

/// policy-evaluator's message when a policy is interrupted by its timeout.
pub const TIMED_OUT: &str =
    "Policy execution interrupted because it exceeded the allowed execution time";

/// The guest's answer to `validate` (SDK `response::ValidationResponse`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PolicyResponse {
    /// Whether the request is accepted.
    pub accepted: bool,
    /// Rejection (or informational) message.
    #[serde(default)]
    pub message: Option<String>,
    /// HTTP-like status code.
    #[serde(default)]
    pub code: Option<u16>,
    /// The full mutated object, when the policy mutates.
    #[serde(default)]
    pub mutated_object: Option<Value>,
    /// Audit annotations for the API server's audit log.
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings returned to the client.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// `status` of an AdmissionResponse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// Human-readable reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Where policy-server keeps the policy's own message when a custom
    /// rejection message replaces it (`serve`); never set by `run`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// HTTP-like status code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// `status.details` as policy-evaluator writes it: only `causes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatusDetails {
    /// Further messages, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
}

/// One of `status.details.causes`; policy-evaluator writes all three
/// members, `null` when unset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatusCause {
    /// Machine-readable cause (never set by a Kubewarden host).
    pub reason: Option<String>,
    /// Human-readable cause.
    pub message: Option<String>,
    /// The field at fault (never set by a Kubewarden host).
    pub field: Option<String>,
}

/// admission/v1 AdmissionResponse, fields in kwctl's output order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// Copied from the request.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// `JSONPatch` when `patch` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Base64 (standard, padded) of the RFC 6902 patch JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Why the request was rejected, when the policy said so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Audit annotations, `null` when absent.
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings, `null` when absent.
    pub warnings: Option<Vec<String>>,
}

impl AdmissionResponse {
    /// Builds the response for request `uid` whose `object` is
    /// `request_object` (`None` when absent or null) from the guest's answer.
    pub fn from_policy(
        uid: &str,
        request_object: Option<&Value>,
        policy: PolicyResponse,
    ) -> AdmissionResponse {
        let patch = match (&policy.mutated_object, request_object) {
            (None, _) => None,
            (Some(_), None) => {
                return AdmissionResponse::reject(uid, MUTATION_OF_NULL_OBJECT, None);
            }
            (Some(mutated), Some(original)) => encode_patch(original, mutated),
        };
        let status = (policy.message.is_some() || policy.code.is_some()).then_some(Status {
            message: policy.message,
            details: None,
            code: policy.code,
        });
        AdmissionResponse {
            uid: uid.to_owned(),
            allowed: policy.accepted,
            patch_type: patch.as_ref().map(|_| "JSONPatch".to_owned()),
            patch,
            status,
            audit_annotations: policy.audit_annotations,
            warnings: policy.warnings,
        }
    }

    /// kwctl's answer when the guest call itself fails:
    /// `internal server error: <error>` with code 500.
    pub fn internal_server_error(uid: &str, error: &str) -> AdmissionResponse {
        AdmissionResponse::reject(uid, &format!("internal server error: {error}"), Some(500))
    }

    /// policy-evaluator's rejection when the policy ran past its deadline
    /// (the policy timeout), code 500.
    pub fn timed_out(uid: &str) -> AdmissionResponse {
        AdmissionResponse::reject(uid, TIMED_OUT, Some(500))
    }

    /// A rejection with `message` (and `code`), nothing else.
    pub fn reject(uid: &str, message: &str, code: Option<u16>) -> AdmissionResponse {
        AdmissionResponse {
            uid: uid.to_owned(),
            allowed: false,
            patch_type: None,
            patch: None,
            status: Some(Status {
                message: Some(message.to_owned()),
                details: None,
                code,
            }),
            audit_annotations: None,
            warnings: None,
        }
    }

    /// The response as one line of JSON.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("AdmissionResponse is plain data and always serialises")
    }
}

/// Base64 of `diff(original, mutated)`, or `None` when they are equal.
fn encode_patch(original: &Value, mutated: &Value) -> Option<String> {
    let patch = json_patch::diff(original, mutated);
    if patch.0.is_empty() {
        return None;
    }
    let json = serde_json::to_string(&patch).expect("a JSON patch always serialises");
    Some(STANDARD.encode(json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn accepted() -> PolicyResponse {
        PolicyResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: None,
        }
    }

    fn decoded_patch(response: &AdmissionResponse) -> Value {
        let bytes = STANDARD.decode(response.patch.as_ref().unwrap()).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn response_accept_prints_null_annotations_and_warnings() {
        let response = AdmissionResponse::from_policy("u-1", Some(&json!({})), accepted());

        assert_eq!(
            response.to_json_line(),
            r#"{"uid":"u-1","allowed":true,"auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn response_has_no_patch_when_mutation_is_identical() {
        let object = json!({"metadata": {"labels": {"a": "1"}}});
        let policy = PolicyResponse {
            mutated_object: Some(object.clone()),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", Some(&object), policy);

        assert_eq!(response.patch, None);
        assert_eq!(response.patch_type, None);
    }

    #[test]
    fn response_patch_decodes_to_rfc6902_ops() {
        let object = json!({
            "metadata": {"labels": {"a": "1", "drop": "x"}},
            "spec": {"replicas": 1}
        });
        let mutated = json!({
            "metadata": {"labels": {"a": "1", "b": "2"}},
            "spec": {"replicas": 1}
        });
        let policy = PolicyResponse {
            mutated_object: Some(mutated),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", Some(&object), policy);

        assert_eq!(response.patch_type.as_deref(), Some("JSONPatch"));
        assert_eq!(
            decoded_patch(&response),
            json!([
                {"op": "add", "path": "/metadata/labels/b", "value": "2"},
                {"op": "remove", "path": "/metadata/labels/drop"}
            ])
        );
    }

    #[test]
    fn response_patch_is_standard_padded_base64() {
        let policy = PolicyResponse {
            mutated_object: Some(json!({"a": 1})),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", Some(&json!({})), policy);

        // [{"op":"add","path":"/a","value":1}]
        assert_eq!(
            response.patch.as_deref(),
            Some("W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d")
        );
        assert_eq!(
            response.to_json_line(),
            r#"{"uid":"u-1","allowed":true,"patchType":"JSONPatch","patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d","auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn response_status_only_carries_members_the_policy_set() {
        let policy = PolicyResponse {
            accepted: false,
            message: Some("denied".to_owned()),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", Some(&json!({})), policy);

        assert_eq!(
            response.to_json_line(),
            r#"{"uid":"u-1","allowed":false,"status":{"message":"denied"},"auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn response_passes_warnings_and_audit_annotations_through() {
        let policy = PolicyResponse {
            code: Some(403),
            audit_annotations: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
            warnings: Some(vec!["w1".to_owned(), "w2".to_owned()]),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", Some(&json!({})), policy);

        assert_eq!(
            response.to_json_line(),
            r#"{"uid":"u-1","allowed":true,"status":{"code":403},"auditAnnotations":{"k":"v"},"warnings":["w1","w2"]}"#
        );
    }

    #[test]
    fn response_rejects_mutation_of_null_object() {
        let policy = PolicyResponse {
            mutated_object: Some(json!({"a": 1})),
            ..accepted()
        };

        let response = AdmissionResponse::from_policy("u-1", None, policy);

        assert_eq!(
            response.to_json_line(),
            format!(
                r#"{{"uid":"u-1","allowed":false,"status":{{"message":"{MUTATION_OF_NULL_OBJECT}"}},"auditAnnotations":null,"warnings":null}}"#
            )
        );
    }

    #[test]
    fn response_internal_server_error_has_code_500() {
        let response = AdmissionResponse::internal_server_error("u-1", "Guest call failure: boom");

        assert_eq!(
            response.to_json_line(),
            r#"{"uid":"u-1","allowed":false,"status":{"message":"internal server error: Guest call failure: boom","code":500},"auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn policy_response_parses_sdk_output_with_nulls() {
        let policy: PolicyResponse = serde_json::from_str(
            r#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#,
        )
        .unwrap();

        assert_eq!(policy, accepted());
    }
}
