//! The benchmark's floors: waPC policies that do only what any policy giving
//! the scenario's answer must do, so that the policy's cost over a floor is
//! its own work. Every floor reads the `validate` payload with the policy's
//! own reader ([`wire::Payload::decode`]: the request's fields, the
//! settings, the object split through the route's projection, the old
//! object only scanned), the cheapest reader there is, and the one the
//! policy runs; a floor that read more (the object whole, the old object
//! decoded) would flatter the policy's ratios.
//!
//! - The **accept floor** (default build) accepts: the least any policy
//!   that reads its request costs.
//! - The **echo floor** (`--features echo`) returns the object unchanged as
//!   `mutated_object`, written back with the policy's writer: the least a
//!   mutating policy costs, since a Kubewarden policy returns the whole
//!   object and the host parses it and diffs it against the request's to
//!   build the JSONPatch (empty here).
//! - The **look-up floor** (`--features lookup`) is the accept floor plus
//!   the look-ups the policy makes for the request, through the policy's
//!   own code (`metadata_propagation_core::evaluate::look_up`, the core's
//!   `floor` feature): the settings parsed, the object split as the policy
//!   splits it, the same parents with the same field masks,
//!   each read once. It accepts, the cheapest answer there is, so any
//!   policy making these look-ups costs at least this.
//! - The **result floor** (`--features result`, with `lookup` too for a
//!   request the policy looks parents up for) reads the payload and makes
//!   the look-ups if built with them, then answers with the policy's own
//!   reply to one request, compiled in from the file named by
//!   `RESULT_FLOOR_REPLY` at build time (scripts/bench.sh writes it with
//!   `policy-runner bench --save-reply`: the policy run once, never written
//!   by hand). The host then decodes the same reply and diffs the same
//!   mutated object against the request's, so this is the least any policy
//!   that gives this answer costs: what the policy pays beyond it is
//!   computing the answer. Why compiled in, not carried in the settings:
//!   the settings travel in every `validate` payload, so the host would
//!   copy the answer into the guest and the guest scan it on every request,
//!   work the policy does not do; compiled in, the answer is the module's
//!   data, mapped copy-on-write at instantiation, and the guest only copies
//!   it into the reply buffer, which the policy must write anyway.
//!
//! `policy-runner bench --accept-floor … --echo-floor …` measures them next
//! to the policy; `make bench` builds them (scripts/bench.sh).

#![deny(missing_docs)]

use metadata_propagation_core::outcome::Outcome;
use metadata_propagation_core::wire::{self, Payload};
#[cfg(feature = "lookup")]
use metadata_propagation_core::{error::Error, evaluate};
#[cfg(feature = "lookup")]
use metadata_propagation_policy::HostLookup;

/// Reads the payload as the policy does, then answers as the floor was
/// built to. An unreadable payload is rejected, as the policy rejects it.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    match Payload::decode(payload) {
        Ok(payload) => answer(payload),
        Err(message) => wire::encode(Outcome::reject(message), None),
    }
}

/// The accept and look-up floors' answer, after the look-ups.
#[cfg(not(any(feature = "echo", feature = "result")))]
fn answer(payload: Payload<'_>) -> Vec<u8> {
    after_look_ups(payload, || wire::encode(Outcome::allow(), None))
}

/// `reply()`, after the policy's look-ups when the floor is built with
/// them; what fails is answered as the policy answers it.
#[cfg(not(feature = "echo"))]
fn after_look_ups(payload: Payload<'_>, reply: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    #[cfg(feature = "lookup")]
    if let Err(outcome) = look_up_parents(payload) {
        return wire::encode(outcome, None);
    }
    #[cfg(not(feature = "lookup"))]
    drop(payload);
    reply()
}

/// The echo floor's answer: the object written back as it was read.
#[cfg(feature = "echo")]
fn answer(payload: Payload<'_>) -> Vec<u8> {
    let mut out = br#"{"accepted":true,"mutated_object":"#.to_vec();
    let written = match payload.request.object {
        Some(wire::Object::Split { value, shape, .. }) => shape.write(&value, &[], &mut out),
        Some(wire::Object::Text(raw)) => {
            out.extend_from_slice(raw.get().as_bytes());
            Ok(())
        }
        None => {
            out.extend_from_slice(b"null");
            Ok(())
        }
    };
    match written {
        Ok(()) => {
            out.push(b'}');
            out
        }
        Err(e) => wire::encode(Outcome::reject(e.to_string()), None),
    }
}

/// The result floor's answer: the policy's reply, compiled in, after the
/// look-ups when built with them.
#[cfg(feature = "result")]
fn answer(payload: Payload<'_>) -> Vec<u8> {
    after_look_ups(payload, || REPLY.to_vec())
}

/// The policy's reply to the request the result floor is built for.
#[cfg(feature = "result")]
const REPLY: &[u8] = include_bytes!(env!("RESULT_FLOOR_REPLY"));

/// The policy's look-ups for the request, through its own code: the
/// settings parsed (they say whether the masks include the in-place
/// fields' sources), the object split as the policy splits it, then
/// [`evaluate::look_up`]. None for a request the policy does not look
/// parents up for. What fails is answered as the policy answers it.
#[cfg(feature = "lookup")]
fn look_up_parents(payload: Payload<'_>) -> Result<(), Outcome> {
    let Payload { settings, request } = payload;
    let wire::Request {
        mut request,
        object,
        route,
        ..
    } = request;
    if route != evaluate::Route::Capi {
        return Ok(());
    }
    let settings = (settings.parse()).map_err(|error| Error::from(error).into_outcome())?;
    let covered = evaluate::default_projection_covers(route, &settings);
    let projection = || evaluate::object_projection(&request.kind, route, &settings);
    let mut text = Vec::new();
    if let Some(object) = object {
        let (value, _shape) = object
            .split(covered, projection, &mut text)
            .map_err(|e| Outcome::reject(format!("cannot decode the admission request: {e}")))?;
        request.object = value;
    }
    evaluate::look_up(&request, &settings, &HostLookup).map_err(Error::into_outcome)
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
