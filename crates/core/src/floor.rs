//! What the benchmark's floors (crates/floor) do with a `validate`
//! payload, through the policy's own reader, so that the wire's reader
//! stays the core's own. Only with the `floor` feature; crates/floor's
//! documentation says what each floor stands for.

use crate::error::Error;
use crate::evaluate::{self, Route};
use crate::request::lookup::Lookup;
use crate::request::outcome::Outcome;
use crate::wire::{self, Object, Payload, Request};

/// How a floor answers once it has read the payload (and made the
/// policy's look-ups, when it makes them).
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    /// Accepts.
    Accept,
    /// Returns the object unchanged, written back as it was read.
    Echo,
    /// Answers with these bytes: the policy's own reply to one request.
    Reply(&'static [u8]),
}

/// Reads `payload` as the policy does; with `lookup`, makes the look-ups
/// the policy makes for it; then answers as `answer` says. An unreadable
/// payload, and a look-up that fails, are answered as the policy answers
/// them.
pub fn answer(payload: &[u8], lookup: Option<&dyn Lookup>, answer: Answer) -> Vec<u8> {
    let payload = match Payload::decode(payload) {
        Ok(payload) => payload,
        Err(message) => return wire::encode(Outcome::reject(message), None),
    };
    if let Answer::Echo = answer {
        return echo(payload.request.object);
    }
    if let Some(lookup) = lookup
        && let Err(outcome) = look_up_parents(payload, lookup)
    {
        return wire::encode(outcome, None);
    }
    match answer {
        Answer::Reply(reply) => reply.to_vec(),
        Answer::Accept | Answer::Echo => wire::encode(Outcome::allow(), None),
    }
}

/// The object written back as it was read, as the `mutated_object`.
fn echo(object: Option<Object<'_>>) -> Vec<u8> {
    let mut out = br#"{"accepted":true,"mutated_object":"#.to_vec();
    let written = match object {
        Some(Object::Split { value, shape, .. }) => shape.write(&value, &[], &mut out),
        Some(Object::Text(raw)) => {
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

/// The policy's look-ups for the request, through its own code: the
/// settings parsed (they say whether the masks include the in-place
/// fields' sources), the object split as the policy splits it, then
/// [`evaluate::look_up`]. None for a request the policy does not act on.
/// What fails is answered as the policy answers it.
fn look_up_parents(payload: Payload<'_>, lookup: &dyn Lookup) -> Result<(), Outcome> {
    let Payload { settings, request } = payload;
    let Request {
        mut request,
        object,
        route,
        ..
    } = request;
    if route == Route::NotActedOn {
        return Ok(());
    }
    let settings = (settings.parse()).map_err(|error| Error::from(error).into_outcome())?;
    let stages = evaluate::stages(&request.kind, route, &settings);
    let covered = || evaluate::default_projection_covers(&stages);
    let projection = || evaluate::object_projection(&stages);
    if let Some(object) = object {
        let (value, _shape) = object
            .split(covered, projection)
            .map_err(|e| Outcome::reject(wire::decode_error(e)))?;
        request.object = value;
    }
    evaluate::look_up(&request, route, &stages, lookup).map_err(Error::into_outcome)
}
