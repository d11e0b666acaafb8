//! The `capi` section of the settings, as the CAPI stage reads it: written
//! by the user (camelCase, all optional, unknown fields refused) and
//! prepared on first use. The node-sync patterns are compiled the first
//! time a request reads them, since most requests never do (README,
//! "Settings"); what is wrong with a pattern is worded here.

use super::go_regex;
use crate::capi::key_pattern::KeyPattern;
use crate::json::fields::FieldPath;
use crate::json::null_unset::null_is_default;
use crate::json::quote::quoted;
use crate::settings_problem::{SettingsError, SettingsProblem, SettingsProblemKind, prepared};
use regex_lite::RegexBuilder;
use serde::Deserialize;
use std::cell::OnceCell;

/// Upper bound on the compiled size of one user regex. CAPI's flags take any
/// Go regex; a policy-server evaluates every request with these, so a
/// pathological pattern is refused up front instead of costing memory later.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// `capi.*` settings, as written.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawCapiSettings {
    /// Like CAPI's `--additional-sync-machine-labels`: RE2 regexes matched
    /// (unanchored) against Machine label keys.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) additional_sync_machine_labels: Vec<String>,
    /// Like CAPI's `--additional-sync-machine-annotations`.
    #[serde(deserialize_with = "null_is_default")]
    pub(crate) additional_sync_machine_annotations: Vec<String>,
    /// Propagate the in-place fields (timeouts, `minReadySeconds`,
    /// readiness gates, taints, deletion order, machine naming) as well as
    /// labels and annotations. Default `true`, `null` included.
    #[serde(deserialize_with = "null_is_true")]
    pub(crate) in_place_fields: bool,
}

impl Default for RawCapiSettings {
    fn default() -> Self {
        Self {
            additional_sync_machine_labels: Vec::new(),
            additional_sync_machine_annotations: Vec::new(),
            in_place_fields: true,
        }
    }
}

/// `capi.inPlaceFields` read with `null` as its default, `true`.
fn null_is_true<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Option::<bool>::deserialize(deserializer).map(|set| set.unwrap_or(true))
}

/// The `capi` section, with its patterns compiled on first use.
#[derive(Debug, Default)]
pub(crate) struct CapiSettings {
    raw: RawCapiSettings,
    sync_machine_labels: OnceCell<Result<Vec<KeyPattern>, SettingsError>>,
    sync_machine_annotations: OnceCell<Result<Vec<KeyPattern>, SettingsError>>,
}

impl From<RawCapiSettings> for CapiSettings {
    fn from(raw: RawCapiSettings) -> Self {
        Self {
            raw,
            ..Self::default()
        }
    }
}

impl CapiSettings {
    /// `capi.inPlaceFields`: whether the in-place fields flow.
    pub(crate) fn in_place_fields(&self) -> bool {
        self.raw.in_place_fields
    }

    /// `capi.additionalSyncMachineLabels`, compiled on first use.
    pub(crate) fn sync_machine_labels(&self) -> Result<&[KeyPattern], SettingsError> {
        patterns(
            &self.sync_machine_labels,
            "capi.additionalSyncMachineLabels",
            &self.raw.additional_sync_machine_labels,
        )
    }

    /// `capi.additionalSyncMachineAnnotations`, compiled on first use.
    pub(crate) fn sync_machine_annotations(&self) -> Result<&[KeyPattern], SettingsError> {
        patterns(
            &self.sync_machine_annotations,
            "capi.additionalSyncMachineAnnotations",
            &self.raw.additional_sync_machine_annotations,
        )
    }

    /// Every problem of the section: both pattern lists compiled.
    pub(crate) fn problems(&self) -> impl Iterator<Item = SettingsProblem> {
        [
            self.sync_machine_labels().err(),
            self.sync_machine_annotations().err(),
        ]
        .into_iter()
        .flatten()
        .flat_map(|e| e.problems)
    }
}

/// The key patterns of setting `field`, compiled into `cell` the first time.
fn patterns<'s>(
    cell: &'s OnceCell<Result<Vec<KeyPattern>, SettingsError>>,
    field: &str,
    sources: &[String],
) -> Result<&'s [KeyPattern], SettingsError> {
    prepared(cell, || compile_all(field, sources)).map(Vec::as_slice)
}

fn compile_all(field: &str, patterns: &[String]) -> Result<Vec<KeyPattern>, SettingsError> {
    let mut compiled = Vec::with_capacity(patterns.len());
    let mut problems = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        // A literal (the usual `^example\.com/`) is never compiled, and
        // holds nothing Go refuses: only a pattern to compile is checked.
        let compile = |pattern: &str| {
            if let Some(reason) = go_regex::dialects_part(pattern) {
                let pattern = pattern.to_owned();
                return Err(PatternProblem::GoDialect { pattern, reason });
            }
            RegexBuilder::new(pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map_err(|error| PatternProblem::Invalid {
                    pattern: pattern.to_owned(),
                    error,
                })
        };
        match KeyPattern::new(pattern, compile) {
            Ok(regex) => compiled.push(regex),
            Err(kind) => {
                problems.push(SettingsProblem::new(FieldPath::of(&[field]).index(i), kind))
            }
        }
    }
    if problems.is_empty() {
        Ok(compiled)
    } else {
        Err(SettingsError { problems })
    }
}

/// What is wrong with a node-sync pattern.
#[derive(Debug, thiserror::Error)]
enum PatternProblem {
    /// A pattern regex-lite refuses.
    #[error("invalid regex {}: {error}{}", quoted(.pattern), size_limit_hint(.error))]
    Invalid {
        /// The pattern as written.
        pattern: String,
        /// regex-lite's reason.
        error: regex_lite::Error,
    },
    /// A pattern Go's RE2 refuses, or reads otherwise than regex-lite:
    /// Cluster API's flags would refuse it, or sync other keys.
    #[error(
        "invalid regex {}: {reason}; Cluster API compiles these patterns with Go's regexp",
        quoted(.pattern)
    )]
    GoDialect {
        /// The pattern as written.
        pattern: String,
        /// Where Go and regex-lite part, and the fix.
        reason: String,
    },
}

impl From<PatternProblem> for SettingsProblemKind {
    fn from(problem: PatternProblem) -> Self {
        Self::Checked(problem.to_string())
    }
}

/// What to do about a pattern over [`REGEX_SIZE_LIMIT`], which regex-lite's
/// message leaves out.
fn size_limit_hint(error: &regex_lite::Error) -> String {
    if error.to_string().contains("size limit") {
        format!(" ({REGEX_SIZE_LIMIT} bytes); simplify it, e.g. fewer counted repetitions")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What the settings' tests ask: here, where the field is in reach.
    impl CapiSettings {
        /// Whether `capi.additionalSyncMachineLabels` has been compiled.
        pub(crate) fn labels_compiled(&self) -> bool {
            self.sync_machine_labels.get().is_some()
        }
    }
}
