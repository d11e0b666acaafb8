//! Tag keys: the rule that names a label's tag and says which entries of a
//! tag field are the policy's, the settings that name tags and what can be
//! wrong with them, and the opted-in labels.

pub(crate) mod naming_problem;
pub(crate) mod opted_in;
pub(crate) mod prefix_checks;
pub(crate) mod tag_naming;
