//! The tag table ([`TARGETS`]) is the one list of what the policy stamps:
//! the policy's metadata and the example policy must send it every kind
//! row's objects and let it read their Clusters, and the strict schema
//! check must hold a schema for every row. A row added to the table and
//! missed in any of these fails here, naming the file.

use super::support;

use metadata_propagation_core::tags::targets::{LabelSource, Match, TARGETS};
use serde_json::Value;

/// A rule of a `rules` list covers `group`/`version`/`resource` for
/// CREATE and UPDATE.
fn covered(rules: &Value, group: &str, version: &str, resource: &str) -> bool {
    let has = |rule: &Value, list: &str, item: &str| {
        rule[list]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i == item))
    };
    rules.as_array().unwrap().iter().any(|rule| {
        has(rule, "apiGroups", group)
            && has(rule, "apiVersions", version)
            && has(rule, "resources", resource)
            && has(rule, "operations", "CREATE")
            && has(rule, "operations", "UPDATE")
    })
}

/// `contextAwareResources` lets the policy read `kind` at `api_version`.
fn readable(resources: &Value, api_version: &str, kind: &str) -> bool {
    resources
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["apiVersion"] == api_version && r["kind"] == kind)
}

fn yaml(file: &str) -> Value {
    serde_norway::from_str(&support::read_repo_file(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn the_metadata_and_the_example_policy_send_and_read_what_every_row_needs() {
    let metadata = yaml("policy-metadata.yml");
    let example = yaml("examples/capi-policy.yaml");
    let places = [
        ("policy-metadata.yml", &metadata),
        ("examples/capi-policy.yaml", &example["spec"]),
    ];
    for row in TARGETS {
        let Some((kind_match, version)) = row.kind() else {
            continue;
        };
        let kind = kind_match.kind.expect("a kind row names its kind");
        let resource = format!("{}s", kind.to_lowercase());
        for (file, policy) in places {
            assert!(
                covered(&policy["rules"], kind_match.group, version, &resource),
                "{file}: no rule sends {resource}.{}/{version} on CREATE and UPDATE",
                kind_match.group
            );
            if row.labels == LabelSource::ClusterAndObject {
                // The Cluster is read at an ownerReference's version, else
                // at v1beta2, as docs/infrastructure-tags.md says of finding the Cluster.
                for api_version in ["cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2"] {
                    assert!(
                        readable(&policy["contextAwareResources"], api_version, "Cluster"),
                        "{file}: {kind} reads its Cluster, but {api_version} Cluster is not in \
                         contextAwareResources"
                    );
                }
            }
        }
    }
}

/// The rows whose provider CRD is not vendored in crds/ (so no strict
/// schema can be derived for them); each must stay listed here on purpose.
const CRD_NOT_VENDORED: &[&str] = &[];

#[test]
fn the_strict_schema_check_holds_a_schema_for_every_row() {
    let checked = support::read_repo_file("scripts/check_schemas.py");
    for row in TARGETS {
        let file = match (row.matches, row.kind()) {
            (Match::Kind { .. }, Some((kind_match, version))) => {
                let kind = kind_match.kind.unwrap();
                let crd = format!("crds/{}_{}s.json", kind_match.group, kind.to_lowercase());
                let vendored = support::repo_path(&crd).is_file();
                assert_eq!(
                    vendored,
                    !CRD_NOT_VENDORED.contains(&kind),
                    "{crd}: vendored or not, CRD_NOT_VENDORED must say so"
                );
                if !vendored {
                    continue;
                }
                let listed = format!("(\"{}\", \"{kind}\")", kind_match.group);
                assert!(
                    checked.contains(&listed),
                    "scripts/check_schemas.py: RUST_SCHEMA_KINDS does not list {listed}"
                );
                format!("{}_{version}_{kind}.json", kind_match.group)
            }
            // The composite resource's row: the example XRD's XR.
            _ => "platform.example.org_v1alpha1_XDatabase.json".to_owned(),
        };
        let path = support::repo_path(&format!("crates/core/tests/schemas/{file}"));
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut node = &schema;
        for segment in row.field.segments() {
            node = &node["properties"][segment];
        }
        assert!(
            node.is_object(),
            "{file}: the schema has no {}, the row's tag field",
            row.field.dotted()
        );
    }
}

/// What the tags stage declares it reads of an object (the wire decodes
/// only that, and passes the rest through as text) holds, for every row a
/// request of the row's kind may be covered by, the row's tag field, what
/// tells its objects apart and, where it chooses its profile by the
/// provider, the provider path: a row whose field the declaration misses
/// fails here, not on a request.
#[test]
fn the_tags_stage_declares_what_every_row_reads() {
    use metadata_propagation_core::evaluate::{object_projection, route, stages};
    use metadata_propagation_core::json::projection::Projection;
    use metadata_propagation_core::request::GroupVersionKind;
    use metadata_propagation_core::settings::Settings;
    use metadata_propagation_core::tags::targets::ProfileChoice;
    use metadata_propagation_core::tags::targets::managed_resource::SHAPE_PATHS;
    use metadata_propagation_core::tags::targets::mr_catalogue::{self, Family};

    let families: Vec<_> = Family::ALL.iter().map(|family| family.name()).collect();
    let document = serde_json::json!({"cloudTags": {
        "capiInfrastructure": true,
        "providerPath": "spec.forProvider.cloud",
        "managedResources": {"families": families},
    }});
    let settings = Settings::parse(document.to_string().as_bytes()).unwrap();
    let kind = |group: &str, version: &str, kind: &str| GroupVersionKind {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
    };
    let provider: &[&str] = &["spec", "forProvider", "cloud"];
    let mut cases: Vec<(GroupVersionKind, Projection)> = Vec::new();
    for row in TARGETS {
        let gvk = match row.kind() {
            Some((matched, version)) => {
                let name = matched.kind.expect("a kind row names its kind");
                kind(matched.group, version, name)
            }
            None => kind("platform.example.org", "v1alpha1", "XNetwork"),
        };
        let mut paths = Projection::default();
        for path in row.reads() {
            paths.keep(path);
        }
        if row.profile == ProfileChoice::Provider {
            paths.keep(provider.iter().copied());
        }
        cases.push((gvk, paths));
    }
    for row in mr_catalogue::Row::every() {
        let mut paths = Projection::of(&SHAPE_PATHS);
        paths.keep(row.field.split('.'));
        cases.push((kind(row.group, "v1beta1", row.kind), paths));
    }
    assert!(
        cases.len() > TARGETS.len(),
        "the catalogue's rows are checked too"
    );
    for (gvk, paths) in cases {
        let route = route(&gvk, "UPDATE");
        let stages = stages(&gvk, route, &settings);
        let declared = object_projection(&stages);
        assert!(
            declared.covers(&paths),
            "{gvk:?}: the tags stage does not declare {paths:?}"
        );
    }
}
