//! The wire: the JSON the Kubewarden host and the guest exchange. Decodes a
//! `validate` payload, calls the core, and encodes the `ValidationResponse`
//! and the `SettingsValidationResponse`, field for field as the SDK's types
//! would be written. Pure given a [`Lookup`]: the wasm module passes the one
//! that calls the host (the policy crate's `validate`), tools and tests an
//! in-memory one.

use crate::evaluate::{
    Route, default_object_projection, default_projection_covers, evaluate_routed, not_acted_on,
    object_projection, route,
};
use crate::lookup::Lookup;
use crate::outcome::{Outcome, Verdict};
use crate::plan::{Edit, Plan};
use crate::projection::{Projection, Shape};
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// The `validate` payload: `{"request": …, "settings": …}`. Settings stay
/// raw here; [`Settings::parse`] reads them.
#[derive(Deserialize)]
pub struct Payload<'a> {
    /// The settings document, undecoded.
    #[serde(borrow, default)]
    pub settings: Option<&'a RawValue>,
    /// The admission request, its object left as text.
    #[serde(borrow)]
    pub request: Request<'a>,
}

/// An AdmissionRequest as the policy reads it: the fields the policy reads,
/// and the object as far as the payload's one pass could read it. Which
/// parts of the object get decoded depends on the route and the settings
/// ([`object_projection`]); the settings come after the request, so the
/// object is split through the route's projection as the default settings
/// would make it ([`default_object_projection`]) when its kind and
/// operation came before it (as every host writes them), and kept as text
/// otherwise.
#[derive(Default)]
pub struct Request<'a> {
    /// The request with a `null` object.
    pub request: AdmissionRequest,
    /// The object, when the request has one.
    pub object: Option<Object<'a>>,
}

/// A request's object as the payload's one pass left it.
pub enum Object<'a> {
    /// Its text, borrowed from the payload: its kind or operation came
    /// after it, or the policy does not act on it.
    Text(&'a RawValue),
    /// Split through `projection` ([`default_object_projection`]) as the
    /// payload was read.
    Split {
        /// What the projection decoded.
        value: Value,
        /// The rest, as text.
        shape: Shape<'a>,
        /// The projection it went through.
        projection: Projection<'static>,
    },
}

impl<'a> Object<'a> {
    /// The object split through `projection`: as read when it was split
    /// through one that keeps everything `projection` keeps (what it keeps
    /// beyond is decoded but not read, and written back as its text),
    /// otherwise split again from its text (written back whole into
    /// `text`, which the new shape borrows, when it was split through
    /// another). `covered` says, when the settings already tell, that the
    /// projection it was split through keeps everything `projection` does
    /// ([`default_projection_covers`]); `projection` is built only when it
    /// is needed.
    pub fn split<'t, 'p>(
        self,
        covered: bool,
        projection: impl FnOnce() -> Projection<'p>,
        text: &'t mut Vec<u8>,
    ) -> Result<(Value, Shape<'t>), serde_json::Error>
    where
        'a: 't,
    {
        match self {
            Object::Split { value, shape, .. } if covered => Ok((value, shape)),
            Object::Split {
                value,
                shape,
                projection: read,
            } => {
                let projection = projection();
                if read.covers(&projection) {
                    return Ok((value, shape));
                }
                shape.write(&value, &[], text)?;
                projection.split(text)
            }
            Object::Text(raw) => projection().split(raw.get().as_bytes()),
        }
    }
}

/// The fields of an AdmissionRequest the policy reads.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum RequestField {
    Uid,
    Kind,
    Operation,
    Namespace,
    Object,
    #[serde(other)]
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Request<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RequestVisitor;

        impl<'de> Visitor<'de> for RequestVisitor {
            type Value = Request<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an AdmissionRequest object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request<'de>, A::Error> {
                let mut read = Request::default();
                let request = &mut read.request;
                let (mut kind, mut operation) = (false, false);
                while let Some(field) = map.next_key::<RequestField>()? {
                    match field {
                        RequestField::Uid => request.uid = map.next_value()?,
                        RequestField::Kind => {
                            request.kind = map.next_value()?;
                            kind = true;
                        }
                        RequestField::Operation => {
                            request.operation = map.next_value()?;
                            operation = true;
                        }
                        RequestField::Namespace => request.namespace = map.next_value()?,
                        RequestField::Object => {
                            let route = (kind && operation)
                                .then(|| route(&request.kind, &request.operation))
                                .filter(|route| *route != Route::NotActedOn);
                            read.object = Some(match route {
                                // Read once: split where the route is known
                                // and acts, as scanning it first would be a
                                // second pass.
                                Some(route) => {
                                    let projection =
                                        default_object_projection(&request.kind, route);
                                    let (value, shape) =
                                        map.next_value_seed(projection.splitter())?;
                                    Object::Split {
                                        value,
                                        shape,
                                        projection,
                                    }
                                }
                                // Scanned, not decoded: the same work as
                                // skipping it.
                                None => Object::Text(map.next_value()?),
                            });
                        }
                        RequestField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(read)
            }
        }

