//! The composite resource (XR) whose labels become a managed resource's
//! tags: read once, field-masked to its label set, and what the MR gets
//! when it cannot be read (docs/managed-resources.md, "When the look-up
//! fails").
//!
//! An MR UPDATE is never refused for its XR: the provider records an
//! external create with an UPDATE, and one it cannot make wedges the MR
//! (and may leak the cloud resource). So an XR that cannot be read leaves
//! the policy's entries as they are stored, with a warning; only a CREATE,
//! which Crossplane retries on its next compose, is refused, and only for
//! a failure that may pass (not for an XR that does not exist or that the
//! policy may not read, which a retry would not change).

use super::field::{self, Current, Owned};
use crate::error::Error;
use crate::json::fields::FieldError;
use crate::request::AdmissionRequest;
use crate::request::lookup::{LookupError, ObjectRef};
use crate::request::plan::Edit;
use crate::request::reads::Reads;
use crate::tags::decision::transform::Transformed;
use crate::tags::failures::TAG_SOURCE_READER;
use crate::tags::said::clip;
use crate::tags::targets::Target;
use serde_json::Value;

/// Why the XR's label set could not be used.
#[derive(Debug)]
pub(crate) enum Unread {
    /// The XR does not exist (any more, or yet).
    NotFound,
    /// The policy may not read its kind: it is not in the
    /// ClusterAdmissionPolicy's `contextAwareResources`.
    Denied,
    /// The look-up failed (a timeout, RBAC's 403), with the host's words.
    Failed(String),
    /// The XR was read, but its label set is malformed.
    Malformed(FieldError),
}

/// The XR `xr` names, from what the request read, or why it cannot be
/// used; with `xr`, handed back.
pub(crate) fn read(xr: ObjectRef, reads: &mut Reads) -> (ObjectRef, Result<Value, Unread>) {
    let read = match reads.take(&xr) {
        Ok(value) => Ok(value),
        Err(LookupError::NotFound) => Err(Unread::NotFound),
        Err(LookupError::Denied(_)) => Err(Unread::Denied),
        Err(LookupError::Failed(message)) => Err(Unread::Failed(message)),
    };
    (xr, read)
}

/// What an MR whose XR could not be used gets: on CREATE, a failure that
/// may pass (a look-up that failed, a label set that is malformed until
/// the XR is corrected) rejects, retryably, naming the XR; otherwise it
/// is allowed, with one warning and, when its tag field's policy entries
/// differ from the stored ones (an UPDATE's old object), the edit that
/// puts them back. An XR that does not exist leaves the MR as submitted.
pub(crate) fn unread(
    unread: Unread,
    xr: &ObjectRef,
    target: &Target,
    request: &AdmissionRequest,
    (current, owned): (&Current<'_>, Owned<'_>),
) -> Result<(String, Option<Edit>), Error> {
    let create = request.operation == "CREATE";
    let warning = match unread {
        Unread::NotFound => return Ok((not_found(xr), None)),
        Unread::Denied => denied(xr),
        Unread::Failed(message) if create => {
            return Err(Error::Lookup {
                object: Box::new(xr.clone()),
                reader: TAG_SOURCE_READER.into(),
                message,
            });
        }
        Unread::Malformed(error) if create => {
            return Err(Error::ReadMalformed {
                object: Box::new(xr.clone()),
                reader: TAG_SOURCE_READER.into(),
                error,
            });
        }
        Unread::Failed(message) => failed(xr, &message),
        Unread::Malformed(error) => failed(xr, &error.to_string()),
    };
    Ok((warning, as_stored(target, request, current, owned)))
}

