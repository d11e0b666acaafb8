//! Reading parent objects from the cluster, behind a trait.
//!
//! The decision logic only ever sees [`Lookup`]: on wasm it is answered by
//! Kubewarden's `kubernetes/get_resource` host capability ([`HostLookup`]),
//! in tests and tools by an in-memory map ([`MapLookup`]). No global test
//! doubles, no `#[cfg(test)]` swaps.

use crate::projection::Projection;
use kubewarden_policy_sdk::host_capabilities::kubernetes::GetResourceRequest;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
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

impl ObjectRef {
    /// The identity `object` is found by: its own apiVersion, kind, name and
    /// namespace (absent fields read as empty; an empty namespace is kept
    /// as written).
    pub fn of(object: &Value) -> Self {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        ObjectRef {
            api_version: text(&object["apiVersion"]),
            kind: text(&object["kind"]),
            name: text(&object["metadata"]["name"]),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_owned),
        }
    }
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

/// Longest host error text a rejection quotes; a longer first line is cut.
pub const MAX_HOST_ERROR_CHARS: usize = 300;

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
        LookupError::Failed(readable_host_error(host_text))
    }
}

/// What a user needs of a host error: its first line, without the Rust
/// debug dump kube-rs appends to it, plus the HTTP status code that dump
/// carries. policy-server passes kube-rs's whole error (about 700
/// characters: `ApiError: <message>: <Reason> (Status { … code: 503, … })`
/// and a `Caused by:` chain); the reason and the code are what tell a
/// transient failure (503) from a missing grant (403).
pub fn readable_host_error(text: &str) -> String {
    let first_line = text.lines().next().unwrap_or_default().trim_end();
    let (summary, dump) = match debug_dump_start(first_line) {
        Some(at) => (&first_line[..at], &first_line[at..]),
        None => (first_line, ""),
    };
    let mut readable = match summary.char_indices().nth(MAX_HOST_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &summary[..cut]),
        None => summary.to_owned(),
    };
    if let Some(code) = http_code(dump) {
        readable.push_str(&format!(" (HTTP {code})"));
    }
    readable
}

/// Where ` (Name { …` starts: the `{:?}` of a Rust struct (kube-rs's
/// `Status` or `ErrorResponse`) appended to a message.
fn debug_dump_start(line: &str) -> Option<usize> {
    line.match_indices(" (").map(|(at, _)| at).find(|&at| {
        let rest = &line[at + 2..];
        let name_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        name_len > 0
            && rest.as_bytes()[0].is_ascii_uppercase()
            && rest[name_len..].starts_with(" {")
    })
}

/// The `code: NNN` field of a debug dump, when it is an HTTP status.
fn http_code(dump: &str) -> Option<u16> {
    dump.match_indices(", code: ")
        .chain(dump.match_indices("{ code: "))
        .filter_map(|(at, field)| {
            let digits = &dump[at + field.len()..];
            let end = digits
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(digits.len());
            digits[..end].parse().ok()
        })
        .find(|code| (100..600).contains(code))
}

/// [`Lookup`] through Kubewarden's `kubernetes/get_resource` host capability.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLookup;

/// The `kubernetes/get_resource` request for `object`, asking for exactly
/// the paths of `projection`: the masks let the host prune the parent
/// before it crosses into the guest.
pub fn get_resource_request(object: &ObjectRef, projection: &Projection) -> GetResourceRequest {
    GetResourceRequest {
        api_version: object.api_version.clone(),
        kind: object.kind.clone(),
        name: object.name.clone(),
        namespace: object.namespace.clone(),
        // The 5 s host cache is fine: parents change rarely, and a stale
        // parent is corrected by the next write of the child.
        disable_cache: false,
        field_masks: Some(projection.field_masks()),
    }
}

impl Lookup for HostLookup {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        use kubewarden_policy_sdk::wapc_guest::host_call;
        let request = get_resource_request(object, projection);
        // The SDK's get_resource would decode the answer into a Value; the
        // projection skips whatever a host that ignores the masks sends.
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
    requests: RefCell<Vec<(ObjectRef, BTreeSet<String>)>>,
}

