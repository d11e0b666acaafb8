//! The kwctl-compatible commands and what they share: the inputs, loading a
//! policy as kwctl does, the metadata and its wasm section, the registry;
//! and `serve`, policy-server's.
//! Each takes the typed arguments `cli` parsed (kwctl's `cli/` and
//! `command/`).

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
pub mod serve;
pub mod wasm_sections;
