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

use crate::host::engine::EnginePre;
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
        let pre = EnginePre::compile(module).map_err(PolicyError::Engine)?;
        Ok(Module { pre })
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
    /// AdmissionResponse; a failed call is a 500 rejection, as in kwctl.
    pub fn validate(&self, request: &AdmissionRequest, settings: &Value) -> AdmissionResponse {
        let uid = request.uid();
        let payload = validate_payload(request, settings);
        let reply = match self.call_validate(&payload) {
            Ok(reply) => reply,
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

/// The `validate` payload the host sends: `{"request": …, "settings": …}`.
pub fn validate_payload(request: &AdmissionRequest, settings: &Value) -> Vec<u8> {
    let payload = json!({"request": &request.value, "settings": settings});
    serde_json::to_vec(&payload).expect("JSON values always serialise")
}
