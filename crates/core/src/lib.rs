//! The policy's pure core: Cluster API metadata propagation and Crossplane
//! XR cloud tags, decided over `serde_json::Value`.
//!
//! [`evaluate`] runs a request through the stages, [`capi`] and `tags`,
//! each behind the one door of `stage.rs`, into an [`outcome::Outcome`]
//! holding a [`plan::Plan`]; parent objects are read through the
//! [`lookup::Lookup`] trait, and [`wire`] decodes and encodes the JSON the
//! Kubewarden host and the guest exchange. Nothing here knows the SDK, wasm
//! or the host: the policy crate (the waPC edge) supplies the look-up that
//! calls the host, and the runner, the audit, the web page and the tests
//! supply their own.
//!
//! The modules form layers, each importing only its own and those below
//! (`scripts/check_module_graph.py` holds it):
//!
//! 1. the base, in three rooms: `kube` (an `apiVersion`, Cluster API's
//!    groups and kinds, ownerReferences, durations), `json` ([`fields`],
//!    [`projection`], keyed lists, the label-set annotation's format,
//!    quoting) and [`request`] (the request, its [`plan`], its
//!    [`outcome`], what it reads of the cluster through [`lookup`]); and
//!    the settings' problem type;
//! 2. `error`, the [`explain`] record and `stage`, the door every stage
//!    goes through;
//! 3. the two stages, [`capi`] and `tags`, side by side: neither imports
//!    the other; each owns its section of the settings and its domain
//!    (the node-sync patterns; the tag profiles, character classes and tag
//!    keys);
//! 4. [`settings`], which reads the user's text into those sections and
//!    reports every problem in it;
//! 5. the decision, [`evaluate`], which runs the stages as a list;
//! 6. the [`wire`].
//!
//! The public API is what the policy, the runner, the audit, the web page,
//! the floors and the fuzz targets call, and the types it names:
//!
//! - the module's two calls, [`wire::validate_with`] and
//!   [`wire::validate_settings`] (and `wire::validate_stepped`, with the
//!   `steps` feature, for the runner's profile);
//! - the decision, [`evaluate::evaluate`], and the same with its reasons,
//!   [`evaluate::explain`] (an [`explain::Explanation`], read as text or
//!   JSON), over an [`request::AdmissionRequest`] and the
//!   [`settings::Settings`], giving an [`outcome::Outcome`] whose
//!   [`plan::Plan`] applies to the object;
//! - the parents, read through the [`lookup::Lookup`] trait by
//!   [`lookup::ObjectRef`] and a [`projection::Projection`];
//!   [`lookup::MapLookup`] answers from memory;
//! - three questions the audit's ownership tree asks of the [`capi`] stage;
//! - behind features, the floors' `floor::answer` and the oracle the fuzz
//!   targets and the policy's bad-input test judge with (`invariants`).
//!
//! Everything else is `pub(crate)` or narrower, and no struct of the wire
//! is public. The core's own tests are modules of the crate (`behaviour`,
//! from `tests/`), so nothing is public for a test's sake.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// Pure code over `serde_json::Value`: nothing here needs unsafe, and
// nothing may add it.
#![forbid(unsafe_code)]

pub mod capi;
pub(crate) mod error;
pub mod evaluate;
pub mod explain;
mod json;
mod kube;
// What the benchmark's floors do with a payload (crates/floor).
#[cfg(feature = "floor")]
pub mod floor;
// A test oracle, not part of the policy: only with the `invariants` feature
// (the core's tests, the policy's and the fuzz targets turn it on).
#[cfg(feature = "invariants")]
pub mod invariants;
pub mod request;
pub use json::{fields, projection};
pub use request::{lookup, outcome, plan};
pub mod settings;
mod settings_problem;
mod stage;
pub(crate) mod tags;
pub mod wire;

// The core's tests name its paths as a user of the crate would
// (`metadata_propagation_core::evaluate::evaluate`), from inside it.
#[cfg(test)]
extern crate self as metadata_propagation_core;

/// The core's behaviour tests (tests/): white-box, so that a table, a
/// profile or a skip reason is tested where it stands without being made
/// public for it. Only `tests/list_scaling.rs`, which installs a counting
/// global allocator, builds as a test of its own.
#[cfg(test)]
#[path = "../tests"]
mod behaviour {
    mod capi_conformance;
    mod capi_metadata;
    mod control_planes;
    mod declared_reads;
    mod explain;
    mod fuzz_findings;
    mod in_place_fields;
    mod infra_tags;
    mod invariants;
    mod lookup_masks;
    mod managed_resources;
    mod node_sync;
    pub(crate) mod passthrough;
    mod profile_problems;
    mod questions_ui;
    mod settings;
    // The src/ unit tests share its helpers too.
    #[path = "tags/main.rs"]
    mod cloud_tags;
    pub(crate) mod support;
    mod tag_keys;
    mod tag_table_ties;
    mod validate_mode;
    mod whole_payloads;
}
