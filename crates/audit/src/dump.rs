//! Kubernetes objects read from the text of a dump, as `kubectl get -o yaml`
//! (or `-o json`) prints it and as people write it: several YAML documents, a
//! JSON document, a JSON array or a `kind: List`, all flattened into objects
//! that remember where they came from (file, document, item).
//!
//! [`objects`] reads any such text; [`kubernetes_objects`] also refuses a
//! document that is not a Kubernetes object, naming the file and the
//! document. Reading the file is the caller's: the runner reads it from disk,
//! the page takes what was pasted.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::AuditError;

/// Where an object was read: the file, the document (1-based), and the item
/// (1-based) when the document is a `List` or an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file as the caller names it (a path on the command line, or what
    /// the page calls the pasted text).
    pub file: String,
    /// The YAML document (or JSON value) in the file, from 1.
    pub document: usize,
    /// The item of a `List` or array, from 1; nested lists add one level
    /// each, outermost first.
    pub items: Vec<usize>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} document {}", self.file, self.document)?;
        for item in &self.items {
            write!(f, " item {item}")?;
        }
        Ok(())
    }
}

/// Every object in `text`, YAML (multi-document) or JSON, with its origin in
/// `file`; arrays and `kind: List` documents are flattened, empty documents
/// skipped.
pub fn objects(text: &str, file: &str) -> Result<Vec<(Origin, Value)>, AuditError> {
    let mut objects = Vec::new();
    let origin = |index: usize| Origin {
        file: file.to_owned(),
        document: index + 1,
        items: Vec::new(),
    };
    if let Some(documents) = json_documents(text) {
        for (index, value) in documents.into_iter().enumerate() {
            flatten(value, origin(index), &mut objects);
        }
        return Ok(objects);
    }
    for (index, document) in serde_norway::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| AuditError::Syntax {
            file: file.to_owned(),
            document: index + 1,
            reason: e.to_string(),
        })?;
        flatten(value, origin(index), &mut objects);
    }
    Ok(objects)
}

/// The documents of a JSON text (`kubectl get -o json`), read by
/// serde_json: the YAML parser reads JSON too, but several times slower (on
/// the 10,000-object dump it was a third of the audit). `None` when the text
/// does not start like JSON or serde_json refuses it: the YAML parser then
/// reads it, or names the document it cannot read, as before.
fn json_documents(text: &str) -> Option<Vec<Value>> {
    if !matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .ok()
}

/// [`objects`], refusing anything that is not a Kubernetes object: a mapping
/// with a non-empty string `apiVersion` and `kind`, and a `metadata` mapping
/// with a non-empty string `name` (and a string `namespace`, when it has
/// one).
pub fn kubernetes_objects(text: &str, file: &str) -> Result<Vec<(Origin, Value)>, AuditError> {
    let objects = objects(text, file)?;
    for (origin, object) in &objects {
        if let Err(problem) = check_kubernetes_object(object) {
            return Err(AuditError::NotAnObject {
                origin: origin.clone(),
                problem,
            });
        }
    }
    Ok(objects)
}

/// Adds `value` to `out`, or its items when it is an array or a `List`;
/// `null` (an empty document) adds nothing.
fn flatten(value: Value, origin: Origin, out: &mut Vec<(Origin, Value)>) {
    let items = match value {
        Value::Null => return,
        Value::Array(items) => items,
        Value::Object(mut map) if is_list(&map) => match map.remove("items") {
            Some(Value::Array(items)) => items,
            // `items: null` or absent: an empty List
            Some(Value::Null) | None => return,
            Some(other) => {
                map.insert("items".to_owned(), other);
                out.push((origin, Value::Object(map)));
                return;
            }
        },
        other => {
            out.push((origin, other));
            return;
        }
    };
    for (index, item) in items.into_iter().enumerate() {
        let mut item_origin = origin.clone();
        item_origin.items.push(index + 1);
        flatten(item, item_origin, out);
    }
}

fn is_list(map: &serde_json::Map<String, Value>) -> bool {
    map.get("kind").and_then(Value::as_str) == Some("List")
}

/// Why `object` is not a Kubernetes object, if it is not one. A `List`
/// whose `items` is not a list reaches here whole, and is refused by name.
fn check_kubernetes_object(object: &Value) -> Result<(), String> {
    let Value::Object(map) = object else {
        return Err(format!("expected a mapping, found {}", type_name(object)));
    };
    if is_list(map) {
        return Err(format!(
            "a List's `items` must be a list, found {}",
            type_name(&map["items"])
        ));
    }
    non_empty_string(object, &["apiVersion"])?;
    non_empty_string(object, &["kind"])?;
    match map.get("metadata") {
        None => return Err("`metadata` is missing".to_owned()),
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(format!(
                "`metadata` must be a mapping, found {}",
                type_name(other)
            ));
        }
    }
    non_empty_string(object, &["metadata", "name"])?;
    match &object["metadata"]["namespace"] {
        Value::Null | Value::String(_) => Ok(()),
        other => Err(format!(
            "`metadata.namespace` must be a string, found {}",
            type_name(other)
        )),
    }
}

