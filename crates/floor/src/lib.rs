//! The benchmark's floors: waPC policies that do only what no policy can
//! avoid. `validate` decodes the payload the way a policy that reads its
//! object does: the fields of the admission request the policy reads, with
//! the object as a `serde_json::Value` and the settings left raw (the
//! policy's own edge skips the object of a request it does not act on, so
//! it decodes the same or less). The answer is encoded with the real
//! policy's encoder (the echo floor: the SDK's, which is the same).
//!
//! - The **accept floor** (default build) accepts: the least any policy
//!   costs.
//! - The **echo floor** (`--features echo`) returns the request's object
//!   unchanged as `mutated_object`: the least a mutating policy costs, since
//!   a Kubewarden policy returns the whole object and the host parses it and
//!   diffs it against the request's to build the JSONPatch (empty here).
//!
//! `policy-runner bench --accept-floor … --echo-floor …` measures both next
//! to the policy; `make bench` builds them (scripts/bench.sh).

use metadata_propagation_policy::edge;
use metadata_propagation_policy::outcome::Outcome;
use metadata_propagation_policy::request::AdmissionRequest;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The `validate` payload, decoded whole.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default)]
    #[allow(dead_code)]
    settings: Option<&'a RawValue>,
    request: AdmissionRequest,
}

/// Decodes the request like the policy, then accepts it (or, in the echo
/// floor, returns its object). An undecodable payload is rejected, as the
/// policy does.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Payload<'_>>(payload) {
        // The SDK's own mutation response: the same fields and encoder
        // (serde_json) as the policy's.
        Ok(payload) if cfg!(feature = "echo") => {
            kubewarden_policy_sdk::mutate_request(payload.request.object).unwrap_or_default()
        }
        Ok(_) => edge::encode(Outcome::allow(), None),
        Err(e) => edge::encode(
            Outcome::reject(format!("cannot decode the admission request: {e}")),
            None,
        ),
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