impl MapLookup {
    /// An empty lookup: every object is NotFound.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an object, keyed by its own apiVersion, kind, name and namespace.
    pub fn with_object(mut self, object: Value) -> Self {
        self.answers.insert(ObjectRef::of(&object), Ok(object));
        self
    }

    /// Makes the look-up of `object` fail with `error`.
    pub fn with_error(mut self, object: ObjectRef, error: LookupError) -> Self {
        self.answers.insert(object, Err(error));
        self
    }

    /// Every request made so far, in order.
    pub fn requests(&self) -> Vec<ObjectRef> {
        self.requests
            .borrow()
            .iter()
            .map(|(r, _)| r.clone())
            .collect()
    }

    /// The field masks of every request made so far, in order: what
    /// [`HostLookup`] would send.
    pub fn field_masks(&self) -> Vec<BTreeSet<String>> {
        self.requests
            .borrow()
            .iter()
            .map(|(_, m)| m.clone())
            .collect()
    }
}

impl Lookup for MapLookup {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        self.requests
            .borrow_mut()
            .push((object.clone(), projection.field_masks()));
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
    #[case::kube_rs_503_as_policy_server_sends_it(
        POLICY_SERVER_503,
        LookupError::Failed("ApiError: the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable (HTTP 503)".into())
    )]
    #[case::kube_rs_403_error_response(
        "Host error: Callback evaluation failure: ApiError: machinesets.cluster.x-k8s.io \"ms-1\" is forbidden: User \"system:serviceaccount:kubewarden:policy-server-default\" cannot get resource \"machinesets\" in API group \"cluster.x-k8s.io\" in the namespace \"default\": Forbidden (ErrorResponse { status: \"Failure\", message: \"machinesets.cluster.x-k8s.io \\\"ms-1\\\" is forbidden\", reason: \"Forbidden\", code: 403 })\n\nCaused by:\n    machinesets.cluster.x-k8s.io \"ms-1\" is forbidden: Forbidden",
        LookupError::Failed("ApiError: machinesets.cluster.x-k8s.io \"ms-1\" is forbidden: User \"system:serviceaccount:kubewarden:policy-server-default\" cannot get resource \"machinesets\" in API group \"cluster.x-k8s.io\" in the namespace \"default\": Forbidden (HTTP 403)".into())
    )]
    fn classify_host_error_by_text(#[case] text: &str, #[case] expected: LookupError) {
        assert_eq!(classify_host_error(text), expected);
    }

    /// The host error text policy-server 1.35 gives the guest when the API
    /// server answers 503 for a MachineDeployment, as the waPC guest
    /// receives it (observed on a real policy-server; README, "Cluster API:
    /// what flows where", on look-up failures). policy-evaluator writes
    /// `Callback evaluation failure: {e:?}` (`send_request_and_wait_for_response`
    /// in kubewarden-controller
    /// `crates/policy-evaluator/src/runtimes/wapc/callback.rs`), so the rest
    /// is kube-rs's error as anyhow debug-prints it, `Caused by:` chain
    /// included.
    const POLICY_SERVER_503: &str = "error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: ApiError: the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable (Status { status: Some(Failure), code: 503, message: \"the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io)\", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: \"ServiceUnavailable\", details: Some(StatusDetails { name: \"my-cluster-md-0\", group: \"cluster.x-k8s.io\", kind: \"machinedeployments\", uid: \"\", causes: [], retry_after_seconds: 0 }) })\n\nCaused by:\n    the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable";

    #[test]
    fn readable_host_error_keeps_plain_messages_and_cuts_long_ones() {
        assert_eq!(
            readable_host_error("Replay error: unexpected request (Was expecting x)"),
            "Replay error: unexpected request (Was expecting x)"
        );
        let long = "x".repeat(MAX_HOST_ERROR_CHARS + 50);
        let cut = readable_host_error(&long);
        assert_eq!(cut.chars().count(), MAX_HOST_ERROR_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(readable_host_error(""), "");
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
