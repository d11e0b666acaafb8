//! Cloud tags on Crossplane managed resources
//! (`cloudTags.managedResources`): what an input's trailing [`Mr`] does to
//! a managed-resource child, the composite resource (XR) that composed it,
//! and the settings. What the policy may change on such an object is the
//! core's oracle's to check (`invariants::fuzz_oracles::check_allowed`).
//!
//! The child is one of `fixtures::MR_CHILDREN` (an upjet v1 cluster-scoped
//! VPC, a v2 namespaced `.m.` VPC, a GKE Cluster, an Azure ResourceGroup),
//! optionally turned into another kind ([`KINDS`]: with and without a tag
//! field, of another family or scope, of no family). Its labels, its
//! controller ownerReference and its tag field are rewritten (tag keys
//! drawn as often from the opted-in labels' tags, under either built-in
//! prefix, and the users' and the AWS provider's own keys as not), the XR's
//! labels too; the XR look-up is answered, NotFound, denied or failed; each
//! family is on or off, with or without a `kinds` row for the child's kind;
//! an UPDATE may carry the old object with a stored tag field.

use arbitrary::Arbitrary;
use serde_json::{Map, Value};

use crate::infra::Text;
use crate::mutation::{IntoValue, Small, set};
use crate::node::Node;
use crate::parents::Answer;

/// The label keys the fixtures' XRs and MRs hold, the first [`OPTED_IN`]
/// opted in by `Mr::opt_in` (the MR behaviour tests' settings), and a few
/// that are not.
const LABELS: &[&str] = &[
    "platform/env",
    "team",
    "aws:billing",
    "acme:cost/center",
    "not-opted-in",
    "crossplane.io/composite",
    "platform/origin",
    "crossplane.io/claim-name",
];
/// How many of [`LABELS`] `Mr::opt_in` opts in.
const OPTED_IN: usize = 4;
/// Tag keys users and providers set themselves: the fixtures', and the AWS
/// provider's `crossplane-*` tags.
const USER_TAGS: &[&str] = &[
    "Name",
    "owner-email",
    "crossplane-kind",
    "crossplane-name",
    "crossplane-providerconfig",
];
/// The built-in profiles' prefixes (`plexsphere-` for GCP).
const PREFIXES: [&str; 2] = ["plexsphere:", "plexsphere-"];
/// The families, in the bit order of `Mr::families`.
const FAMILIES: [&str; 3] = ["aws", "azure", "gcp"];
/// Kinds a child may become (apiVersion, kind): in the catalogue, of each
/// family and scope; not in it; of no family; a family's ProviderConfig.
const KINDS: &[(&str, &str)] = &[
    ("ec2.aws.upbound.io/v1beta1", "Subnet"),
    ("ec2.aws.m.upbound.io/v1beta1", "VPC"),
    ("ec2.aws.upbound.io/v1beta1", "VPC"),
    ("storage.gcp.upbound.io/v1beta2", "Bucket"),
    ("container.gcp.m.upbound.io/v1beta1", "Cluster"),
    ("network.azure.m.upbound.io/v1beta1", "VirtualNetwork"),
    ("ec2.aws.upbound.io/v1beta1", "NoTagField"),
    ("ec2.aws.crossplane.io/v1beta1", "VPC"),
    ("aws.upbound.io/v1beta1", "ProviderConfig"),
];
/// Fields a `cloudTags.managedResources.kinds` row may name: the
/// catalogue's, and one whose maps do not exist yet.
const ROW_FIELDS: &[&str] = &[
    "spec.forProvider.tags",
    "spec.forProvider.labels",
    "spec.forProvider.resourceLabels",
    "spec.forProvider.extra.tags",
];

