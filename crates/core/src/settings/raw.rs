//! The settings as users write them (camelCase, all optional, unknown
//! fields refused), read by serde's derive: what `validate_settings` and
//! every `validate` payload parse, before anything is prepared.

use super::defaults::DEFAULT_PROVIDER_PATH;
use crate::settings::tag_key::Bodies;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// What the policy does with the changes the contract asks for.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Make the changes (return a mutated object).
    #[default]
    Mutate,
    /// Never mutate: reject objects that deviate, listing every deviation
    /// (for `mutating: false` policies and background audits).
    Validate,
}

/// The settings as written by the user (camelCase, all optional).
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSettings {
    /// `mutate` (default) or `validate`.
    pub mode: Mode,
    /// Cluster API propagation settings.
    pub capi: RawCapiSettings,
    /// Crossplane XR cloud-tag settings.
    pub cloud_tags: RawCloudTagSettings,
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

/// `capi.*` settings.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCapiSettings {
    /// Like CAPI's `--additional-sync-machine-labels`: RE2 regexes matched
    /// (unanchored) against Machine label keys.
    pub additional_sync_machine_labels: Vec<String>,
    /// Like CAPI's `--additional-sync-machine-annotations`.
    pub additional_sync_machine_annotations: Vec<String>,
    /// Propagate the in-place fields (timeouts, `minReadySeconds`,
    /// readiness gates, taints, deletion order, machine naming) as well as
    /// labels and annotations. Default `true`.
    pub in_place_fields: bool,
}

impl Default for RawCapiSettings {
    fn default() -> Self {
        Self {
            additional_sync_machine_labels: Vec::new(),
            additional_sync_machine_annotations: Vec::new(),
            in_place_fields: true,
        }
    }
}

/// `cloudTags.*` settings.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCloudTagSettings {
    /// Exact qualified label keys opted into tag propagation.
    pub propagating_labels: Vec<String>,
    /// Dotted path to the provider name inside the XR.
    pub provider_path: String,
    /// User-defined tag profiles, tried before the built-in ones. Kept as
    /// their JSON text until an XR needs them: each is parsed and checked by
    /// `crate::settings::user_profile::prepare_profiles`, which reports every profile's
    /// problems, shape errors included, at once. As text, not as
    /// `serde_json::Value`s: a profile is read straight into its fields,
    /// never built as a tree first.
    pub profiles: Vec<ProfileText>,
    /// Also stamp tags on the CAPI infrastructure kinds
    /// (docs/infrastructure-tags.md). Off by default: no object changes on upgrade.
    pub capi_infrastructure: bool,
    /// The tag-key prefix that marks the policy's own tags, where the
    /// applied profile has none of its own ([`super::tag_key::TagKeys`]); `None` when the
    /// document does not set it, or sets it to `null` (what a form that
    /// leaves it empty sends): each profile's default applies then. A
    /// string means set, even when it spells a default.
    pub prefix: Option<String>,
    /// Qualified label key → the tag-key body used instead of that key.
    pub tag_keys: Bodies,
}

impl Default for RawCloudTagSettings {
    fn default() -> Self {
        Self {
            propagating_labels: Vec::new(),
            provider_path: DEFAULT_PROVIDER_PATH.to_owned(),
            profiles: Vec::new(),
            capi_infrastructure: false,
            prefix: None,
            tag_keys: Bodies::new(),
        }
    }
}

/// One of `cloudTags.profiles`, as its JSON text.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ProfileText(pub(crate) Box<RawValue>);

impl ProfileText {
    /// The text of a profile given as a JSON value (tools and tests).
    pub fn of(value: &serde_json::Value) -> Self {
        Self(serde_json::value::to_raw_value(value).expect("JSON values always serialise"))
    }
}

/// Equal when written alike (the text, not what it means).
impl PartialEq for ProfileText {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}
