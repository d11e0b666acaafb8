//! Why a dump (or a live audit's listed objects) cannot be audited.

use metadata_propagation_core::lookup::ObjectRef;
use thiserror::Error;

use crate::origin::Origin;

/// Why a dump cannot be audited; each names the file and the document.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuditError {
    /// A document is neither YAML nor JSON.
    #[error("{file} document {document}: not valid YAML or JSON: {reason}")]
    Syntax {
        /// The file.
        file: String,
        /// The document that does not parse, from 1.
        document: usize,
        /// The parser's message (with line and column).
        reason: String,
    },
    /// The text holds no document at all.
    #[error(
        "{file} holds no YAML or JSON document (an empty file, or only comments): \
         write it with `kubectl get <kinds> -A -o yaml > {file}`"
    )]
    NoDocument {
        /// The file.
        file: String,
    },
    /// A document (or List item) is not a Kubernetes object.
    #[error("{origin}: not a Kubernetes object: {problem}")]
    NotAnObject {
        /// Where it is.
        origin: Origin,
        /// What is missing or mistyped.
        problem: String,
    },
    /// An object is listed twice.
    #[error("{origin}: {object} is also at {first}; a dump must list each object once")]
    Duplicate {
        /// Where it is listed again.
        origin: Origin,
        /// Where it is listed first.
        first: Origin,
        /// The object (boxed: the error stays small).
        object: Box<ObjectRef>,
    },
    /// The settings are refused by the policy's own `validate_settings`.
    #[error("Provided settings are not valid: {0}")]
    Settings(String),
}
