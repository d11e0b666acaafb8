//! Kubernetes objects read from the text of a dump, as `kubectl get -o yaml`
//! (or `-o json`) prints it and as people write it: several YAML documents, a
//! JSON document, a JSON array or a `kind: List`, all flattened into objects
//! that remember where they came from (file, document, item).
//!
//! [`documents`] splits any such text into its documents; [`objects`] also
//! flattens arrays and `List`s; [`kubernetes_objects`] also refuses a
//! document that is not a Kubernetes object, naming the file and the
//! document. Reading the file is the caller's: the runner reads it from disk,
//! the page takes what was pasted, and both read it through this module, so
//! a text means the same objects in either.

use metadata_propagation_core::fields::type_name;
use serde::Deserialize;
use serde_json::Value;

use crate::audit_error::AuditError;

pub use crate::origin::Origin;

/// A document of a text that does not parse: each caller words it for its
/// own input ([`AuditError::Syntax`] names the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The document, from 1.
    pub document: usize,
    /// The parser's message (with line and column in the whole text).
    pub reason: String,
}

/// The documents of `text`, YAML (multi-document) or JSON, each with its
/// number (from 1); empty documents are skipped, keeping the others'
/// numbers.
///
/// Text that starts like JSON (`{` or `[`) is read by serde_json first, as
/// a stream of values (`kubectl get -o json` prints one): the YAML parser
/// reads JSON too, but several times slower (on the 10,000-object dump it
/// was a third of the audit), and refuses tab indentation. What serde_json
/// refuses goes to the YAML parser (flow-style YAML, `---` between JSON
/// documents); when that refuses it too, serde_json's error names the
/// document, as its line and column are exact for JSON.
pub fn documents(text: &str) -> Result<Vec<(usize, Value)>, Unreadable> {
    let json_error = if matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
        match json_documents(text) {
            Ok(values) => return Ok(numbered(values)),
            Err(error) => Some(error),
        }
    } else {
        None
    };
    let mut values = Vec::new();
    for (index, document) in serde_norway::Deserializer::from_str(text).enumerate() {
        match Value::deserialize(document) {
            Ok(value) => values.push(value),
            Err(e) => {
                return Err(json_error.unwrap_or(Unreadable {
                    document: index + 1,
                    reason: e.to_string(),
                }));
            }
        }
    }
    Ok(numbered(values))
}

/// The values of a JSON text, one per document; the first that does not
/// parse is the error, counted from the values before it.
fn json_documents(text: &str) -> Result<Vec<Value>, Unreadable> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let value = value.map_err(|e| Unreadable {
            document: values.len() + 1,
            reason: e.to_string(),
        })?;
        values.push(value);
    }
    Ok(values)
}

/// `values` numbered from 1, `null` (an empty document) dropped.
fn numbered(values: Vec<Value>) -> Vec<(usize, Value)> {
    (1..)
        .zip(values)
        .filter(|(_, value)| !value.is_null())
        .collect()
}

/// Every object in `text` ([`documents`]), with its origin in `file`; arrays
/// and `kind: List` documents are flattened ([`flattened`]).
pub fn objects(text: &str, file: &str) -> Result<Vec<(Origin, Value)>, AuditError> {
    Ok(flattened(named_documents(text, file)?, file))
}

/// [`documents`], a document that does not parse named in `file`.
fn named_documents(text: &str, file: &str) -> Result<Vec<(usize, Value)>, AuditError> {
    documents(text).map_err(|e| AuditError::Syntax {
        file: file.to_owned(),
        document: e.document,
        reason: e.reason,
    })
}

/// The objects in `documents` (as [`documents`] numbers them), each with its
/// origin in `file`: an array or a `kind: List` gives its items, nested
/// ones too, and a `null` item nothing. A `List` whose `items` is not a list
/// is kept whole ([`kubernetes_objects`] refuses it by name).
pub fn flattened(documents: Vec<(usize, Value)>, file: &str) -> Vec<(Origin, Value)> {
    let mut objects = Vec::new();
    for (document, value) in documents {
        let origin = Origin {
            file: file.to_owned(),
            document,
            items: Vec::new(),
        };
        flatten(value, origin, &mut objects);
    }
    objects
}

/// [`objects`], refusing anything that is not a Kubernetes object: an
/// object with a non-empty string `apiVersion` and `kind`, and a `metadata`
/// object with a non-empty string `name` (and a string `namespace`, when it
/// has one).
pub fn kubernetes_objects(text: &str, file: &str) -> Result<Vec<(Origin, Value)>, AuditError> {
    checked(objects(text, file)?)
}

/// [`kubernetes_objects`] for a file named on a command line, which must
/// hold a document: an empty one (or one of comments only) is an output
/// that went missing (a `kubectl get` that failed into the file), not a
/// cluster with nothing in it, which a `List` with no `items` stands for.
/// (A page's empty paste is its starting state, and audits nothing.)
pub fn kubernetes_objects_in_file(
    text: &str,
    file: &str,
) -> Result<Vec<(Origin, Value)>, AuditError> {
    let documents = named_documents(text, file)?;
    if documents.is_empty() {
        return Err(AuditError::NoDocument {
            file: file.to_owned(),
        });
    }
    checked(flattened(documents, file))
}

