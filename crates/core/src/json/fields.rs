//! Reading typed values out of untyped Kubernetes objects.
//!
//! Objects stay `serde_json::Value` end to end (a typed round trip would drop
//! unknown fields). This module is the one place that turns "what is at
//! `spec.template.metadata.labels`" into a typed answer or an error that names
//! the field, so a malformed object gets a message the user can act on.

pub(crate) use crate::json::field_path::{FieldPath, Path, Segments};
use crate::json::go_duration::InvalidDuration;
use crate::json::labels_annotation::Malformed;
pub(crate) use crate::json::quote::quoted;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where every Kubernetes object keeps its labels.
pub(crate) const LABELS: &[&str] = &["metadata", "labels"];
/// Where every Kubernetes object keeps its annotations.
pub(crate) const ANNOTATIONS: &[&str] = &["metadata", "annotations"];

/// A field of the object has a shape the policy cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub(crate) struct FieldError {
    /// The offending field.
    pub(crate) field: FieldPath,
    /// What is wrong and, where possible, what would be right.
    pub(crate) problem: Problem,
}

impl FieldError {
    /// An error at `field`.
    pub(crate) fn new(field: FieldPath, problem: impl Into<Problem>) -> Self {
        Self {
            field,
            problem: problem.into(),
        }
    }

    /// `field` holds `found` where `expected` (e.g. "an object") was needed.
    pub(crate) fn expected(field: FieldPath, expected: &'static str, found: &Value) -> Self {
        Self::new(field, Problem::expected(expected, found))
    }
}

/// What is wrong with a field. Each kind of problem is worded here, once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Problem {
    /// The field holds a value of another JSON type than the one needed.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What was needed, e.g. "an object" or "an int32".
        expected: &'static str,
        /// The JSON type found ([`type_name`]).
        found: &'static str,
    },
    /// A field that must be set is absent or empty.
    #[error("required, and missing or empty")]
    Required,
    /// A field that must be present is absent (or null); empty is fine.
    #[error("required, and missing")]
    Missing,
    /// The text is not a Go duration.
    #[error(transparent)]
    Duration(#[from] InvalidDuration),
    /// The cloud-tag label-set annotation is not a JSON object of strings.
    #[error(transparent)]
    LabelSet(#[from] Malformed),
}

impl Problem {
    /// `found` where `expected` (e.g. "an object") was needed.
    pub(crate) fn expected(expected: &'static str, found: &Value) -> Self {
        Self::Expected {
            expected,
            found: type_name(found),
        }
    }
}

/// The JSON type name used in messages ("a number", "an array", ...).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The value at `path`, or `None` when any segment is absent or `null`.
/// An intermediate segment that exists but is not an object is an error:
/// the object is malformed there, and guessing would hide it.
pub(crate) fn get<'a>(root: &'a Value, path: &[&str]) -> Result<Option<&'a Value>, FieldError> {
    get_in(root, path.iter().copied())
}

/// [`get`] at a [`Path`].
pub(crate) fn get_at<'a>(root: &'a Value, path: &Path) -> Result<Option<&'a Value>, FieldError> {
    match path {
        Path::Static(path) => get(root, path),
        Path::Dotted(_) => get_in(root, path.segments()),
    }
}

/// [`get`] along `path`'s segments.
fn get_in<'a, 'p>(
    root: &'a Value,
    path: impl Iterator<Item = &'p str> + Clone,
) -> Result<Option<&'a Value>, FieldError> {
    let mut current = root;
    for (depth, segment) in path.clone().enumerate() {
        let object = match current {
            Value::Object(map) => map,
            Value::Null => return Ok(None),
            other => {
                return Err(FieldError::expected(
                    FieldPath::joined(path.take(depth)),
                    "an object",
                    other,
                ));
            }
        };
        match object.get(segment) {
            None | Some(Value::Null) => return Ok(None),
            Some(next) => current = next,
        }
    }
    Ok(Some(current))
}

/// The object (JSON map) at `path`, if present.
pub(crate) fn object<'a>(
    root: &'a Value,
    path: &[&str],
) -> Result<Option<&'a Map<String, Value>>, FieldError> {
    as_object(get(root, path)?, || FieldPath::of(path))
}

/// [`object`] at a [`Path`].
pub(crate) fn object_at<'a>(
    root: &'a Value,
    path: &Path,
) -> Result<Option<&'a Map<String, Value>>, FieldError> {
    as_object(get_at(root, path)?, || FieldPath::at(path))
}

/// The object `found` at the path `at` names, if present.
fn as_object(
    found: Option<&Value>,
    at: impl FnOnce() -> FieldPath,
) -> Result<Option<&Map<String, Value>>, FieldError> {
    match found {
        None => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(FieldError::expected(at(), "an object", other)),
    }
}

/// The string at `path`, if present.
pub(crate) fn string<'a>(root: &'a Value, path: &[&str]) -> Result<Option<&'a str>, FieldError> {
    match get(root, path)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(FieldError::expected(FieldPath::of(path), "a string", other)),
    }
}

/// A borrowed map of strings (labels, annotations, tags), sorted by key.
pub(crate) type StringMap<'a> = BTreeMap<&'a str, &'a str>;

/// The string map at `path` (absent → empty). Every value must be a string:
/// Kubernetes label and annotation values are, and a map that is not would be
/// rejected by the API server anyway, so it is reported rather than coerced.
pub(crate) fn string_map<'a>(root: &'a Value, path: &[&str]) -> Result<StringMap<'a>, FieldError> {
    match object(root, path)? {
        None => Ok(BTreeMap::new()),
        Some(map) => string_entries(map, || FieldPath::of(path)),
    }
}

