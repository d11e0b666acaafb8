//! Why a request cannot be decided, and the answer that says so: the one
//! place a failure becomes a status.

use crate::capi::CapiError;
use crate::outcome::Outcome;
use crate::settings::SettingsError;
use crate::tags::TagsError;

/// Why a request cannot be decided: the settings it came with, its Cluster
/// API metadata, or its cloud tags.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CAPI stage failed.
    #[error(transparent)]
    Capi(#[from] CapiError),
    /// The tag stage failed.
    #[error(transparent)]
    Tags(#[from] TagsError),
    /// The settings in the payload do not parse (only when
    /// `validate_settings`, which refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

impl Error {
    /// Whether the request may succeed when retried: a look-up failed, or
    /// the policy's own settings did (only when `validate_settings`, which
    /// refuses them, was bypassed), rather than an object being at fault.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Capi(e) => e.is_retryable(),
            Error::Tags(e) => e.is_retryable(),
            Error::Settings(_) => true,
        }
    }

    /// The answer: a retryable failure is a 500, an object at fault a 400
    /// naming what is wrong.
    pub fn into_outcome(self) -> Outcome {
        if self.is_retryable() {
            return Outcome::reject_with_code(self.to_string(), 500);
        }
        let message = match self {
            Error::Capi(e) => format!("cannot propagate Cluster API metadata: {e}"),
            other => other.to_string(),
        };
        Outcome::reject(message)
    }
}
