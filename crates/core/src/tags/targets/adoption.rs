//! Which label sets say that an object is adopted, and so is left exactly
//! as submitted: a row's [`Adoption`].

/// Which label sets say an object of a row is adopted (DESIGN, "Crossplane
/// composite resources" and "Managed resources"). Each is asked once per
/// request, where it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adoption {
    /// None: CAPI infrastructure is tagged whatever its labels say.
    Never,
    /// The label set its tags are made from, its own (a composite
    /// resource): asked as the tags are decided, or, when its tag field
    /// cannot be read, before ([`Adoption::asks_own_early`]).
    OwnLabelSet,
    /// Its own label set, before its composite resource is read, so that
    /// an adopted managed resource costs no look-up; then the composite
    /// resource's, which its tags are made from, once it is read.
    OwnThenComposite,
}

impl Adoption {
    /// Whether `needs` asks the object's own label set, before any look-up:
    /// always for a managed resource; for a composite resource, only when
    /// its tag field cannot be read (an adopted object is never refused
    /// for its tags), since `decide` asks the same set otherwise.
    pub(crate) fn asks_own_early(self, field_unreadable: bool) -> bool {
        match self {
            Adoption::Never => false,
            Adoption::OwnLabelSet => field_unreadable,
            Adoption::OwnThenComposite => true,
        }
    }

    /// Whether `decide` asks the label set the tags are made from.
    pub(crate) fn asks_tag_source(self) -> bool {
        self != Adoption::Never
    }
}
