//! The host calls against a replay session: capabilities, the allow-list,
//! look-ups, logging and refusals.

use super::*;
use crate::host::lookups::NO_CLUSTER;
use crate::host::replay::Replay;
use crate::host::replay::tests::exchange;

const GET_C1: &[u8] = br#"{"api_version":"cluster.x-k8s.io/v1beta1","kind":"Cluster","name":"c-1","namespace":"default","disable_cache":false,"field_masks":null}"#;
const GET_C9: &[u8] = br#"{"api_version":"cluster.x-k8s.io/v1beta1","kind":"Cluster","name":"c-9","namespace":"default","disable_cache":false}"#;

fn session() -> String {
    exchange(
        "Cluster",
        "c-1",
        "null",
        r#"{type: Success, payload: '{"kind":"Cluster"}'}"#,
    ) + &exchange(
        "Cluster",
        "c-9",
        "null",
        r#"{type: Error, message: "Cannot find cluster.x-k8s.io/v1beta1/Cluster named 'c-9' inside of namespace 'Some(\"default\")'"}"#,
    )
}

fn cluster() -> ContextAwareResource {
    ContextAwareResource {
        api_version: "cluster.x-k8s.io/v1beta1".to_owned(),
        kind: "Cluster".to_owned(),
    }
}

fn host(allow: &[ContextAwareResource]) -> Host {
    Host::new(
        allow.iter().cloned().collect(),
        Lookups::Replay(Replay::from_yaml(&session()).unwrap()),
    )
}

fn get(host: &mut Host, payload: &[u8]) -> Result<Vec<u8>, String> {
    host.dispatch("kubewarden", "kubernetes", "get_resource", payload)
        .map_err(|e| e.to_string())
}

#[test]
fn allow_list_matches_exact_api_version_and_kind() {
    let host = host(&[cluster()]);

    assert!(host.can_access("cluster.x-k8s.io/v1beta1", "Cluster"));
    assert!(!host.can_access("cluster.x-k8s.io/v1beta1", "cluster"));
    assert!(!host.can_access("cluster.x-k8s.io/v1beta2", "Cluster"));
    assert!(!host.can_access("cluster.x-k8s.io", "Cluster"));
    assert!(!host.can_access("v1", "Cluster"));
}

#[test]
fn get_resource_outside_allow_list_is_refused_without_consuming_replay() {
    let mut host = host(&[]);

    assert_eq!(
        get(&mut host, GET_C1),
        Err("Policy has not been granted access to Kubernetes cluster.x-k8s.io/v1beta1/Cluster resources. The violation has been reported.".to_owned())
    );
    assert_eq!(host.unreplayed(), 2);
    assert_eq!(host.denied_lookups(), ["cluster.x-k8s.io/v1beta1/Cluster"]);
}

#[test]
fn get_resource_allowed_is_answered_from_replay() {
    let mut host = host(&[cluster()]);

    assert_eq!(
        get(&mut host, GET_C1),
        Ok(br#"{"kind":"Cluster"}"#.to_vec())
    );
    assert_eq!(
        get(&mut host, GET_C9),
        Err(r#"Callback evaluation failure: Cannot find cluster.x-k8s.io/v1beta1/Cluster named 'c-9' inside of namespace 'Some("default")'"#.to_owned())
    );
    assert_eq!(host.replay_failure(), None);
    assert_eq!(
        get(&mut host, GET_C1),
        Err("Callback evaluation failure: the list of recorded responses is empty".to_owned())
    );
    assert_eq!(
        host.replay_failure(),
        Some("the list of recorded responses is empty")
    );
    // answered or not, an allowed look-up is not a denied one
    assert!(host.denied_lookups().is_empty());
}

#[test]
fn get_resource_without_replay_reports_no_cluster() {
    let mut host = Host::new(BTreeSet::from([cluster()]), Lookups::None);

    assert_eq!(
        get(&mut host, GET_C1),
        Err(format!("Callback evaluation failure: {NO_CLUSTER}"))
    );
}

#[test]
fn get_resource_with_bad_payload_names_operation() {
    let mut host = host(&[cluster()]);

    let err = get(&mut host, b"not json").unwrap_err();

    assert!(
        err.starts_with("cannot decode get_resource request: "),
        "{err}"
    );
}

#[test]
fn dispatch_log_returns_empty_reply() {
    let mut host = host(&[]);

    assert_eq!(
        host.dispatch(
            "kubewarden",
            "tracing",
            "log",
            br#"{"level":"info","message":"hi"}"#
        )
        .unwrap(),
        Vec::<u8>::new()
    );
}

#[test]
fn dispatch_refuses_unsupported_and_unknown_calls() {
    let mut host = host(&[]);
    let mut call = |binding: &str, namespace: &str, operation: &str| {
        host.dispatch(binding, namespace, operation, b"{}")
            .unwrap_err()
            .to_string()
    };

    assert_eq!(
        call("kubewarden", "oci", "v2/verify"),
        "host capability oci/v2/verify is not supported by policy-runner"
    );
    assert_eq!(
        call("kubewarden", "kubernetes", "list_resources_all"),
        "host capability kubernetes/list_resources_all is not supported by policy-runner"
    );
    assert_eq!(
        call("kubewarden", "kubernetes", "nope"),
        "unknown operation: nope"
    );
    assert_eq!(call("kubewarden", "nope", "x"), "unknown namespace: nope");
    assert_eq!(call("other", "tracing", "log"), "unknown binding: other");
}

#[test]
fn host_capabilities_gate_every_call_but_tracing() {
    let only_get = HostCapabilities::new(["kubernetes/get_resource"]).unwrap();
    let mut granted = host(&[cluster()]).with_capabilities(only_get);
    assert_eq!(
        get(&mut granted, GET_C1),
        Ok(br#"{"kind":"Cluster"}"#.to_vec())
    );
    let error = granted
        .dispatch("kubewarden", "kubernetes", "can_i", b"{}")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Policy has not been granted access to the 'kubernetes/can_i' host capability. \
         The violation has been reported."
    );

    let mut denied = host(&[cluster()]).with_capabilities(HostCapabilities::DenyAll);
    assert_eq!(
        get(&mut denied, GET_C1).unwrap_err(),
        "Policy has not been granted access to the 'kubernetes/get_resource' host \
         capability. The violation has been reported."
    );
    assert_eq!(denied.unreplayed(), 2, "the session is not consumed");
    let log = br#"{"level":"info","message":"hi"}"#;
    assert!(denied.dispatch("kubewarden", "tracing", "log", log).is_ok());
}

#[test]
fn log_line_puts_level_and_message_first() {
    assert_eq!(
        log_line(br#"{"level":"warning","message":"careful","policy":"p","line":3}"#),
        r#"WARNING policy_log: careful {"line":3,"policy":"p"}"#
    );
    assert_eq!(log_line(b"raw text"), "INFO policy_log: raw text");
}
