//! The live audit's requests to the API server: lists a page at a time,
//! GETs, the fixer's merge patch and discovery, each paced ([`Pace`]) and
//! counted by verb, on the raw JSON the server sends (objects stay JSON
//! values: nothing passes through a typed struct that could drop a field).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use hyper::body::Bytes;
use kube::core::Request;
use kube::core::params::{GetParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::Value;
use tokio::runtime::Runtime;

use super::pace::Pace;
use crate::host::cluster::error_chain;

/// A lock is never poisoned: no code holding one panics.
const UNPOISONED: &str = "no thread panics holding the lock";

mod discovery_lists;
#[cfg(test)]
pub(super) mod fake_api_server;
mod pushback;

/// The key under which [`Api::counts`] counts the requests sent again
/// after the API server pushed back (429, or a 5xx with `Retry-After`):
/// each request is counted once, its first try under its verb and each
/// retry under this key, so the counts add up to the requests sent.
pub(super) const RETRIED: &str = "retried";

/// The field manager the fixer's writes carry, so a reader of
/// `managedFields` or an audit log sees who wrote.
pub(super) const FIELD_MANAGER: &str = "metadata-propagation-fix";

/// A request the API server refused, or one that did not reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    /// The HTTP status the API server answered; `None` when there was no
    /// answer (connection, TLS, a body that is not JSON).
    pub(super) code: Option<u16>,
    /// The API server's message, or the client's error and its causes.
    pub(super) message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "{} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl From<kube::Error> for Failure {
    fn from(error: kube::Error) -> Failure {
        match error {
            kube::Error::Api(status) => Failure {
                code: Some(status.code),
                // A body that is not a Status (`404 page not found\n`)
                // comes as its text.
                message: status.message.trim_end().to_owned(),
            },
            other => Failure {
                code: None,
                message: error_chain(&other),
            },
        }
    }
}

/// A request that reached no API server at `server`, with what to check.
fn unreachable(server: &str, error: &kube::Error) -> String {
    // The innermost cause says why (`Connection refused`, a certificate).
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!(
        "cannot reach the API server at {server}: {cause}; check that the cluster is up and that \
         the kubeconfig (--kubeconfig, KUBECONFIG) and its context (--context) are the ones meant"
    )
}

/// A request kube could not build (a name it cannot put in a path).
fn built(error: kube::core::request::Error) -> Failure {
    Failure {
        code: None,
        message: format!("cannot build the request: {error}"),
    }
}

/// Where a resource's objects live: `/api/v1` or `/apis/GROUP/VERSION`,
/// its plural, and whether it is namespaced.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Resource {
    /// "" for the core group.
    pub(super) group: String,
    pub(super) version: String,
    pub(super) plural: String,
    pub(super) kind: String,
    pub(super) namespaced: bool,
}

impl Resource {
    fn base(&self) -> String {
        match self.group.as_str() {
            "" => format!("/api/{}", self.version),
            group => format!("/apis/{group}/{}", self.version),
        }
    }

    /// The collection: in `namespace`, or across all of them.
    pub(super) fn collection(&self, namespace: Option<&str>) -> String {
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{}/namespaces/{ns}/{}", self.base(), self.plural),
            None => format!("{}/{}", self.base(), self.plural),
        }
    }

    /// `plural.group` as RBAC and kubectl name it (`plural` for the core
    /// group).
    pub(super) fn name(&self) -> String {
        match self.group.as_str() {
            "" => self.plural.clone(),
            group => format!("{}.{group}", self.plural),
        }
    }

    /// `group/version` (`v1` for the core group).
    pub(super) fn api_version(&self) -> String {
        match self.group.as_str() {
            "" => self.version.clone(),
            group => format!("{group}/{}", self.version),
        }
    }
}

/// The API server behind a live audit. The audit runs on the caller's
/// thread, each request waiting for its answer on the runtime; `--fix`
/// sends a few writes at once from threads of its own, each taking its
/// turn at the one pace.
pub(super) struct Api {
    client: kube::Client,
    /// The API server's URL, named when it cannot be reached.
    server: String,
    runtime: Runtime,
    pace: Mutex<Pace>,
    counts: Mutex<BTreeMap<&'static str, usize>>,
}

impl Api {
    pub(super) fn new(client: kube::Client, server: String, runtime: Runtime, pace: Pace) -> Api {
        Api {
            client,
            server,
            runtime,
            pace: Mutex::new(pace),
            counts: Mutex::default(),
        }
    }

    /// The runtime the client runs on (for the Ctrl-C handler).
    pub(super) fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Requests sent so far, by verb (`discovery`, `list`, `get`, `patch`,
    /// `access-review`), and the retries after a push-back ([`RETRIED`]).
    pub(super) fn counts(&self) -> BTreeMap<&'static str, usize> {
        self.counts.lock().expect(UNPOISONED).clone()
    }

    fn count(&self, key: &'static str) {
        *self
            .counts
            .lock()
            .expect(UNPOISONED)
            .entry(key)
            .or_default() += 1;
    }

    /// Sends `request`, counted under `verb`, and returns the API server's
    /// JSON answer. A push-back (429, or a 5xx with `Retry-After`) is waited
    /// out and the request sent again, [`pushback::RETRIES`] times at most,
    /// each retry paced and counted under [`RETRIED`].
    fn send(&self, verb: &'static str, request: http::Request<Vec<u8>>) -> Result<Value, Failure> {
        let body = self.exchange(verb, request)?;
        serde_json::from_slice(&body).map_err(|error| Failure {
            code: None,
            message: format!("the API server's answer is not JSON: {error}"),
        })
    }

