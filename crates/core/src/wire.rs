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
use crate::settings::{RawSettings, Settings, SettingsError};
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// The `validate` payload: `{"request": …, "settings": …}`, read in one
/// pass ([`Payload::decode`]).
pub struct Payload<'a> {
    /// The settings, read as the payload was when they are valid and the
    /// request is one the policy may act on.
    pub settings: PayloadSettings<'a>,
    /// The admission request, its object left as text.
    pub request: Request<'a>,
}

/// The settings of a `validate` payload, as its one pass left them.
// One per request, moved once: boxing the large variant would only add an
// allocation to every request.
#[allow(clippy::large_enum_variant)]
pub enum PayloadSettings<'a> {
    /// Read: valid settings of a request the policy may act on.
    Read(Settings<'a>),
    /// Kept as text (`None`: the payload has none): settings of a request
    /// the policy does not act on, which are never parsed, or settings
    /// [`Settings::parse_text`] must read to name what is wrong with them.
    Text(Option<&'a RawValue>),
}

impl<'a> PayloadSettings<'a> {
    /// The settings, parsed now if the payload's pass kept them as text.
    pub fn parse(self) -> Result<Settings<'a>, SettingsError> {
        match self {
            PayloadSettings::Read(settings) => Ok(settings),
            PayloadSettings::Text(text) => Settings::parse_text(text.map_or("{}", RawValue::get)),
        }
    }
}

/// The members of a `validate` payload.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum PayloadField {
    Settings,
    Request,
    #[serde(other)]
    Other,
}

/// Valid settings, read where they stand in the payload: `null`, or an
/// object [`RawSettings`] reads whole. Anything else fails the payload's
/// pass, and [`Payload::decode`] reads the payload again with the settings
/// kept as text, for [`Settings::parse_text`] to say what is wrong.
struct ValidSettings<'a>(Settings<'a>);

impl<'de> Deserialize<'de> for ValidSettings<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SettingsVisitor;

        impl<'de> Visitor<'de> for SettingsVisitor {
            type Value = ValidSettings<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a settings object")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(ValidSettings(Settings::default()))
            }

            // Only a map: serde would also read a struct written as an
            // array of its field values, which `Settings::parse_text` refuses.
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawSettings::deserialize(MapAccessDeserializer::new(map))
                    .map(|raw| ValidSettings(Settings::from(raw)))
            }
        }

        deserializer.deserialize_any(SettingsVisitor)
    }
}

/// A `validate` payload read in one pass: the settings read as they come
/// when `read_settings`, kept as text otherwise or when the request (which
/// hosts write first) is one the policy does not act on.
struct PayloadVisitor {
    read_settings: bool,
}

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = Payload<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct Payload")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload<'de>, A::Error> {
        use serde::de::Error;
        let mut request: Option<Request<'de>> = None;
        let mut settings: Option<PayloadSettings<'de>> = None;
        while let Some(field) = map.next_key::<PayloadField>()? {
            match field {
                PayloadField::Settings if settings.is_some() => {
                    return Err(A::Error::duplicate_field("settings"));
                }
                PayloadField::Settings => {
                    let acted_on = request.as_ref().is_none_or(|r| {
                        route(&r.request.kind, &r.request.operation) != Route::NotActedOn
                    });
                    settings = Some(if self.read_settings && acted_on {
                        PayloadSettings::Read(map.next_value::<ValidSettings>()?.0)
                    } else {
                        PayloadSettings::Text(map.next_value()?)
                    });
                }
                PayloadField::Request if request.is_some() => {
                    return Err(A::Error::duplicate_field("request"));
                }
                PayloadField::Request => request = Some(map.next_value()?),
                PayloadField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Payload {
            settings: settings.unwrap_or(PayloadSettings::Text(None)),
            request: request.ok_or_else(|| A::Error::missing_field("request"))?,
        })
    }
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
    /// The old object, as text: scanned, as skipping it would be, and
    /// decoded only on a composite resource's UPDATE whose settings say its
    /// profile may matter ([`old_provider`]).
    pub old_object: Option<&'a RawValue>,
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
    OldObject,
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
                        // Borrowed, not decoded: scanning it costs what
                        // skipping it would, whatever order the fields come in.
                        RequestField::OldObject => read.old_object = map.next_value()?,
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
    ///
    /// The settings are read in the same pass: keeping them as text to
    /// parse afterwards scanned them twice (BENCHMARKS.md). serde cannot
    /// step back, so settings that fail to read fail the pass, and the
    /// payload is read a second time with its settings kept as text, for
    /// [`Settings::parse_text`] to name every field at fault, as it would
    /// have on its own. Only a payload with refused settings, or one that
    /// cannot be read at all, pays for that second reading.
    pub fn decode(payload: &'a [u8]) -> Result<Self, String> {
        let text = crate::projection::text(payload).map_err(decode_error)?;
        let read = |read_settings| {
            let mut de = serde_json::Deserializer::from_str(text);
            let payload = (&mut de).deserialize_map(PayloadVisitor { read_settings })?;
            de.end().map(|()| payload)
        };
        read(true).or_else(|_| read(false)).map_err(decode_error)
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
        old_object,
    } = request;
    let route = route(&request.kind, &request.operation);
    if route == Route::NotActedOn {
        let answer = encode(not_acted_on(&request.kind, &request.operation), None);
        step(Step::Encoded);
        return answer;
    }
    let settings = match settings.parse() {
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
    if let Some(old_object) =
        old_object.filter(|_| route == Route::CloudTags && request.operation == "UPDATE")
    {
        request.old_object = old_provider(old_object, &settings);
    }
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

/// What the policy reads of a composite resource's old object: its
/// provider, decoded only when the prefix in force may differ between
/// profiles (`Value::Null` otherwise, and for an old object that cannot be
/// read, which the API server never sends).
fn old_provider(old_object: &RawValue, settings: &Settings) -> Value {
    let varies = settings
        .cloud_tags()
        .is_ok_and(|cloud_tags| cloud_tags.prefixes_vary());
    if !varies {
        return Value::Null;
    }
    let provider = settings.provider_path();
    Projection::of(&[&provider[..]])
        .split(old_object.get().as_bytes())
        .map_or(Value::Null, |(value, _)| value)
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

#[cfg(test)]
mod tests {
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
