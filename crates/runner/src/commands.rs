//! The kwctl-compatible commands and what they share: the inputs, loading a
//! policy as kwctl does, the metadata and its wasm section, the registry;
//! and `serve`, policy-server's.
//! Each takes the typed arguments `cli` parsed (kwctl's `cli/` and
//! `command/`).

pub mod annotate;
pub mod bench;
pub mod definition;
pub mod input;
pub mod load;
pub mod metadata;
#[cfg(feature = "network")]
pub mod pull;
#[cfg(feature = "network")]
pub mod push;
#[cfg(feature = "network")]
pub mod registry;
pub mod run;
#[cfg(feature = "network")]
pub mod scaffold;
#[cfg(feature = "network")]
pub mod serve;
pub mod wasm_sections;
