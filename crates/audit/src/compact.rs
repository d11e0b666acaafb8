//! What a report keeps of an evaluation until it is printed, compactly: a
//! JSON value as its compact text (a `serde_json::Value` tree of it takes
//! five to ten times the bytes), and an explanation as the text and the
//! JSON the renderings print. A live `--fix` of 10,000 deviating objects
//! keeps 10,000 of each until the report.

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

/// An [`Explanation`] as the renderings print it: its text, its JSON, and,
/// for a Machine, the keys CAPI syncs to its Node.
#[derive(Debug, Clone)]
pub struct Explained {
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
    /// What the renderings print of `explanation`.
    pub fn of(explanation: &Explanation) -> Explained {
        let keys = |keys: Vec<&str>| keys.into_iter().map(Box::from).collect();
        let node_keys = (explanation.synced_to_node()).map(|(labels, annotations)| {
            Box::new(NodeKeys {
                labels: keys(labels),
                annotations: keys(annotations),
            })
        });
        Explained {
            text: explanation.to_string().into_boxed_str(),
            json: Json::of_serialized(explanation),
            node_keys,
        }
    }

    /// As [`Explanation::synced_to_node`].
    pub fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        let node = self.node_keys.as_deref()?;
        fn keys(keys: &[Box<str>]) -> Vec<&str> {
            keys.iter().map(|k| &**k).collect()
        }
        Some((keys(&node.labels), keys(&node.annotations)))
    }

    /// The explanation's JSON object.
    pub fn json(&self) -> Value {
        self.json.value()
    }
}

/// The explanation's text, as [`Explanation`]'s `Display` writes it.
impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
