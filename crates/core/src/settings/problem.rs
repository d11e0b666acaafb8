//! The problems the settings module finds itself, each worded once.

use super::*;

/// One problem this module finds in a settings document, each worded here
/// once; rendered into [`SettingsError::problems`], which the tag-profile
/// checks ([`user_profile::prepare`]) add their own lines to.
#[derive(Debug)]
pub(super) enum Problem {
    /// The document is not a JSON object.
    NotAnObject {
        /// Its JSON type, or "invalid JSON".
        found: &'static str,
    },
    /// serde refused the field at `path` (`.` for the document itself).
    Refused {
        /// The path serde_path_to_error names.
        path: String,
        /// serde's message.
        message: String,
    },
    /// An empty key in `cloudTags.propagatingLabels`.
    EmptyLabelKey {
        /// `cloudTags.propagatingLabels[i]`.
        field: String,
    },
    /// A seeded platform label in `cloudTags.propagatingLabels`.
    SeededLabel {
        /// `cloudTags.propagatingLabels[i]`.
        field: String,
        /// The label.
        key: String,
    },
    /// `cloudTags.providerPath` has an empty segment.
    ProviderPath {
        /// The path as written.
        path: String,
    },
    /// A node-sync pattern regex-lite refuses.
    InvalidRegex {
        /// `capi.additionalSyncMachine{Labels,Annotations}[i]`.
        field: String,
        /// The pattern as written.
        pattern: String,
        /// regex-lite's reason.
        error: regex_lite::Error,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotAnObject { found } => write!(
                f,
                "settings: expected an object such as {{\"cloudTags\": {{…}}}}, found {found}"
            ),
            Problem::Refused { path, message } => {
                let path = if path == "." || path.is_empty() {
                    "settings"
                } else {
                    path
                };
                write!(f, "{path}: {message}")
            }
            Problem::EmptyLabelKey { field } => write!(
                f,
                "{field}: empty label key; list exact qualified keys such as \"platform/env\""
            ),
            Problem::SeededLabel { field, key } => write!(
                f,
                "{field}: {} is a seeded platform label and can never be opted into cloud-tag \
                 propagation; remove it from the list",
                quoted(key)
            ),
            Problem::ProviderPath { path } => write!(
                f,
                "cloudTags.providerPath: {} is not a dotted field path; use e.g. {} (the \
                 default) or omit the field",
                quoted(path),
                quoted(DEFAULT_PROVIDER_PATH)
            ),
            Problem::InvalidRegex {
                field,
                pattern,
                error,
            } => {
                write!(f, "{field}: invalid regex {}: {error}", quoted(pattern))?;
                if error.to_string().contains("size limit") {
                    write!(
                        f,
                        " ({REGEX_SIZE_LIMIT} bytes); simplify it, e.g. fewer counted repetitions"
                    )?;
                }
                Ok(())
            }
        }
    }
}
