//! How a mutation broke the properties.

use crate::json::fields::FieldPath;
use serde_json::Value;

/// How a mutation broke the properties: the first violation found, naming
/// the field or key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Violation {
    /// Something outside the maps and fields the capability owns changed;
    /// both sides are shown with the owned parts taken out.
    #[error("a field outside the contract's maps changed:\n before: {before}\n after:  {after}")]
    OutsideChanged {
        /// `before` without the owned maps and fields.
        before: Value,
        /// `after` without the owned maps and fields.
        after: Value,
    },
    /// A map the capability owns held something else than a map, and the
    /// mutation replaced it.
    #[error("{0} was not a map and was rewritten")]
    NotAMapRewritten(FieldPath),
    /// A key or field is gone that the policy may not remove.
    #[error("{0} was removed")]
    Removed(FieldPath),
    /// A key the policy does not own has another value.
    #[error("{0} was rewritten")]
    Rewritten(FieldPath),
    /// The policy wrote a value that is not a string into a string map.
    #[error("{0} is not a string")]
    NotAString(FieldPath),
    /// A key appeared that the capability does not own.
    #[error("{0} was added but the policy does not own it")]
    AddedUnowned(FieldPath),
    /// The label-set annotation changed on an object the policy only tags
    /// (a composite resource): only users write it there.
    #[error("{0} changed")]
    LabelSetChanged(FieldPath),
    /// The composite resource's tag field changed on an object that is not
    /// one (by its shape): no other object is ever tagged.
    #[error("{0} changed on an object that is not a composite resource")]
    TaggedNotComposite(FieldPath),
    /// An entry went from a tag field without the warning that says so.
    #[error("{0} was removed without its warning")]
    RemovedUnsaid(FieldPath),
    /// A removal warning names an entry the mutation did not remove (or one
    /// said twice).
    #[error("a warning names a removal that did not happen: {0}")]
    SaidNotRemoved(String),
    /// A field holds a value its CRD type does not allow, or a keyed list
    /// lost an entry.
    #[error(
        "{field} was written as {value}, which its type does not allow or which drops an entry"
    )]
    Mistyped {
        /// The field.
        field: FieldPath,
        /// What the mutation wrote there.
        value: Value,
    },
}
