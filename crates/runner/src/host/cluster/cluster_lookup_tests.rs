//! The look-ups against an API server faked as a tower service behind a
//! real `kube::Client` (no socket): discovery, the GET, and every error
//! text the guest can receive.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use super::*;

const CAPI: &str = "cluster.x-k8s.io/v1beta1";

/// policy-server 1.35's text for a 503 from the API server, as observed
/// (reference notes, kubewarden.md §8), after the callback prefix.
const OBSERVED_503: &str = "ApiError: the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable (Status { status: Some(Failure), code: 503, message: \"the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io)\", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: \"ServiceUnavailable\", details: Some(StatusDetails { name: \"my-cluster-md-0\", group: \"cluster.x-k8s.io\", kind: \"machinedeployments\", uid: \"\", causes: [], retry_after_seconds: 0 }) })\n\nCaused by:\n    the server is currently unable to handle the request (get machinedeployments.cluster.x-k8s.io): ServiceUnavailable";

fn machine_deployment() -> Value {
    json!({"apiVersion": CAPI, "kind": "MachineDeployment",
           "metadata": {"name": "md-0", "namespace": "default", "labels": {"team": "a"}},
           "spec": {"clusterName": "c", "replicas": 2,
                    "template": {"metadata": {"labels": {"x": "1"}}, "spec": {"version": "v1.31.0"}}},
           "status": {"phase": "Running"}})
}

fn status(code: u16, reason: &str, message: &str, details: Value) -> String {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "details": details, "code": code})
    .to_string()
}

/// What the fake API server answers for `path`.
fn respond(path: &str) -> (StatusCode, String) {
    let resources = |group_version: &str, resources: Value| {
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
               "resources": resources})
        .to_string()
    };
    let md = |name: &str| format!("/apis/{CAPI}/namespaces/default/machinedeployments/{name}");
    match path {
        "/apis/cluster.x-k8s.io/v1beta1" => (
            StatusCode::OK,
            resources(
                CAPI,
                json!([
                    {"name": "machinedeployments", "singularName": "machinedeployment",
                     "namespaced": true, "kind": "MachineDeployment", "verbs": ["get"]},
                    {"name": "machinedeployments/status", "singularName": "",
                     "namespaced": true, "kind": "MachineDeployment", "verbs": ["get"]}
                ]),
            ),
        ),
        "/api/v1" => (
            StatusCode::OK,
            resources(
                "v1",
                json!([{"name": "namespaces", "singularName": "namespace",
                        "namespaced": false, "kind": "Namespace", "verbs": ["get"]}]),
            ),
        ),
        "/api/v1/namespaces/default" => (
            StatusCode::OK,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"},
                   "spec": {"finalizers": ["kubernetes"]}})
            .to_string(),
        ),
        p if p == md("md-0") => (StatusCode::OK, machine_deployment().to_string()),
        p if p == md("md-9") => (
            StatusCode::NOT_FOUND,
            status(
                404,
                "NotFound",
                "machinedeployments.cluster.x-k8s.io \"md-9\" not found",
                json!({"name": "md-9", "group": "cluster.x-k8s.io", "kind": "machinedeployments"}),
            ),
        ),
        p if p == md("md-forbidden") => (
            StatusCode::FORBIDDEN,
            status(
                403,
                "Forbidden",
                "machinedeployments.cluster.x-k8s.io \"md-forbidden\" is forbidden: User \
                 \"system:serviceaccount:kubewarden:policy-server\" cannot get resource",
                json!({"name": "md-forbidden", "group": "cluster.x-k8s.io",
                       "kind": "machinedeployments"}),
            ),
        ),
        p if p == md("my-cluster-md-0") => (
            StatusCode::SERVICE_UNAVAILABLE,
            status(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request (get \
                 machinedeployments.cluster.x-k8s.io)",
                json!({"name": "my-cluster-md-0", "group": "cluster.x-k8s.io",
                       "kind": "machinedeployments"}),
            ),
        ),
        _ => (StatusCode::NOT_FOUND, "404 page not found\n".to_owned()),
    }
}

/// A cluster answered by [`respond`], and how many discovery documents
/// it served.
fn cluster(runtime: &Runtime) -> (Cluster, Arc<AtomicUsize>) {
    let discoveries = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&discoveries);
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let path = request.uri().path().to_owned();
        if path == "/api/v1" || path.matches('/').count() == 3 {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        async move {
            let (status, body) = respond(&path);
            let response = Response::builder().status(status);
            Ok::<_, Infallible>(response.body(Full::new(Bytes::from(body))).unwrap())
        }
    });
    let _context = runtime.enter(); // the client's buffer spawns its worker
    let client = kube::Client::new(service, "default");
    (
        Cluster::new(Some(client), runtime.handle().clone()),
        discoveries,
    )
}

