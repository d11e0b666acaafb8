//! The AdmissionReview in and out of `POST /validate/<id>`, and what
//! policy-server does to a policy's verdict before answering
//! (policy-evaluator `admission_response_handler.rs`, applied in this
//! order): monitor mode accepts without a patch, a policy not allowed to
//! mutate that returns a patch is rejected, and a custom `message`
//! replaces a rejection's message, the policy's own kept as a cause.

use serde::Serialize;
use serde_json::Value;

use crate::commands::serve::policies::{PolicyEntry, PolicyMode};
use crate::host::request::AdmissionRequest;
use crate::host::response::{AdmissionResponse, Status, StatusCause, StatusDetails};

/// A request body the server refuses before any policy sees it: the HTTP
/// status and message axum's JSON extractor gives policy-server.
#[derive(Debug, PartialEq, Eq)]
pub struct BadReview {
    /// 400 (not JSON) or 422 (not an AdmissionReview with a request).
    pub status: u16,
    /// What is wrong.
    pub message: String,
}

/// The AdmissionRequest of an admission.k8s.io/v1 AdmissionReview body.
pub fn parse(body: &[u8]) -> Result<AdmissionRequest, BadReview> {
    let document: Value = serde_json::from_slice(body).map_err(|e| BadReview {
        status: 400,
        message: format!("Failed to parse the request body as JSON: {e}"),
    })?;
    let unprocessable = |problem: String| BadReview {
        status: 422,
        message: format!("Failed to deserialize the JSON body into the target type: {problem}"),
    };
    match document.get("request") {
        Some(request @ Value::Object(_)) => AdmissionRequest::from_document(request.clone())
            .map_err(|e| unprocessable(format!("request: {e}"))),
        Some(_) => Err(unprocessable("`request` must be an object".to_owned())),
        None => Err(unprocessable("missing field `request`".to_owned())),
    }
}

/// The answer's body: an AdmissionReview around `response`, in
/// policy-server's field order.
pub fn review_json(response: &AdmissionResponse) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Review<'a> {
        kind: &'static str,
        api_version: &'static str,
        response: &'a AdmissionResponse,
    }
    let review = Review {
        kind: "AdmissionReview",
        api_version: "admission.k8s.io/v1",
        response,
    };
    serde_json::to_vec(&review).expect("an AdmissionReview always serialises")
}

/// policy-server's error body (`ApiError`): `{"message", "status"}`.
pub fn error_json(status: u16, message: &str) -> Vec<u8> {
    let error = serde_json::json!({"message": message, "status": status});
    serde_json::to_vec(&error).expect("JSON values always serialise")
}

/// policy-evaluator's rejection of a patch from a policy that may not
/// mutate (`apply_mutation_constraint`).
pub fn not_allowed_to_mutate(id: &str) -> String {
    format!(
        "Request rejected by policy {id}. The policy attempted to mutate the request, but it is \
         currently configured to not allow mutations."
    )
}

/// What policy-server answers for policy `id` (configured by `entry`)
/// whose evaluation gave `response`.
pub fn shape(id: &str, entry: &PolicyEntry, response: AdmissionResponse) -> AdmissionResponse {
    let response = match entry.policy_mode {
        PolicyMode::Monitor => AdmissionResponse {
            allowed: true,
            patch_type: None,
            patch: None,
            status: None,
            ..response
        },
        PolicyMode::Protect if !entry.allowed_to_mutate && response.patch.is_some() => {
            AdmissionResponse {
                allowed: false,
                patch_type: None,
                patch: None,
                status: Some(Status {
                    message: Some(not_allowed_to_mutate(id)),
                    details: None,
                    code: None,
                }),
                ..response
            }
        }
        PolicyMode::Protect => response,
    };
    match (&entry.message, response.allowed) {
        (Some(custom), false) => with_custom_message(response, custom),
        _ => response,
    }
}

