//! The CAPI stage's part of an [`Explanation`]: the rule and the parent it
//! read, the fate of every key the parent offered, each in-place field, and
//! a Machine's Node sync; as JSON members and as text.

use crate::explain::ExplanationPart;
use crate::json::fields::quoted;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// What the CAPI rules decided about one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CapiExplanation {
    /// The propagation rule applied, if any.
    pub(crate) rule: Option<RuleUsed>,
    /// One entry per target map, in rule order.
    pub(crate) paths: Vec<PathExplanation>,
    /// CAPI in-place fields: one entry per field (or keyed-list entry) the
    /// rule offers, in rule order.
    pub(crate) fields: Vec<FieldExplanation>,
    /// Machines: which keys CAPI will sync to the Node, and why.
    pub(crate) node_sync: Option<NodeSync>,
}

/// The rule that applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RuleUsed {
    /// Child family (MachineSet, Machine, ...).
    pub(crate) family: String,
    /// The parent read (or the Cluster, for topology children).
    pub(crate) parent: String,
    /// The CAPI function the rule mirrors.
    pub(crate) upstream: String,
}

/// The keys of one target map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PathExplanation {
    /// Target map, e.g. `spec.template.metadata.labels`.
    pub(crate) path: String,
    /// Every key the parent offered for this map, sorted.
    pub(crate) keys: Vec<KeyFate>,
}

/// What happened to one key offered by the parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KeyFate {
    /// The key.
    pub(crate) key: String,
    /// What happened to it.
    #[serde(flatten)]
    pub(crate) fate: Fate,
}

/// The closed set of fates of a parent key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "fate",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum Fate {
    /// The key flows with the parent's value.
    Flows {
        /// The value the child gets.
        value: String,
        /// The parent map it comes from, e.g. `MachineDeployment default/md-0
        /// spec.template.metadata.labels`.
        from: String,
        /// `added`, `corrected` (the child had another value) or `unchanged`.
        change: String,
    },
    /// A CAPI bookkeeping key: the child keeps its own value (or absence).
    KeptBookkeeping {
        /// The child's value, if it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        child_value: Option<String>,
    },
    /// The contract says this key does not travel.
    NotPropagated {
        /// The rule that says so.
        rule: String,
    },
}

/// What happened to one in-place field of a CAPI child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FieldExplanation {
    /// The child's field, with the entry key for a keyed list, e.g.
    /// `spec.readinessGates[conditionType="X"]`.
    pub(crate) path: String,
    /// The field's name (`nodeDrainTimeout`).
    pub(crate) field: String,
    /// Where the parent holds the value (topology: the Cluster or the
    /// ClusterClass), or where it was looked for.
    pub(crate) from: String,
    /// The value the child must hold; absent when the parent does not set
    /// the field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<Value>,
    /// The child's value as submitted, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) found: Option<Value>,
    /// `added`, `corrected`, `unchanged` or `not set by the parent`.
    pub(crate) change: String,
}

/// Node-sync explanation for a Machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeSync {
    /// Every label of the Machine as stored.
    pub(crate) labels: Vec<NodeKey>,
    /// Every annotation of the Machine as stored.
    pub(crate) annotations: Vec<NodeKey>,
}

/// One Machine key and whether CAPI syncs it to the Node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeKey {
    /// The key.
    pub(crate) key: String,
    /// The criterion or regex that matched; `None`: not synced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) synced_by: Option<String>,
}

