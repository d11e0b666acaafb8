//! Reads the admission request and the policy settings given on the command line.
//!
//! The request file holds either a bare AdmissionRequest or a whole
//! AdmissionReview; a top-level `request` object marks a review. kwctl then
//! builds its typed `AdmissionRequest`, which needs `uid`, `kind`,
//! `resource`, `operation` and `userInfo`; the same fields are checked here,
//! but the request reaches the policy as it was written (no typed round-trip).
//!
//! Settings are a YAML or JSON map; none means `{}`.

use serde_json::{Map, Value};
use thiserror::Error;

/// Why the request or the settings could not be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum InputError {
    /// The request document is not a JSON object.
    #[error("cannot build AdmissionRequest object from given input: expected a JSON object")]
    RequestNotObject,
    /// A field kwctl's AdmissionRequest requires is absent or mistyped.
    #[error("cannot build AdmissionRequest object from given input: `{field}` must be {expected}")]
    RequestField {
        /// The camelCase field name.
        field: &'static str,
        /// What it must be, e.g. "a string".
        expected: &'static str,
    },
    /// The settings text is neither YAML nor JSON.
    #[error("settings are not valid YAML or JSON: {0}")]
    SettingsSyntax(String),
    /// The settings are valid YAML but not a map.
    #[error("settings must be a map, got {0}")]
    SettingsNotMap(&'static str),
}

/// An AdmissionRequest ready to be sent to the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRequest {
    /// The request as written in the file.
    pub value: Value,
}

impl AdmissionRequest {
    /// Extracts the AdmissionRequest from a bare request or an AdmissionReview.
    pub fn from_document(document: Value) -> Result<AdmissionRequest, InputError> {
        let Value::Object(mut top) = document else {
            return Err(InputError::RequestNotObject);
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

fn check_fields(request: &Map<String, Value>) -> Result<(), InputError> {
    for (field, has_type, expected) in REQUIRED_FIELDS {
        if !request.get(*field).is_some_and(has_type) {
            return Err(InputError::RequestField { field, expected });
        }
    }
    Ok(())
}

/// Parses settings given as YAML or JSON; an empty or `null` document is `{}`.
pub fn settings_from_text(text: &str) -> Result<Value, InputError> {
    let value: Value =
        serde_norway::from_str(text).map_err(|e| InputError::SettingsSyntax(e.to_string()))?;
    match value {
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Object(_) => Ok(value),
        Value::Bool(_) => Err(InputError::SettingsNotMap("a boolean")),
        Value::Number(_) => Err(InputError::SettingsNotMap("a number")),
        Value::String(_) => Err(InputError::SettingsNotMap("a string")),
        Value::Array(_) => Err(InputError::SettingsNotMap("a list")),
    }
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
    fn request_review_without_request_object_is_refused() {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});

        assert_eq!(
            AdmissionRequest::from_document(review),
            Err(InputError::RequestField {
                field: "uid",
                expected: "a string"
            })
        );
    }

    #[test]
    fn settings_empty_document_is_empty_map() {
        assert_eq!(settings_from_text(""), Ok(json!({})));
    }

    #[test]
    fn settings_yaml_and_json_parse_to_the_same_value() {
        let yaml = "propagate:\n  - team\nenabled: true\n";
        let json = r#"{"propagate": ["team"], "enabled": true}"#;

        assert_eq!(settings_from_text(yaml), settings_from_text(json));
        assert_eq!(
            settings_from_text(yaml),
            Ok(json!({"propagate": ["team"], "enabled": true}))
        );
    }

    #[test]
    fn settings_list_is_refused() {
        assert_eq!(
            settings_from_text("- a\n").unwrap_err().to_string(),
            "settings must be a map, got a list"
        );
    }
}
