//! Kubewarden policy: Cluster API metadata propagation and Crossplane XR
//! cloud tags, decided at admission time.
//!
//! The crate is a pure core ([`evaluate`], [`capi`], [`tags`], [`plan`])
//! over `serde_json::Value`, and a thin waPC [`edge`]. Parent objects are
//! read through the [`lookup::Lookup`] trait so the core runs natively in
//! tests and tools.

#![deny(missing_docs)]

// The allocator is the one place that needs raw pointers (src/arena.rs).
#[allow(unsafe_code)]
pub mod arena;
pub mod capi;
pub mod deviations;
pub mod edge;
pub mod evaluate;
pub mod explain;
pub mod fields;
pub mod invariants;
pub mod key_pattern;
pub mod lookup;
pub mod outcome;
pub mod plan;
pub mod projection;
pub mod quote;
pub mod request;
pub mod settings;
pub mod tags;

/// waPC entry point: registers the functions the Kubewarden host calls.
/// Behind the default `wapc-entry` feature so other modules (the benchmark's
/// floor policy) can link this crate without a second `wapc_init`.
#[cfg(feature = "wapc-entry")]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    use kubewarden_policy_sdk::wapc_guest as guest;
    guest::register_function("validate", |payload| {
        Ok(arena::global::per_request(|| edge::validate(payload)))
    });
    guest::register_function("validate_settings", |payload| {
        Ok(edge::validate_settings(payload))
    });
    guest::register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}
