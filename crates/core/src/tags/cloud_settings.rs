//! The `cloudTags` section of the settings, as the tag stage reads it:
//! written by the user (camelCase, all optional, unknown fields refused),
//! then checked and prepared the first time an object to tag needs it (a
//! CAPI request never does). What is wrong with the section's own fields is
//! worded here; the profiles and tag keys word theirs
//! ([`crate::tags::profiles::user_defined`], [`crate::tags::keys::prefix_checks`]).

use super::profiles::Profiles;
use crate::json::fields::FieldPath;
use crate::json::null_unset::null_is_default;
use crate::json::quote::quoted;
use crate::request::mode::Mode;
use crate::settings_problem::{self, SettingsError, SettingsProblem, SettingsProblemKind};
use crate::tags::keys::opted_in::OptedInKeys;
use crate::tags::keys::prefix_checks;
use crate::tags::keys::tag_naming::{Bodies, TagKeys};
use crate::tags::profiles::provider_limits::TagProfile;
use crate::tags::profiles::user_defined::{self, ProfileText};
use crate::tags::targets::managed_resource::{ManagedResources, RawManagedResources};
use serde::Deserialize;
use std::cell::OnceCell;

/// Labels seeded by the platform that can never be opted into cloud-tag
/// propagation: the platform's three seeded Definitions are immutable and
/// cannot be opted in (README, "Settings", `cloudTags.propagatingLabels`).
const SEEDED_LABELS: [&str; 3] = ["platform/origin", "platform/mesh-ip", "platform/domain"];

/// Default dotted path of the provider name inside an XR.
pub(crate) const DEFAULT_PROVIDER_PATH: &str = "spec.parameters.provider";

/// [`DEFAULT_PROVIDER_PATH`]'s segments.
pub(crate) const DEFAULT_PROVIDER_SEGMENTS: &[&str] = &["spec", "parameters", "provider"];

/// `cloudTags.*` settings, as written.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawCloudTagSettings {
    /// Exact qualified label keys opted into tag propagation.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) propagating_labels: Vec<String>,
    /// Dotted path to the provider name inside the XR.
    #[serde(deserialize_with = "null_is_default_path")]
    pub(crate) provider_path: String,
    /// User-defined tag profiles, tried before the built-in ones. Kept as
    /// their JSON text until an XR needs them: each is parsed and checked by
    /// [`user_defined::prepare_profiles`], which reports every profile's
    /// problems, shape errors included, at once. As text, not as
    /// `serde_json::Value`s: a profile is read straight into its fields,
    /// never built as a tree first.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) profiles: Vec<ProfileText>,
    /// Also stamp tags on the CAPI infrastructure kinds
    /// (docs/infrastructure-tags.md). Off by default: no object changes on upgrade.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) capi_infrastructure: bool,
    /// The tag-key prefix that marks the policy's own tags, where the
    /// applied profile has none of its own ([`TagKeys`]); `None` when the
    /// document does not set it, or sets it to `null` (what a form that
    /// leaves it empty sends): each profile's default applies then. A
    /// string means set, even when it spells a default.
    pub(crate) prefix: Option<String>,
    /// Qualified label key → the tag-key body used instead of that key.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) tag_keys: Bodies,
    /// `cloudTags.managedResources`: the managed-resource families tagged,
    /// and rows added to their catalogue.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) managed_resources: RawManagedResources,
}

/// `cloudTags.providerPath` read with `null` as its default,
/// [`DEFAULT_PROVIDER_PATH`].
fn null_is_default_path<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    Option::<String>::deserialize(deserializer)
        .map(|set| set.unwrap_or_else(|| DEFAULT_PROVIDER_PATH.to_owned()))
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
            managed_resources: RawManagedResources::default(),
        }
    }
}

/// The `cloudTags` section as the stage reads it: what the user wrote, the
/// mode the policy runs in (a removal is warned about only when the policy
/// makes it), and the prepared form, built on first use.
#[derive(Debug, Default)]
pub(crate) struct TagSettings {
    raw: RawCloudTagSettings,
    mode: Mode,
    prepared: OnceCell<Result<CloudTagSettings, SettingsError>>,
}

impl TagSettings {
    /// The section `raw`, applied in `mode`.
    pub(crate) fn new(raw: RawCloudTagSettings, mode: Mode) -> Self {
        Self {
            raw,
            mode,
            prepared: OnceCell::new(),
        }
    }

    /// The section applied in `mode`, as prepared so far.
    pub(crate) fn in_mode(self, mode: Mode) -> Self {
        Self { mode, ..self }
    }

    /// `cloudTags.capiInfrastructure`: whether the CAPI infrastructure kinds
    /// get cloud tags. Read without preparing anything, so a CAPI request
    /// with the feature off pays nothing for it.
    pub(crate) fn capi_infrastructure(&self) -> bool {
        self.raw.capi_infrastructure
    }

    /// `cloudTags.providerPath`, split into its segments as written (an
    /// empty segment is [`TagSettings::prepared`]' to report).
    pub(crate) fn provider_path(&self) -> Vec<&str> {
        self.raw.provider_path.split('.').collect()
    }

    /// `cloudTags.managedResources`, checked, when it turns a family on
    /// (`None` otherwise, or when the section does not check: the policy
    /// refuses such settings at load). Without a family nothing is prepared,
    /// so a request pays nothing for the feature being off.
    pub(crate) fn managed_resources(&self) -> Option<&ManagedResources> {
        if !self.raw.managed_resources.any_family() {
            return None;
        }
        self.prepared().ok().map(|p| &p.managed_resources)
    }

