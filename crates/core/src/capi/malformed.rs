//! How the CAPI rules word a malformed field: of the request's object (what
//! `?` makes of a field error in this stage), or of a parent they read.

use super::rules::Rule;
use crate::error::Error;
use crate::json::fields::FieldError;
use crate::request::lookup::ObjectRef;

/// What the CAPI rules could not do when a field they read is malformed.
const CANNOT: &str = "cannot propagate Cluster API metadata";

/// A malformed field of the request's object, as the CAPI rules read it.
impl From<FieldError> for Error {
    fn from(error: FieldError) -> Self {
        Error::Malformed {
            doing: CANNOT,
            whose: String::new(),
            error,
        }
    }
}

/// The error for a parent `rule` reads that is malformed at `error`'s field.
pub(super) fn malformed(rule: &Rule, parent: &ObjectRef, error: FieldError) -> Error {
    Error::Malformed {
        doing: CANNOT,
        whose: format!("parent {parent} of this {} is malformed: ", rule.family),
        error,
    }
}
