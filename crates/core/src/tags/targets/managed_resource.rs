//! Crossplane managed resources (MRs) as a row family of the tag table
//! (docs/managed-resources.md): which objects are MRs, the provider family
//! their group names, the `cloudTags.managedResources` settings that turn a
//! family on and add rows, which MRs are left alone, and the composite
//! resource (XR) whose labels become an MR's tags.
//!
//! An MR is told by its shape, as crossplane-runtime's CRDs give it: the
//! API server defaults `spec.providerConfigRef` and upjet's CRDs require
//! `spec.forProvider`, so both are objects at admission on every MR, and
//! on no XR or claim.

use super::mr_catalogue::{self, Family};
use crate::json::fields::{self, FieldPath, Path};
use crate::json::null_unset::null_is_default;
use crate::json::quote::quoted;
use crate::kube::kinds::is_capi_group;
use crate::kube::owners;
use crate::request::lookup::ObjectRef;
use crate::settings_problem::{SettingsProblem, SettingsProblemKind};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// The label Crossplane puts on every resource it composes: the name of
/// the top-level XR.
pub(crate) const COMPOSITE_LABEL: &str = "crossplane.io/composite";

/// The paths the recognition and the left-alone rules read, besides the
/// labels, the annotations and the tag field. `spec.providerConfigRef` is
/// kept through one member, so that the projection keeps an object there
/// without decoding the rest of it.
pub(crate) const SHAPE_PATHS: [&[&str]; 7] = [
    &["metadata", "name"],
    &["metadata", "generateName"],
    &["metadata", "namespace"],
    &["metadata", "ownerReferences"],
    &["metadata", "deletionTimestamp"],
    &["spec", "managementPolicies"],
    &["spec", "providerConfigRef", "name"],
];

/// The family of an API group, and the group as the catalogue keys it
/// (without `.m.`), if the group is one of a family's.
pub(crate) fn family_of(group: &str) -> Option<(Family, Cow<'_, str>)> {
    let ends = |suffix: &str| {
        group
            .strip_suffix(suffix)
            .filter(|service| service.is_empty() || service.ends_with('.'))
    };
    Family::ALL.into_iter().find_map(|family| {
        if ends(family.suffix()).is_some() {
            return Some((family, Cow::Borrowed(group)));
        }
        let service = ends(family.namespaced_suffix())?;
        Some((family, Cow::Owned(format!("{service}{}", family.suffix()))))
    })
}

/// Whether `object` has an MR's shape: `spec.forProvider` and
/// `spec.providerConfigRef` are objects.
pub(crate) fn has_shape(object: &Value) -> bool {
    let spec = object.get("spec");
    let is_object = |name: &str| spec.and_then(|s| s.get(name)).is_some_and(Value::is_object);
    is_object("forProvider") && is_object("providerConfigRef")
}

/// `cloudTags.managedResources`, as written.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(
    default,
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "an object with `families` and `kinds`"
)]
pub(crate) struct RawManagedResources {
    /// The families whose MRs are tagged.
    #[serde(deserialize_with = "null_is_default")]
    families: Vec<String>,
    /// Rows that add to or override the catalogue.
    #[serde(deserialize_with = "null_is_default")]
    kinds: Vec<RawKindRow>,
}

/// One row of `cloudTags.managedResources.kinds`, as written.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a row such as {\"group\": \"ec2.aws.upbound.io\", \"kind\": \"VPC\", \"field\": \"spec.forProvider.tags\"}"
)]
struct RawKindRow {
    group: String,
    kind: String,
    field: String,
}

/// The field paths the catalogue names, as the table holds them.
static CATALOGUE_FIELDS: [Path; 3] = [
    Path::Static(&["spec", "forProvider", "tags"]),
    Path::Static(&["spec", "forProvider", "labels"]),
    Path::Static(&["spec", "forProvider", "resourceLabels"]),
];

/// Where every tag field of an MR lies.
const FOR_PROVIDER: &str = "spec.forProvider.";

impl RawManagedResources {
    /// Whether any family is on: without one, no MR is tagged and nothing
    /// here is prepared.
    pub(crate) fn any_family(&self) -> bool {
        !self.families.is_empty()
    }