fn get(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> GetResourceRequest {
    GetResourceRequest {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        namespace: namespace.map(str::to_owned),
        disable_cache: false,
        field_masks: None,
    }
}

fn md(name: &str) -> GetResourceRequest {
    get(CAPI, "MachineDeployment", name, Some("default"))
}

fn answer(request: &GetResourceRequest) -> Result<Value, String> {
    let runtime = Runtime::new().unwrap();
    let (cluster, _) = cluster(&runtime);
    (cluster.answer(request)).map(|bytes| serde_json::from_slice(&bytes).unwrap())
}

#[test]
fn an_object_is_found_through_discovery_and_pruned_by_the_masks() {
    let runtime = Runtime::new().unwrap();
    let (cluster, discoveries) = cluster(&runtime);
    let mut request = md("md-0");
    request.field_masks = Some(["spec.template.metadata".to_owned()].into());

    let answer: Value = serde_json::from_slice(&cluster.answer(&request).unwrap()).unwrap();
    assert_eq!(
        answer,
        json!({"apiVersion": CAPI, "kind": "MachineDeployment",
               "metadata": {"name": "md-0", "namespace": "default", "labels": {"team": "a"}},
               "spec": {"template": {"metadata": {"labels": {"x": "1"}}}}})
    );
    // whole without masks; discovery asked once for the server's life
    let whole: Value = serde_json::from_slice(&cluster.answer(&md("md-0")).unwrap()).unwrap();
    assert_eq!(whole, machine_deployment());
    assert_eq!(discoveries.load(Ordering::Relaxed), 1);
}

#[test]
fn a_cluster_scoped_core_object_is_read_without_a_namespace() {
    let namespace = answer(&get("v1", "Namespace", "default", None)).unwrap();
    assert_eq!(namespace["metadata"]["name"], "default");
    assert_eq!(namespace["kind"], "Namespace");
}

#[test]
fn a_missing_object_is_policy_servers_not_found_text() {
    assert_eq!(
        answer(&md("md-9")),
        Err(
            "Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-9' inside of \
             namespace 'Some(\"default\")'"
                .to_owned()
        )
    );
}

#[test]
fn a_503_reaches_the_guest_as_policy_server_1_35_gave_it() {
    assert_eq!(answer(&md("my-cluster-md-0")), Err(OBSERVED_503.to_owned()));
}

#[test]
fn a_403_is_an_api_error_not_a_not_found() {
    let error = answer(&md("md-forbidden")).unwrap_err();
    let message = "machinedeployments.cluster.x-k8s.io \"md-forbidden\" is forbidden: User \
                   \"system:serviceaccount:kubewarden:policy-server\" cannot get resource";
    assert!(
        error.starts_with(&format!("ApiError: {message}: Forbidden (Status {{")),
        "{error}"
    );
    assert!(
        error.ends_with(&format!("\n\nCaused by:\n    {message}: Forbidden")),
        "{error}"
    );
    assert!(!error.contains("Cannot find"), "{error}");
}

#[test]
fn discovery_failures_name_the_resource() {
    assert_eq!(
        answer(&get(CAPI, "Machine", "m-0", Some("default"))),
        Err("Cannot find resource cluster.x-k8s.io/v1beta1/Machine".to_owned())
    );
    let unserved = answer(&get("infra.example.io/v1", "Thing", "t", Some("default")));
    let unserved = unserved.unwrap_err();
    assert!(
        unserved.starts_with(
            "error finding resource infra.example.io/v1 / Thing: ApiError: 404 page not found"
        ),
        "{unserved}"
    );
    assert_eq!(
        answer(&get(CAPI, "MachineDeployment", "md-0", None)),
        Err(
            "Resource cluster.x-k8s.io/v1beta1/MachineDeployment is namespaced, but no \
             namespace was provided"
                .to_owned()
        )
    );
}

#[test]
fn without_a_client_every_look_up_fails_as_in_policy_server() {
    let runtime = Runtime::new().unwrap();
    let cluster = Cluster::new(None, runtime.handle().clone());
    assert_eq!(cluster.answer(&md("md-0")), Err(NO_CLIENT.to_owned()));
}

#[derive(Debug)]
struct Chained(&'static str, Option<Box<Chained>>);

impl fmt::Display for Chained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl StdError for Chained {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

#[test]
fn error_chain_formats_as_anyhow_debug_does() {
    let single = Chained("top", Some(Box::new(Chained("cause\nline 2", None))));
    assert_eq!(
        error_chain(&single),
        "top\n\nCaused by:\n    cause\n    line 2"
    );
    let deep = Chained(
        "top",
        Some(Box::new(Chained(
            "a",
            Some(Box::new(Chained("b\nc", None))),
        ))),
    );
    assert_eq!(
        error_chain(&deep),
        "top\n\nCaused by:\n    0: a\n    1: b\n       c"
    );
    assert_eq!(error_chain(&Chained("alone", None)), "alone");
}
