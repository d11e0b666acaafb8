//! The host a policy module runs in, as policy-server and kwctl host it:
//! the waPC engine, WASI preview 1, the host calls (host capabilities,
//! allow-list, look-ups answered from a replay session, from objects or by
//! an API server, pruned by field masks, and recorded as a session) and the
//! AdmissionResponse. It reads no files.

pub mod callback;
pub mod capabilities;
#[cfg(feature = "network")]
pub mod cluster;
pub mod engine;
pub mod field_mask;
pub mod lookups;
pub mod parents;
pub mod policy;
pub mod record;
pub mod replay;
pub mod request;
pub mod response;
pub mod wasi;