    /// Checks the section, adding each problem to `problems`.
    pub(crate) fn prepare(&self, problems: &mut Vec<SettingsProblem>) -> ManagedResources {
        let at = |rest: &[&str]| {
            let mut path = vec!["cloudTags", "managedResources"];
            path.extend_from_slice(rest);
            FieldPath::of(&path)
        };
        let mut families = Vec::new();
        for (i, name) in self.families.iter().enumerate() {
            let problem = match Family::named(name) {
                Some(family) if families.contains(&family) => Problem::RepeatedFamily(name.clone()),
                Some(family) => {
                    families.push(family);
                    continue;
                }
                None => Problem::UnknownFamily(name.clone()),
            };
            problems.push(SettingsProblem::new(at(&["families"]).index(i), problem));
        }
        let mut kinds: Vec<KindRow> = Vec::new();
        for (i, row) in self.kinds.iter().enumerate() {
            let row_at = |member: &str| at(&["kinds"]).index(i).member(member);
            let before = problems.len();
            let family = family_of(&row.group);
            if row.group.is_empty() {
                problems.push(SettingsProblem::new(row_at("group"), Problem::Empty));
            } else if family.as_ref().is_none_or(|(_, base)| *base != row.group) {
                let problem = Problem::NotAFamilyGroup(row.group.clone());
                problems.push(SettingsProblem::new(row_at("group"), problem));
            }
            if row.kind.is_empty() {
                problems.push(SettingsProblem::new(row_at("kind"), Problem::Empty));
            }
            let field = row.field.strip_prefix(FOR_PROVIDER);
            if field.is_none_or(|rest| rest.is_empty() || rest.split('.').any(str::is_empty)) {
                let problem = Problem::FieldOutsideForProvider(row.field.clone());
                problems.push(SettingsProblem::new(row_at("field"), problem));
            }
            if kinds
                .iter()
                .any(|other| other.group == row.group && other.kind == row.kind)
            {
                let problem = Problem::RepeatedKind(row.group.clone(), row.kind.clone());
                problems.push(SettingsProblem::new(at(&["kinds"]).index(i), problem));
            }
            if problems.len() == before {
                kinds.push(KindRow {
                    group: row.group.clone(),
                    kind: row.kind.clone(),
                    field: field_path(&row.field),
                });
            }
        }
        ManagedResources { families, kinds }
    }
}

/// `field` as a tag row holds it: a catalogue field is the table's own;
/// another is kept as written, each request sharing it.
fn field_path(field: &str) -> Path {
    match catalogue_field(field) {
        Some(known) => known.clone(),
        None => Path::Dotted(field.into()),
    }
}

/// The catalogue's path written `field`, if it is one.
fn catalogue_field(field: &str) -> Option<&'static Path> {
    (CATALOGUE_FIELDS.iter()).find(|known| known.segments().eq(field.split('.')))
}

/// One row of `cloudTags.managedResources.kinds`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KindRow {
    /// The cluster-scoped group.
    pub(crate) group: String,
    /// The kind.
    pub(crate) kind: String,
    /// Where the kind keeps its tags.
    pub(crate) field: Path,
}

/// `cloudTags.managedResources`, checked: the families on, and the rows
/// that add to or override the catalogue. The fuzz oracle reads both as
/// data, deciding the rest itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManagedResources {
    /// The families whose managed resources are tagged.
    pub(crate) families: Vec<Family>,
    /// The settings' rows.
    pub(crate) kinds: Vec<KindRow>,
}

/// What the tag table says of an MR kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindTags<'m> {
    /// Its family is not on: the MR is not tagged, as before the family
    /// existed.
    FamilyOff,
    /// Its family is on but the kind has no tag field: left unchanged.
    NoTagField,
    /// Its tag field.
    Field(Family, &'m Path),
}

impl ManagedResources {
    /// Where the MR kind `kind` of `group` (either scope) keeps its tags:
    /// a settings row first, then the catalogue.
    pub(crate) fn tag_field(&self, group: &str, kind: &str) -> Option<KindTags<'_>> {
        let (family, base) = family_of(group)?;
        if !self.families.contains(&family) {
            return Some(KindTags::FamilyOff);
        }
        let row = (self.kinds.iter()).find(|row| row.group == base && row.kind == kind);
        let field = match row {
            Some(row) => Some(&row.field),
            None => mr_catalogue::find(&base, kind).and_then(|row| catalogue_field(row.field)),
        };
        Some(field.map_or(KindTags::NoTagField, |field| KindTags::Field(family, field)))
    }
}

