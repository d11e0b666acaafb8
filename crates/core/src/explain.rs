//! Why each label, annotation and tag did or did not flow.
//!
//! The record [`crate::evaluate::explain`] renders from the trace the
//! decision returns when asked for one; the admission path asks for none,
//! so it pays nothing. The policy, the runner's `explain` command and the
//! web page all call the same functions: there is one core, no fork.

use crate::json::fields::quoted;
use crate::request::lookup::ObjectRef;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// Everything the policy decided about one object, key by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// The propagation rule applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rule: Option<RuleUsed>,
    /// One entry per target map, in rule order.
    pub(crate) paths: Vec<PathExplanation>,
    /// CAPI in-place fields: one entry per field (or keyed-list entry) the
    /// rule offers, in rule order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) fields: Vec<FieldExplanation>,
    /// Machines: which keys CAPI will sync to the Node, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node_sync: Option<NodeSync>,
    /// XRs: the fate of every label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cloud_tags: Option<CloudTags>,
    /// Decisions that concern the whole object (no rule, parent not found,
    /// adopted, ...), in the order they were made.
    pub(crate) notes: Vec<String>,
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
    pub(crate) value: Option<serde_json::Value>,
    /// The child's value as submitted, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) found: Option<serde_json::Value>,
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

/// Cloud-tag explanation for an XR or a CAPI infrastructure object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CloudTags {
    /// The profile applied.
    pub(crate) profile: String,
    /// Where the provider came from.
    pub(crate) provider: String,
    /// Why the profile applied: `built-in`, `user-defined` or `fallback`.
    pub(crate) origin: String,
    /// The same in words, naming the setting that selected it.
    pub(crate) why: String,
    /// The tag-key prefix in force: the entries of the field that start
    /// with it are the policy's.
    pub(crate) prefix: String,
    /// Where the prefix comes from: the profile's own, or `cloudTags.prefix`.
    pub(crate) prefix_from: String,
    /// Whether the prefix is worth a line: not the default one, which goes
    /// unsaid, as it did before prefixes could be chosen.
    #[serde(skip)]
    pub(crate) prefix_said: bool,
    /// Set when the profile refuses every tag (its key class or ceiling
    /// cannot admit the prefix in force): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) no_tag_can_propagate: Option<String>,
    /// Every label of the label set, sorted by qualified key.
    pub(crate) labels: Vec<LabelFate>,
    /// Prefixed entries of the tag field that go, and why.
    pub(crate) removed: Vec<(String, String)>,
    /// CAPI infrastructure kinds: the tag field (`spec.additionalTags`);
    /// absent for XRs, whose field is always `spec.cloudTags`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) field: Option<String>,
}

/// One label of an XR and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LabelFate {
    /// Qualified key.
    pub(crate) qualified_key: String,
    /// `metadata.labels` or the label-set annotation.
    pub(crate) source: String,
    /// What became of it.
    #[serde(flatten)]
    pub(crate) fate: TagFate,
}

/// The closed set of fates of an XR label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "fate",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum TagFate {
    /// It became a tag.
    Tag {
        /// The tag key.
        tag_key: String,
        /// Set when the provider's API will refuse the key although the
        /// profile admits it: why, and the fix.
        #[serde(skip_serializing_if = "Option::is_none")]
        caution: Option<String>,
    },
    /// It was skipped.
    Skipped {
        /// The reason code (`key-too-long`, ...).
        reason: String,
        /// Measured length and limit, offending character, prefix or cap.
        detail: String,
    },
    /// Not in `cloudTags.propagatingLabels`.
    NotOptedIn,
}

impl Explanation {
    /// The label and annotation keys CAPI syncs from a Machine to its
    /// Node, as the Machine is stored; `None` for any other object.
    pub fn synced_to_node(&self) -> Option<(Vec<&str>, Vec<&str>)> {
        fn synced(keys: &[NodeKey]) -> Vec<&str> {
            (keys.iter().filter(|k| k.synced_by.is_some()))
                .map(|k| k.key.as_str())
                .collect()
        }
        let node = self.node_sync.as_ref()?;
        Some((synced(&node.labels), synced(&node.annotations)))
    }

