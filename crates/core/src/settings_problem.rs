//! What can be wrong with a settings document: each problem names the
//! setting at fault and what is wrong with it. The document's own problems
//! (not an object, a member serde refuses) are worded here; each stage
//! words the problems of its own section where it checks them
//! (`capi::propagation_settings`, `tags::cloud_settings`, the tag profiles and tag
//! keys), and hands them over as [`SettingsProblemKind::Checked`]. A
//! settings document is read member by member (`document_members`), so
//! that every problem names its member.

use crate::json::fields::FieldPath;
use std::fmt;

pub(crate) mod document_members;

/// Everything wrong with a settings document, each problem naming its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The problems, in field order.
    pub(crate) problems: Vec<SettingsProblem>,
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
pub(crate) struct SettingsProblem {
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

/// The value in `cell`, prepared by `prepare` the first time: a section of
/// the settings is checked and prepared once, when a request first reads it.
pub(crate) fn prepared<T>(
    cell: &std::cell::OnceCell<Result<T, SettingsError>>,
    prepare: impl FnOnce() -> Result<T, SettingsError>,
) -> Result<&T, SettingsError> {
    cell.get_or_init(prepare).as_ref().map_err(Clone::clone)
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
    /// A problem a stage's check found in its own section, as the stage
    /// words it.
    #[error("{0}")]
    Checked(String),
}
