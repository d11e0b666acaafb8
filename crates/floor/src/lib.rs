//! The benchmark's floors: waPC policies that do only what no policy can
//! avoid. `validate` decodes the payload the way a policy that reads its
//! object does: the fields of the admission request the policy reads, with
//! the object as a `serde_json::Value` and the settings left raw (the
//! policy's own decoding, the core's `wire`, skips the object of a request
//! it does not act on, so it decodes the same or less). The answer is
//! encoded with the real policy's encoder (the echo floor: the SDK's, which
//! is the same).
//!
//! - The **accept floor** (default build) accepts: the least any policy
//!   costs.
//! - The **echo floor** (`--features echo`) returns the request's object
//!   unchanged as `mutated_object`: the least a mutating policy costs, since
//!   a Kubewarden policy returns the whole object and the host parses it and
//!   diffs it against the request's to build the JSONPatch (empty here).
//! - The **look-up floor** (`--features lookup`) is the echo floor plus the
//!   look-ups the policy makes for the request: the same parents, the same
//!   field masks, the answers decoded by the policy's own projection
//!   ([`evaluate::look_up`]). What the policy costs beyond it is its own
//!   work: settings, deciding, and the longer answer it writes.
//! - The **result floor** (`--features result`, with `lookup` too for a
//!   request the policy looks parents up for) decodes the payload like the
//!   echo floor, makes the look-ups if built with them, and answers with
//!   the policy's own reply to one request, compiled in from the file named
//!   by `RESULT_FLOOR_REPLY` at build time (scripts/bench.sh writes it with
//!   `policy-runner bench --save-reply`: the policy run once, never written
//!   by hand). The host then decodes the same reply and diffs the same
//!   mutated object against the request's, so this is the least any policy
//!   that gives this answer costs. Why compiled in, not carried in the
//!   settings: the settings travel in every `validate` payload, so the host
//!   would copy the answer into the guest and the guest scan it on every
//!   request, work the policy does not do; compiled in, the answer is the
//!   module's data, mapped copy-on-write at instantiation, and the guest
//!   only copies it into the reply buffer, which the policy must write
//!   anyway. Its other work is the echo floor's decode and the look-up
//!   floor's look-ups; the decode takes the object whole, as much as the
//!   policy decodes of an XR and more than it decodes of an object with
//!   `managedFields` or `status` (kept as text), so there the floor errs
//!   high and the ratio low.
//!
//! `policy-runner bench --accept-floor … --echo-floor …` measures both next
//! to the policy; `make bench` builds them (scripts/bench.sh).

#![deny(missing_docs)]

use metadata_propagation_core::outcome::Outcome;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::wire;
#[cfg(feature = "lookup")]
use metadata_propagation_core::{error::Error, evaluate};
#[cfg(feature = "lookup")]
use metadata_propagation_policy::HostLookup;
// Linked into every floor for the module's `memcmp` (the policy's
// src/memcmp.rs), which replaces wasi-libc's byte loop: the floors' own
// decoding compares keys too, and a floor on the slower `memcmp` would
// flatter the policy's ratios.
#[cfg(not(feature = "lookup"))]
use metadata_propagation_policy as _;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The `validate` payload, decoded whole.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default)]
    #[cfg_attr(not(feature = "lookup"), allow(dead_code))]
    settings: Option<&'a RawValue>,
    // Decoded by every floor, read by those that answer with the object.
    #[cfg_attr(not(any(feature = "echo", feature = "lookup")), allow(dead_code))]
    request: AdmissionRequest,
}

/// Decodes the request like the policy, then accepts it (or, in the echo
/// floor, returns its object). An undecodable payload is rejected, as the
/// policy does.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    // Checked to be UTF-8 in one pass and read as text, as the policy
    // reads it (`wire::Payload::decode`): from bytes, serde_json would check
    // each string on its own, and a floor that costs more than it must
    // flatters the policy's ratios.
    let decoded = metadata_propagation_core::projection::text(payload)
        .and_then(serde_json::from_str::<Payload<'_>>);
    match decoded {
        Ok(payload) => answer(payload),
        Err(e) => wire::encode(
            Outcome::reject(format!("cannot decode the admission request: {e}")),
            None,
        ),
    }
}

/// The accept floor's answer.
#[cfg(not(any(feature = "echo", feature = "lookup", feature = "result")))]
fn answer(_payload: Payload<'_>) -> Vec<u8> {
    wire::encode(Outcome::allow(), None)
}

/// The echo and look-up floors' answer: the SDK's own mutation response,
/// the same fields and encoder (serde_json) as the policy's. The result
/// floor's: the policy's reply, compiled in.
#[cfg(any(feature = "echo", feature = "lookup", feature = "result"))]
fn answer(payload: Payload<'_>) -> Vec<u8> {
    #[cfg(feature = "lookup")]
    if let Err(error) = look_up_parents(&payload) {
        return wire::encode(Outcome::reject(error.to_string()), None);
    }
    #[cfg(feature = "result")]
    {
        drop(payload);
        REPLY.to_vec()
    }
    #[cfg(not(feature = "result"))]
    kubewarden_policy_sdk::mutate_request(payload.request.object).unwrap_or_default()
}

/// The policy's reply to the request the result floor is built for.
#[cfg(feature = "result")]
const REPLY: &[u8] = include_bytes!(env!("RESULT_FLOOR_REPLY"));

/// The policy's look-ups for a Cluster API request; none for anything else.
/// The settings are parsed as the policy parses them: they say whether the
/// masks include the in-place fields' sources. Refused settings are
/// reported as the policy reports them ([`Error::Settings`]).
#[cfg(feature = "lookup")]
fn look_up_parents(payload: &Payload<'_>) -> Result<(), Error> {
    let request = &payload.request;
    if evaluate::route(&request.kind, &request.operation) != evaluate::Route::Capi {
        return Ok(());
    }
    let settings = (wire::PayloadSettings::Text(payload.settings).parse()).map_err(Error::from)?;
    evaluate::look_up(request, &settings, &HostLookup)
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
