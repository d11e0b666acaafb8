//! The arguments several commands share: the settings, and the report's
//! format.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `--settings-json` / `--settings-path`, shared by every command that
/// evaluates; none means `{}`.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// Policy settings as an inline JSON (or YAML) map.
    #[arg(
        short = 's',
        long,
        value_name = "JSON",
        conflicts_with = "settings_path"
    )]
    pub settings_json: Option<String>,

    /// File holding the policy settings (YAML or JSON).
    #[arg(long, value_name = "FILE")]
    pub settings_path: Option<PathBuf>,
}

/// How `bench`, `push`, `explain` and `audit` print their report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Text for people.
    Text,
    /// One JSON document, for scripts.
    Json,
}
