//! Answers the guest's waPC host calls, like policy-evaluator
//! `runtimes/callback.rs`: every call but `tracing` is first checked
//! against the policy's host capabilities (all granted, as in kwctl, unless
//! `serve` reads `hostCapabilities`); then `kubewarden/tracing/log`
//! (printed on stderr) and `kubewarden/kubernetes/get_resource` (checked
//! against the context-aware allow-list, then answered from [`Lookups`],
//! and recorded when asked); anything else is refused. A capability or
//! allow-list refusal reaches the guest as is, a failure of the capability
//! itself wrapped as `Callback evaluation failure: <error>` (as
//! `send_request_and_wait_for_response` does), so a policy must search for
//! `Cannot find ` inside the message, not at its start.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::host::capabilities::{CAPABILITIES, HostCapabilities};
use crate::host::lookups::{Lookups, Unanswered};
use crate::host::record::Recording;
use crate::host::replay::GetResourceRequest;

/// A Kubernetes resource type a context-aware policy may read: one entry of
/// the allow-list, as the policy metadata's `contextAwareResources` lists
/// them (policy-evaluator `policy_metadata.rs`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    /// `apiVersion`, e.g. `cluster.x-k8s.io/v1beta1` (`v1` for the core group).
    pub api_version: String,
    /// `kind`, e.g. `MachineDeployment`.
    pub kind: String,
}

/// kwctl's refusal of a resource outside the allow-list
/// (policy-evaluator `runtimes/callback.rs`); `{resource}` is
/// `<apiVersion>/<kind>`.
pub const ACCESS_DENIED: &str = "Policy has not been granted access to Kubernetes {resource} resources. The violation has been reported.";

/// Prefix policy-evaluator puts before every capability failure.
pub const CALLBACK_FAILURE_PREFIX: &str = "Callback evaluation failure: ";

/// A host-call failure; its text is what the guest receives.
#[derive(Debug, Error)]
pub enum HostError {
    /// Binding other than `kubewarden`.
    #[error("unknown binding: {0}")]
    UnknownBinding(String),
    /// Namespace the host does not know.
    #[error("unknown namespace: {0}")]
    UnknownNamespace(String),
    /// Operation the host does not know within a known namespace.
    #[error("unknown operation: {0}")]
    UnknownOperation(String),
    /// A real Kubewarden capability this runner does not implement.
    #[error("host capability {namespace}/{operation} is not supported by policy-runner")]
    Unsupported {
        /// waPC namespace, e.g. `oci`.
        namespace: String,
        /// waPC operation, e.g. `v2/verify`.
        operation: String,
    },
    /// The guest's payload is not the expected JSON.
    #[error("cannot decode {operation} request: {source}")]
    Payload {
        /// The operation whose payload is bad.
        operation: &'static str,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// The capability (`namespace/operation`) is not in the policy's
    /// `hostCapabilities` (policy-evaluator's `host_capability_denied`).
    #[error(
        "Policy has not been granted access to the '{0}' host capability. The violation has been reported."
    )]
    CapabilityDenied(String),
    /// The resource type is not in the allow-list.
    #[error("{0}")]
    AccessDenied(String),
    /// The capability itself failed.
    #[error("{CALLBACK_FAILURE_PREFIX}{0}")]
    Callback(String),
}

/// The state behind the host callback.
#[derive(Debug)]
pub struct Host {
    capabilities: HostCapabilities,
    allow_list: BTreeSet<ContextAwareResource>,
    lookups: Lookups,
    replay_failure: Option<String>,
    recording: Option<Recording>,
    denied: Vec<String>,
}

impl Host {
    /// A host granting `allow_list` and answering from `lookups`.
    pub fn new(allow_list: BTreeSet<ContextAwareResource>, lookups: Lookups) -> Host {
        Host {
            capabilities: HostCapabilities::AllowAll,
            allow_list,
            lookups,
            replay_failure: None,
            recording: None,
            denied: Vec::new(),
        }
    }

    /// Grants only `capabilities` (policy-server's `hostCapabilities`)
    /// instead of every capability.
    pub fn with_capabilities(mut self, capabilities: HostCapabilities) -> Host {
        self.capabilities = capabilities;
        self
    }

    /// Records every look-up the host answers from now on
    /// ([`Host::recording`]).
    pub fn record(&mut self) {
        self.recording = Some(Recording::default());
    }

    /// The look-ups recorded since [`Host::record`].
    pub fn recording(&self) -> Option<&Recording> {
        self.recording.as_ref()
    }