fn non_empty_string(object: &Value, path: &[&str]) -> Result<(), String> {
    let value = path.iter().fold(object, |v, key| &v[*key]);
    match value {
        Value::String(s) if !s.is_empty() => Ok(()),
        Value::Null => Err(format!("`{}` is missing", path.join("."))),
        other => Err(format!(
            "`{}` must be a non-empty string, found {}",
            path.join("."),
            type_name(other)
        )),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(s) if s.is_empty() => "an empty string",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin(document: usize, items: &[usize]) -> Origin {
        Origin {
            file: "dump.yaml".to_owned(),
            document,
            items: items.to_vec(),
        }
    }

    #[test]
    fn flatten_lists_arrays_and_skips_empty_documents() {
        let mut out = Vec::new();
        flatten(
            json!({"kind": "List", "items": [{"kind": "A"}, [{"kind": "B"}]]}),
            origin(1, &[]),
            &mut out,
        );
        flatten(Value::Null, origin(2, &[]), &mut out);
        flatten(json!({"kind": "C"}), origin(3, &[]), &mut out);
        assert_eq!(
            out,
            [
                (origin(1, &[1]), json!({"kind": "A"})),
                (origin(1, &[2, 1]), json!({"kind": "B"})),
                (origin(3, &[]), json!({"kind": "C"})),
            ]
        );
    }

    #[test]
    fn origin_names_file_document_and_items() {
        assert_eq!(origin(2, &[]).to_string(), "dump.yaml document 2");
        assert_eq!(origin(1, &[4]).to_string(), "dump.yaml document 1 item 4");
    }

    #[test]
    fn objects_counts_documents_and_names_the_one_that_does_not_parse() {
        let text = "kind: A\n---\n---\nkind: List\nitems: [{kind: B}]\n---\nkind: [\n";
        let err = objects(text, "dump.yaml").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("dump.yaml document 4: not valid YAML or JSON: "),
            "{err}"
        );
        let text = "kind: A\n---\n---\nkind: List\nitems: [{kind: B}]\n";
        assert_eq!(
            objects(text, "dump.yaml").unwrap(),
            [
                (origin(1, &[]), json!({"kind": "A"})),
                (origin(3, &[1]), json!({"kind": "B"})),
            ]
        );
    }

    #[test]
    fn json_is_read_by_serde_json_as_the_yaml_parser_reads_it() {
        let text = r#"{"kind": "List", "items": [{"kind": "A", "n": 1.5}, [{"kind": "B"}]]}
            {"kind": "C"}"#;
        assert_eq!(
            objects(text, "dump.yaml").unwrap(),
            [
                (origin(1, &[1]), json!({"kind": "A", "n": 1.5})),
                (origin(1, &[2, 1]), json!({"kind": "B"})),
                (origin(2, &[]), json!({"kind": "C"})),
            ]
        );
        let one = r#"{"kind": "List", "items": [{"kind": "A", "n": 1.5}, [{"kind": "B"}]]}"#;
        assert_eq!(json_documents(one).map(|d| d.len()), Some(1));
        let yaml = serde_norway::from_str::<Value>(one).unwrap();
        assert_eq!(json_documents(one).unwrap()[0], yaml);
        // What serde_json refuses goes to the YAML parser, which names the
        // document.
        assert_eq!(json_documents("{\"kind\": "), None);
        assert!(
            objects("{\"kind\": ", "dump.yaml")
                .unwrap_err()
                .to_string()
                .starts_with("dump.yaml document 1: not valid YAML or JSON: ")
        );
        assert_eq!(json_documents("kind: A"), None);
    }

    #[test]
    fn kubernetes_objects_names_the_document_that_is_not_one() {
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}]}"#;
        assert_eq!(
            kubernetes_objects(text, "list.json")
                .unwrap_err()
                .to_string(),
            "list.json document 1 item 2: not a Kubernetes object: `metadata.name` is missing"
        );
    }

    #[test]
    fn check_kubernetes_object_names_the_missing_or_mistyped_field() {
        let cases = [
            (json!("text"), "expected a mapping, found a string"),
            (
                json!({"kind": "Machine", "metadata": {"name": "m"}}),
                "`apiVersion` is missing",
            ),
            (
                json!({"apiVersion": "v1", "kind": "", "metadata": {"name": "m"}}),
                "`kind` must be a non-empty string, found an empty string",
            ),
            (
                json!({"apiVersion": "v1", "kind": "Machine"}),
                "`metadata` is missing",
            ),
            (
                json!({"apiVersion": "v1", "kind": "Machine", "metadata": []}),
                "`metadata` must be a mapping, found a list",
            ),
            (
                json!({"apiVersion": "v1", "kind": "Machine", "metadata": {"name": 3}}),
                "`metadata.name` must be a non-empty string, found a number",
            ),
            (
                json!({"apiVersion": "v1", "kind": "M", "metadata": {"name": "m", "namespace": 1}}),
                "`metadata.namespace` must be a string, found a number",
            ),
            (
                json!({"apiVersion": "v1", "kind": "List", "items": {}}),
                "a List's `items` must be a list, found a mapping",
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(
                check_kubernetes_object(&object),
                Err(expected.to_owned()),
                "{object}"
            );
        }
        assert_eq!(
            check_kubernetes_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "default"}})),
            Ok(())
        );
    }
}
