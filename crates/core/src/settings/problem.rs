//! What can be wrong with a settings document: each problem names the
//! setting at fault and its kind, and each kind is worded here once.

use super::defaults::{DEFAULT_PROVIDER_PATH, REGEX_SIZE_LIMIT};
use super::tag_key_problem::TagKeyProblem;
use crate::fields::FieldPath;
use crate::quote::quoted;
use crate::settings::user_profile::profile_problem::ProfileProblem;
use std::fmt;

/// Everything wrong with a settings document, each problem naming its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The problems, in field order.
    pub problems: Vec<SettingsProblem>,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SettingsError {}

impl From<SettingsProblem> for SettingsError {
    fn from(problem: SettingsProblem) -> Self {
        Self {
            problems: vec![problem],
        }
    }
}

/// One problem in a settings document: the setting at fault, as users
/// write its path (`cloudTags.propagatingLabels[0]`; `settings` for the
/// document itself), and what is wrong with it. Rendered `field: kind`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {kind}")]
pub struct SettingsProblem {
    /// The setting at fault.
    pub field: FieldPath,
    /// What is wrong with it.
    pub(crate) kind: SettingsProblemKind,
}

impl SettingsProblem {
    /// A problem with the setting at `field`.
    pub(crate) fn new(field: FieldPath, kind: impl Into<SettingsProblemKind>) -> Self {
        Self {
            field,
            kind: kind.into(),
        }
    }

    /// serde refused the settings document as a whole: serde's message.
    pub(crate) fn document_refused(message: String) -> Self {
        Self::new(
            FieldPath::of(&["settings"]),
            SettingsProblemKind::Refused(message),
        )
    }
}

/// What is wrong with a setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SettingsProblemKind {
    /// The document is not a JSON object: its JSON type, or "invalid JSON".
    #[error("expected an object such as {{\"cloudTags\": {{…}}}}, found {0}")]
    NotAnObject(&'static str),
    /// A section (`capi`, `cloudTags`) is not an object: its JSON type.
    #[error("expected an object, found {0}")]
    SectionNotAnObject(&'static str),
    /// serde refused the setting: serde's message.
    #[error("{0}")]
    Refused(String),
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
    /// A node-sync pattern regex-lite refuses.
    #[error("invalid regex {}: {error}{}", quoted(.pattern), size_limit_hint(.error))]
    InvalidRegex {
        /// The pattern as written.
        pattern: String,
        /// regex-lite's reason.
        error: regex_lite::Error,
    },
    /// A node-sync pattern Go's RE2 refuses although regex-lite accepts it:
    /// Cluster API's flags would refuse it.
    #[error(
        "invalid regex {}: {reason}; Cluster API compiles these patterns with Go's regexp",
        quoted(.pattern)
    )]
    GoRefusesRegex {
        /// The pattern as written.
        pattern: String,
        /// What Go refuses, and the fix.
        reason: String,
    },
    /// A problem of one of `cloudTags.profiles`.
    #[error(transparent)]
    Profile(#[from] ProfileProblem),
    /// A problem of a tag-key prefix or of `cloudTags.tagKeys`.
    #[error(transparent)]
    TagKey(#[from] TagKeyProblem),
}

/// What to do about a pattern over [`REGEX_SIZE_LIMIT`], which regex-lite's
/// message leaves out.
fn size_limit_hint(error: &regex_lite::Error) -> String {
    if error.to_string().contains("size limit") {
        format!(" ({REGEX_SIZE_LIMIT} bytes); simplify it, e.g. fewer counted repetitions")
    } else {
        String::new()
    }
}
