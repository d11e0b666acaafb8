//! The policy's pure core: Cluster API metadata propagation and Crossplane
//! XR cloud tags, decided over `serde_json::Value`.
//!
//! [`evaluate`] dispatches a request to [`capi`] or [`tags`], which return
//! an [`outcome::Outcome`] holding a [`plan::Plan`]; parent objects are read
//! through the [`lookup::Lookup`] trait, and [`wire`] decodes and encodes
//! the JSON the Kubewarden host and the guest exchange. Nothing here knows
//! the SDK, wasm or the host: the policy crate (the waPC edge) supplies the
//! look-up that calls the host, and the runner, the audit, the web page and
//! the tests supply their own.

#![deny(missing_docs)]
// Pure code over `serde_json::Value`: nothing here needs unsafe, and
// nothing may add it.
#![forbid(unsafe_code)]

pub mod api_version;
pub mod capi;
pub mod deviations;
pub mod error;
pub mod evaluate;
pub mod explain;
pub mod fields;
// A test oracle, not part of the policy: only with the `invariants` feature
// (the core's tests, the policy's and the fuzz targets turn it on).
#[cfg(feature = "invariants")]
pub mod invariants;
pub mod key_pattern;
pub mod keyed_list;
pub mod lookup;
pub mod outcome;
pub mod plan;
pub mod projection;
pub mod quote;
pub mod reads;
pub mod request;
pub mod settings;
pub mod sorted_map;
pub mod tags;
pub mod wire;
