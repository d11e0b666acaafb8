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

mod properties;
mod ready_made_profiles;
mod transform;
mod xr;
