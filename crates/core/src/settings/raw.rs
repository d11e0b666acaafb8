//! The settings as users write them (camelCase, all optional, unknown
//! fields refused), read by serde's derive: what `validate_settings` and
//! every `validate` payload parse, before anything is prepared.

use crate::capi::RawCapiSettings;
use crate::json::null_unset::null_is_default;
use crate::request::mode::Mode;
use crate::tags::RawCloudTagSettings;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, Visitor};
use std::fmt;

/// The settings as written by the user (camelCase, all optional, `null`
/// meaning unset).
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSettings {
    /// `mutate` (default) or `validate`.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) mode: Mode,
    /// Cluster API propagation settings.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) capi: RawCapiSettings,
    /// Crossplane XR cloud-tag settings.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) cloud_tags: RawCloudTagSettings,
}

/// The one strict read of accepted settings, on their own
/// ([`super::Settings::parse_text`]) and where they stand in a `validate`
/// payload ([`crate::wire`]) alike: `null` is the defaults, an object is
/// read whole by [`RawSettings`]' derive, and anything else is refused (the
/// derive would also read a struct written as the list of its field
/// values, which only gives confusing messages). One read, so one copy of
/// the derive in the module for every accepted document.
pub(crate) struct StrictSettings(pub(crate) RawSettings);

impl<'de> Deserialize<'de> for StrictSettings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrictVisitor;

        impl<'de> Visitor<'de> for StrictVisitor {
            type Value = StrictSettings;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a settings object")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(StrictSettings(RawSettings::default()))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawSettings::deserialize(MapAccessDeserializer::new(map)).map(StrictSettings)
            }
        }

        deserializer.deserialize_any(StrictVisitor)
    }
}