impl ExplanationPart for CapiExplanation {
    /// `rule` when one applied, `paths` always, `fields` when the rule
    /// offers any, `nodeSync` for a Machine.
    fn members(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)> {
        let mut members: Vec<(&'static str, &dyn erased_serde::Serialize)> = Vec::new();
        if let Some(rule) = &self.rule {
            members.push(("rule", rule));
        }
        members.push(("paths", &self.paths));
        if !self.fields.is_empty() {
            members.push(("fields", &self.fields));
        }
        if let Some(node_sync) = &self.node_sync {
            members.push(("nodeSync", node_sync));
        }
        members
    }

    /// Brief: without the target maps the parent offers no key for, and
    /// with the in-place fields neither side sets counted.
    fn write_text(&self, brief: bool, f: &mut dyn fmt::Write) -> fmt::Result {
        if let Some(rule) = &self.rule {
            writeln!(
                f,
                "rule: {} from {} (mirrors CAPI {})",
                rule.family, rule.parent, rule.upstream
            )?;
        }
        for path in (self.paths.iter()).filter(|path| !brief || !path.keys.is_empty()) {
            write_path(path, f)?;
        }
        let (shown, unset): (Vec<_>, Vec<_>) = (self.fields.iter())
            .partition(|field| !brief || field.value.is_some() || field.found.is_some());
        if !shown.is_empty() {
            writeln!(f, "fields:")?;
        }
        for field in &shown {
            write_field(field, f)?;
        }
        let more = " (--verbose lists them)";
        match (unset.len(), shown.is_empty()) {
            (0, _) => {}
            (n, true) => writeln!(
                f,
                "fields: none of {n} is set by the parent or the child{more}"
            )?,
            (n, false) => writeln!(
                f,
                "  and {n} more that neither the parent nor the child sets{more}"
            )?,
        }
        if let Some(node) = &self.node_sync {
            for (what, keys) in [("labels", &node.labels), ("annotations", &node.annotations)] {
                writeln!(f, "node {what}:")?;
                for key in keys {
                    let (synced_by, key) = (&key.synced_by, quoted(&key.key));
                    match synced_by {
                        Some(by) => writeln!(f, "  {key}: synced to the Node ({by})")?,
                        None => writeln!(f, "  {key}: not synced")?,
                    }
                }
            }
        }
        Ok(())
    }

    fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        fn synced(keys: &[NodeKey]) -> Vec<&str> {
            (keys.iter().filter(|k| k.synced_by.is_some()))
                .map(|k| k.key.as_str())
                .collect()
        }
        let node = self.node_sync.as_ref()?;
        Some((synced(&node.labels), synced(&node.annotations)))
    }
}

/// One target map and the fate of each key the parent offered for it.
fn write_path(path: &PathExplanation, f: &mut dyn fmt::Write) -> fmt::Result {
    writeln!(f, "{}:", path.path)?;
    for key in &path.keys {
        match &key.fate {
            Fate::Flows {
                value,
                from,
                change,
            } => writeln!(
                f,
                "  {} = {}: flows from {from} ({change})",
                quoted(&key.key),
                quoted(value)
            )?,
            Fate::KeptBookkeeping { child_value } => writeln!(
                f,
                "  {}: kept, CAPI bookkeeping (child value {})",
                quoted(&key.key),
                child_value
                    .as_deref()
                    .map_or("absent".to_owned(), |v| quoted(v).to_string())
            )?,
            Fate::NotPropagated { rule } => {
                writeln!(f, "  {}: not propagated: {rule}", quoted(&key.key))?
            }
        }
    }
    Ok(())
}

/// One in-place field: where its value flows from, or that the parent does
/// not set it.
fn write_field(field: &FieldExplanation, f: &mut dyn fmt::Write) -> fmt::Result {
    let found = field
        .found
        .as_ref()
        .map_or("absent".to_owned(), ToString::to_string);
    match &field.value {
        Some(value) => {
            // Null: the parent's 0 on a field whose version holds 0 as no
            // field.
            let value = match value {
                Value::Null => ": absent (0)".to_owned(),
                value => format!(" = {value}"),
            };
            writeln!(
                f,
                "  {}{value}: flows from {} ({}; child had {found})",
                field.path, field.from, field.change
            )
        }
        None => writeln!(
            f,
            "  {}: the parent does not set it ({}); child value {found} kept",
            field.path, field.from
        ),
    }
}
