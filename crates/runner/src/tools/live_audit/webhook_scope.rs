//! Which listed objects a policy's webhook is called for. Besides its
//! rules, the API server calls a webhook only for objects its
//! `namespaceSelector` (on the labels of the object's namespace; a
//! cluster-scoped object always passes) and `objectSelector` (on the
//! object's own labels) select. A deployed policy is judged by the webhook
//! configuration kubewarden-controller registered for it, which adds to the
//! policy's own selectors the exclusion of Kubewarden's namespace; a
//! manifest, or a policy whose webhook cannot be read, by its
//! `spec.namespaceSelector` and `spec.objectSelector`. An object the webhook
//! never sees is never audited: no write could bring it into line.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

/// The label every namespace carries with its own name (set by the API
/// server since Kubernetes 1.21), so a selector on it needs no read.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// A Kubernetes label selector (`matchLabels` and `matchExpressions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Selector {
    match_labels: BTreeMap<String, String>,
    expressions: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Selector {
    /// The selector `value` (at `at`, named in errors); `None` when it
    /// selects everything (absent, `null` or `{}`).
    pub(super) fn parse(value: &Value, at: &str) -> Result<Option<Selector>> {
        let map = match value {
            Value::Null => return Ok(None),
            Value::Object(map) => map,
            _ => bail!("{at}: a label selector must be an object"),
        };
        let match_labels = match map.get("matchLabels") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(labels)) => labels
                .iter()
                .map(|(key, value)| match value.as_str() {
                    Some(value) => Ok((key.clone(), value.to_owned())),
                    None => bail!("{at}.matchLabels[{key:?}]: must be a string"),
                })
                .collect::<Result<_>>()?,
            Some(_) => bail!("{at}.matchLabels: must be an object"),
        };
        let expressions = match map.get("matchExpressions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| Requirement::parse(item, &format!("{at}.matchExpressions[{i}]")))
                .collect::<Result<_>>()?,
            Some(_) => bail!("{at}.matchExpressions: must be a list"),
        };
        Ok(
            (!match_labels.is_empty() || !expressions.is_empty()).then_some(Selector {
                match_labels,
                expressions,
            }),
        )
    }

    /// Whether labels (`label` answers each key) are selected.
    pub(super) fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.match_labels
            .iter()
            .all(|(key, value)| label(key) == Some(value.as_str()))
            && self.expressions.iter().all(|r| r.matches(label(&r.key)))
    }

    /// Whether the selector reads no namespace label but the name one, so
    /// the namespace need not be read.
    pub(super) fn reads_only_the_name(&self) -> bool {
        self.match_labels.keys().all(|key| key == NAME_LABEL)
            && self.expressions.iter().all(|r| r.key == NAME_LABEL)
    }
}

