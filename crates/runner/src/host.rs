//! The host a policy module runs in, as policy-server and kwctl host it:
//! the waPC engine on wasmtime and WASI preview 1, the answers to the
//! guest's host calls (the context-aware allow-list, replay sessions pruned
//! by field masks), and the AdmissionResponse built from the guest's reply.
//!
//! Nothing here reads files or knows a command: `commands` and `tools`
//! build on it.

pub mod callback;
pub mod engine;
pub mod field_mask;
pub mod policy;
pub mod replay;
pub mod request;
pub mod response;
pub mod wasi;
