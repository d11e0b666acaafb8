//! The wire: the JSON the Kubewarden host and the guest exchange. Decodes a
//! `validate` payload, calls the core, and encodes the `ValidationResponse`
//! and the `SettingsValidationResponse`, field for field as the SDK's types
//! would be written. Pure given a [`Lookup`]: the wasm module passes the one
//! that calls the host (the policy crate's `validate`), tools and tests an
//! in-memory one.

mod payload;

use crate::error::Error;
use crate::evaluate::{
    ForKind, Route, default_projection_covers, evaluate_routed, not_acted_on, object_projection,
    old_object_projection, stages,
};
use crate::json::fields::Path;
use crate::json::quote;
use crate::request::lookup::Lookup;
use crate::request::outcome::{Outcome, Verdict};
use crate::request::plan::{Edit, Plan};
use crate::settings::Settings;
#[cfg(feature = "floor")]
pub(crate) use payload::Object;
pub(crate) use payload::decode_error;
pub(crate) use payload::{Payload, Request};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The steps of one `validate` call, reported as each ends
/// (`wire::validate_stepped`, with the `steps` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "steps"), allow(unreachable_pub))]
pub enum Step {
    /// The payload is read (the object only scanned).
    Payload,
    /// The settings are parsed.
    Settings,
    /// The object's projection is decoded.
    Object,
    /// The request is decided (look-ups included).
    Decided,
    /// The answer is written.
    Encoded,
}

/// The SDK's `SettingsValidationResponse`.
#[derive(Serialize)]
struct SettingsValidationResponse {
    valid: bool,
    message: Option<String>,
}

/// waPC `validate`: evaluates one request, its parents read through
/// `lookup`. A request the policy does not act on is answered as soon as
/// its kind and operation are read, without its settings or its object.
///
/// Nothing is cached across calls: policy-server runs every request on a
/// fresh instance, so a cache would never hit there. The settings are
/// parsed here and each part is prepared only if the request reads it.
pub fn validate_with(payload: &[u8], lookup: &dyn Lookup) -> Vec<u8> {
    // Reports no step: the closure does nothing, and is compiled away.
    validate_steps(payload, lookup, &mut |_| {})
}

/// [`validate_with`], calling `step` as each [`Step`] ends, so that a
/// profiler (`policy-runner profile`) times each without a copy of the
/// control flow. Only with the `steps` feature.
#[cfg(feature = "steps")]
pub fn validate_stepped(
    payload: &[u8],
    lookup: &dyn Lookup,
    step: &mut dyn FnMut(Step),
) -> Vec<u8> {
    validate_steps(payload, lookup, step)
}

/// [`validate_with`]'s work, `step` called as each [`Step`] ends.
fn validate_steps(
    payload: &[u8],
    lookup: &dyn Lookup,
    step: &mut (impl FnMut(Step) + ?Sized),
) -> Vec<u8> {
    let Payload { settings, request } = match Payload::decode(payload) {
        Ok(p) => p,
        Err(message) => return encode(Outcome::reject(message), None),
    };
    step(Step::Payload);
    let Request {
        mut request,
        object,
        old_object,
        route,
    } = request;
    if route == Route::NotActedOn {
        let answer = encode(not_acted_on(&request.kind, &request.operation), None);
        step(Step::Encoded);
        return answer;
    }
    let settings = match settings.parse() {
        Ok(s) => s,
        Err(e) => return encode(Error::from(e).into_outcome(), None),
    };
    step(Step::Settings);
    let stages = stages(&request.kind, route, &settings);
    let covered = || default_projection_covers(&stages);
    let projection = || object_projection(&stages);
    let shape = match object
        .map(|object| object.split(covered, projection))
        .transpose()
    {
        Ok(Some((value, shape))) => {
            request.object = value;
            Some(shape)
        }
        Ok(None) => None,
        Err(e) => return encode(Outcome::reject(decode_error(e)), None),
    };
    if let Some(old_object) = old_object.filter(|_| request.operation == "UPDATE") {
        request.old_object = old_read(old_object, &stages);
    }
    step(Step::Object);
    let outcome = evaluate_routed(&request, route, &stages, &settings, lookup);
    // The stages borrow the request: done with them before it gives up its
    // object.
    drop(stages);
    step(Step::Decided);
    // The answer holds the object, which the payload holds too (with the
    // old object and the settings), and the warnings: reserved once, it is
    // copied to grow only by what the plan adds beyond the old object.
    let answer = respond(outcome, payload.len(), |plan, out| match &shape {
        Some(shape) => {
            // The paths outlive the plan, which the object takes: a
            // settings' path is shared, not copied.
            let edited: Vec<Path> = plan.edits.iter().map(Edit::path).cloned().collect();
            let mut object = request.object;
            plan.apply_owned(&mut object);
            shape.write(&object, &edited, out).map(|()| true)
        }
        None => Ok(false),
    });
    step(Step::Encoded);
    answer
}