/// The entries of a JSON object as a string map, naming the first entry
/// whose value is not a string.
pub(crate) fn string_entries<'a>(
    map: &'a Map<String, Value>,
    field: impl Fn() -> FieldPath,
) -> Result<StringMap<'a>, FieldError> {
    let entries = map
        .iter()
        .map(|(key, value)| match value {
            Value::String(s) => Ok((key.as_str(), s.as_str())),
            other => Err(not_a_string(field().key(key), other)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::json::sorted_map::map_of(entries))
}

/// Checks what [`string_map`] would, without building the map: for a map
/// that is only validated, on every request.
pub(crate) fn check_string_map(root: &Value, path: &[&str]) -> Result<(), FieldError> {
    string_object(root, path).map(|_| ())
}

/// The object at `path` once [`string_map`]'s checks pass, read in place:
/// a serde_json map iterates sorted, each key once, as a string map does.
pub(crate) fn string_object<'a>(
    root: &'a Value,
    path: &[&str],
) -> Result<Option<&'a Map<String, Value>>, FieldError> {
    let Some(map) = object(root, path)? else {
        return Ok(None);
    };
    match map.iter().find(|(_, value)| !value.is_string()) {
        Some((key, other)) => Err(not_a_string(FieldPath::of(path).key(key), other)),
        None => Ok(Some(map)),
    }
}

fn not_a_string(field: FieldPath, value: &Value) -> FieldError {
    FieldError::expected(field, "a string value", value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoted_is_a_json_string() {
        assert_eq!(quoted("team/x").to_string(), r#""team/x""#);
        assert_eq!(quoted("a\"b\\c\u{0}é").to_string(), r#""a\"b\\c\u0000é""#);
    }

    #[test]
    fn field_path_key_is_quoted_as_json() {
        assert_eq!(
            FieldPath::of(&["metadata", "labels"])
                .key("a\"b\n")
                .to_string(),
            r#"metadata.labels["a\"b\n"]"#
        );
    }

    #[test]
    fn string_map_absent_path_is_empty() {
        let obj = json!({"metadata": {"name": "x"}});
        assert!(
            string_map(&obj, &["metadata", "labels"])
                .unwrap()
                .is_empty()
        );
        assert!(
            string_map(&obj, &["spec", "template", "metadata", "labels"])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn string_map_null_is_empty() {
        let obj = json!({"metadata": {"labels": null}});
        assert!(
            string_map(&obj, &["metadata", "labels"])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn string_map_non_string_value_names_the_key() {
        let obj = json!({"metadata": {"labels": {"a": "1", "team/x": 5}}});
        assert_eq!(
            string_map(&obj, &["metadata", "labels"])
                .unwrap_err()
                .to_string(),
            "metadata.labels[\"team/x\"]: expected a string value, found a number"
        );
    }

    #[test]
    fn string_map_wrong_container_type_names_the_field() {
        let obj = json!({"metadata": {"labels": ["a"]}});
        assert_eq!(
            string_map(&obj, &["metadata", "labels"])
                .unwrap_err()
                .to_string(),
            "metadata.labels: expected an object, found an array"
        );
    }

    #[test]
    fn get_intermediate_scalar_names_the_intermediate() {
        let obj = json!({"spec": {"template": "oops"}});
        assert_eq!(
            get(&obj, &["spec", "template", "metadata", "labels"])
                .unwrap_err()
                .to_string(),
            "spec.template: expected an object, found a string"
        );
    }

    #[test]
    fn a_dotted_path_reads_as_its_segments_do() {
        let segments: &[&str] = &["spec", "forProvider", "tags"];
        let fixed = Path::Static(segments);
        let dotted = Path::Dotted("spec.forProvider.tags".into());
        assert_eq!(dotted, fixed);
        assert!(dotted == segments);
        assert_eq!(dotted.dotted(), fixed.dotted());
        for path in [&dotted, &fixed] {
            let (last, parents) = path.split_last().unwrap();
            assert_eq!(
                (last, parents.collect()),
                ("tags", vec!["spec", "forProvider"])
            );
            assert!(path.starts_with(&["spec", "forProvider"]));
            assert!(!path.starts_with(&["spec", "forProvider", "tags", "x"]));
            assert!(path.is_prefix_of(&["spec", "forProvider", "tags", "x"]));
            assert!(!path.is_prefix_of(&["spec", "forProvider"]));
        }
        let malformed = json!({"spec": {"forProvider": "oops"}});
        assert_eq!(
            get_at(&malformed, &dotted).unwrap_err().to_string(),
            "spec.forProvider: expected an object, found a string"
        );
        assert_eq!(
            get_at(&malformed, &dotted).unwrap_err(),
            get_at(&malformed, &fixed).unwrap_err()
        );
        let tagged = json!({"spec": {"forProvider": {"tags": {"a": "1"}}}});
        assert_eq!(
            object_at(&tagged, &dotted).unwrap(),
            object_at(&tagged, &fixed).unwrap()
        );
    }

    #[test]
    fn string_wrong_type_names_the_field() {
        let obj = json!({"spec": {"parameters": {"provider": 7}}});
        assert_eq!(
            string(&obj, &["spec", "parameters", "provider"])
                .unwrap_err()
                .to_string(),
            "spec.parameters.provider: expected a string, found a number"
        );
    }
}
