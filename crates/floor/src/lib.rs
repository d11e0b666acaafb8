//! The benchmark's floors: waPC policies that do only what any policy giving
//! the scenario's answer must do, so that the policy's cost over a floor is
//! its own work. Every floor reads the `validate` payload with the policy's
//! own reader (the core's `wire`: the request's fields, the
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
//!   own code (`metadata_propagation_core::floor`, the core's `floor`
//!   feature): the settings parsed, the object split as the policy
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

use metadata_propagation_core::floor::{self, Answer};
#[cfg(feature = "lookup")]
use metadata_propagation_policy::HostLookup;

/// How this build answers once the payload is read.
#[cfg(not(any(feature = "echo", feature = "result")))]
const ANSWER: Answer = Answer::Accept;
#[cfg(feature = "echo")]
const ANSWER: Answer = Answer::Echo;
#[cfg(feature = "result")]
const ANSWER: Answer = Answer::Reply(include_bytes!(env!("RESULT_FLOOR_REPLY")));

/// Reads the payload as the policy does, makes the policy's look-ups when
/// built with them, then answers as the floor was built to. An unreadable
/// payload is rejected, as the policy rejects it.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    #[cfg(feature = "lookup")]
    let lookup = Some(&HostLookup as &dyn metadata_propagation_core::lookup::Lookup);
    #[cfg(not(feature = "lookup"))]
    let lookup = None;
    floor::answer(payload, lookup, ANSWER)
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
