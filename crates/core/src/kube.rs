//! Kubernetes' vocabulary as the policy reads it: an `apiVersion`'s group
//! and version, Cluster API's groups and kinds, ownerReferences and the
//! identity of an object.

pub(crate) mod api_version;
pub(crate) mod kinds;
pub(crate) mod object_ref;
pub(crate) mod owners;