        deserializer.deserialize_map(RequestVisitor)
    }
}

impl<'a> Payload<'a> {
    /// Decodes a `validate` payload.
    ///
    /// The payload is checked to be UTF-8 once, as a whole, and read as
    /// text: read from bytes, serde_json checks each string it decodes on
    /// its own, which costs more than one pass over the whole payload.
    /// Every decode in the module reads text ([`crate::projection::text`]),
    /// so serde_json's decoders are in it once.
    pub fn decode(payload: &'a [u8]) -> Result<Self, String> {
        let text = crate::projection::text(payload).map_err(decode_error)?;
        serde_json::from_str(text).map_err(decode_error)
    }
}

fn decode_error(e: serde_json::Error) -> String {
    format!("cannot decode the admission request: {e}")
}

/// The SDK's `SettingsValidationResponse`.
#[derive(Serialize)]
struct SettingsValidationResponse {
    valid: bool,
    message: Option<String>,
}

/// The steps of one [`validate_with`] call, reported as each ends, so a
/// profiler can time them without a copy of the control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// waPC `validate`: evaluates one request, its parents read through
/// `lookup`, calling `step` as each [`Step`] ends. A request the policy does
/// not act on is answered after [`Step::Payload`], without its settings or
/// its object.
///
/// Nothing is cached across calls: policy-server runs every request on a
/// fresh instance, so a cache would never hit there. The settings are
/// parsed here and each part is prepared only if the request reads it.
pub fn validate_with(payload: &[u8], lookup: &dyn Lookup, step: &mut dyn FnMut(Step)) -> Vec<u8> {
    let Payload { settings, request } = match Payload::decode(payload) {
        Ok(p) => p,
        Err(message) => return encode(Outcome::reject(message), None),
    };
    step(Step::Payload);
    let Request {
        mut request,
        object,
    } = request;
    let route = route(&request.kind, &request.operation);
    if route == Route::NotActedOn {
        let answer = encode(not_acted_on(&request.kind, &request.operation), None);
        step(Step::Encoded);
        return answer;
    }
    let raw_settings = settings.map_or("{}", RawValue::get);
    let settings = match Settings::parse_text(raw_settings) {
        Ok(s) => s,
        Err(e) => {
            return encode(
                Outcome::reject_with_code(format!("policy settings are not valid: {e}"), 500),
                None,
            );
        }
    };
    step(Step::Settings);
    let covered = default_projection_covers(route, &settings);
    let projection = || object_projection(&request.kind, route, &settings);
    let mut text = Vec::new();
    let shape = match object
        .map(|object| object.split(covered, projection, &mut text))
        .transpose()
    {
        Ok(Some((value, shape))) => {
            request.object = value;
            Some(shape)
        }
        Ok(None) => None,
        Err(e) => return encode(Outcome::reject(decode_error(e)), None),
    };
    step(Step::Object);
    let outcome = evaluate_routed(&request, route, &settings, lookup);
    step(Step::Decided);
    // The answer holds the object, which the payload holds too (with the
    // old object and the settings): reserved once, it is never copied to
    // grow.
    let answer = respond(outcome, payload.len(), |plan, out| match &shape {
        Some(shape) => {
            let edited: Vec<&[&str]> = plan.edits.iter().map(Edit::path).collect();
            let mut object = request.object;
            // The keys a map edit sets are merged in as the map is written
            // wherever it is written whole, not inserted into it first.
            let fills = plan.apply_leaving_fills(&mut object, |path| shape.writes_whole(path));
            shape
                .write_filled(&object, &edited, &fills, out)
                .map(|()| true)
        }
        None => Ok(false),
    });
    step(Step::Encoded);
    answer
}

/// Encodes an outcome; a non-empty plan is applied to the owned object.
pub fn encode(outcome: Outcome, object: Option<Value>) -> Vec<u8> {
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
    let mut out = Vec::with_capacity(capacity);
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
        serde_json::to_writer(&mut out, &Some(&warnings).filter(|w| !w.is_empty()))?;
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
