//! Why a CAPI object cannot be decided, and whether asking again can help.

use super::rules::Rule;
use crate::fields::FieldError;
use crate::lookup::ObjectRef;
use crate::settings::SettingsError;

/// Why a CAPI object cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum CapiError {
    /// The child itself is malformed.
    #[error("{0}")]
    Child(#[from] FieldError),
    /// A parent is malformed where the contract reads it.
    #[error("parent {parent} of this {family} is malformed: {error}")]
    Parent {
        /// The child's family (`MachineSet`, ...).
        family: &'static str,
        /// The object the malformed field was read from.
        parent: Box<ObjectRef>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// The settings could not be prepared (only when `validate_settings`,
    /// which refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
    /// A parent could not be read.
    #[error(
        "cannot read {parent}, the parent of this {family}: {message}; the request can be \
         retried once the policy can read it"
    )]
    Lookup {
        /// The child's family (`MachineSet`, ...).
        family: &'static str,
        /// The object the look-up asked for.
        parent: Box<ObjectRef>,
        /// The host's error, made readable (the policy crate's
        /// `host_lookup::readable_host_error`).
        message: String,
    },
}

impl CapiError {
    /// Whether the request may succeed when retried (the host failed, or
    /// the policy's own settings did), rather than an object being at
    /// fault.
    pub fn is_retryable(&self) -> bool {
        matches!(self, CapiError::Lookup { .. } | CapiError::Settings(_))
    }
}

/// A parent `rule` reads is malformed at `error`'s field.
pub fn malformed(rule: &Rule, parent: &ObjectRef, error: FieldError) -> CapiError {
    CapiError::Parent {
        family: rule.family,
        parent: Box::new(parent.clone()),
        error,
    }
}