    /// The body of the API server's successful answer to `request`.
    fn exchange(
        &self,
        verb: &'static str,
        request: http::Request<Vec<u8>>,
    ) -> Result<Bytes, Failure> {
        let mut tries = 0;
        loop {
            // Waited out of the lock: requests sent from other threads
            // (`--fix`'s writes) take their turns meanwhile.
            let wait = self.pace.lock().expect(UNPOISONED).turn();
            std::thread::sleep(wait);
            tries += 1;
            self.count(if tries == 1 { verb } else { RETRIED });
            let sent = request.clone().map(kube::client::Body::from);
            let (status, retry_after, body) = self
                .runtime
                .block_on(async {
                    let response = self.client.send(sent).await?;
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(http::header::RETRY_AFTER)
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_owned);
                    let body = response.into_body().collect_bytes().await?;
                    Ok::<_, kube::Error>((status, retry_after, body))
                })
                .map_err(|error| self.failure(error))?;
            if status.is_success() {
                return Ok(body);
            }
            let mut failure = refused(status, &body);
            let Some(delay) = pushback::delay(status, retry_after.as_deref()) else {
                return Err(failure);
            };
            if tries > pushback::RETRIES {
                failure.message = format!(
                    "the API server pushed back ({}, Retry-After) on each of {tries} tries: {}",
                    status.as_u16(),
                    failure.message
                );
                return Err(failure);
            }
            if !pushback::wait(&self.runtime, delay) {
                failure.message = format!(
                    "the API server pushed back ({}, Retry-After), and a signal came during the \
                     wait: {}",
                    status.as_u16(),
                    failure.message
                );
                return Err(failure);
            }
        }
    }

    /// `error` as a [`Failure`]; one that reached no API server names it.
    fn failure(&self, error: kube::Error) -> Failure {
        match error {
            kube::Error::Service(_) | kube::Error::HyperError(_) => Failure {
                code: None,
                message: unreachable(&self.server, &error),
            },
            other => Failure::from(other),
        }
    }

    /// One page of `resource`'s objects: its items, and the token of the
    /// next page when there is one.
    pub(super) fn list_page(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        selector: Option<&str>,
        limit: u32,
        continue_token: Option<String>,
    ) -> Result<(Vec<Value>, Option<String>), Failure> {
        let params = ListParams {
            label_selector: selector.map(str::to_owned),
            limit: Some(limit),
            continue_token,
            ..ListParams::default()
        };
        let request = Request::new(resource.collection(namespace))
            .list(&params)
            .map_err(built)?;
        let mut list = self.send("list", request)?;
        let next = list["metadata"]["continue"]
            .as_str()
            .filter(|token| !token.is_empty())
            .map(str::to_owned);
        // A list's items carry no apiVersion or kind: the list's own say
        // which, as kubectl fills them in.
        let kind = resource.kind.clone();
        let api_version = resource.api_version();
        let items = match list["items"].take() {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        let items = items
            .into_iter()
            .map(|mut item| {
                if let Value::Object(map) = &mut item {
                    map.entry("apiVersion")
                        .or_insert_with(|| api_version.clone().into());
                    map.entry("kind").or_insert_with(|| kind.clone().into());
                }
                item
            })
            .collect();
        Ok((items, next))
    }

    /// The object `name` of `resource` (in `namespace` when namespaced).
    pub(super) fn get(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Failure> {
        let request = Request::new(resource.collection(namespace))
            .get(name, &GetParams::default())
            .map_err(built)?;
        self.send("get", request)
    }

    /// The fixer's write: a JSON merge patch that sets only
    /// `metadata.resourceVersion` to the one audited. It changes nothing by
    /// itself, fails with 409 when the object moved on, and passes through
    /// the whole admission chain as an UPDATE. The answer is the object as
    /// stored (or, in a dry run, as it would be).
    pub(super) fn touch(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
        dry_run: bool,
    ) -> Result<Value, Failure> {
        let params = PatchParams {
            dry_run,
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let body = serde_json::json!({"metadata": {"resourceVersion": resource_version}});
        let request = Request::new(resource.collection(namespace))
            .patch(name, &params, &Patch::Merge(body))
            .map_err(built)?;
        self.send("patch", request)
    }

    /// Whether the runner's own user may `verb` objects of `resource` (in
    /// `namespace`, or in every namespace when `None`), as a
    /// SelfSubjectAccessReview answers it: the API server's authorizers
    /// decide, as they would for the request itself, which is not sent.
    /// The reason the authorizer gave comes with a refusal.
    pub(super) fn may(
        &self,
        verb: &str,
        resource: &Resource,
        namespace: Option<&str>,
    ) -> Result<(bool, String), Failure> {
        let review = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {
                "verb": verb,
                "group": resource.group,
                "version": resource.version,
                "resource": resource.plural,
                "namespace": namespace.unwrap_or_default(),
            }},
        });
        let body = serde_json::to_vec(&review).expect("JSON values always serialise");
        let request = Request::new("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
            .create(&PostParams::default(), body)
            .map_err(built)?;
        let answer = self.send("access-review", request)?;
        let status = &answer["status"];
        let reason = status["reason"]
            .as_str()
            .or_else(|| status["evaluationError"].as_str())
            .unwrap_or_default()
            .to_owned();
        Ok((status["allowed"].as_bool() == Some(true), reason))
    }
}

/// The API server's refusal: its Status's message, or the answer's text
/// when it is not a Status (`404 page not found`).
fn refused(status: http::StatusCode, body: &[u8]) -> Failure {
    let status_message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|answer| answer["message"].as_str().map(str::to_owned));
    Failure {
        code: Some(status.as_u16()),
        message: status_message
            .unwrap_or_else(|| String::from_utf8_lossy(body).trim_end().to_owned()),
    }
}