/// What the stages read of an old object ([`old_object_projection`]):
/// `Value::Null` when they read nothing, and for an old object that cannot
/// be read, which the API server never sends.
fn old_read(old_object: &RawValue, stages: &[ForKind<'_>]) -> Value {
    old_object_projection(stages)
        .and_then(|projection| projection.split(old_object.get().as_bytes()).ok())
        .map_or(Value::Null, |(value, _)| value)
}

/// Encodes an outcome; a non-empty plan is applied to the owned object.
pub(crate) fn encode(outcome: Outcome, object: Option<Value>) -> Vec<u8> {
    respond(outcome, 0, |plan, out| match object {
        Some(mut object) => {
            plan.apply_owned(&mut object);
            serde_json::to_writer(out, &object).map(|()| true)
        }
        None => Ok(false),
    })
}

/// Writes the SDK's `ValidationResponse`, field for field as serde would
/// write it, with sorted audit annotations so the same request always
/// gives byte-identical output (the SDK uses a `HashMap`). The mutated
/// object is written by `object` (which says whether it wrote one) straight
/// into the answer: its untouched parts are text that was never decoded.
fn respond(
    outcome: Outcome,
    capacity: usize,
    object: impl FnOnce(Plan, &mut Vec<u8>) -> Result<bool, serde_json::Error>,
) -> Vec<u8> {
    let Outcome {
        verdict,
        warnings,
        audit_annotations,
        ..
    } = outcome;
    let warned: usize = warnings.iter().map(|warning| warning.len() + 3).sum();
    let mut out = Vec::with_capacity(capacity + warned);
    let written = (|| {
        match verdict {
            Verdict::Allow(plan) => {
                out.extend_from_slice(
                    br#"{"accepted":true,"message":null,"code":null,"mutated_object":"#,
                );
                if plan.is_empty() || !object(plan, &mut out)? {
                    out.extend_from_slice(b"null");
                }
            }
            Verdict::Reject { message, code } => {
                out.extend_from_slice(br#"{"accepted":false,"message":"#);
                serde_json::to_writer(&mut out, &message)?;
                out.extend_from_slice(br#","code":"#);
                serde_json::to_writer(&mut out, &code)?;
                out.extend_from_slice(br#","mutated_object":null"#);
            }
        }
        out.extend_from_slice(br#","audit_annotations":"#);
        serde_json::to_writer(
            &mut out,
            &Some(&audit_annotations).filter(|a| !a.is_empty()),
        )?;
        out.extend_from_slice(br#","warnings":"#);
        write_warnings(&warnings, &mut out);
        out.push(b'}');
        Ok::<(), serde_json::Error>(())
    })();
    match written {
        Ok(()) => out,
        Err(e) => {
            let message = serde_json::Value::from(format!("cannot encode the response: {e}"));
            format!(r#"{{"accepted":false,"message":{message},"code":500}}"#).into_bytes()
        }
    }
}

/// The warnings as serde writes `Option<Vec<String>>`: `null` when there
/// are none. A skip's warning quotes its keys, so each is escaped; hundreds
/// of them (one per skipped label) were half of a large object's answer.
fn write_warnings(warnings: &[String], out: &mut Vec<u8>) {
    if warnings.is_empty() {
        return out.extend_from_slice(b"null");
    }
    out.push(b'[');
    for (index, warning) in warnings.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        quote::write_json_string(warning, out);
    }
    out.push(b']');
}

/// The keyed-list key operations (list keys hashed, pairs of list keys
/// compared) this thread's evaluations have made so far, `validate` calls
/// included: what a quadratic merge of long lists shows in. Only with the
/// `count-key-operations` feature, which the core's tests turn on.
#[cfg(feature = "count-key-operations")]
pub fn key_operations() -> u64 {
    crate::json::keyed_list::key_operations()
}

/// waPC `validate_settings`: `{"valid": bool, "message": …}`, with every
/// problem named by its field (the SDK wrapper would surface serde errors as
/// a waPC error rendered with Debug formatting).
pub fn validate_settings(payload: &[u8]) -> Vec<u8> {
    let response = match Settings::from_json(payload) {
        Ok(_) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(e) => SettingsValidationResponse {
            valid: false,
            message: Some(e.to_string()),
        },
    };
    serde_json::to_vec(&response).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::payload::PayloadSettings;
    use super::*;

    const CREATE: &str = include_str!("../../../test_data/bench/xr-aws-5.request.json");
    const SETTINGS: &str = include_str!("../../../test_data/bench/xr-aws-5.settings.json");

    /// The same XR, deleted: a request the policy does not act on.
    fn delete() -> String {
        let mut request: Value = serde_json::from_str(CREATE).unwrap();
        request["operation"] = "DELETE".into();
        request["oldObject"] = request["object"].take();
        request.to_string()
    }

    /// What the payload's pass made of `settings`: read in it, or kept as
    /// text; then parsed, as `validate_with` does.
    fn read(payload: &str) -> (bool, Result<String, String>) {
        let decoded = Payload::decode(payload.as_bytes()).unwrap();
        let read = matches!(decoded.settings, PayloadSettings::Read(_));
        let parsed = decoded.settings.parse();
        (
            read,
            parsed.map(|s| format!("{s:?}")).map_err(|e| e.to_string()),
        )
    }

    #[test]
    fn settings_read_in_the_pass_are_those_parse_text_gives() {
        let documents = [
            ("{}", true),
            ("null", true),
            (SETTINGS, true),
            (
                r#"{"mode":"validate","cloudTags":{"propagatingLabels":["a\u002fb","c"]}}"#,
                true,
            ),
            (r#"{"capi":{"additionalSyncMachineLabels":["("]}}"#, true),
            ("[]", false),
            (r#"["validate"]"#, false),
            (r#""mutate""#, false),
            ("1", false),
            (r#"{"mode":"enforce"}"#, false),
            (r#"{"cloudTag":{}}"#, false),
            (r#"{"cloudTags":{"propagatingLabels":[1, ""]}}"#, false),
            (r#"{"mode":"mutate","mode":"validate"}"#, false),
        ];
        let create = CREATE;
        let delete = &delete();
        for (document, valid) in documents {
            let expected = Settings::parse_text(document)
                .map(|s| format!("{s:?}"))
                .map_err(|e| e.to_string());
            assert_eq!(expected.is_ok(), valid, "{document}");
            for (request, acted_on) in [(create, true), (delete, false)] {
                for payload in [
                    format!(r#"{{"request":{request},"settings":{document}}}"#),
                    format!(r#"{{"settings":{document},"request":{request}}}"#),
                ] {
                    let (read, parsed) = read(&payload);
                    assert_eq!(parsed, expected, "{payload}");
                    // Settings that come after a request the policy does
                    // not act on are only skipped.
                    let skipped = !acted_on && payload.starts_with(r#"{"request""#);
                    assert_eq!(read, valid && !skipped, "{payload}");
                }
            }
        }
    }

    #[test]
    fn a_payload_without_settings_has_the_default_ones() {
        let (read, parsed) = read(&format!(r#"{{"request":{CREATE}}}"#));
        assert!(!read);
        assert_eq!(
            parsed,
            Ok(format!("{:?}", Settings::parse_text("{}").unwrap()))
        );
    }

    #[test]
    fn a_bad_payload_is_named_as_serde_names_it() {
        let errors = [
            (r#"{"settings":{}}"#.to_owned(), "missing field `request`"),
            (
                "[]".to_owned(),
                "invalid type: sequence, expected struct Payload",
            ),
            (
                format!(r#"{{"request":{CREATE},"request":{CREATE}}}"#),
                "duplicate field `request`",
            ),
            (
                format!(r#"{{"settings":{{}},"request":{CREATE},"settings":{{}}}}"#),
                "duplicate field `settings`",
            ),
            (
                format!(r#"{{"request":{CREATE}}} x"#),
                "trailing characters",
            ),
        ];
        for (payload, error) in errors {
            let message = Payload::decode(payload.as_bytes()).err().unwrap();
            assert!(
                message.starts_with(&format!("cannot decode the admission request: {error}")),
                "{message}"
            );
        }
    }
}
