//! A compiled policy module ([`Module`], this host's counterpart of
//! policy-evaluator's `WasmtimeEngineProviderPre`), its instances
//! ([`Policy`], a new store and instance with `wapc_init` run, as
//! policy-server's `rehydrate` makes per request) and their three waPC
//! entry points, with policy-evaluator `runtimes/wapc/runtime.rs`'s texts.

use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use thiserror::Error;

use crate::host::engine::{CALL_INTERRUPTED, EnginePre};
use crate::host::request::AdmissionRequest;
use crate::host::response::{AdmissionResponse, PolicyResponse};

/// Why the module could not be loaded or queried.
#[derive(Debug, Error)]
pub enum PolicyError {
    /// wasmtime refused the module (not wasm, missing imports, ...).
    #[error("cannot load the policy module: {0}")]
    Engine(#[source] wasmtime::Error),
    /// The waPC host could not be set up (e.g. `wapc_init` trapped).
    #[error("cannot initialise the policy module: {0}")]
    Host(#[source] wapc::errors::Error),
    /// `protocol_version` failed or returned something unexpected.
    #[error("cannot compute ProtocolVersion used by the policy: {0}")]
    ProtocolVersion(String),
}

/// The guest's answer to `validate_settings` (SDK `SettingsValidationResponse`).
#[derive(Debug, Deserialize)]
struct SettingsValidationResponse {
    valid: bool,
    #[serde(default)]
    message: Option<String>,
}

/// A compiled module, ready to be instantiated any number of times.
pub struct Module {
    pre: EnginePre,
}

impl Module {
    /// Compiles `module` (binary wasm).
    pub fn compile(module: &[u8]) -> Result<Module, PolicyError> {
        Module::compile_with_deadline(module, None)
    }

    /// Compiles `module`, its instances interrupted after `deadline` ticks
    /// of [`Module::increment_epoch`] in a start function or a call, when
    /// given (policy-server's policy timeout).
    pub fn compile_with_deadline(
        module: &[u8],
        deadline: Option<u64>,
    ) -> Result<Module, PolicyError> {
        let pre =
            EnginePre::compile_with_deadline(module, deadline).map_err(PolicyError::Engine)?;
        Ok(Module { pre })
    }

    /// One tick of the clock a deadline counts (policy-server: one a second).
    pub fn increment_epoch(&self) {
        self.pre.increment_epoch();
    }

    /// A fresh instance (new store, new instance, `wapc_init` run) whose
    /// host calls go to `callback`: what policy-server makes per request.
    pub fn instantiate(&self, callback: Box<wapc::HostCallback>) -> Result<Policy, PolicyError> {
        let engine = self.pre.rehydrate();
        let memory_bytes = engine.memory_bytes();
        let host =
            wapc::WapcHost::new(Box::new(engine), Some(callback)).map_err(PolicyError::Host)?;
        Ok(Policy { host, memory_bytes })
    }
}

/// An instantiated policy.
pub struct Policy {
    host: wapc::WapcHost,
    memory_bytes: Arc<AtomicUsize>,
}

impl Policy {
    /// Calls `validate_settings`; `Err` carries the reason the settings are
    /// refused (the policy's message, or why the call failed).
    pub fn validate_settings(&self, settings: &Value) -> Result<(), String> {
        let payload = serde_json::to_vec(settings).expect("JSON values always serialise");
        let reply = self
            .host
            .call("validate_settings", &payload)
            .map_err(|e| format!("Error invoking settings validation callback: {e}"))?;
        let verdict: SettingsValidationResponse = serde_json::from_slice(&reply)
            .map_err(|e| format!("error: invalid response from policy: {e}"))?;
        if verdict.valid {
            Ok(())
        } else {
            Err(verdict.message.unwrap_or_default())
        }
    }

    /// Calls `validate` with `{"request", "settings"}` and builds the
    /// AdmissionResponse; a failed call is a 500 rejection, as in kwctl,
    /// and an interrupted one policy-evaluator's timeout rejection.
    pub fn validate(&self, request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        let uid = request.uid();
        let payload = validate_payload(request, settings);
        let reply = match self.call_validate(&payload) {
            Ok(reply) => reply,
            Err(e) if e.to_string().contains(CALL_INTERRUPTED) => {
                return AdmissionResponse::timed_out(uid);
            }
            Err(e) => return AdmissionResponse::internal_server_error(uid, &e.to_string()),
        };
        match serde_json::from_slice::<PolicyResponse>(&reply) {
            Ok(policy) => request.respond(policy),
            Err(e) => AdmissionResponse::internal_server_error(
                uid,
                &format!("invalid response from policy: {e}"),
            ),
        }
    }

    /// The size of the instance's linear memory after its latest call.
    pub fn memory_bytes(&self) -> usize {
        self.memory_bytes.load(Ordering::Relaxed)
    }

    /// Calls `validate` with a ready payload and returns the guest's reply
    /// as it is (the SDK's `ValidationResponse` JSON).
    pub fn call_validate(&self, payload: &[u8]) -> Result<Vec<u8>, wapc::errors::Error> {
        self.host.call("validate", payload)
    }

    /// Calls `protocol_version`; the SDK answers a JSON string such as `"v1"`.
    pub fn protocol_version(&self) -> Result<String, PolicyError> {
        let reply = self
            .host
            .call("protocol_version", &[])
            .map_err(|e| PolicyError::ProtocolVersion(e.to_string()))?;
        match serde_json::from_slice::<String>(&reply) {
            Ok(version) if version == "v1" => Ok(version),
            Ok(version) => Err(PolicyError::ProtocolVersion(format!(
                "unknown protocol version `{version}`"
            ))),
            Err(e) => Err(PolicyError::ProtocolVersion(format!(
                "`{}` is not a JSON string: {e}",
                String::from_utf8_lossy(&reply)
            ))),
        }
    }
}

/// The order policy-evaluator writes an admission request's fields in: its
/// `AdmissionRequest` is a struct, serialised in declaration order
/// (`crates/policy-evaluator/src/admission_request.rs`). A policy may rely
/// on it: this one splits the object as it reads the payload once the kind
/// and operation, which come before it, are known.
const HOST_FIELD_ORDER: [&str; 15] = [
    "uid",
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "object",
    "oldObject",
    "dryRun",
    "options",
];

/// The `validate` payload the host sends: `{"request": …, "settings": …}`,
/// the request's fields in the host's order ([`HOST_FIELD_ORDER`]; any
/// others after them, as they come).
pub fn validate_payload(request: &AdmissionRequest, settings: &Value) -> Vec<u8> {
    let Value::Object(fields) = &request.value else {
        let payload = json!({"request": &request.value, "settings": settings});
        return serde_json::to_vec(&payload).expect("JSON values always serialise");
    };
    let known = HOST_FIELD_ORDER
        .iter()
        .filter_map(|name| fields.get_key_value(*name));
    let others = fields
        .iter()
        .filter(|(name, _)| !HOST_FIELD_ORDER.contains(&name.as_str()));
    let mut out = br#"{"request":{"#.to_vec();
    for (at, (name, value)) in known.chain(others).enumerate() {
        if at > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, name).expect("JSON strings always serialise");
        out.push(b':');
        serde_json::to_writer(&mut out, value).expect("JSON values always serialise");
    }
    out.extend_from_slice(br#"},"settings":"#);
    serde_json::to_writer(&mut out, settings).expect("JSON values always serialise");
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields come in the host's order whatever order the request file
    /// had (serde_json's maps write keys sorted: `object` before
    /// `operation`), and the payload holds the same request and settings.
    #[test]
    fn the_payload_writes_the_request_fields_in_the_hosts_order() {
        let document = json!({"request": {"userInfo": {"username": "u"}, "uid": "1",
            "operation": "CREATE", "object": {"kind": "Machine"}, "oldObject": null,
            "kind": {"group": "cluster.x-k8s.io", "version": "v1beta2", "kind": "Machine"},
            "resource": {"group": "cluster.x-k8s.io", "version": "v1beta2", "resource": "machines"},
            "dryRun": false, "extra": 1}});
        let request = AdmissionRequest::from_document(document.clone()).unwrap();
        let settings = json!({"mode": "validate"});
        let payload = validate_payload(&request, &settings);
        let text = String::from_utf8(payload.clone()).unwrap();
        let at = |field: &str| text.find(&format!("\"{field}\":")).unwrap();
        let order = [
            "uid",
            "kind",
            "resource",
            "operation",
            "userInfo",
            "object",
            "oldObject",
            "dryRun",
            "extra",
        ];
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
        assert_eq!(
            serde_json::from_slice::<Value>(&payload).unwrap(),
            json!({"request": document["request"], "settings": settings})
        );
    }
}
