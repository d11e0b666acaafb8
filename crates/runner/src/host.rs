//! The host a policy module runs in, as policy-server and kwctl host it:
//! the waPC engine, WASI preview 1, the host calls (allow-list, replay
//! pruned by field masks) and the AdmissionResponse. It reads no files.

pub mod callback;
pub mod engine;
pub mod field_mask;
pub mod policy;
pub mod replay;
pub mod request;
pub mod response;
pub mod wasi;
