//! The `validate` payload read in one pass: the request's fields the policy
//! reads, its object split through the route's projection where the route
//! is known as it is read, and the settings read where they stand.

use crate::evaluate::{Route, route, with_projection_before_settings};
use crate::json::projection::{Projection, Shape};
use crate::request::AdmissionRequest;
use crate::settings::{Settings, SettingsError, StrictSettings};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// The `validate` payload: `{"request": …, "settings": …}`, read in one
/// pass ([`Payload::decode`]).
pub(crate) struct Payload<'a> {
    /// The settings, read as the payload was when they are valid and the
    /// request is one the policy may act on.
    pub(crate) settings: PayloadSettings<'a>,
    /// The admission request, its object left as text.
    pub(crate) request: Request<'a>,
}

/// The settings of a `validate` payload, as its one pass left them.
// One per request, moved once: boxing the large variant would only add an
// allocation to every request.
#[allow(clippy::large_enum_variant)]
pub(crate) enum PayloadSettings<'a> {
    /// Read: valid settings of a request the policy may act on.
    Read(Settings),
    /// Kept as text (`None`: the payload has none): settings of a request
    /// the policy does not act on, which are never parsed, or settings
    /// `Settings::parse_text` must read to name what is wrong with them.
    Text(Option<&'a RawValue>),
}

impl<'a> PayloadSettings<'a> {
    /// The settings, parsed now if the payload's pass kept them as text.
    pub(crate) fn parse(self) -> Result<Settings, SettingsError> {
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
                    let acted_on = request
                        .as_ref()
                        .is_none_or(|r| r.route != Route::NotActedOn);
                    settings = Some(if self.read_settings && acted_on {
                        PayloadSettings::Read(map.next_value::<StrictSettings>()?.into())
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
/// ([`crate::evaluate::object_projection`]); the settings come after the request, so the
/// object is split through the route's projection as the default settings
/// would make it (`with_projection_before_settings`) when its kind and
/// operation came before it (as every host writes them), and kept as text
/// otherwise.
#[derive(Default)]
pub(crate) struct Request<'a> {
    /// The request with a `null` object.
    pub(crate) request: AdmissionRequest,
    /// The object, when the request has one.
    pub(crate) object: Option<Object<'a>>,
    /// The old object, as text: scanned, as skipping it would be, and
    /// decoded only on a composite resource's UPDATE whose settings say its
    /// profile may matter (`old_provider`).
    pub(crate) old_object: Option<&'a RawValue>,
    /// The request's [`route`], taken once, as soon as its kind and
    /// operation are read.
    pub(crate) route: Route,
}

impl Request<'_> {
    /// The route, taken once both the kind and the operation are read.
    fn take_route(&mut self, kind: bool, operation: bool) {
        if kind && operation {
            self.route = route(&self.request.kind, &self.request.operation);
        }
    }
}

/// A request's object as the payload's one pass left it.
pub(crate) enum Object<'a> {
    /// Its text, borrowed from the payload: its kind or operation came
    /// after it, or the policy does not act on it.
    Text(&'a RawValue),
    /// Split, as the payload was read, through what the stages declare
    /// before the settings ([`with_projection_before_settings`]).
    Split {
        /// What the projection decoded.
        value: Value,
        /// The rest, as text.
        shape: Shape<'a>,
    },
}

impl<'a> Object<'a> {
    /// The object split through `projection`: as read when `covered` says
    /// that what it was split through keeps everything `projection` keeps
    /// ([`crate::evaluate::default_projection_covers`]: what it keeps
    /// beyond is decoded but not read, and written back as its text),
    /// otherwise what `projection` keeps beyond is decoded from the parts
    /// the first split kept as text ([`Shape::refine`]), or split from its
    /// text when it was not split. `covered` is asked, and `projection`
    /// built, only when needed: an object kept as text asks nothing.
    pub(crate) fn split<'p>(
        self,
        covered: impl FnOnce() -> bool,
        projection: impl FnOnce() -> Projection<'p>,
    ) -> Result<(Value, Shape<'a>), serde_json::Error> {
        match self {
            Object::Split { value, shape, .. } if covered() => Ok((value, shape)),
            Object::Split {
                mut value,
                mut shape,
            } => {
                shape.refine(&mut value, &projection())?;
                Ok((value, shape))
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
                let (mut kind, mut operation) = (false, false);
                while let Some(field) = map.next_key::<RequestField>()? {
                    let request = &mut read.request;
                    match field {
                        RequestField::Uid => request.uid = map.next_value()?,
                        RequestField::Kind => {
                            request.kind = map.next_value()?;
                            kind = true;
                            read.take_route(kind, operation);
                        }
                        RequestField::Operation => {
                            request.operation = map.next_value()?;
                            operation = true;
                            read.take_route(kind, operation);
                        }
                        RequestField::Namespace => request.namespace = map.next_value()?,
                        RequestField::Object => {
                            let (kind, route) = (&read.request.kind, read.route);
                            let object = with_projection_before_settings(kind, route, |split| {
                                Ok(match split {
                                    // Read once: split where the route is
                                    // known and acts, as scanning it first
                                    // would be a second pass.
                                    Some(projection) => {
                                        let (value, shape) =
                                            map.next_value_seed(projection.splitter())?;
                                        Object::Split { value, shape }
                                    }
                                    // Scanned, not decoded: the same work as
                                    // skipping it; split once the settings
                                    // say what to decode.
                                    None => Object::Text(map.next_value()?),
                                })
                            });
                            read.object = Some(object?);
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
    /// Every decode in the module reads text (`crate::json::projection::text`),
    /// so serde_json's decoders are in it once.
    ///
    /// The settings are read in the same pass, so they are scanned once,
    /// not once as text and again to parse them. serde cannot
    /// step back, so settings that fail to read fail the pass, and the
    /// payload is read a second time with its settings kept as text, for
    /// `Settings::parse_text` to name every field at fault, as it would
    /// have on its own. Only a payload with refused settings, or one that
    /// cannot be read at all, pays for that second reading.
    pub(crate) fn decode(payload: &'a [u8]) -> Result<Self, String> {
        let text = crate::json::projection::text(payload).map_err(decode_error)?;
        let read = |read_settings| {
            let mut de = serde_json::Deserializer::from_str(text);
            let payload = (&mut de).deserialize_map(PayloadVisitor { read_settings })?;
            de.end().map(|()| payload)
        };
        read(true).or_else(|_| read(false)).map_err(decode_error)
    }
}

pub(crate) fn decode_error(e: serde_json::Error) -> String {
    format!("cannot decode the admission request: {e}")
}