    /// The explanation as text for one request of `kind` whose evaluation
    /// made `requests`: unless `verbose`, without empty target maps and
    /// with the in-place fields neither side sets counted. The note that no
    /// parent was looked up for the metadata of this `kind` is said again
    /// with the Cluster `requests` read for the cloud tags, which it
    /// contradicts.
    pub fn text(&self, kind: &str, requests: &[ObjectRef], verbose: bool) -> String {
        let mut head = self.clone();
        let infra = (self.cloud_tags.as_ref()).is_some_and(|tags| tags.field.is_some());
        let clusters: Vec<String> = (requests.iter())
            .filter(|r| infra && r.kind == "Cluster")
            .map(ToString::to_string)
            .collect();
        let contradicted = |note: &&mut String| {
            !clusters.is_empty() && note.ends_with("no parent looked up for its metadata")
        };
        for note in head.notes.iter_mut().filter(contradicted) {
            *note = format!(
                "no propagation rule gives this {kind} its labels and annotations: they are left as \
                 they are; {} is read for the cloud tags only",
                clusters.join(", ")
            );
        }
        if verbose {
            return head.to_string();
        }
        head.paths.retain(|path| !path.keys.is_empty());
        let (shown, unset): (Vec<_>, Vec<_>) = (std::mem::take(&mut head.fields).into_iter())
            .partition(|field| field.value.is_some() || field.found.is_some());
        head.fields = shown;
        let tail = Explanation {
            node_sync: head.node_sync.take(),
            cloud_tags: head.cloud_tags.take(),
            ..Explanation::default()
        };
        let more = " (--verbose lists them)\n";
        let unset = match (unset.len(), head.fields.is_empty()) {
            (0, _) => String::new(),
            (n, true) => format!("fields: none of {n} is set by the parent or the child{more}"),
            (n, false) => {
                format!("  and {n} more that neither the parent nor the child sets{more}")
            }
        };
        format!("{head}{unset}{tail}")
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        if let Some(rule) = &self.rule {
            writeln!(
                f,
                "rule: {} from {} (mirrors CAPI {})",
                rule.family, rule.parent, rule.upstream
            )?;
        }
        for path in &self.paths {
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
        }
        if !self.fields.is_empty() {
            writeln!(f, "fields:")?;
        }
        for field in &self.fields {
            let found = field
                .found
                .as_ref()
                .map_or("absent".to_owned(), ToString::to_string);
            match &field.value {
                Some(value) => {
                    // Null: the parent's 0 on a field whose version holds 0
                    // as no field.
                    let value = match value {
                        Value::Null => ": absent (0)".to_owned(),
                        value => format!(" = {value}"),
                    };
                    writeln!(
                        f,
                        "  {}{value}: flows from {} ({}; child had {found})",
                        field.path, field.from, field.change
                    )?
                }
                None => writeln!(
                    f,
                    "  {}: the parent does not set it ({}); child value {found} kept",
                    field.path, field.from
                )?,
            }
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
        if let Some(tags) = &self.cloud_tags {
            writeln!(
                f,
                "cloud tags: profile {} ({})",
                tags.profile, tags.provider
            )?;
            writeln!(f, "  profile {}: {}", tags.origin, tags.why)?;
            if tags.prefix_said {
                let prefix = quoted(&tags.prefix);
                writeln!(f, "  tag-key prefix {prefix}: {}", tags.prefix_from)?;
            }
            if let Some(why) = &tags.no_tag_can_propagate {
                writeln!(f, "  {why}")?;
            }
            for label in &tags.labels {
                let (key, source) = (quoted(&label.qualified_key), &label.source);
                match &label.fate {
                    TagFate::Tag { tag_key, caution } => {
                        writeln!(f, "  {key} ({source}): tag {}", quoted(tag_key))?;
                        if let Some(caution) = caution {
                            writeln!(f, "    fails at the provider: {caution}")?;
                        }
                    }
                    TagFate::Skipped { reason, detail } => {
                        writeln!(f, "  {key} ({source}): skipped, {reason}: {detail}")?
                    }
                    TagFate::NotOptedIn => writeln!(f, "  {key} ({source}): not opted in")?,
                }
            }
            let field = tags.field.as_deref().unwrap_or("spec.cloudTags");
            for (key, why) in &tags.removed {
                writeln!(f, "  {}: removed from {field} ({why})", quoted(key))?;
            }
        }
        Ok(())
    }
}
