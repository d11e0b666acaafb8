//! Reads what the command line names: the admission request (a bare
//! AdmissionRequest or an AdmissionReview), the settings (a YAML or JSON
//! map, inline or in a file; none is `{}`), the replay session and the
//! `--parents` objects.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use metadata_propagation_core::fields::type_name;
use metadata_propagation_core::settings::Settings;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::cli::{RunArgs, SettingsArgs};
use crate::host::lookups::Lookups;
use crate::host::parents::Parents;
use crate::host::replay::Replay;
use crate::host::request::AdmissionRequest;
use crate::tools::objects::{objects_in, read, read_kubernetes_objects};

/// Why the settings could not be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SettingsError {
    /// The settings text is neither YAML nor JSON.
    #[error("settings are not valid YAML or JSON: {0}")]
    Syntax(String),
    /// The settings are valid YAML but not a map.
    #[error("settings must be a map, got {0}")]
    NotMap(&'static str),
}

/// Parses settings given as YAML or JSON; an empty or `null` document is `{}`.
/// JSON is read as JSON first: a YAML parser refuses some JSON, such as a
/// character outside the BMP escaped as a surrogate pair (`"\ud83d\ude00"`).
pub fn settings_from_text(text: &str) -> Result<Value, SettingsError> {
    let value: Value = serde_json::from_str(text)
        .or_else(|_| serde_norway::from_str(text))
        .map_err(|e| SettingsError::Syntax(e.to_string()))?;
    match value {
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Object(_) => Ok(value),
        other => Err(SettingsError::NotMap(type_name(&other))),
    }
}

/// Reads the request file (a bare AdmissionRequest or an AdmissionReview;
/// JSON, or YAML).
pub fn read_request(path: &Path) -> Result<AdmissionRequest> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read request file {}", path.display()))?;
    let document: Value = serde_json::from_str(&text)
        .or_else(|error| serde_norway::from_str(&text).map_err(|_| error))
        .with_context(|| format!("request file {} is not valid JSON", path.display()))?;
    AdmissionRequest::from_document(document)
        .with_context(|| format!("invalid request file {}", path.display()))
}

/// The request `run` and `bench` evaluate: the request file's, or with
/// `--operation` one built around the bare object it holds and
/// `--old-object` (saying so on stderr).
pub fn run_request(args: &RunArgs) -> Result<AdmissionRequest> {
    let (path, old_object) = (&args.request_path, args.old_object.as_deref());
    let Some(operation) = args.operation.as_deref() else {
        return read_request(path);
    };
    if let ("CREATE", Some(old)) = (operation, old_object) {
        bail!("--old-object {} is for an UPDATE", old.display());
    }
    let old = old_object.map(read_one_object).transpose()?;
    let (request, built) = AdmissionRequest::around_object(operation, read_one_object(path)?, old)
        .with_context(|| format!("invalid request file {}", path.display()))?;
    let old_from = match (operation, old_object) {
        ("CREATE", _) => String::new(),
        (_, Some(old)) => format!(", oldObject {}", old.display()),
        (_, None) => ", oldObject the object itself (no --old-object)".to_owned(),
    };
    eprintln!(
        "INFO policy-runner: {} holds a bare object: built the AdmissionRequest around it: \
         {built}{old_from}",
        path.display()
    );
    Ok(request)
}

/// The one object in a YAML or JSON file.
fn read_one_object(path: &Path) -> Result<Value> {
    one_object(&read(path)?, &path.display().to_string())
}

/// The one object in `text`, YAML or JSON, read from `file` (named in
/// errors): how `run --operation` reads its object files, and `patch` its
/// `--object`.
pub fn one_object(text: &str, file: &str) -> Result<Value> {
    let mut objects = objects_in(text, file)?;
    match objects.len() {
        1 => Ok(objects.remove(0)),
        n => bail!("{file} must hold exactly one object, not {n}"),
    }
}

/// Reads the settings (`{}` when none are given).
pub fn read_settings(args: &SettingsArgs) -> Result<Value> {
    match (&args.settings_json, &args.settings_path) {
        (Some(text), _) => settings_from_text(text).context("invalid --settings-json"),
        (None, Some(path)) => {
            let text = fs::read_to_string(path)
                .with_context(|| format!("cannot read settings file {}", path.display()))?;
            settings_from_text(&text)
                .with_context(|| format!("invalid settings file {}", path.display()))
        }
        (None, None) => Ok(Value::Object(Map::new())),
    }
}

/// `settings` parsed by the policy's core linked natively, refused as `run`
/// refuses them (`explain`, `profile`).
pub fn core_settings(settings: &Value) -> Result<Settings> {
    Settings::from_json(settings.to_string().as_bytes())
        .map_err(|e| anyhow!("Provided settings are not valid: {e}"))
}

/// Reads a kwctl replay session.
fn read_replay(path: &Path) -> Result<Replay> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read replay session {}", path.display()))?;
    Replay::from_yaml(&text).with_context(|| format!("invalid replay session {}", path.display()))
}

/// What answers the look-ups (`run`, `bench`, `profile`): the replay
/// session, else the `--parents` objects, else nothing; with `apply_masks`
/// their answers are pruned by the look-ups' field masks, as policy-server
/// prunes them.
pub fn read_lookups(
    session: Option<&Path>,
    parents: &[PathBuf],
    apply_masks: bool,
) -> Result<Lookups> {
    Ok(match (session, parents) {
        (Some(session), _) => Lookups::Replay(read_replay(session)?.with_field_masks(apply_masks)),
        (None, []) => Lookups::None,
        (None, parents) => Lookups::Parents(read_parents(parents)?.with_field_masks(apply_masks)),
    })
}

/// Reads the `--parents` files into the objects of one cluster.
fn read_parents(paths: &[PathBuf]) -> Result<Parents> {
    let mut objects = Vec::new();
    for path in paths {
        let read = read_kubernetes_objects(path).context("invalid --parents file")?;
        objects.extend(
            read.into_iter()
                .map(|(origin, object)| (origin.to_string(), object)),
        );
    }
    Parents::new(objects).context("invalid --parents objects")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_empty_document_is_empty_map() {
        assert_eq!(settings_from_text(""), Ok(json!({})));
    }

    #[test]
    fn settings_yaml_and_json_parse_to_the_same_value() {
        let yaml = "propagate:\n  - team\nenabled: true\n";
        let json = r#"{"propagate": ["team"], "enabled": true}"#;

        assert_eq!(settings_from_text(yaml), settings_from_text(json));
        assert_eq!(
            settings_from_text(yaml),
            Ok(json!({"propagate": ["team"], "enabled": true}))
        );
    }

    /// What Python's `json.dump` and `jq -a` write for a character outside
    /// the BMP, which a YAML parser refuses.
    #[test]
    fn json_settings_with_an_escaped_surrogate_pair_are_read_as_json() {
        assert_eq!(
            settings_from_text(r#"{"cloudTags": {"prefix": "\ud83d\ude00:"}}"#),
            Ok(json!({"cloudTags": {"prefix": "\u{1F600}:"}}))
        );
    }

    #[test]
    fn settings_that_are_not_a_map_name_what_they_are() {
        assert_eq!(
            settings_from_text("- a\n").unwrap_err().to_string(),
            "settings must be a map, got an array"
        );
        assert_eq!(
            settings_from_text("3").unwrap_err().to_string(),
            "settings must be a map, got a number"
        );
    }
}