/// The edit that makes the policy's entries of the MR's tag field what
/// they are stored as (its old object's, on UPDATE), or `None` when they
/// are already (always, on CREATE: nothing is stored yet).
fn as_stored(
    target: &Target,
    request: &AdmissionRequest,
    current: &Current<'_>,
    owned: Owned<'_>,
) -> Option<Edit> {
    // No old object (a CREATE; an audit or `explain` of a bare object):
    // nothing is known to be stored, and the submitted entries stay.
    if request.operation == "CREATE" || request.old_object.is_null() {
        return None;
    }
    // An old object whose field does not read has no entries to restore:
    // the submitted ones stay.
    let stored = field::read(&request.old_object, target.tag_field()).ok()?;
    let mut kept: Vec<(String, String)> = (stored.policy_entries(owned))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
    kept.sort();
    let remove = (current.policy_entries(owned))
        .filter(|(key, _)| kept.binary_search_by(|(k, _)| k.as_str().cmp(key)).is_err())
        .map(|(key, _)| {
            let why = "not stored: the composite resource could not be read".to_owned();
            (key.to_owned(), why)
        })
        .collect();
    let mut transformed = Transformed {
        tags: kept,
        skipped: Vec::new(),
    };
    let source = || "as stored: the composite resource could not be read".to_owned();
    field::edit(
        target.tag_field(),
        current,
        owned,
        &mut transformed,
        remove,
        source,
    )
}

/// `xr` as warnings name it: kind, namespace/name and API version, each
/// clipped so that the warning stays whole.
fn named(xr: &ObjectRef) -> String {
    let name = match &xr.namespace {
        Some(namespace) => format!("{}/{}", clip(namespace, 25), clip(&xr.name, 35)),
        None => clip(&xr.name, 60).into_owned(),
    };
    format!(
        "composite resource {} {name} ({})",
        clip(&xr.kind, 25),
        clip(&xr.api_version, 35)
    )
}

/// The XR the MR's controller ownerReference names does not exist.
pub(crate) fn not_found(xr: &ObjectRef) -> String {
    format!(
        "cloud tags: {} that composed this managed resource was not found, so its tags are \
         left as submitted",
        named(xr)
    )
}

/// The policy may not read the XR's kind.
pub(crate) fn denied(xr: &ObjectRef) -> String {
    format!(
        "cloud tags: the policy may not read {} {}, so this managed resource's tags are left as \
         stored; add it to the ClusterAdmissionPolicy's spec.contextAwareResources, with RBAC get",
        clip(&xr.api_version, 35),
        clip(&xr.kind, 25)
    )
}

/// The XR could not be read, or its label set is malformed (an UPDATE).
pub(crate) fn failed(xr: &ObjectRef, message: &str) -> String {
    format!(
        "cloud tags: cannot read {} ({}); this managed resource's tags stay as stored",
        named(xr),
        clip(message, 30)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const WARNING_MAX: usize = 255;

    #[test]
    fn every_warning_fits_with_the_longest_inputs() {
        let xr = ObjectRef {
            api_version: format!("{}/v1alpha1", "g".repeat(253)),
            kind: "K".repeat(63),
            name: "n".repeat(253),
            namespace: Some("s".repeat(63)),
        };
        for warning in [not_found(&xr), denied(&xr), failed(&xr, &"m".repeat(500))] {
            assert!(warning.chars().count() <= WARNING_MAX, "{warning}");
        }
    }

    #[test]
    fn warnings_name_the_composite_resource() {
        let xr = ObjectRef {
            api_version: "platform.example.org/v1alpha1".into(),
            kind: "XNetwork".into(),
            name: "net".into(),
            namespace: None,
        };
        assert_eq!(
            not_found(&xr),
            "cloud tags: composite resource XNetwork net (platform.example.org/v1alpha1) that \
             composed this managed resource was not found, so its tags are left as submitted"
        );
        assert_eq!(
            denied(&xr),
            "cloud tags: the policy may not read platform.example.org/v1alpha1 XNetwork, so this \
             managed resource's tags are left as stored; add it to the ClusterAdmissionPolicy's \
             spec.contextAwareResources, with RBAC get"
        );
    }
}