/// `objects`, or the first that is not a Kubernetes object.
fn checked(objects: Vec<(Origin, Value)>) -> Result<Vec<(Origin, Value)>, AuditError> {
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
/// `null` adds nothing.
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

/// A `List` (what `kubectl get` prints), or a typed list as the API server
/// serves one (`MachineList`, what `kubectl get --raw` prints): a kind
/// ending in `List` that has `items`. No object kind has a top-level
/// `items` beside `metadata`; a typed list's `metadata` holds only the
/// list's `resourceVersion`.
fn is_list(map: &serde_json::Map<String, Value>) -> bool {
    match map.get("kind").and_then(Value::as_str) {
        Some("List") => true,
        Some(kind) => kind.ends_with("List") && map.contains_key("items"),
        None => false,
    }
}

/// Why `object` is not a Kubernetes object, if it is not one, with the
/// policy's names for JSON types ([`type_name`]). A `List` whose `items` is
/// not a list reaches here whole, and is refused by name.
fn check_kubernetes_object(object: &Value) -> Result<(), String> {
    let Value::Object(map) = object else {
        return Err(format!("expected an object, found {}", type_name(object)));
    };
    if is_list(map) {
        return Err(format!(
            "a List's `items` must be an array, found {}",
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
                "`metadata` must be an object, found {}",
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
    let found = match value {
        Value::String(s) if !s.is_empty() => return Ok(()),
        Value::Null => return Err(format!("`{}` is missing", path.join("."))),
        Value::String(_) => "an empty string",
        other => type_name(other),
    };
    Err(format!(
        "`{}` must be a non-empty string, found {found}",
        path.join(".")
    ))
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
    fn a_listed_object_names_its_list_not_a_document() {
        let listed = Origin::list("machinesets.cluster.x-k8s.io/v1beta2".to_owned());
        assert_eq!(
            listed.to_string(),
            "the list of machinesets.cluster.x-k8s.io/v1beta2"
        );
        assert_eq!(
            listed.listed_from(),
            Some("machinesets.cluster.x-k8s.io/v1beta2")
        );
        assert_eq!(origin(1, &[2]).to_string(), "dump.yaml document 1 item 2");
        assert_eq!(origin(1, &[2]).listed_from(), None);
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
        let yaml = serde_norway::from_str::<Value>(one).unwrap();
        assert_eq!(json_documents(one), Ok(vec![yaml]));
    }

    #[test]
    fn documents_numbers_documents_and_skips_empty_ones() {
        let yaml = "kind: A\n---\n# nothing\n---\nkind: B\n";
        assert_eq!(
            documents(yaml).unwrap(),
            [(1, json!({"kind": "A"})), (3, json!({"kind": "B"}))]
        );
        assert_eq!(
            documents("{\"kind\": \"A\"} null [1]").unwrap(),
            [(1, json!({"kind": "A"})), (3, json!([1]))]
        );
        assert_eq!(documents("").unwrap(), []);
    }

    #[test]
    fn documents_reads_tab_indented_json_and_json_like_yaml() {
        assert_eq!(
            documents("{\n\t\"kind\": \"A\"\n}").unwrap(),
            [(1, json!({"kind": "A"}))]
        );
        // serde_json refuses these; the YAML parser reads them.
        assert_eq!(
            documents("{kind: A}\n---\n{\"kind\": \"B\"}\n").unwrap(),
            [(1, json!({"kind": "A"})), (2, json!({"kind": "B"}))]
        );
    }

    #[test]
    fn documents_names_the_document_that_does_not_parse() {
        let error = documents("kind: A\n---\nkind: [\n").unwrap_err();
        assert_eq!(error.document, 2);
        assert!(
            error
                .reason
                .starts_with("did not find expected node content"),
            "{error:?}"
        );
        // Text that starts like JSON and that neither parser reads: serde_json
        // names the value, with its exact line and column.
        assert_eq!(
            documents("{\"kind\": \"A\"}\n{\"kind\": }"),
            Err(Unreadable {
                document: 2,
                reason: "expected value at line 2 column 10".to_owned(),
            })
        );
        assert_eq!(
            documents("{\"kind\": "),
            Err(Unreadable {
                document: 1,
                reason: "EOF while parsing a value at line 1 column 9".to_owned(),
            })
        );
        assert!(
            objects("{\"kind\": ", "dump.yaml")
                .unwrap_err()
                .to_string()
                .starts_with("dump.yaml document 1: not valid YAML or JSON: EOF while parsing")
        );
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
    fn kubernetes_objects_reads_typed_lists_and_refuses_a_text_without_documents() {
        // `kubectl get --raw /apis/cluster.x-k8s.io/v1beta2/machines`
        let typed = r#"{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineList",
            "metadata": {"resourceVersion": "42"}, "items": [
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": {"name": "m"}}]}"#;
        let read = kubernetes_objects(typed, "machines.json").unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(
            read[0].0,
            Origin {
                file: "machines.json".to_owned(),
                document: 1,
                items: vec![1]
            }
        );
        // A kind ending in `List` without `items` is an object like any other.
        let object =
            r#"{"apiVersion": "example.com/v1", "kind": "AllowList", "metadata": {"name": "a"}}"#;
        assert_eq!(kubernetes_objects(object, "a.json").unwrap().len(), 1);
        // An empty List is a cluster with nothing in it; an empty text is not a dump.
        assert_eq!(
            kubernetes_objects("apiVersion: v1\nitems: []\nkind: List\n", "d.yaml").unwrap(),
            []
        );
        for empty in ["", "# only a comment\n", "---\n---\n"] {
            assert_eq!(kubernetes_objects(empty, "pasted").unwrap(), []);
            assert_eq!(
                kubernetes_objects_in_file(empty, "d.yaml")
                    .unwrap_err()
                    .to_string(),
                "d.yaml holds no YAML or JSON document (an empty file, or only comments): \
                 write it with `kubectl get <kinds> -A -o yaml > d.yaml`"
            );
        }
    }

    #[test]
    fn check_kubernetes_object_names_the_missing_or_mistyped_field() {
        let cases = [
            (json!("text"), "expected an object, found a string"),
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
                "`metadata` must be an object, found an array",
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
                "a List's `items` must be an array, found an object",
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