impl Requirement {
    fn parse(item: &Value, at: &str) -> Result<Requirement> {
        let Some(key) = item["key"].as_str().filter(|key| !key.is_empty()) else {
            bail!("{at}.key: required, a label key");
        };
        let operator = match item["operator"].as_str() {
            Some("In") => Operator::In,
            Some("NotIn") => Operator::NotIn,
            Some("Exists") => Operator::Exists,
            Some("DoesNotExist") => Operator::DoesNotExist,
            other => bail!(
                "{at}.operator: {:?} is not In, NotIn, Exists or DoesNotExist",
                other.unwrap_or_default()
            ),
        };
        let values: Vec<String> = match &item["values"] {
            Value::Null => Vec::new(),
            Value::Array(values) => values
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| anyhow::anyhow!("{at}.values: must be a list of strings"))?,
            _ => bail!("{at}.values: must be a list of strings"),
        };
        Ok(Requirement {
            key: key.to_owned(),
            operator,
            values,
        })
    }

    fn matches(&self, value: Option<&str>) -> bool {
        let listed = || value.is_some_and(|v| self.values.iter().any(|x| x == v));
        match self.operator {
            Operator::In => listed(),
            Operator::NotIn => !listed(),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// The selectors a policy's webhook is called under, and where they were
/// read (the webhook configuration, or the policy's spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WebhookScope {
    pub(super) namespaces: Option<Selector>,
    pub(super) objects: Option<Selector>,
    pub(super) from: String,
}

impl WebhookScope {
    /// The scope `holder` (a webhook, or a policy's spec) declares.
    pub(super) fn read(holder: &Value, from: String) -> Result<WebhookScope> {
        Ok(WebhookScope {
            namespaces: Selector::parse(
                &holder["namespaceSelector"],
                &format!("{from}: namespaceSelector"),
            )?,
            objects: Selector::parse(
                &holder["objectSelector"],
                &format!("{from}: objectSelector"),
            )?,
            from,
        })
    }

    /// Whether the namespace of a namespaced object must be read to judge
    /// it.
    pub(super) fn reads_namespaces(&self) -> bool {
        self.namespaces
            .as_ref()
            .is_some_and(|selector| !selector.reads_only_the_name())
    }

    /// Whether the webhook is called for `object`, whose namespace (for a
    /// namespaced object) carries `namespace_labels` (`None`: not read, the
    /// selector needs only its name).
    pub(super) fn selects(
        &self,
        object: &Value,
        namespace_labels: Option<&Map<String, Value>>,
    ) -> bool {
        let labels = object["metadata"]["labels"].as_object();
        let object_ok = self.objects.as_ref().is_none_or(|selector| {
            selector.matches(|key| labels.and_then(|l| l.get(key)).and_then(Value::as_str))
        });
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .filter(|ns| !ns.is_empty());
        let namespace_ok = match (namespace, &self.namespaces) {
            (None, _) | (_, None) => true,
            (Some(name), Some(selector)) => selector.matches(|key| match key {
                NAME_LABEL => Some(name),
                _ => namespace_labels
                    .and_then(|l| l.get(key))
                    .and_then(Value::as_str),
            }),
        };
        object_ok && namespace_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope(holder: Value) -> WebhookScope {
        WebhookScope::read(&holder, "webhook w".to_owned()).unwrap()
    }

    #[test]
    fn kubewardens_own_namespace_is_left_out_without_reading_it() {
        let scope = scope(json!({"namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kubewarden"]}]}}));
        assert!(!scope.reads_namespaces());
        let vpc = |ns: &str| json!({"metadata": {"name": "v", "namespace": ns}});
        assert!(!scope.selects(&vpc("kubewarden"), None));
        assert!(scope.selects(&vpc("team-a"), None));
        // A cluster-scoped object is always sent.
        assert!(scope.selects(&json!({"metadata": {"name": "x"}}), None));
    }

    #[test]
    fn object_and_namespace_selectors_both_apply() {
        let scope = scope(json!({
            "namespaceSelector": {"matchLabels": {"env": "prod"}},
            "objectSelector": {"matchExpressions": [{"key": "opt-in", "operator": "Exists"},
                {"key": "tier", "operator": "In", "values": ["a", "b"]}]}}));
        assert!(scope.reads_namespaces());
        let prod = json!({"env": "prod"});
        let prod = prod.as_object();
        let object =
            |labels: Value| json!({"metadata": {"name": "o", "namespace": "n", "labels": labels}});
        assert!(scope.selects(&object(json!({"opt-in": "", "tier": "a"})), prod));
        assert!(!scope.selects(&object(json!({"tier": "a"})), prod));
        assert!(!scope.selects(&object(json!({"opt-in": "", "tier": "c"})), prod));
        let dev = json!({"env": "dev"});
        assert!(!scope.selects(&object(json!({"opt-in": "", "tier": "a"})), dev.as_object()));
    }

    #[test]
    fn an_empty_selector_selects_everything_and_a_bad_one_is_named() {
        assert_eq!(
            scope(json!({"namespaceSelector": {}, "objectSelector": null})).namespaces,
            None
        );
        let error = WebhookScope::read(
            &json!({"objectSelector": {"matchExpressions": [{"key": "k", "operator": "Equals"}]}}),
            "ClusterAdmissionPolicy p".to_owned(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "ClusterAdmissionPolicy p: objectSelector.matchExpressions[0].operator: \"Equals\" is not In, NotIn, Exists or DoesNotExist"
        );
    }
}
