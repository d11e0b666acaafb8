//! Why an object's cloud tags cannot be decided.

use crate::fields::FieldError;
use crate::lookup::ObjectRef;
use crate::settings::SettingsError;

/// Why an object's cloud tags cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum TagsError {
    /// A field the label set, the profile or the tag field is read from is
    /// malformed: in `object` (the infrastructure object or its Cluster, as
    /// messages name them), or in the composite resource itself (`None`:
    /// the only object read).
    #[error("cannot compute cloud tags: {}{error}", object_prefix(.object))]
    Malformed {
        /// The object the field was read from, when messages name it.
        object: Option<Box<ObjectRef>>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// The Cluster could not be read (not NotFound).
    #[error(
        "cannot read {cluster}, whose labels become this object's cloud tags: {message}; the \
         request can be retried once the policy can read it"
    )]
    Lookup {
        /// The Cluster asked for.
        cluster: Box<ObjectRef>,
        /// The host's error, made readable.
        message: String,
    },
    /// The settings could not be prepared (only when `validate_settings`,
    /// which refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

fn object_prefix(object: &Option<Box<ObjectRef>>) -> String {
    object
        .as_ref()
        .map_or_else(String::new, |object| format!("{object} "))
}

impl TagsError {
    /// A malformed field of `object` (`None`: the composite resource).
    pub fn malformed(object: Option<ObjectRef>, error: FieldError) -> Self {
        TagsError::Malformed {
            object: object.map(Box::new),
            error,
        }
    }

    /// Whether the request may succeed when retried (the host failed, or
    /// the policy's own settings did), rather than the object being at fault.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, TagsError::Malformed { .. })
    }
}
