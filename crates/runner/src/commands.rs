//! The kwctl-compatible commands: `run`, `bench`, `annotate`, `push`,
//! `pull` and `scaffold artifacthub`, and what they share (reading the
//! request, the settings and the replay session; loading a policy the way
//! kwctl does; the policy metadata and the wasm custom section it lives in;
//! the OCI registry).
//!
//! Each command takes the typed arguments `cli` parsed, as
//! kwctl keeps `cli/` apart from `command/`.

pub mod annotate;
pub mod bench;
pub mod input;
pub mod load;
pub mod metadata;
pub mod pull;
pub mod push;
pub mod registry;
pub mod run;
pub mod scaffold;
pub mod wasm_sections;
