//! What the tags stage decided for one object, returned to the caller when
//! it asks for it, for [`super::why::render`] to put in words.

use super::label_fates::CloudTags;
use crate::request::lookup::ObjectRef;
use crate::tags::profiles::provider_limits::{Origin, TagProfile};
use crate::tags::targets::Target;
use crate::tags::targets::label_source::SourceFound;
use crate::tags::targets::managed_resource::LeftAlone;

/// How the stage ended for one object.
pub(crate) enum Trace<'s> {
    /// Not a composite resource, nor of any row: see the warning.
    NotAComposite,
    /// Of a managed-resource family turned on, with no tag field.
    Untagged,
    /// An UPDATE of a row tagged on CREATE only: the tags are left as
    /// they are.
    CreateOnly(Target),
    /// The label set marks the object adopted: left exactly as submitted.
    Adopted,
    /// A managed resource left as submitted, and why.
    LeftAlone(LeftAlone),
    /// A managed resource whose composite resource could not be read (the
    /// warning says how it ended).
    Unread(ObjectRef),
    /// The tags were decided.
    Tagged(Box<Tagged<'s>>),
}

/// The tags decided for one object, and what chose its profile.
pub(crate) struct Tagged<'s> {
    /// The row of the tag table.
    pub(crate) target: Target,
    /// The decision's record: every label's fate, the entries removed, the
    /// profile and prefix in force (all but how the profile was chosen,
    /// which [`super::why`] words from the rest).
    pub(crate) cloud_tags: CloudTags,
    /// `cloudTags.providerPath`, dotted.
    pub(crate) provider_path: String,
    /// The provider value read there (composite resources).
    pub(crate) provider: Option<String>,
    /// How the search for the object the label set starts from ended.
    pub(crate) found: SourceFound,
    /// The profile applied, and what chose it.
    pub(crate) profile: (&'s TagProfile, Origin),
}
