//! How the cloud tags word a failure: a malformed field they read, and who
//! asked for an object that could not be read.

use crate::error::Error;
use crate::json::fields::FieldError;
use crate::request::lookup::ObjectRef;

/// Who reads the object a label set starts from, as a failed look-up of it
/// names the reader.
pub(super) const TAG_SOURCE_READER: &str = "whose labels become this object's cloud tags";

/// A malformed field the cloud tags read, of `object` when its row's
/// messages name it (an infrastructure object or its Cluster; `None`: a
/// composite resource, the only object read).
pub(super) fn malformed(object: Option<ObjectRef>, error: FieldError) -> Error {
    Error::Malformed {
        doing: "cannot compute cloud tags",
        whose: object.map_or_else(String::new, |object| format!("{object} ")),
        error,
    }
}
