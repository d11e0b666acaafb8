//! Kubernetes' vocabulary as the policy reads it: an `apiVersion`'s group
//! and version, Cluster API's groups and kinds, ownerReferences, and Go's
//! duration text.

pub(crate) mod api_version;
pub(crate) mod duration;
pub(crate) mod kinds;
pub(crate) mod owners;
