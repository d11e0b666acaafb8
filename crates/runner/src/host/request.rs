//! The admission request the host sends the policy: a bare AdmissionRequest
//! or the `request` of an AdmissionReview, checked for the fields kwctl's
//! typed `AdmissionRequest` needs, then sent as written (no round-trip); or
//! one built around a bare object, as the API server would (`--operation`).

use metadata_propagation_core::fields::type_name;
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::host::parents::ObjectKey;
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
         as the API server sends it, or an AdmissionReview. Add `--operation CREATE` (or \
         `--operation UPDATE --old-object FILE`) and `run` builds the request around the object; \
         `policy-runner explain` takes a bare object too"
    )]
    BareObject {
        /// The object's `kind`.
        kind: String,
    },
    /// Every field kwctl's AdmissionRequest requires that is absent or
    /// mistyped, in the request's field order.
    #[error("cannot build AdmissionRequest object from given input: {}", .0.join("; "))]
    Fields(Vec<String>),
    /// `--operation` was given with what is not one bare object.
    #[error("--operation builds a request around a bare object, but {0}")]
    NotBare(String),
}

/// The `uid` of a request built around a bare object.
pub const BUILT_UID: &str = "00000000-0000-0000-0000-000000000000";

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

    /// The request the API server sends for `operation` on `object` (and
    /// `old`, else on UPDATE the object itself), with uid [`BUILT_UID`] and
    /// user policy-runner; and what it built, in words.
    pub fn around_object(
        operation: &str,
        object: Value,
        old: Option<Value>,
    ) -> Result<(AdmissionRequest, String), RequestError> {
        if object.get("request").is_some_and(Value::is_object) || object.get("object").is_some() {
            let already = "this is already an AdmissionRequest: leave --operation out";
            return Err(RequestError::NotBare(already.to_owned()));
        }
        let key_of = |object: &Value, what: &str| {
            ObjectKey::of_object(object)
                .map_err(|problem| RequestError::NotBare(format!("the {what} has {problem}")))
        };
        let key = key_of(&object, "object")?;
        let old_key = old
            .as_ref()
            .map(|old| key_of(old, "old object"))
            .transpose()?;
        if let Some(old) = old_key.filter(|old| *old != key) {
            return Err(RequestError::NotBare(format!(
                "the old object is {old}, not {key}"
            )));
        }
        let (group, version) = (key.api_version.rsplit_once('/')).unwrap_or(("", &key.api_version));
        let resource = guess_resource(&key.kind);
        let old = old.or_else(|| (operation == "UPDATE").then(|| object.clone()));
        let mut value = json!({
            "uid": BUILT_UID,
            "kind": {"group": group, "version": version, "kind": key.kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "name": key.name, "namespace": key.namespace, "operation": operation,
            "userInfo": {"username": "policy-runner", "groups": ["system:authenticated"]},
            "object": object, "oldObject": old, "dryRun": false,
        });
        if let Value::Object(fields) = &mut value {
            fields.retain(|_, field| !field.is_null()); // cluster-scoped, CREATE
        }
        let built = format!(
            "{operation} of {key}, resource {resource}, uid {BUILT_UID}, userInfo policy-runner"
        );
        Ok((AdmissionRequest { value }, built))
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

/// Every required field that is absent or mistyped, at once.
fn check_fields(request: &Map<String, Value>) -> Result<(), RequestError> {
    let problems: Vec<String> = (REQUIRED_FIELDS.iter())
        .filter_map(|&(field, has_type, expected)| match request.get(field) {
            Some(value) if has_type(value) => None,
            Some(value) => Some(format!(
                "`{field}` must be {expected}, not {}",
                type_name(value)
            )),
            None => Some(format!("`{field}` is missing (it must be {expected})")),
        })
        .collect();
    (problems.is_empty().then_some(())).ok_or(RequestError::Fields(problems))
}

/// The resource Kubernetes guesses for a kind (apimachinery's
/// `UnsafeGuessKindToResource`): lowercased, plural by English rules.
fn guess_resource(kind: &str) -> String {
    let singular = kind.to_lowercase();
    match singular.strip_suffix('y') {
        _ if singular.ends_with('s') => format!("{singular}es"),
        Some(stem) => format!("{stem}ies"),
        None => format!("{singular}s"),
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
            "cannot build AdmissionRequest object from given input: `uid` is missing (it must be \
             a string)"
        );
    }

    #[test]
    fn request_every_missing_or_wrong_field_is_named_at_once() {
        let mut request = bare_request();
        let fields = request.as_object_mut().unwrap();
        fields.remove("uid");
        fields.insert("kind".to_owned(), json!("MachineDeployment"));
        fields.remove("resource");
        fields.insert("userInfo".to_owned(), json!(["admin"]));

        assert_eq!(
            AdmissionRequest::from_document(request)
                .unwrap_err()
                .to_string(),
            "cannot build AdmissionRequest object from given input: `uid` is missing (it must be \
             a string); `kind` must be an object, not a string; `resource` is missing (it must \
             be an object); `userInfo` must be an object, not an array"
        );
    }

    fn machine_set(name: &str, team: &str) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
               "metadata": {"name": name, "namespace": "default", "labels": {"team": team}},
               "spec": {"clusterName": "c"}})
    }

    #[test]
    fn around_object_builds_a_create_as_the_api_server_sends_it() {
        let (request, built) =
            AdmissionRequest::around_object("CREATE", machine_set("ms-0", "a"), None).unwrap();

        assert_eq!(
            request.value,
            json!({
                "uid": BUILT_UID,
                "kind": {"group": "cluster.x-k8s.io", "version": "v1beta2", "kind": "MachineSet"},
                "resource": {"group": "cluster.x-k8s.io", "version": "v1beta2", "resource": "machinesets"},
                "name": "ms-0",
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "policy-runner", "groups": ["system:authenticated"]},
                "object": machine_set("ms-0", "a"),
                "dryRun": false
            })
        );
        // what `run` checks a request file for, it holds
        assert_eq!(
            AdmissionRequest::from_document(request.value.clone()),
            Ok(request.clone())
        );
        assert_eq!(
            built,
            "CREATE of cluster.x-k8s.io/v1beta2/MachineSet default/ms-0, resource machinesets, \
             uid 00000000-0000-0000-0000-000000000000, userInfo policy-runner"
        );
    }

    #[test]
    fn around_object_update_carries_the_old_object_or_the_object_itself() {
        let old = machine_set("ms-0", "old");
        let (request, _) =
            AdmissionRequest::around_object("UPDATE", machine_set("ms-0", "a"), Some(old.clone()))
                .unwrap();
        assert_eq!(request.value["oldObject"], old);
        assert_eq!(request.value["operation"], "UPDATE");

        let (unchanged, _) =
            AdmissionRequest::around_object("UPDATE", machine_set("ms-0", "a"), None).unwrap();
        assert_eq!(unchanged.value["oldObject"], machine_set("ms-0", "a"));

        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}});
        let (cluster_scoped, built) =
            AdmissionRequest::around_object("CREATE", namespace, None).unwrap();
        assert_eq!(cluster_scoped.value.get("namespace"), None);
        assert_eq!(cluster_scoped.value["kind"]["group"], "");
        assert!(
            built.starts_with("CREATE of v1/Namespace n (cluster-scoped), resource namespaces")
        );
    }

    #[test]
    fn around_object_refuses_another_old_object_a_request_and_a_nameless_object() {
        let refusal = |object: Value, old: Option<Value>| {
            AdmissionRequest::around_object("UPDATE", object, old)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refusal(machine_set("ms-0", "a"), Some(machine_set("ms-1", "a"))),
            "--operation builds a request around a bare object, but the old object is \
             cluster.x-k8s.io/v1beta2/MachineSet default/ms-1, not \
             cluster.x-k8s.io/v1beta2/MachineSet default/ms-0"
        );
        let already = "--operation builds a request around a bare object, but this is already \
                       an AdmissionRequest: leave --operation out";
        assert_eq!(refusal(bare_request(), None), already);
        let review = json!({"kind": "AdmissionReview", "request": bare_request()});
        assert_eq!(refusal(review, None), already);
        let nameless = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert_eq!(
            refusal(machine_set("ms-0", "a"), Some(nameless)),
            "--operation builds a request around a bare object, but the old object has no \
             `metadata.name`"
        );
    }

    #[test]
    fn guess_resource_follows_kubernetes() {
        assert_eq!(guess_resource("MachineSet"), "machinesets");
        assert_eq!(
            guess_resource("KubeadmControlPlane"),
            "kubeadmcontrolplanes"
        );
        assert_eq!(guess_resource("NetworkPolicy"), "networkpolicies");
        assert_eq!(guess_resource("Ingress"), "ingresses");
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
        assert!(err.contains("--operation CREATE"), "{err}");
    }

    #[test]
    fn request_review_without_request_object_is_refused() {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});

        let Err(RequestError::Fields(problems)) = AdmissionRequest::from_document(review) else {
            panic!("expected field problems");
        };
        assert_eq!(
            problems,
            [
                "`uid` is missing (it must be a string)",
                "`kind` must be an object, not a string",
                "`resource` is missing (it must be an object)",
                "`operation` is missing (it must be a string)",
                "`userInfo` is missing (it must be an object)"
            ]
        );
    }
}