#[derive(Arbitrary, Debug)]
pub struct Mr {
    /// The child, modulo `fixtures::MR_CHILDREN`.
    pub child: u8,
    /// Some: the child becomes this of [`KINDS`] (modulo their count).
    kind: Option<u8>,
    /// Bit n: the n-th of [`FAMILIES`] is in
    /// `cloudTags.managedResources.families`.
    families: u8,
    /// Some: a `kinds` row for the child's group and kind, with this of
    /// [`ROW_FIELDS`].
    row: Option<u8>,
    /// Opt the first [`OPTED_IN`] of [`LABELS`] in.
    pub opt_in: bool,
    /// How the host answers the look-up of the XR.
    xr: XrAnswer,
    /// Set on the child's labels.
    labels: Vec<(Label, Text)>,
    /// Rewrites the child's (first, controller) ownerReference.
    owner: Option<Owner>,
    /// Set on the XR's labels.
    xr_labels: Vec<(Label, Text)>,
    /// Replaces the child's tag field.
    tags: Option<Tags>,
    /// Some, on an UPDATE: the old object is the fixture with this tag
    /// field.
    stored: Option<Tags>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum XrAnswer {
    Found,
    Missing,
    Denied,
    Unavailable,
}

/// A label key: one of [`LABELS`] (modulo their count), or any.
#[derive(Arbitrary, Debug)]
pub enum Label {
    Known(u8),
    Other(String),
}

/// A tag key: the tag an opted-in label becomes under one of [`PREFIXES`],
/// a user's or provider's, or any.
#[derive(Arbitrary, Debug)]
pub enum TagKey {
    Prefixed(bool, Label),
    User(u8),
    Other(String),
}

#[derive(Arbitrary, Debug)]
pub enum Tags {
    /// Removed.
    Absent,
    /// Any small value (a wrong shape, or an empty map).
    Value(Small),
    /// A map of tags, each value a string or any small value.
    Map(Vec<(TagKey, Text)>),
}

/// What becomes of the child's first ownerReference.
#[derive(Arbitrary, Debug)]
enum Owner {
    /// All ownerReferences removed.
    Removed,
    /// `controller: false`.
    NotController,
    /// Another name (the look-up finds no XR of it).
    Named(String),
    /// Another kind.
    Kind(String),
}

impl Label {
    fn into_string(self) -> String {
        match self {
            Label::Known(i) => LABELS[usize::from(i) % LABELS.len()].to_owned(),
            Label::Other(key) => key,
        }
    }
}

impl IntoValue for Tags {
    fn into_value(self) -> Value {
        match self {
            Tags::Absent => Value::Null,
            Tags::Value(small) => small.into_value(),
            Tags::Map(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| {
                        let key = match key {
                            TagKey::Prefixed(dash, label) => {
                                format!("{}{}", PREFIXES[usize::from(dash)], label.into_string())
                            }
                            TagKey::User(i) => {
                                USER_TAGS[usize::from(i) % USER_TAGS.len()].to_owned()
                            }
                            TagKey::Other(key) => key,
                        };
                        (key, value.into_value())
                    })
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// The label keys `Mr::opt_in` opts in.
pub fn opted_in() -> impl Iterator<Item = String> {
    LABELS[..OPTED_IN].iter().map(|key| (*key).to_owned())
}

/// What an [`Mr`] asks of the rest of the execution.
pub struct Applied {
    /// `cloudTags.managedResources`.
    pub settings: Value,
    /// How the host answers the look-up of the XR.
    pub answer: Answer,
    /// On an UPDATE, the old object's tag field, if the input stores one.
    pub stored: Option<Tags>,
}

impl Mr {
    /// Applies the input to the child (before any other mutation) and to
    /// its XR (`xr`, among the parents), and says what the settings, the
    /// XR's look-up and the old object are.
    pub fn apply(self, child: &mut Node, xr: Option<&mut Node>) -> Applied {
        if let Some(i) = self.kind {
            let (api_version, kind) = KINDS[usize::from(i) % KINDS.len()];
            set(
                child,
                &["apiVersion"],
                Value::String(api_version.to_owned()),
            );
            set(child, &["kind"], Value::String(kind.to_owned()));
        }
        for (key, value) in self.labels {
            let key = key.into_string();
            set(child, &["metadata", "labels", &key], value.into_value());
        }
        match self.owner {
            None => {}
            Some(Owner::Removed) => set(
                child,
                &["metadata", "ownerReferences"],
                Value::Array(Vec::new()),
            ),
            Some(Owner::NotController) => set(
                child,
                &["metadata", "ownerReferences", "0", "controller"],
                Value::Bool(false),
            ),
            Some(Owner::Named(name)) => set(
                child,
                &["metadata", "ownerReferences", "0", "name"],
                Value::String(name),
            ),
            Some(Owner::Kind(kind)) => set(
                child,
                &["metadata", "ownerReferences", "0", "kind"],
                Value::String(kind),
            ),
        }
        let field = tag_field(child);
        if let Some(tags) = self.tags {
            set(child, &field, tags.into_value());
        }
        if let Some(xr) = xr {
            for (key, value) in self.xr_labels {
                let key = key.into_string();
                set(xr, &["metadata", "labels", &key], value.into_value());
            }
        }
        let families: Vec<&str> = (FAMILIES.iter().enumerate())
            .filter(|(n, _)| self.families >> n & 1 == 1)
            .map(|(_, name)| *name)
            .collect();
        let mut settings = serde_json::json!({ "families": families });
        if let Some(field) = self.row {
            let group = group_of(child);
            let kind = child.text(&["kind"]).unwrap_or_default().to_owned();
            let field = ROW_FIELDS[usize::from(field) % ROW_FIELDS.len()];
            settings["kinds"] = serde_json::json!([{"group": group, "kind": kind, "field": field}]);
        }
        let answer = match self.xr {
            XrAnswer::Found => Answer::Found,
            XrAnswer::Missing => Answer::Missing,
            XrAnswer::Denied => Answer::Denied,
            XrAnswer::Unavailable => Answer::Unavailable,
        };
        Applied {
            settings,
            answer,
            stored: self.stored,
        }
    }
}

/// The old object of an UPDATE: `fixture` with its tag field `stored`.
pub fn stored_object(fixture: &Value, stored: Tags) -> Value {
    let mut old = Node::Shared(fixture);
    let field = tag_field(&old);
    set(&mut old, &field, stored.into_value());
    old.into_value()
}

/// The cluster-scoped group of `child`'s apiVersion (`.m.` taken out), as a
/// settings row names it.
fn group_of(child: &Node) -> String {
    let api_version = child.text(&["apiVersion"]).unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    group.replace(".m.upbound.io", ".upbound.io")
}

/// The tag field of `child`'s family (by its group): `labels` on GCP
/// (`resourceLabels` on a GKE Cluster), else `tags`.
fn tag_field(child: &Node) -> [&'static str; 3] {
    let group = group_of(child);
    let gcp = group.ends_with("gcp.upbound.io");
    let field = match child.text(&["kind"]) {
        Some("Cluster") if gcp => "resourceLabels",
        _ if gcp => "labels",
        _ => "tags",
    };
    ["spec", "forProvider", field]
}

/// Whether `node`, a parent, is the XR the fixture `child` names by its
/// controller ownerReference (kind and name; the namespace is the MR's).
pub fn names_xr(child: &Value, node: &Node) -> bool {
    let owner = &child["metadata"]["ownerReferences"][0];
    node.text(&["kind"]) == owner["kind"].as_str()
        && node.text(&["metadata", "name"]) == owner["name"].as_str()
        && node.text(&["metadata", "namespace"]) == child["metadata"]["namespace"].as_str()
}

/// Whether a look-up `key` is of an XR the MR fixtures name.
pub fn is_xr(kind: &str) -> bool {
    matches!(kind, "XNetwork" | "Network")
}
