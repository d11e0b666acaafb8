//! Reading parent objects from the cluster the wasm module runs against:
//! [`HostLookup`] answers the core's [`Lookup`] with Kubewarden's
//! `kubernetes/get_resource` host capability, asking for only the paths the
//! core's [`Projection`] reads, and classifies what a failed host call
//! says ([`classify_host_error`]). The one place the policy calls the host.

#![forbid(unsafe_code)]

use kubewarden_policy_sdk::host_capabilities::kubernetes::GetResourceRequest;
use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use serde_json::Value;

/// [`Lookup`] through Kubewarden's `kubernetes/get_resource` host capability.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLookup;

/// The `kubernetes/get_resource` request for `object`, asking for exactly
/// the paths of `projection`: the masks let the host prune the parent
/// before it crosses into the guest.
pub fn get_resource_request(
    object: &ObjectRef,
    projection: &Projection<'static>,
) -> GetResourceRequest {
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
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
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

/// The policy-server reports NotFound only as text: "Cannot find
/// {apiVersion}/{kind} named '{name}' inside of namespace '{ns:?}'", and a
/// kind the API server does not serve as "Cannot find resource ...". Both mean
/// the parent does not exist. Every other host error is a real failure.
pub const NOT_FOUND_PREFIX: &str = "Cannot find ";

/// How policy-evaluator refuses a look-up of a kind the policy's
/// `contextAwareResources` do not list.
const DENIED_PREFIX: &str = "Policy has not been granted access to Kubernetes ";

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
    } else if host_text.starts_with(DENIED_PREFIX) {
        LookupError::Denied(readable_host_error(host_text))
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
        LookupError::Denied("Policy has not been granted access to Kubernetes cluster.x-k8s.io/v1beta1/Cluster resources. The violation has been reported.".into())
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
    /// receives it (observed on a real policy-server; docs/capi.md, "Cluster
    /// API: what flows where", on look-up failures). policy-evaluator writes
    /// `Callback evaluation failure: {e:?}` (`send_request_and_wait_for_response`
    /// in kubewarden-controller
    /// `crates/policy-evaluator/src/runtimes/wapc/callback.rs`), so the rest
    /// is kube-rs's error as anyhow debug-prints it, `Caused by:` chain
    /// included.
    const POLICY_SERVER_503: &str = "error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: ApiError: the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable (Status { status: Some(Failure), code: 503, message: \"the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io)\", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: \"ServiceUnavailable\", details: Some(StatusDetails { name: \"my-cluster-md-0\", group: \"cluster.x-k8s.io\", kind: \"machinedeployments\", uid: \"\", causes: [], retry_after_seconds: 0 }) })\n\nCaused by:\n    the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable";

    #[test]
    fn get_resource_request_asks_for_the_projection_masks() {
        let object = ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: "MachineDeployment".into(),
            name: "md-0".into(),
            namespace: Some("default".into()),
        };
        let projection = Projection::of(&[&["metadata", "labels"], &["spec", "template"]]);
        let request = get_resource_request(&object, &projection);
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            serde_json::json!({
                "api_version": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                "name": "md-0", "namespace": "default", "disable_cache": false,
                "field_masks": ["metadata.labels", "spec.template"],
            })
        );
    }

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
}
