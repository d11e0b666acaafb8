//! Cloud tags on CAPI infrastructure (`cloudTags.capiInfrastructure`): what
//! an input's trailing [`Infra`] does to an infrastructure child and its
//! Cluster. What the policy may change on such an object is the core's
//! oracle's to check (`invariants::fuzz_oracles::check_allowed`).
//!
//! The child is one of `fixtures::INFRA_CHILDREN`, optionally turned into
//! any kind row of the target table (`invariants::fuzz_oracles::infrastructure_rows`: group, kind and the version the
//! provider serves, or another version, which has no row). Its labels and
//! label-set annotation, the Cluster's labels and the tag field are
//! rewritten with keys drawn as often from the opted-in ones as not, the
//! tag field in the row's shape (a map, a list of `{key, value}`) or in the
//! other's, or as any value. The Cluster look-up is answered, NotFound or
//! failed.

use arbitrary::Arbitrary;
use metadata_propagation_core::invariants::DEFAULT_PREFIX as TAG_PREFIX;
use metadata_propagation_core::invariants::fuzz_oracles::infrastructure_rows;
use serde_json::{Map, Value, json};

use crate::mutation::{IntoValue, Small, set};
use crate::node::Node;
use crate::parents::Answer;

/// The label keys the fixtures' Clusters and objects hold and the settings
/// opt in (`Infra::opt_in`), and a few they do not.
const LABELS: &[&str] = &[
    "environment",
    "cost-center",
    "acme.io/team",
    "acme:billing/owner",
    "nodepool",
    "cluster.x-k8s.io/cluster-name",
    "topology.cluster.x-k8s.io/owned",
];
/// How many of [`LABELS`] `Infra::opt_in` opts in.
const OPTED_IN: usize = 4;
/// Tag keys users set themselves (the fixtures' and the providers' own).
const USER_TAGS: &[&str] = &["owner-email", "Name", "CostOwner", "backup", "role"];
const LABELS_ANNOTATION: &str = "cloud-tags.plexsphere.io/labels";
const CLUSTER_NAME: &str = "cluster.x-k8s.io/cluster-name";

#[derive(Arbitrary, Debug)]
pub struct Infra {
    /// The child, modulo `fixtures::INFRA_CHILDREN`.
    pub child: u8,
    /// Some: the child becomes an object of this row of [`TARGETS`]
    /// (modulo their count), at the row's version, or (`true`) at another.
    row: Option<(u8, bool)>,
    /// `cloudTags.capiInfrastructure`.
    pub capi_infrastructure: bool,
    /// Opt the first [`OPTED_IN`] of [`LABELS`] in.
    pub opt_in: bool,
    /// How the host answers the look-up of the Cluster the child names.
    cluster: ClusterAnswer,
    /// Set on the child's labels.
    labels: Vec<(Label, Text)>,
    /// Set on the labels of the Cluster the child names.
    cluster_labels: Vec<(Label, Text)>,
    /// Replaces the child's label-set annotation.
    label_set: Option<LabelSet>,
    /// Replaces the child's tag field (the row's, or `spec.additionalTags`).
    tags: Option<TagField>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum ClusterAnswer {
    Found,
    Missing,
    Unavailable,
}

/// A label key: one of [`LABELS`] (modulo their count), or any.
#[derive(Arbitrary, Debug)]
enum Label {
    Known(u8),
    Other(String),
}

/// A label's or tag's value: a string, or any small value.
#[derive(Arbitrary, Debug)]
pub enum Text {
    Text(String),
    Small(Small),
}

#[derive(Arbitrary, Debug)]
enum LabelSet {
    /// A JSON object of these entries, as users write it.
    Entries(Vec<(Label, Text)>),
    /// Any text (not JSON, or not an object of strings).
    Raw(String),
}

/// A tag key: the tag an opted-in label becomes, a user's, or any.
#[derive(Arbitrary, Debug)]
enum TagKey {
    Prefixed(Label),
    User(u8),
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum TagField {
    /// Removed.
    Absent,
    /// Any small value (a wrong shape for every row, or an empty map).
    Value(Small),
    /// A map of tags: the shape of most rows.
    Map(Vec<(TagKey, Text)>),
    /// A list of entries: CAPO's shape, `{key, value}`; entries may lack a
    /// field, hold another one, or not be objects.
    List(Vec<Entry>),
}

#[derive(Arbitrary, Debug)]
enum Entry {
    KeyValue(TagKey, Text),
    Key(TagKey),
    Extra(TagKey, Text, String, Small),
    Other(Small),
}

impl Label {
    fn into_string(self) -> String {
        match self {
            Label::Known(i) => LABELS[usize::from(i) % LABELS.len()].to_owned(),
            Label::Other(key) => key,
        }
    }
}

impl IntoValue for Text {
    fn into_value(self) -> Value {
        match self {
            Text::Text(text) => Value::String(text),
            Text::Small(small) => small.into_value(),
        }
    }
}

impl TagKey {
    fn into_string(self) -> String {
        match self {
            TagKey::Prefixed(label) => format!("{TAG_PREFIX}{}", label.into_string()),
            TagKey::User(i) => USER_TAGS[usize::from(i) % USER_TAGS.len()].to_owned(),
            TagKey::Other(key) => key,
        }
    }
}

impl IntoValue for TagField {
    fn into_value(self) -> Value {
        match self {
            TagField::Absent => Value::Null,
            TagField::Value(small) => small.into_value(),
            TagField::Map(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.into_string(), value.into_value()))
                    .collect(),
            ),
            TagField::List(entries) => entries
                .into_iter()
                .map(|entry| match entry {
                    Entry::KeyValue(key, value) => {
                        json!({"key": key.into_string(), "value": value.into_value()})
                    }
                    Entry::Key(key) => json!({"key": key.into_string()}),
                    Entry::Extra(key, value, field, extra) => {
                        let mut entry = Map::new();
                        entry.insert("key".to_owned(), Value::String(key.into_string()));
                        entry.insert("value".to_owned(), value.into_value());
                        entry.insert(field, extra.into_value());
                        Value::Object(entry)
                    }
                    Entry::Other(small) => small.into_value(),
                })
                .collect(),
        }
    }
}