    /// Whether `cloudTags.providerPath` is the default one
    /// ([`DEFAULT_PROVIDER_PATH`]).
    pub(crate) fn provider_path_is_default(&self) -> bool {
        self.raw.provider_path == DEFAULT_PROVIDER_PATH
    }

    /// Whether the policy makes the changes (and so warns of the entries
    /// it removes), rather than reporting them as deviations.
    pub(crate) fn mutates(&self) -> bool {
        self.mode == Mode::Mutate
    }

    /// `cloudTags.*`, checked and prepared on first use.
    pub(crate) fn prepared(&self) -> Result<&CloudTagSettings, SettingsError> {
        settings_problem::prepared(&self.prepared, || self.raw.prepare())
    }
}

/// The cloud-tag settings, checked and prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CloudTagSettings {
    /// Qualified label keys opted into cloud-tag propagation, sorted, each
    /// once.
    pub propagating_labels: OptedInKeys,
    /// Segments of `cloudTags.providerPath`.
    pub(crate) provider_path: Vec<String>,
    /// The tag profiles in force: `cloudTags.profiles`, then the built-ins
    /// they do not replace, then the fallback.
    pub profiles: Profiles,
    /// `cloudTags.prefix`, when the settings set it.
    pub(crate) prefix: Option<String>,
    /// `cloudTags.tagKeys`.
    pub(crate) tag_keys: Bodies,
    /// `cloudTags.managedResources`.
    pub(crate) managed_resources: ManagedResources,
}

impl CloudTagSettings {
    /// The tag keys of an object under `profile` ([`TagKeys`]).
    pub(crate) fn tag_keys<'s>(&'s self, profile: &'s TagProfile) -> TagKeys<'s> {
        TagKeys::new(profile, self.prefix.as_deref(), &self.tag_keys)
    }

    /// Whether two composite resources can have different prefixes in
    /// force (a user profile's own, or a built-in default, differs from
    /// another's). Only then does an UPDATE's old object say anything
    /// about which entries are the policy's.
    pub(crate) fn prefixes_vary(&self) -> bool {
        let mut prefixes = self.profiles.selectable().map(|p| self.tag_keys(p).prefix);
        let first = prefixes.next();
        prefixes.any(|prefix| Some(prefix) != first)
    }
}

impl RawCloudTagSettings {
    /// Checks every field, collecting all problems rather than stopping at
    /// the first.
    fn prepare(&self) -> Result<CloudTagSettings, SettingsError> {
        let mut problems = Vec::new();
        // Gathered, then sorted (nearly free on the sorted lists settings
        // usually hold) and deduplicated.
        let mut propagating_labels = Vec::with_capacity(self.propagating_labels.len());
        let labels = FieldPath::of(&["cloudTags", "propagatingLabels"]);
        for (i, key) in self.propagating_labels.iter().enumerate() {
            let field = || labels.index(i);
            if key.is_empty() {
                problems.push(SettingsProblem::new(field(), SectionProblem::EmptyLabelKey));
            } else if SEEDED_LABELS.contains(&key.as_str()) {
                let kind = SectionProblem::SeededLabel(key.clone());
                problems.push(SettingsProblem::new(field(), kind));
            } else {
                propagating_labels.push(key.clone());
            }
        }

        let path = &self.provider_path;
        let provider_path: Vec<String> = path.split('.').map(str::to_owned).collect();
        if provider_path.iter().any(String::is_empty) {
            problems.push(SettingsProblem::new(
                FieldPath::of(&["cloudTags", "providerPath"]),
                SectionProblem::ProviderPath(path.clone()),
            ));
        }

        let profiles = user_defined::prepare_profiles(&self.profiles, &mut problems);
        if let Some(prefix) = &self.prefix {
            prefix_checks::check_prefix(
                FieldPath::of(&["cloudTags", "prefix"]),
                prefix,
                &mut problems,
            );
        }
        prefix_checks::check_bodies(&self.tag_keys, &propagating_labels, &mut problems);
        let managed_resources = self.managed_resources.prepare(&mut problems);

        if problems.is_empty() {
            Ok(CloudTagSettings {
                propagating_labels: OptedInKeys::new(propagating_labels),
                provider_path,
                profiles: Profiles::new(profiles),
                prefix: self.prefix.clone(),
                tag_keys: self.tag_keys.clone(),
                managed_resources,
            })
        } else {
            Err(SettingsError { problems })
        }
    }
}

/// What is wrong with one of the section's own fields.
#[derive(Debug, thiserror::Error)]
enum SectionProblem {
    /// An empty key in `cloudTags.propagatingLabels`.
    #[error("empty label key; list exact qualified keys such as \"platform/env\"")]
    EmptyLabelKey,
    /// A seeded platform label in `cloudTags.propagatingLabels`.
    #[error(
        "{} is a seeded platform label and can never be opted into cloud-tag propagation; \
         remove it from the list",
        quoted(.0)
    )]
    SeededLabel(String),
    /// `cloudTags.providerPath`, as written, has an empty segment.
    #[error(
        "{} is not a dotted field path; use e.g. {} (the default) or omit the field",
        quoted(.0),
        quoted(DEFAULT_PROVIDER_PATH)
    )]
    ProviderPath(String),
}

impl From<SectionProblem> for SettingsProblemKind {
    fn from(problem: SectionProblem) -> Self {
        Self::Checked(problem.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What the settings' tests ask: here, where the field is in reach.
    impl TagSettings {
        /// Whether the section has been checked and prepared.
        pub(crate) fn is_prepared(&self) -> bool {
            self.prepared.get().is_some()
        }
    }
}