/// Why an MR of a tagged kind is left as submitted, with no look-up and no
/// warning (docs/managed-resources.md, "What is left alone").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeftAlone {
    /// No controller ownerReference, no `crossplane.io/composite` label,
    /// or a controller of a Cluster API group (never a composite
    /// resource): Crossplane did not compose it, and its own labels are
    /// not a source.
    NotComposed,
    /// `metadata.deletionTimestamp` is set.
    BeingDeleted,
    /// `spec.managementPolicies` has none of `*`, `Create`, `Update`: the
    /// provider never writes its tags.
    NeverWritten,
}

impl LeftAlone {
    /// The reason in words, for explanations.
    pub(crate) fn said(self) -> &'static str {
        match self {
            LeftAlone::NotComposed => {
                "no controller ownerReference with a crossplane.io/composite label: Crossplane \
                 did not compose this managed resource, so it has no composite resource to take \
                 tags from"
            }
            LeftAlone::BeingDeleted => "being deleted (metadata.deletionTimestamp is set)",
            LeftAlone::NeverWritten => {
                "spec.managementPolicies has none of *, Create, Update: the provider never \
                 writes its tags"
            }
        }
    }
}

/// The composite resource that composed the MR `object` (in `namespace`,
/// empty for a cluster-scoped MR): its controller ownerReference, when it
/// carries the `crossplane.io/composite` label too and the controller is
/// of no Cluster API group (an XR never is: the tags stage declares the
/// look-up so); or why the MR is left alone. An ownerReference entry missing a member is no controller: the
/// API server refuses such entries.
pub(crate) fn composing_resource(object: &Value, namespace: &str) -> Result<ObjectRef, LeftAlone> {
    let deleting = fields::get(object, &["metadata", "deletionTimestamp"])
        .ok()
        .flatten();
    if deleting.is_some_and(|value| !value.is_null()) {
        return Err(LeftAlone::BeingDeleted);
    }
    if !writes_tags(object) {
        return Err(LeftAlone::NeverWritten);
    }
    let composed = fields::string(object, &["metadata", "labels", COMPOSITE_LABEL])
        .ok()
        .flatten()
        .is_some_and(|name| !name.is_empty());
    let owners = owners::owner_refs(object).unwrap_or_default();
    let controller = owners.iter().find(|owner| owner.controller);
    match controller {
        Some(owner) if composed && !is_capi_group(owner.group()) => {
            Ok(owner.object_ref(Some(namespace).filter(|n| !n.is_empty())))
        }
        _ => Err(LeftAlone::NotComposed),
    }
}

/// Whether the provider writes the MR's spec to the cloud: its management
/// policies (default `["*"]`) hold `*`, `Create` or `Update`.
fn writes_tags(object: &Value) -> bool {
    match fields::get(object, &["spec", "managementPolicies"]) {
        Ok(Some(Value::Array(policies))) => policies
            .iter()
            .any(|p| matches!(p.as_str(), Some("*" | "Create" | "Update"))),
        _ => true,
    }
}

/// What is wrong with `cloudTags.managedResources`.
#[derive(Debug, thiserror::Error)]
enum Problem {
    #[error("unknown family {}; the families are \"aws\", \"azure\" and \"gcp\"", quoted(.0))]
    UnknownFamily(String),
    #[error("family {} is listed twice; list each family once", quoted(.0))]
    RepeatedFamily(String),
    #[error("must not be empty")]
    Empty,
    #[error(
        "{} is not the group of a managed-resource family; write the cluster-scoped group (without \
         .m.), ending in aws.upbound.io, azure.upbound.io or gcp.upbound.io",
        quoted(.0)
    )]
    NotAFamilyGroup(String),
    #[error(
        "{} is not a field under spec.forProvider; write a dotted path such as \
         \"spec.forProvider.tags\" (the policy never writes spec.initProvider)",
        quoted(.0)
    )]
    FieldOutsideForProvider(String),
    #[error("{} {} has a row already; keep one row per group and kind", quoted(.0), quoted(.1))]
    RepeatedKind(String, String),
}