    /// Handles one host call.
    pub fn dispatch(
        &mut self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, HostError> {
        if binding != "kubewarden" {
            return Err(HostError::UnknownBinding(binding.to_owned()));
        }
        let path = format!("{namespace}/{operation}");
        if namespace != "tracing" && !self.capabilities.is_allowed(&path) {
            eprintln!(
                "ERROR policy-runner: policy tried to use the host capability {path}, which is \
                 not in its hostCapabilities {}",
                self.capabilities
            );
            return Err(HostError::CapabilityDenied(path));
        }
        match (namespace, operation) {
            ("tracing", "log") => {
                eprintln!("{}", log_line(payload));
                Ok(Vec::new())
            }
            ("kubernetes", "get_resource") => self.get_resource(payload),
            _ if is_known(namespace, operation) => Err(HostError::Unsupported {
                namespace: namespace.to_owned(),
                operation: operation.to_owned(),
            }),
            ("tracing" | "kubernetes" | "oci" | "net" | "crypto", _) => {
                Err(HostError::UnknownOperation(operation.to_owned()))
            }
            _ => Err(HostError::UnknownNamespace(namespace.to_owned())),
        }
    }

    /// Whether `api_version`/`kind` is in the allow-list (exact match).
    pub fn can_access(&self, api_version: &str, kind: &str) -> bool {
        self.allow_list.contains(&ContextAwareResource {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })
    }

    /// How many of the answers on offer (replay entries, `--parents`
    /// objects) the policy did not ask for.
    pub fn unreplayed(&self) -> usize {
        self.lookups.unasked()
    }

    /// What the policy did not ask for, one line each.
    pub fn leftovers(&self) -> Vec<String> {
        self.lookups.leftovers()
    }

    /// How many look-ups have been answered since the last rewind.
    pub fn replayed(&self) -> usize {
        self.lookups.answered()
    }

    /// The last look-up the test's set-up could not answer (a request the
    /// replay session did not record, one past its end, or no source at
    /// all), if any. A recorded `Error` answer or a NotFound from
    /// `--parents` is the cluster's answer, not a failure.
    pub fn replay_failure(&self) -> Option<&str> {
        self.replay_failure.as_deref()
    }

    /// The look-ups the allow-list refused so far, one `<apiVersion>/<kind>`
    /// per refusal, in order.
    pub fn denied_lookups(&self) -> &[String] {
        &self.denied
    }

    /// Starts the look-ups over, so the next evaluation is answered as the
    /// first one was (`bench`).
    pub fn rewind_replay(&mut self) {
        self.lookups.rewind();
    }

    fn get_resource(&mut self, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        let request: GetResourceRequest =
            serde_json::from_slice(payload).map_err(|source| HostError::Payload {
                operation: "get_resource",
                source,
            })?;
        if !self.can_access(&request.api_version, &request.kind) {
            let resource = format!("{}/{}", request.api_version, request.kind);
            eprintln!(
                "ERROR policy-runner: policy tried to access {resource}, which is not in its allow-list"
            );
            let denied = HostError::AccessDenied(ACCESS_DENIED.replace("{resource}", &resource));
            self.denied.push(resource);
            return Err(denied);
        }
        let answer = self.lookups.answer(&request);
        // The cluster's answers are recorded; a set-up that cannot answer
        // is the test's failure, not an exchange.
        let exchange = match &answer {
            Ok(payload) => Some(Ok(payload.as_slice())),
            Err(Unanswered::Host(message)) => Some(Err(message.as_str())),
            Err(Unanswered::Session(failure)) => {
                eprintln!("ERROR policy-runner: {failure}");
                self.replay_failure = Some(failure.clone());
                None
            }
        };
        if let (Some(exchange), Some(recording)) = (exchange, self.recording.as_mut()) {
            recording.push(&request, exchange);
        }
        answer.map_err(|e| HostError::Callback(e.message().to_owned()))
    }
}

/// Capabilities real Kubewarden hosts offer (policy-evaluator
/// `runtimes/callback.rs`) that this runner refuses as unsupported rather
/// than unknown.
fn is_known(namespace: &str, operation: &str) -> bool {
    CAPABILITIES.contains(&format!("{namespace}/{operation}").as_str())
}

/// One stderr line for an SDK log record
/// (`{"level","message",...fields}`): `LEVEL policy_log: message {fields}`.
fn log_line(payload: &[u8]) -> String {
    let Ok(Value::Object(mut record)) = serde_json::from_slice::<Value>(payload) else {
        return format!("INFO policy_log: {}", String::from_utf8_lossy(payload));
    };
    let level = match record.remove("level") {
        Some(Value::String(level)) => level.to_uppercase(),
        _ => "INFO".to_owned(),
    };
    let message = match record.remove("message") {
        Some(Value::String(message)) => message,
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if record.is_empty() {
        return format!("{level} policy_log: {message}");
    }
    // sorted, whatever serde_json's map order is
    let fields: BTreeMap<String, Value> = record.into_iter().collect();
    let fields = serde_json::to_string(&fields).expect("JSON values always serialise");
    format!("{level} policy_log: {message} {fields}")
}

/// The waPC callback closure over a shared [`Host`].
pub fn callback(host: Arc<Mutex<Host>>) -> Box<wapc::HostCallback> {
    Box::new(move |_id, binding, namespace, operation, payload| {
        let mut host = host.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        host.dispatch(binding, namespace, operation, payload)
            .map_err(|e| e.to_string().into())
    })
}

#[cfg(test)]
mod host_call_tests;
