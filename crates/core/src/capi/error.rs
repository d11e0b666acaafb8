//! A CAPI parent's malformed field, as [`Error`] names it.

use super::rules::Rule;
use crate::error::Error;
use crate::fields::FieldError;
use crate::lookup::ObjectRef;

/// A parent `rule` reads is malformed at `error`'s field.
pub(crate) fn malformed(rule: &Rule, parent: &ObjectRef, error: FieldError) -> Error {
    Error::Parent {
        family: rule.family,
        parent: Box::new(parent.clone()),
        error,
    }
}
