//! The admission request the host sends the policy: a bare AdmissionRequest
//! or the `request` of an AdmissionReview, checked for the fields kwctl's
//! typed `AdmissionRequest` needs, then sent as written (no round-trip).

use serde_json::{Map, Value};
use thiserror::Error;

use crate::host::response::{AdmissionResponse, PolicyResponse};

/// Why a document is not an AdmissionRequest kwctl would send.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RequestError {
    /// The request document is not a JSON object.
    #[error("cannot build AdmissionRequest object from given input: expected a JSON object")]
    NotObject,
    /// The document is a Kubernetes object, not a request about one.
    #[error(
        "cannot build AdmissionRequest object from given input: this is a {kind} object, not an \
         AdmissionRequest; `run` takes a request (uid, kind, resource, operation, userInfo, object), \
         as the API server sends it, or an AdmissionReview: wrap the object in one, or use \
         `policy-runner explain`, which takes a bare object"
    )]
    BareObject {
        /// The object's `kind`.
        kind: String,
    },
    /// A field kwctl's AdmissionRequest requires is absent or mistyped.
    #[error("cannot build AdmissionRequest object from given input: `{field}` must be {expected}")]
    Field {
        /// The camelCase field name.
        field: &'static str,
        /// What it must be, e.g. "a string".
        expected: &'static str,
    },
}

/// An AdmissionRequest ready to be sent to the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRequest {
    /// The request as written in the file.
    pub value: Value,
}

impl AdmissionRequest {
    /// Extracts the AdmissionRequest from a bare request or an AdmissionReview.
    pub fn from_document(document: Value) -> Result<AdmissionRequest, RequestError> {
        let Value::Object(mut top) = document else {
            return Err(RequestError::NotObject);
        };
        let request = match top.remove("request") {
            Some(Value::Object(request)) => request,
            Some(other) => {
                // not a review: `request` is some other field; keep it
                top.insert("request".to_owned(), other);
                top
            }
            None => top,
        };
        if let Some(kind) = bare_object_kind(&request) {
            return Err(RequestError::BareObject { kind });
        }
        check_fields(&request)?;
        Ok(AdmissionRequest {
            value: Value::Object(request),
        })
    }

    /// The request `uid`, copied into the response.
    pub fn uid(&self) -> &str {
        self.value["uid"].as_str().unwrap_or_default()
    }

    /// The `object` under admission; `None` when absent or null (DELETE).
    pub fn object(&self) -> Option<&Value> {
        self.value.get("object").filter(|object| !object.is_null())
    }

    /// The AdmissionResponse the host builds from the guest's answer.
    pub fn respond(&self, policy: PolicyResponse) -> AdmissionResponse {
        AdmissionResponse::from_policy(self.uid(), self.object(), policy)
    }
}

/// A field kwctl's AdmissionRequest requires: name, type check, type name.
type RequiredField = (&'static str, fn(&Value) -> bool, &'static str);

const REQUIRED_FIELDS: &[RequiredField] = &[
    ("uid", Value::is_string, "a string"),
    ("kind", Value::is_object, "an object"),
    ("resource", Value::is_object, "an object"),
    ("operation", Value::is_string, "a string"),
    ("userInfo", Value::is_object, "an object"),
];

/// The `kind` of a document that is a Kubernetes object rather than a
/// request: a string `apiVersion` and `kind`, a `metadata` object, and no
/// `uid`.
fn bare_object_kind(document: &Map<String, Value>) -> Option<String> {
    let is_object = document.get("apiVersion").is_some_and(Value::is_string)
        && document.get("metadata").is_some_and(Value::is_object)
        && !document.contains_key("uid");
    document
        .get("kind")
        .and_then(Value::as_str)
        .filter(|_| is_object)
        .map(str::to_owned)
}

fn check_fields(request: &Map<String, Value>) -> Result<(), RequestError> {
    for (field, has_type, expected) in REQUIRED_FIELDS {
        if !request.get(*field).is_some_and(has_type) {
            return Err(RequestError::Field { field, expected });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bare_request() -> Value {
        json!({
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "cluster.x-k8s.io", "version": "v1beta1", "kind": "MachineDeployment"},
            "resource": {"group": "cluster.x-k8s.io", "version": "v1beta1", "resource": "machinedeployments"},
            "operation": "CREATE",
            "userInfo": {"username": "admin"},
            "object": {"metadata": {"name": "md-0"}}
        })
    }

    #[test]
    fn request_bare_is_used_as_is() {
        let request = AdmissionRequest::from_document(bare_request()).unwrap();

        assert_eq!(request.value, bare_request());
        assert_eq!(request.uid(), "705ab4f5-6393-11e8-b7cc-42010a800002");
    }

    #[test]
    fn request_review_is_unwrapped() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": bare_request()
        });

        let request = AdmissionRequest::from_document(review).unwrap();

        assert_eq!(request.value, bare_request());
    }

    #[test]
    fn request_object_is_none_when_null() {
        let mut delete = bare_request();
        delete["operation"] = json!("DELETE");
        delete["object"] = Value::Null;

        let request = AdmissionRequest::from_document(delete).unwrap();

        assert_eq!(request.object(), None);
    }

    #[test]
    fn request_missing_uid_is_refused() {
        let mut no_uid = bare_request();
        no_uid.as_object_mut().unwrap().remove("uid");

        assert_eq!(
            AdmissionRequest::from_document(no_uid)
                .unwrap_err()
                .to_string(),
            "cannot build AdmissionRequest object from given input: `uid` must be a string"
        );
    }

    #[test]
    fn request_that_is_a_bare_object_gets_a_hint() {
        let machine_set = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                                 "metadata": {"name": "ms-0", "namespace": "default"}, "spec": {}});

        let err = AdmissionRequest::from_document(machine_set)
            .unwrap_err()
            .to_string();

        assert!(
            err.contains("this is a MachineSet object, not an AdmissionRequest"),
            "{err}"
        );
        assert!(err.contains("policy-runner explain"), "{err}");
    }

    #[test]
    fn request_review_without_request_object_is_refused() {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});

        assert_eq!(
            AdmissionRequest::from_document(review),
            Err(RequestError::Field {
                field: "uid",
                expected: "a string"
            })
        );
    }
}
