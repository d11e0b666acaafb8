//! How much of a report to print, which both renderings follow.

use crate::report::{Audited, Status};

/// How much of a report to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Every object with its details.
    Full,
    /// The objects that fail with their details, in their tree; the others
    /// counted per kind (text) or with their status only (JSON).
    Compact,
}

/// Whether an object is printed whole in `form`: every object in full, and
/// the objects that fail in compact.
pub(super) fn detailed(object: &Audited, form: Form) -> bool {
    form == Form::Full || matches!(object.status(), Status::Deviates | Status::Rejected)
}
