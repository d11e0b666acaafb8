//! Kubewarden policy: Cluster API metadata propagation and Crossplane XR
//! cloud tags, decided at admission time.
//!
//! This crate is the waPC edge and nothing else: [`wapc_init`] registers
//! the functions the host calls, and [`validate`] hands the payload to the
//! core's [`wire`](metadata_propagation_core::wire) with [`HostLookup`],
//! the one look-up that calls the host ([`host_lookup`]). The decisions
//! live in `metadata-propagation-core` (crates/core), which knows neither
//! the SDK nor wasm.
//!
//! The module allocates with Rust's default allocator for wasm32-wasip1
//! (wasi-libc's dlmalloc): a per-request arena saved too little to keep its
//! unsafe code, and compares bytes with wasi-libc's `memcmp`: its own,
//! eight bytes at a time, saved under 3 % on every scenario that stands for
//! real use (BENCHMARKS.md, "What each piece buys"). The one unsafe line is
//! `wapc_init`'s `#[unsafe(no_mangle)]`, the export the host calls.

#![deny(missing_docs)]

pub mod host_lookup;

pub use host_lookup::HostLookup;

/// waPC `validate`: evaluates one request against the host's cluster, its
/// parents read through [`HostLookup`].
pub fn validate(payload: &[u8]) -> Vec<u8> {
    metadata_propagation_core::wire::validate_with(payload, &HostLookup)
}

/// waPC entry point: registers the functions the Kubewarden host calls.
/// Behind the default `wapc-entry` feature so other modules (the benchmark's
/// floor policy) can link this crate without a second `wapc_init`.
#[cfg(feature = "wapc-entry")]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    use kubewarden_policy_sdk::wapc_guest as guest;
    use metadata_propagation_core::wire;
    guest::register_function("validate", |payload| Ok(validate(payload)));
    guest::register_function("validate_settings", |payload| {
        Ok(wire::validate_settings(payload))
    });
    guest::register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}