impl From<Problem> for SettingsProblemKind {
    fn from(problem: Problem) -> Self {
        Self::Checked(problem.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::aws("ec2.aws.upbound.io", Some((Family::Aws, "ec2.aws.upbound.io")))]
    #[case::aws_namespaced("ec2.aws.m.upbound.io", Some((Family::Aws, "ec2.aws.upbound.io")))]
    #[case::azure_root("azure.upbound.io", Some((Family::Azure, "azure.upbound.io")))]
    #[case::azure_root_namespaced("azure.m.upbound.io", Some((Family::Azure, "azure.upbound.io")))]
    #[case::gcp("container.gcp.m.upbound.io", Some((Family::Gcp, "container.gcp.upbound.io")))]
    #[case::classic_aws("ec2.aws.crossplane.io", None)]
    #[case::glued("ec2aws.upbound.io", None)]
    #[case::kubernetes("kubernetes.m.crossplane.io", None)]
    fn families_by_group_suffix(#[case] group: &str, #[case] expected: Option<(Family, &str)>) {
        let found = family_of(group);
        assert_eq!(
            found.as_ref().map(|(f, base)| (*f, base.as_ref())),
            expected
        );
    }

    fn prepared(section: Value) -> Result<ManagedResources, Vec<String>> {
        let raw: RawManagedResources = serde_json::from_value(section).unwrap();
        let mut problems = Vec::new();
        let prepared = raw.prepare(&mut problems);
        match problems.is_empty() {
            true => Ok(prepared),
            false => Err(problems.iter().map(ToString::to_string).collect()),
        }
    }

    #[test]
    fn every_problem_is_named_at_its_field() {
        let problems = prepared(json!({
            "families": ["aws", "ibm", "aws"],
            "kinds": [
                {"group": "", "kind": "", "field": "spec.initProvider.tags"},
                {"group": "ec2.aws.m.upbound.io", "kind": "VPC", "field": "spec.forProvider.tags"},
                {"group": "ec2.aws.upbound.io", "kind": "VPC", "field": "spec.forProvider."},
                {"group": "ec2.aws.upbound.io", "kind": "VPC", "field": "spec.forProvider.x"},
                {"group": "ec2.aws.upbound.io", "kind": "VPC", "field": "spec.forProvider.y"}
            ]
        }))
        .unwrap_err();
        assert_eq!(
            problems,
            [
                "cloudTags.managedResources.families[1]: unknown family \"ibm\"; the families are \
                 \"aws\", \"azure\" and \"gcp\"",
                "cloudTags.managedResources.families[2]: family \"aws\" is listed twice; list \
                 each family once",
                "cloudTags.managedResources.kinds[0].group: must not be empty",
                "cloudTags.managedResources.kinds[0].kind: must not be empty",
                "cloudTags.managedResources.kinds[0].field: \"spec.initProvider.tags\" is not a \
                 field under spec.forProvider; write a dotted path such as \
                 \"spec.forProvider.tags\" (the policy never writes spec.initProvider)",
                "cloudTags.managedResources.kinds[1].group: \"ec2.aws.m.upbound.io\" is not the \
                 group of a managed-resource family; write the cluster-scoped group (without \
                 .m.), ending in aws.upbound.io, azure.upbound.io or gcp.upbound.io",
                "cloudTags.managedResources.kinds[2].field: \"spec.forProvider.\" is not a field \
                 under spec.forProvider; write a dotted path such as \"spec.forProvider.tags\" \
                 (the policy never writes spec.initProvider)",
                "cloudTags.managedResources.kinds[4]: \"ec2.aws.upbound.io\" \"VPC\" has a row \
                 already; keep one row per group and kind",
            ]
        );
    }

    #[test]
    fn rows_override_the_catalogue_and_a_family_must_be_on() {
        let section = prepared(json!({
            "families": ["aws", "gcp"],
            "kinds": [
                {"group": "ec2.aws.upbound.io", "kind": "VPC", "field": "spec.forProvider.extra.tags"},
                {"group": "monitoring.gcp.upbound.io", "kind": "AlertPolicy", "field": "spec.forProvider.userLabels"},
                {"group": "network.azure.upbound.io", "kind": "VirtualNetwork", "field": "spec.forProvider.tags"}
            ]
        }))
        .unwrap();
        let field = |group, kind| section.tag_field(group, kind);
        assert_eq!(
            field("ec2.aws.m.upbound.io", "VPC"),
            Some(KindTags::Field(
                Family::Aws,
                &Path::Static(&["spec", "forProvider", "extra", "tags"])
            ))
        );
        assert_eq!(
            field("ec2.aws.upbound.io", "Subnet"),
            Some(KindTags::Field(Family::Aws, &CATALOGUE_FIELDS[0]))
        );
        assert_eq!(
            field("monitoring.gcp.upbound.io", "AlertPolicy"),
            Some(KindTags::Field(
                Family::Gcp,
                &Path::Static(&["spec", "forProvider", "userLabels"])
            ))
        );
        assert_eq!(
            field("container.gcp.upbound.io", "Cluster"),
            Some(KindTags::Field(Family::Gcp, &CATALOGUE_FIELDS[2]))
        );
        assert_eq!(
            field("network.azure.upbound.io", "VirtualNetwork"),
            Some(KindTags::FamilyOff)
        );
        assert_eq!(
            field("ec2.aws.upbound.io", "NoTags"),
            Some(KindTags::NoTagField)
        );
        assert_eq!(field("ec2.aws.crossplane.io", "VPC"), None);
    }

    fn composed(metadata: Value, spec: Value) -> Value {
        json!({"metadata": metadata, "spec": spec})
    }

    fn owner() -> Value {
        json!([{"apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
                "name": "net", "uid": "u", "controller": true}])
    }

    #[test]
    fn the_controller_owner_of_a_composed_mr_is_its_composite_resource() {
        let labels = json!({COMPOSITE_LABEL: "net"});
        let mr = composed(
            json!({"labels": labels, "ownerReferences": owner()}),
            json!({"forProvider": {}}),
        );
        let xr = composing_resource(&mr, "team-a").unwrap();
        assert_eq!(
            xr.to_string(),
            "XNetwork team-a/net (platform.example.org/v1alpha1)"
        );
        assert_eq!(composing_resource(&mr, "").unwrap().namespace, None);
    }

    #[rstest]
    #[case::no_label(json!({"ownerReferences": owner()}), json!({}), LeftAlone::NotComposed)]
    #[case::empty_label(json!({"labels": {COMPOSITE_LABEL: ""}, "ownerReferences": owner()}), json!({}), LeftAlone::NotComposed)]
    #[case::no_controller(json!({"labels": {COMPOSITE_LABEL: "net"}, "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u"}]}), json!({}), LeftAlone::NotComposed)]
    #[case::capi_controller(json!({"labels": {COMPOSITE_LABEL: "net"}, "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "name": "m", "uid": "u", "controller": true}]}), json!({}), LeftAlone::NotComposed)]
    #[case::deleting(json!({"labels": {COMPOSITE_LABEL: "net"}, "ownerReferences": owner(), "deletionTimestamp": "2026-01-01T00:00:00Z"}), json!({}), LeftAlone::BeingDeleted)]
    #[case::observe_only(json!({"labels": {COMPOSITE_LABEL: "net"}, "ownerReferences": owner()}), json!({"managementPolicies": ["Observe"]}), LeftAlone::NeverWritten)]
    fn left_alone(#[case] metadata: Value, #[case] spec: Value, #[case] why: LeftAlone) {
        assert_eq!(
            composing_resource(&composed(metadata, spec), "ns"),
            Err(why)
        );
    }

    #[rstest]
    #[case::star(json!(["*"]))]
    #[case::create(json!(["Observe", "Create"]))]
    #[case::update(json!(["Update"]))]
    fn policies_that_write_tags(#[case] policies: Value) {
        let mr = composed(
            json!({"labels": {COMPOSITE_LABEL: "net"}, "ownerReferences": owner()}),
            json!({"managementPolicies": policies}),
        );
        assert!(composing_resource(&mr, "").is_ok());
    }

    #[test]
    fn the_shape_is_two_objects() {
        let mr = json!({"spec": {"forProvider": {}, "providerConfigRef": {"name": "default"}}});
        assert!(has_shape(&mr));
        assert!(!has_shape(&json!({"spec": {"forProvider": {}}})));
        assert!(!has_shape(
            &json!({"spec": {"forProvider": [], "providerConfigRef": {}}})
        ));
    }
}
