//! An API server faked as a tower service behind a real `kube::Client` (no
//! socket), as the look-ups' tests fake one: each request's method, path
//! and query, and `Accept` are recorded, and answered by a function.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use serde_json::{Value, json};

use super::{Api, Resource};
use crate::tools::live_audit::pace::Pace;

/// A request the fake server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::tools::live_audit) struct Seen {
    pub(in crate::tools::live_audit) method: String,
    /// The path and the query.
    pub(in crate::tools::live_audit) uri: String,
    pub(in crate::tools::live_audit) accept: String,
}

/// An answer: status, headers, body.
pub(in crate::tools::live_audit) type Answer = (u16, Vec<(&'static str, String)>, String);

/// The requests seen so far, in order.
pub(in crate::tools::live_audit) type Log = Arc<Mutex<Vec<Seen>>>;

/// An [`Api`] on a fake server answering with `respond`, paced loosely
/// enough never to wait, and the log of what it received.
pub(in crate::tools::live_audit) fn fake_api(
    respond: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
) -> (Api, Log) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let log: Log = Arc::default();
    let seen_by_server = Arc::clone(&log);
    let respond = Arc::new(respond);
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let seen = Seen {
            method: request.method().to_string(),
            uri: request
                .uri()
                .path_and_query()
                .map_or_else(String::new, ToString::to_string),
            accept: request
                .headers()
                .get(http::header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned(),
        };
        seen_by_server.lock().unwrap().push(seen.clone());
        let (status, headers, body) = respond(&seen);
        async move {
            let mut response = Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            Ok::<_, Infallible>(response.body(Full::new(Bytes::from(body))).unwrap())
        }
    });
    let client = {
        let _context = runtime.enter(); // the client's buffer spawns its worker
        kube::Client::new(service, "default")
    };
    let api = Api::new(
        client,
        "https://fake".to_owned(),
        runtime,
        Pace::new(1000.0, 1000),
    );
    (api, log)
}

/// A 200 with `body` as JSON.
/// The Machines of CAPI's core group, a kind the tests list, read and write.
pub(in crate::tools::live_audit) fn machines() -> Resource {
    Resource {
        group: "cluster.x-k8s.io".to_owned(),
        version: "v1beta2".to_owned(),
        plural: "machines".to_owned(),
        kind: "Machine".to_owned(),
        namespaced: true,
    }
}

pub(in crate::tools::live_audit) fn ok(body: &Value) -> Answer {
    (200, Vec::new(), body.to_string())
}

/// A refusal with a Status of `code` and `message`, and `headers`.
pub(in crate::tools::live_audit) fn status(
    code: u16,
    message: &str,
    headers: Vec<(&'static str, String)>,
) -> Answer {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": message, "code": code});
    (code, headers, body.to_string())
}

/// A resource as the fixture serves it: plural, kind, namespaced, verbs,
/// subresources.
type Served = (
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// A group's versions, preferred first, and their resources.
type Versions = &'static [(&'static str, &'static [Served])];

/// A cluster's groups.
const CLUSTER: &[(&str, Versions)] = &[
    (
        "",
        &[(
            "v1",
            &[
                (
                    "namespaces",
                    "Namespace",
                    false,
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                    &["finalize", "status"],
                ),
                ("pods", "Pod", true, ALL, &["binding", "eviction", "status"]),
            ],
        )],
    ),
    (
        "apps",
        &[(
            "v1",
            &[("deployments", "Deployment", true, ALL, &["scale", "status"])],
        )],
    ),
    (
        "cluster.x-k8s.io",
        &[
            (
                "v1beta2",
                &[
                    ("machines", "Machine", true, ALL, &["status"]),
                    ("machinesets", "MachineSet", true, ALL, &["scale", "status"]),
                ],
            ),
            (
                "v1beta1",
                &[
                    ("machines", "Machine", true, ALL, &["status"]),
                    ("machinesets", "MachineSet", true, ALL, &["scale", "status"]),
                ],
            ),
        ],
    ),
];

/// The fixture's cluster as an API server answers discovery: with
/// `aggregated`, the `APIGroupDiscoveryList`s of `/api` and `/apis` when
/// the `Accept` asks for them; else (a server without aggregated
/// discovery) `APIVersions`, `APIGroupList` and one `APIResourceList` per
/// group version.
pub(in crate::tools::live_audit) fn discovery(aggregated: bool) -> impl Fn(&Seen) -> Answer {
    move |seen| {
        let asked = aggregated && seen.accept.contains("as=APIGroupDiscoveryList");
        match seen.uri.as_str() {
            "/api" if asked => ok(&discovery_list(true)),
            "/apis" if asked => ok(&discovery_list(false)),
            "/api" => ok(&json!({"kind": "APIVersions", "versions": ["v1"],
                                 "serverAddressByClientCIDRs": []})),
            "/apis" => ok(&group_list()),
            path => match resource_list(path) {
                Some(list) => ok(&list),
                None => (404, Vec::new(), "404 page not found\n".to_owned()),
            },
        }
    }
}

fn discovery_list(core: bool) -> Value {
    let items: Vec<Value> = CLUSTER
        .iter()
        .filter(|(group, _)| group.is_empty() == core)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|(version, resources)| {
                    let resources: Vec<Value> = resources.iter().map(aggregated_resource).collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = match core {
                true => json!({"creationTimestamp": null}),
                false => json!({"name": group, "creationTimestamp": null}),
            };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
           "metadata": {}, "items": items})
}

/// A resource in an `APIGroupDiscoveryList`: its kind is the resource's
/// own, so `responseKind` names no group or version.
fn aggregated_resource(served: &Served) -> Value {
    let (plural, kind, namespaced, verbs, subresources) = *served;
    let response_kind = json!({"group": "", "version": "", "kind": kind});
    let subresources: Vec<Value> = subresources
        .iter()
        .map(|sub| {
            json!({"subresource": sub, "responseKind": response_kind,
                   "verbs": ["get", "patch", "update"]})
        })
        .collect();
    json!({"resource": plural, "responseKind": response_kind,
           "scope": if namespaced { "Namespaced" } else { "Cluster" },
           "singularResource": kind.to_lowercase(), "verbs": verbs,
           "subresources": subresources})
}

fn group_list() -> Value {
    let groups: Vec<Value> = CLUSTER
        .iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, versions)| {
            let version = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
            let served: Vec<Value> = versions.iter().map(|(v, _)| version(v)).collect();
            json!({"name": group, "versions": served, "preferredVersion": version(versions[0].0)})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_list(path: &str) -> Option<Value> {
    let group_version = path
        .strip_prefix("/api/")
        .or_else(|| path.strip_prefix("/apis/"))?;
    let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
    let (_, versions) = CLUSTER.iter().find(|(g, _)| *g == group)?;
    let (_, resources) = versions.iter().find(|(v, _)| *v == version)?;
    let mut listed = Vec::new();
    for (plural, kind, namespaced, verbs, subresources) in *resources {
        listed.push(json!({"name": plural, "singularName": kind.to_lowercase(),
                           "namespaced": namespaced, "kind": kind, "verbs": verbs}));
        for sub in *subresources {
            listed.push(
                json!({"name": format!("{plural}/{sub}"), "singularName": "",
                               "namespaced": namespaced, "kind": kind,
                               "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": listed}),
    )
}