/// `apply_custom_rejection_message`: `custom` becomes the message, the
/// policy's own (`""` when it gave none) is appended to the causes, the
/// code is kept.
fn with_custom_message(response: AdmissionResponse, custom: &str) -> AdmissionResponse {
    let status = response.status.clone().unwrap_or(Status {
        message: None,
        details: None,
        code: None,
    });
    let mut details = status.details.unwrap_or_default();
    details.causes.push(StatusCause {
        message: Some(status.message.unwrap_or_default()),
        ..StatusCause::default()
    });
    AdmissionResponse {
        status: Some(Status {
            message: Some(custom.to_owned()),
            details: Some(StatusDetails {
                causes: details.causes,
            }),
            code: status.code,
        }),
        ..response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    fn entry(mode: PolicyMode, allowed_to_mutate: bool, message: Option<&str>) -> PolicyEntry {
        PolicyEntry {
            module: PathBuf::from("/p.wasm"),
            policy_mode: mode,
            allowed_to_mutate,
            settings: json!({}),
            context_aware_resources: BTreeSet::new(),
            timeout_eval_seconds: None,
            message: message.map(str::to_owned),
            host_capabilities: Vec::new(),
        }
    }

    fn response(allowed: bool, patch: bool, message: Option<&str>) -> AdmissionResponse {
        AdmissionResponse {
            uid: "u-1".to_owned(),
            allowed,
            patch_type: patch.then(|| "JSONPatch".to_owned()),
            patch: patch.then(|| "W10=".to_owned()),
            status: message.map(|m| Status {
                message: Some(m.to_owned()),
                details: None,
                code: Some(403),
            }),
            audit_annotations: None,
            warnings: Some(vec!["w".to_owned()]),
        }
    }

    fn shaped(entry: &PolicyEntry, response: AdmissionResponse) -> Value {
        serde_json::to_value(shape("p-1", entry, response)).unwrap()
    }

    #[test]
    fn protect_passes_the_verdict_and_an_allowed_patch_through() {
        let mutating = entry(PolicyMode::Protect, true, None);
        let answer = response(true, true, None);
        assert_eq!(shape("p-1", &mutating, answer.clone()), answer);
        let rejected = response(false, false, Some("no"));
        assert_eq!(shape("p-1", &mutating, rejected.clone()), rejected);
    }

    #[test]
    fn monitor_always_allows_without_patch_or_status() {
        let monitor = entry(PolicyMode::Monitor, false, Some("custom"));
        assert_eq!(
            shaped(&monitor, response(false, true, Some("no"))),
            json!({"uid": "u-1", "allowed": true, "auditAnnotations": null, "warnings": ["w"]})
        );
    }

    #[test]
    fn a_patch_from_a_policy_not_allowed_to_mutate_is_rejected() {
        let validating = entry(PolicyMode::Protect, false, None);
        assert_eq!(
            shaped(&validating, response(true, true, None)),
            json!({"uid": "u-1", "allowed": false,
                   "status": {"message": "Request rejected by policy p-1. The policy attempted to \
                               mutate the request, but it is currently configured to not allow \
                               mutations."},
                   "auditAnnotations": null, "warnings": ["w"]})
        );
        // no patch, nothing to refuse
        let answer = response(true, false, None);
        assert_eq!(shape("p-1", &validating, answer.clone()), answer);
    }

    #[test]
    fn a_custom_message_replaces_a_rejections_and_keeps_it_as_a_cause() {
        let custom = entry(PolicyMode::Protect, true, Some("ask the platform team"));
        assert_eq!(
            shaped(&custom, response(false, false, Some("label missing")))["status"],
            json!({"message": "ask the platform team",
                   "details": {"causes": [{"reason": null, "message": "label missing", "field": null}]},
                   "code": 403})
        );
        let allowed = response(true, false, None);
        assert_eq!(shape("p-1", &custom, allowed.clone()), allowed);
        // the mutation refusal is replaced too, as it comes first
        let validating = entry(PolicyMode::Protect, false, Some("custom"));
        let status = &shaped(&validating, response(true, true, None))["status"];
        assert_eq!(status["message"], "custom");
        assert_eq!(
            status["details"]["causes"][0]["message"],
            not_allowed_to_mutate("p-1")
        );
    }

    #[test]
    fn a_review_is_parsed_and_answered_in_admission_v1_shape() {
        let request = json!({"uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                             "resource": {"group": "", "version": "v1", "resource": "pods"},
                             "operation": "CREATE", "userInfo": {"username": "u"},
                             "object": {"metadata": {"name": "p"}}});
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "request": request});
        let parsed = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(parsed.value, request);

        let answer = review_json(&response(false, false, Some("no")));
        assert_eq!(
            String::from_utf8(answer).unwrap(),
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":false,"status":{"message":"no","code":403},"auditAnnotations":null,"warnings":["w"]}}"#
        );
    }

    #[test]
    fn bodies_that_are_not_reviews_are_refused_as_axum_refuses_them() {
        let bad = parse(b"{not json").unwrap_err();
        assert_eq!(bad.status, 400);
        assert!(
            bad.message
                .starts_with("Failed to parse the request body as JSON: "),
            "{}",
            bad.message
        );
        let bad = parse(br#"{"kind": "AdmissionReview"}"#).unwrap_err();
        assert_eq!(
            bad,
            BadReview {
                status: 422,
                message: "Failed to deserialize the JSON body into the target type: missing \
                          field `request`"
                    .to_owned()
            }
        );
        let bad = parse(br#"{"request": {"uid": "u"}}"#).unwrap_err();
        assert_eq!(bad.status, 422);
        assert!(bad.message.contains("`kind` is missing"), "{}", bad.message);
        assert_eq!(
            String::from_utf8(error_json(404, "unknown policy: x")).unwrap(),
            r#"{"message":"unknown policy: x","status":404}"#
        );
    }
}
