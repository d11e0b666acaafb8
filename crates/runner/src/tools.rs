//! The runner's own tools, beyond what kwctl offers: `explain` and `audit`
//! (the policy's core linked natively, parents read from files),
//! `profile` (where one evaluation's time goes) and `patch` (an RFC 6902
//! patch applied to an object, for the end-to-end tests).

pub mod audit;
pub mod explain;
pub mod objects;
pub mod patch;
pub mod profile;
