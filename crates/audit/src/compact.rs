//! What a live audit keeps of an object that fails until the report,
//! compactly: a JSON value as its compact text (a `serde_json::Value` tree
//! of it takes five to ten times the bytes), and an explanation as the text
//! and the JSON the renderings print. A live `--fix` of 10,000 deviating
//! objects keeps 10,000 of each until the report. A dump audit keeps what
//! it evaluated as it is: it prints every object's explanation once, and
//! making it compact first would double the work.

use std::fmt;

use metadata_propagation_core::explain::Explanation;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON value kept as its compact text, with its keys in the order a
/// [`Value`] sorts them: decoded ([`Json::value`]), it is the value it was
/// made from, so what is printed from it is the same bytes.
#[derive(Clone)]
pub struct Json(Box<RawValue>);

impl Json {
    /// `value` as compact text.
    pub fn of(value: &Value) -> Json {
        let text = serde_json::to_string(value).expect("JSON values always serialise");
        Json(RawValue::from_string(text).expect("serde_json writes valid JSON"))
    }

    /// Anything serialisable, as the value it serialises to, kept as
    /// compact text.
    pub fn of_serialized(value: &impl Serialize) -> Json {
        Json::of(&serde_json::to_value(value).expect("the core's types always serialise"))
    }

    /// The value again.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("kept from a valid value")
    }

    /// The compact text.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        self.value() == *other
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// An explanation as a report keeps it.
#[derive(Debug)]
pub enum Explained {
    /// As the evaluation made it.
    Whole(Explanation),
    /// What the renderings print of it ([`Explained::compact`]).
    Printed(Printed),
}

/// What the renderings print of an [`Explanation`]: its text, its JSON, and,
/// for a Machine, the keys CAPI syncs to its Node.
#[derive(Debug)]
pub struct Printed {
    text: Box<str>,
    json: Json,
    node_keys: Option<Box<NodeKeys>>,
}

/// The label and the annotation keys CAPI syncs to a Machine's Node.
#[derive(Debug, Clone)]
struct NodeKeys {
    labels: Box<[Box<str>]>,
    annotations: Box<[Box<str>]>,
}

impl Explained {
    /// Keeps only what the renderings print.
    pub fn compact(&mut self) {
        if let Explained::Whole(explanation) = self {
            *self = Explained::Printed(Printed::of(explanation));
        }
    }

    /// As [`Explanation::synced_to_node`].
    pub fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        match self {
            Explained::Whole(explanation) => explanation.synced_to_node(),
            Explained::Printed(printed) => printed.synced_to_node(),
        }
    }

    /// The explanation's JSON object.
    pub fn json(&self) -> Value {
        match self {
            Explained::Whole(explanation) => {
                serde_json::to_value(explanation).expect("the core's types always serialise")
            }
            Explained::Printed(printed) => printed.json.value(),
        }
    }
}

/// The explanation's text, as [`Explanation`]'s `Display` writes it.
impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Explained::Whole(explanation) => explanation.fmt(f),
            Explained::Printed(printed) => f.write_str(&printed.text),
        }
    }
}

impl Printed {
    /// What the renderings print of `explanation`.
    fn of(explanation: &Explanation) -> Printed {
        let keys = |keys: Vec<&str>| keys.into_iter().map(Box::from).collect();
        let node_keys = (explanation.synced_to_node()).map(|(labels, annotations)| {
            Box::new(NodeKeys {
                labels: keys(labels),
                annotations: keys(annotations),
            })
        });
        Printed {
            text: explanation.to_string().into_boxed_str(),
            json: Json::of_serialized(explanation),
            node_keys,
        }
    }

    fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        let node = self.node_keys.as_deref()?;
        fn keys(keys: &[Box<str>]) -> Vec<&str> {
            keys.iter().map(|k| &**k).collect()
        }
        Some((keys(&node.labels), keys(&node.annotations)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{AuditSettings, Origin, audit_objects};

    /// A Machine's explanation, with the keys CAPI syncs to its Node: the
    /// same text, JSON and keys whole and compact.
    #[test]
    fn a_compact_explanation_prints_as_the_whole_one() {
        let machine_set = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
            "metadata": {"name": "ms", "namespace": "default", "uid": "ms-uid"},
            "spec": {"clusterName": "c", "template": {"metadata": {
                "labels": {"nodepool": "pool1", "node-role.kubernetes.io/worker": ""},
                "annotations": {"example.org/owner": "sre"}}}}});
        let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": "m", "namespace": "default", "labels": {"a": "1"},
                "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2",
                    "kind": "MachineSet", "name": "ms", "uid": "ms-uid", "controller": true}]},
            "spec": {"clusterName": "c"}});
        let origin = |document| Origin {
            file: "dump.yaml".to_owned(),
            document,
            items: Vec::new(),
        };
        let objects = vec![(origin(1), machine_set), (origin(2), machine)];
        let settings = AuditSettings::from_json(b"{}").unwrap();
        let mut report = audit_objects(objects, &settings).unwrap();
        let evaluation = report.objects[1].evaluation.as_mut().unwrap();
        let explained = &mut evaluation.detail.as_mut().unwrap().explanation;
        assert!(matches!(explained, Explained::Whole(_)));
        let text = explained.to_string();
        let json = explained.json();
        let keys = |explained: &Explained| {
            let (labels, annotations) = explained.synced_to_node().unwrap();
            let owned = |keys: Vec<&str>| keys.into_iter().map(str::to_owned).collect::<Vec<_>>();
            (owned(labels), owned(annotations))
        };
        let node_keys = keys(explained);
        assert!(
            node_keys
                .0
                .contains(&"node-role.kubernetes.io/worker".to_owned())
        );
        assert!(text.lines().count() > 1 && json.is_object(), "{text}");
        explained.compact();
        assert!(matches!(explained, Explained::Printed(_)));
        assert_eq!(explained.to_string(), text);
        assert_eq!(explained.json(), json);
        assert_eq!(keys(explained), node_keys);
    }

    #[test]
    fn a_kept_value_decodes_to_the_value_and_prints_its_bytes() {
        let value = json!({"z": [1, -2, 3.5, "ü\"\n"], "a": {"y": null, "b": true}});
        let kept = Json::of(&value);
        assert_eq!(kept.value(), value);
        assert_eq!(kept.text(), value.to_string());
        assert_eq!(
            serde_json::to_string_pretty(&kept.value()).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
        assert!(kept == value);
        assert!(kept != json!({}));
    }
}
