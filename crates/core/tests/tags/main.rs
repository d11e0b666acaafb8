//! Crossplane XR cloud tags (docs/cloud-tags.md): labels
//! turned into `spec.cloudTags` under each provider's profile. One test
//! crate, one module per angle:
//! - `transform`: the transformer, profile by profile, at every limit;
//! - `properties`: generated label sets against an oracle written from the
//!   providers' documented rules, and user-defined profiles restating the
//!   built-ins;
//! - `ready_made_profiles`: the ready-made profiles of docs/cloud-tags.md on realistic
//!   XRs;
//! - `xr`: whole XRs through `evaluate`, Crossplane v1 and v2.

use super::support;
use metadata_propagation_core::invariants::transform_with;
use metadata_propagation_core::tags::decision::transform::Transformed;
use metadata_propagation_core::tags::keys::tag_naming::{Bodies, TagKeys};
use metadata_propagation_core::tags::profiles::provider_limits::TagProfile;

mod properties;
mod ready_made_profiles;
mod transform;
mod xr;

/// Maps opted-in labels (qualified key, value) to tags under `profile`,
/// with the default tag keys (the profile's own prefix, else its default;
/// no chosen bodies), the labels in any order ([`transform_with`]).
fn transform<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    profile: &'a TagProfile,
) -> Transformed<'a> {
    let no_bodies = Bodies::new();
    transform_with(labels, profile, &TagKeys::new(profile, None, &no_bodies), 0)
}
