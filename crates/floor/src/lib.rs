//! The benchmark's floor: a waPC policy that does only what no policy can
//! avoid. `validate` decodes the payload exactly as the real policy does
//! (`edge::Payload::decode`: the admission request with its object as a
//! `serde_json::Value`, the settings left raw) and encodes an acceptance
//! with the real policy's encoder. `policy-runner bench --floor` runs every
//! scenario against it; the ratio policy / floor is what the policy costs
//! beyond JSON in and out.
//!
//! Build: `cargo build --target wasm32-wasip1 --release -p floor-policy`.

use metadata_propagation_policy::edge::{self, Payload};
use metadata_propagation_policy::outcome::Outcome;

/// Decodes the request like the policy, then accepts it unchanged. An
/// undecodable payload is rejected, as the policy does.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    match Payload::decode(payload) {
        Ok(_) => edge::encode(Outcome::allow(), None),
        Err(message) => edge::encode(Outcome::reject(message), None),
    }
}

/// Every settings document is valid.
pub fn validate_settings(_payload: &[u8]) -> Vec<u8> {
    br#"{"valid":true}"#.to_vec()
}

/// waPC entry point: the three functions a Kubewarden host calls.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    use kubewarden_policy_sdk::wapc_guest as guest;
    guest::register_function("validate", |payload| Ok(validate(payload)));
    guest::register_function("validate_settings", |payload| {
        Ok(validate_settings(payload))
    });
    guest::register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}
