//! The waPC edge: decode what the host sends, call the pure core, encode
//! the answer. The only module that knows about waPC and the SDK's wire types.

use crate::evaluate::{acts_on, evaluate, not_acted_on};
use crate::lookup::HostLookup;
use crate::outcome::{Outcome, Verdict};
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;

/// The `validate` payload: `{"request": …, "settings": …}`. Settings stay
/// raw here; [`Settings::parse`] reads them.
#[derive(Deserialize)]
pub struct Payload<'a> {
    /// The settings document, undecoded.
    #[serde(borrow, default)]
    pub settings: Option<&'a RawValue>,
    /// The admission request; its `object` is `null` unless the policy acts
    /// on the request ([`evaluate::acts_on`](crate::evaluate::acts_on)).
    #[serde(deserialize_with = "request_decoded_as_needed")]
    pub request: AdmissionRequest,
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

/// Decodes an AdmissionRequest, building the object's `Value` (most of what
/// decoding a request costs) only when the policy acts on the request. The
/// API server writes `kind` and `operation` before `object`, so the choice
/// is made as the object is reached; in any other order the object is kept
/// as text until the end and decoded then if needed.
fn request_decoded_as_needed<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<AdmissionRequest, D::Error> {
    struct RequestVisitor;

    impl<'de> Visitor<'de> for RequestVisitor {
        type Value = AdmissionRequest;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an AdmissionRequest object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AdmissionRequest, A::Error> {
            let mut request = AdmissionRequest::default();
            let (mut kind_seen, mut operation_seen) = (false, false);
            let mut undecided: Option<Box<RawValue>> = None;
            while let Some(field) = map.next_key::<RequestField>()? {
                match field {
                    RequestField::Uid => request.uid = map.next_value()?,
                    RequestField::Kind => {
                        request.kind = map.next_value()?;
                        kind_seen = true;
                    }
                    RequestField::Operation => {
                        request.operation = map.next_value()?;
                        operation_seen = true;
                    }
                    RequestField::Namespace => request.namespace = map.next_value()?,
                    RequestField::Object if !(kind_seen && operation_seen) => {
                        undecided = Some(map.next_value()?);
                    }
                    RequestField::Object if acts_on(&request.kind, &request.operation) => {
                        request.object = map.next_value()?;
                    }
                    RequestField::Object | RequestField::Other => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            if let Some(object) = undecided
                && acts_on(&request.kind, &request.operation)
            {
                request.object = serde_json::from_str(object.get()).map_err(de::Error::custom)?;
            }
            Ok(request)
        }
    }

    deserializer.deserialize_map(RequestVisitor)
}

impl<'a> Payload<'a> {
    /// Decodes a `validate` payload.
    pub fn decode(payload: &'a [u8]) -> Result<Self, String> {
        serde_json::from_slice(payload)
            .map_err(|e| format!("cannot decode the admission request: {e}"))
    }
}

/// The SDK's `ValidationResponse`, with sorted audit annotations so the same
/// request always gives byte-identical output (the SDK uses a `HashMap`).
#[derive(Serialize)]
struct ValidationResponse<'a> {
    accepted: bool,
    message: Option<&'a str>,
    code: Option<u16>,
    mutated_object: Option<Value>,
    audit_annotations: Option<&'a BTreeMap<String, String>>,
    warnings: Option<&'a [String]>,
}

/// The SDK's `SettingsValidationResponse`.
#[derive(Serialize)]
struct SettingsValidationResponse {
    valid: bool,
    message: Option<String>,
}

/// waPC `validate`: evaluates one request against the host's cluster.
///
/// Nothing is cached across calls: policy-server runs every request on a
/// fresh instance, so a cache would never hit there. The settings are
/// parsed here and each part is prepared only if the request reads it.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    let payload = match Payload::decode(payload) {
        Ok(p) => p,
        Err(message) => return encode(Outcome::reject(message), None),
    };
    if !acts_on(&payload.request.kind, &payload.request.operation) {
        return encode(
            not_acted_on(&payload.request.kind, &payload.request.operation),
            None,
        );
    }
    let raw_settings = payload.settings.map_or("{}", RawValue::get);
    let settings = match Settings::parse(raw_settings.as_bytes()) {
        Ok(s) => s,
        Err(e) => {
            return encode(
                Outcome::reject_with_code(format!("policy settings are not valid: {e}"), 500),
                None,
            );
        }
    };
    let request = payload.request;
    let outcome = evaluate(&request, &settings, &HostLookup);
    encode(outcome, Some(request.object))
}

/// Encodes an outcome; a non-empty plan is applied to the owned object.
pub fn encode(outcome: Outcome, object: Option<Value>) -> Vec<u8> {
    let Outcome {
        verdict,
        warnings,
        audit_annotations,
        ..
    } = outcome;
    let (accepted, message, code, mutated_object) = match verdict {
        Verdict::Allow(plan) if plan.is_empty() => (true, None, None, None),
        Verdict::Allow(plan) => {
            let mutated = object.map(|mut object| {
                plan.apply_owned(&mut object);
                object
            });
            (true, None, None, mutated)
        }
        Verdict::Reject { message, code } => (false, Some(message), Some(code), None),
    };
    let response = ValidationResponse {
        accepted,
        message: message.as_deref(),
        code,
        mutated_object,
        audit_annotations: Some(&audit_annotations).filter(|a| !a.is_empty()),
        warnings: Some(warnings.as_slice()).filter(|w| !w.is_empty()),
    };
    serde_json::to_vec(&response).unwrap_or_else(|e| {
        format!(r#"{{"accepted":false,"message":"cannot encode the response: {e}","code":500}}"#)
            .into_bytes()
    })
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