/// The label keys `Infra::opt_in` opts in.
pub fn opted_in() -> impl Iterator<Item = String> {
    LABELS[..OPTED_IN].iter().map(|key| (*key).to_owned())
}

impl Infra {
    /// Applies the input to the child (before any other mutation) and to
    /// the Cluster it names among `parents`; returns how the host answers
    /// a look-up of that Cluster.
    pub fn apply(
        self,
        child: &mut Node,
        parents: &mut [Node],
        cluster_key: impl Fn(&Node) -> bool,
    ) -> Answer {
        if let Some((row, other_version)) = self.row {
            let rows = infrastructure_rows();
            let (group, kind, served, _) = rows[usize::from(row) % rows.len()];
            let version = if other_version { "v1alpha1" } else { served };
            let kind = kind.unwrap_or("AWSCluster");
            set(child, &["kind"], Value::String(kind.to_owned()));
            let api_version = format!("{group}/{version}");
            set(child, &["apiVersion"], Value::String(api_version));
        }
        set_labels(child, self.labels);
        if let Some(label_set) = self.label_set {
            let text = match label_set {
                LabelSet::Entries(entries) => Value::Object(
                    entries
                        .into_iter()
                        .map(|(key, value)| (key.into_string(), value.into_value()))
                        .collect(),
                )
                .to_string(),
                LabelSet::Raw(text) => text,
            };
            let path = ["metadata", "annotations", LABELS_ANNOTATION];
            set(child, &path, Value::String(text));
        }
        if let Some(tags) = self.tags {
            let field = tag_field(child);
            match tags {
                TagField::Absent => remove(child, field),
                tags => set(child, field, tags.into_value()),
            }
        }
        if !self.cluster_labels.is_empty()
            && let Some(cluster) = parents.iter_mut().find(|p| cluster_key(p))
        {
            set_labels(cluster, self.cluster_labels);
        }
        match self.cluster {
            ClusterAnswer::Found => Answer::Found,
            ClusterAnswer::Missing => Answer::Missing,
            ClusterAnswer::Unavailable => Answer::Unavailable,
        }
    }
}

/// The name of the Cluster `child` names by its cluster-name label.
pub fn cluster_name<'n>(child: &'n Node) -> Option<&'n str> {
    child.text(&["metadata", "labels", CLUSTER_NAME])
}

/// The tag field of the row `child` (as edited so far) has, else
/// `spec.additionalTags`.
fn tag_field(child: &Node) -> &'static [&'static str] {
    let api_version = child.text(&["apiVersion"]).unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = child.text(&["kind"]).unwrap_or_default();
    let covers = |&&(g, k, v, _): &&(&str, Option<&str>, &str, _)| {
        g == group && k.is_none_or(|k| k == kind) && v == version
    };
    (infrastructure_rows().iter().find(covers)).map_or(&["spec", "additionalTags"], |row| row.3)
}

/// Removes the node at `path` of `target`, if there is one.
fn remove(target: &mut Node, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = target;
    for key in parents {
        node.open();
        let Node::Map(map) = node else {
            return;
        };
        let Some(next) = map.get_mut(*key) else {
            return;
        };
        node = next;
    }
    node.open();
    if let Node::Map(map) = node {
        map.remove(*last);
    }
}

/// Sets each of `labels` in `node`'s `metadata.labels`.
fn set_labels(node: &mut Node, labels: Vec<(Label, Text)>) {
    for (key, value) in labels {
        let key = key.into_string();
        set(
            node,
            &["metadata", "labels", key.as_str()],
            value.into_value(),
        );
    }
}
