//! The runner's own tools: `explain` and `audit` (the policy's core linked
//! natively), `profile` (where an evaluation's time goes) and `patch`.

pub mod audit;
pub mod explain;
#[cfg(feature = "network")]
pub mod live_audit;
pub mod objects;
pub mod patch;
pub mod profile;
