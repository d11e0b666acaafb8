//! Reading parent objects from the cluster, behind a trait.
//!
//! The decision logic only ever sees [`Lookup`]: on wasm it is answered by
//! Kubewarden's `kubernetes/get_resource` host capability ([`HostLookup`]),
//! in tests and tools by an in-memory map ([`MapLookup`]). No global test
//! doubles, no `#[cfg(test)]` swaps.

use crate::projection::Projection;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

/// The identity of an object to read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `group/version` (e.g. `cluster.x-k8s.io/v1beta2`).
    pub api_version: String,
    /// Kind (e.g. `MachineDeployment`).
    pub kind: String,
    /// Object name.
    pub name: String,
    /// Namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(
                f,
                "{} {}/{} ({})",
                self.kind, ns, self.name, self.api_version
            ),
            None => write!(f, "{} {} ({})", self.kind, self.name, self.api_version),
        }
    }
}

/// Why a look-up produced no object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The object does not exist (yet, or any more).
    NotFound,
    /// The host could not answer: RBAC, API server, not allowed by
    /// `contextAwareResources`, undecodable payload. Worth a retry.
    Failed(String),
}

/// Reads objects from the cluster.
pub trait Lookup {
    /// The object named by `object`, as JSON, holding only the paths of
    /// `projection` (the rest is never decoded).
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError>;
}

/// The policy-server reports NotFound only as text: "Cannot find
/// {apiVersion}/{kind} named '{name}' inside of namespace '{ns:?}'", and a
/// kind the API server does not serve as "Cannot find resource ...". Both mean
/// the parent does not exist. Every other host error is a real failure.
pub const NOT_FOUND_PREFIX: &str = "Cannot find ";

/// Prefix the waPC guest puts before the host's own error text.
const HOST_ERROR_PREFIX: &str = "Host error: ";
/// Prefix policy-evaluator puts before every failed callback's text.
const CALLBACK_FAILURE_PREFIX: &str = "Callback evaluation failure: ";

/// Classifies the text of a failed host call.
pub fn classify_host_error(text: &str) -> LookupError {
    let host_text = text
        .find(HOST_ERROR_PREFIX)
        .map_or(text, |at| &text[at + HOST_ERROR_PREFIX.len()..]);
    let host_text = host_text
        .strip_prefix(CALLBACK_FAILURE_PREFIX)
        .unwrap_or(host_text);
    if host_text.starts_with(NOT_FOUND_PREFIX) {
        LookupError::NotFound
    } else {
        LookupError::Failed(host_text.to_owned())
    }
}

/// [`Lookup`] through Kubewarden's `kubernetes/get_resource` host capability.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLookup;

impl Lookup for HostLookup {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        use kubewarden_policy_sdk::host_capabilities::kubernetes::GetResourceRequest;
        use kubewarden_policy_sdk::wapc_guest::host_call;
        let request = GetResourceRequest {
            api_version: object.api_version.clone(),
            kind: object.kind.clone(),
            name: object.name.clone(),
            namespace: object.namespace.clone(),
            // The 5 s host cache is fine: parents change rarely, and a stale
            // parent is corrected by the next write of the child.
            disable_cache: false,
            field_masks: None,
        };
        // The SDK's get_resource would decode the whole object into a Value;
        // the raw call lets the projection skip what the rules never read.
        let message = serde_json::to_vec(&request)
            .map_err(|e| LookupError::Failed(format!("cannot encode the look-up: {e}")))?;
        let answer = host_call("kubewarden", "kubernetes", "get_resource", &message)
            .map_err(|e| classify_host_error(&e.to_string()))?;
        projection
            .decode(&answer)
            .map_err(|e| LookupError::Failed(format!("cannot decode {object}: {e}")))
    }
}

/// [`Lookup`] answered from memory; records every request so tests can
/// assert how many look-ups an evaluation made. Answers go through the
/// projection like the host's, so a rule reading a path it did not project
/// fails in tests too.
#[derive(Debug, Default)]
pub struct MapLookup {
    answers: BTreeMap<ObjectRef, Result<Value, LookupError>>,
    requests: RefCell<Vec<ObjectRef>>,
}

impl MapLookup {
    /// An empty lookup: every object is NotFound.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an object, keyed by its own apiVersion, kind, name and namespace.
    pub fn with_object(mut self, object: Value) -> Self {
        let key = ObjectRef {
            api_version: str_at(&object, "apiVersion"),
            kind: str_at(&object, "kind"),
            name: object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_owned),
        };
        self.answers.insert(key, Ok(object));
        self
    }

    /// Makes the look-up of `object` fail with `error`.
    pub fn with_error(mut self, object: ObjectRef, error: LookupError) -> Self {
        self.answers.insert(object, Err(error));
        self
    }

    /// Every request made so far, in order.
    pub fn requests(&self) -> Vec<ObjectRef> {
        self.requests.borrow().clone()
    }
}

fn str_at(object: &Value, key: &str) -> String {
    object[key].as_str().unwrap_or_default().to_owned()
}

impl Lookup for MapLookup {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        self.requests.borrow_mut().push(object.clone());
        let found = self.answers.get(object).cloned();
        let whole = found.unwrap_or(Err(LookupError::NotFound))?;
        let bytes = serde_json::to_vec(&whole).map_err(|e| LookupError::Failed(e.to_string()))?;
        projection
            .decode(&bytes)
            .map_err(|e| LookupError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::object_missing(
        "error invoking host capability kubernetes.get_resource: Host error: Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-9' inside of namespace 'Some(\"default\")'",
        LookupError::NotFound
    )]
    #[case::wrapped_by_policy_evaluator(
        "error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: Cannot find cluster.x-k8s.io/v1beta1/MachineSet named 'ms' inside of namespace 'Some(\"default\")'",
        LookupError::NotFound
    )]
    #[case::wrapped_failure(
        "Host error: Callback evaluation failure: Replay error: unexpected request",
        LookupError::Failed("Replay error: unexpected request".into())
    )]
    #[case::kind_not_served(
        "Host error: Cannot find resource cluster.x-k8s.io/v1beta2/MachineDeployment",
        LookupError::NotFound
    )]
    #[case::forbidden(
        "error invoking host capability kubernetes.get_resource: Host error: Policy has not been granted access to Kubernetes cluster.x-k8s.io/v1beta1/Cluster resources. The violation has been reported.",
        LookupError::Failed("Policy has not been granted access to Kubernetes cluster.x-k8s.io/v1beta1/Cluster resources. The violation has been reported.".into())
    )]
    #[case::no_prefix("connection refused", LookupError::Failed("connection refused".into()))]
    fn classify_host_error_by_text(#[case] text: &str, #[case] expected: LookupError) {
        assert_eq!(classify_host_error(text), expected);
    }

    #[test]
    fn map_lookup_records_requests_and_answers_not_found() {
        let lookup = MapLookup::new().with_object(serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
            "metadata": {"name": "ms", "namespace": "default"}}));
        let hit = ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta1".into(),
            kind: "MachineSet".into(),
            name: "ms".into(),
            namespace: Some("default".into()),
        };
        let miss = ObjectRef {
            name: "other".into(),
            ..hit.clone()
        };
        let all = Projection::of(&[&[]]);
        assert!(lookup.get(&hit, &all).is_ok());
        assert_eq!(lookup.get(&miss, &all), Err(LookupError::NotFound));
        assert_eq!(lookup.requests(), [hit, miss]);
    }
}
