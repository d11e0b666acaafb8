//! Property tests over both capabilities, on real CAPI and Crossplane
//! fixtures with generated label/annotation/tag maps spliced in, and, for
//! CAPI, generated in-place field values at every path the rule table names
//! (kept only where the object's CRD accepts them):
//! - idempotent: mutating the mutated object changes nothing;
//! - contained, conservative and typed: `invariants::check_mutation` (the
//!   policy writes only the maps and fields the table names, each field
//!   with its CRD type, and no keyed-list entry goes);
//! - deterministic: the same request and settings give the same outcome and
//!   byte-identical mutated objects;
//! - real: an object its CRD (or XRD) accepts stays one it accepts
//!   (crates/core/tests/schemas, strict, as `make check-schemas` checks the
//!   fixtures);
//! - one decision: `explain` decides as `evaluate` does, the keys it calls
//!   added or corrected are exactly the plan's, and every label it calls a
//!   tag is one in the mutated object.

use super::support;

use metadata_propagation_core::capi::explained::key_fates::Fate;
use metadata_propagation_core::capi::rules::{CAPI_RULES, Flow, ParentLink, Unit};
use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::invariants::{Capability, check_mutation};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::request::lookup::MapLookup;
use metadata_propagation_core::request::outcome::Verdict;
use metadata_propagation_core::request::plan::Edit;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::said::label_fates::TagFate;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use support::crd_schema;
use support::read_repo_file;

fn files(dir: &str, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(support::repo_path(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix) && !n.starts_with("settings"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    names.sort();
    names
}

/// (request objects, parents) per API version, from test_data/capi.
static CAPI: LazyLock<Vec<(Vec<Value>, Vec<Value>)>> = LazyLock::new(|| {
    ["v1beta1", "v1beta2"]
        .iter()
        .map(|v| {
            let requests = files(&format!("test_data/capi/{v}"), ".json")
                .iter()
                .map(|p| {
                    serde_json::from_str::<Value>(&read_repo_file(p)).unwrap()["object"].clone()
                })
                .filter(|o| o.is_object())
                .collect();
            let parents = files(&format!("test_data/capi/{v}/parents"), ".yaml")
                .iter()
                .map(|p| serde_norway::from_str::<Value>(&read_repo_file(p)).unwrap())
                .collect();
            (requests, parents)
        })
        .collect()
});

static XRS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    files("test_data/xr", ".json")
        .iter()
        .map(|p| serde_json::from_str::<Value>(&read_repo_file(p)).unwrap()["object"].clone())
        .filter(|o| o.is_object())
        .collect()
});

/// Keys that exercise every rule: bookkeeping, Node-synced domains,
/// Kubernetes namespaces, skip lists, tag prefixes and plain keys.
const KEY_POOL: &[&str] = &[
    "cluster.x-k8s.io/cluster-name",
    "cluster.x-k8s.io/deployment-name",
    "cluster.x-k8s.io/set-name",
    "machine-template-hash",
    "topology.cluster.x-k8s.io/owned",
    "topology.cluster.x-k8s.io/defer-upgrade",
    "machinedeployment.clusters.x-k8s.io/revision",
    "kubectl.kubernetes.io/last-applied-configuration",
    "node-role.kubernetes.io/worker",
    "node.kubernetes.io/exclude-from-external-load-balancers",
    "team.node.cluster.x-k8s.io/owner",
    "platform/env",
    "platform/origin",
    "acme:checkout/owner",
    "aws:billing",
    "team/cost center",
    "env",
    "plexsphere:platform/env",
    "cloud-tags.plexsphere.io/skipped",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(KEY_POOL).prop_map(str::to_owned),
        1 => "[a-z]{1,6}(/[a-zé]{1,6})?",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("adopted".to_owned()),
        "[a-z0-9 ]{0,12}",
        "[é日a]{60,80}",
    ]
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map(key(), value(), 0..8)
}

fn to_json(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>(),
    )
}

/// Merges generated entries into the string map at `path`, creating the
/// map and its `metadata` but never their container: a Machine gets no
/// `spec.template`, a MachineSet no `spec.machineTemplate`, so an object its
/// CRD accepts stays one it accepts and the schema check on the output means
/// something.
fn splice(object: &mut Value, path: &[&str], entries: &BTreeMap<String, String>) {
    let (container, created) = path.split_at(path.len().saturating_sub(2));
    let mut current = object;
    for segment in container {
        match current.get_mut(*segment) {
            Some(next) => current = next,
            None => return,
        }
    }
    for segment in created {
        let Some(map) = current.as_object_mut() else {
            return;
        };
        current = map.entry(*segment).or_insert_with(|| json!({}));
    }
    if let Some(map) = current.as_object_mut() {
        for (k, v) in entries {
            map.insert(k.clone(), Value::String(v.clone()));
        }
    }
}

/// Runs the five properties on one request.
fn check_properties(
    object: Value,
    settings: &Settings,
    lookup: &MapLookup,
) -> Result<(), TestCaseError> {
    let request = AdmissionRequest::for_object("UPDATE", object.clone());
    let first = evaluate(&request, settings, lookup);
    let second = evaluate(&request, settings, lookup);
    prop_assert_eq!(&first, &second, "deterministic outcome");
    let Verdict::Allow(plan) = &first.verdict else {
        return Ok(());
    };
    let mut after = object.clone();
    plan.apply(&mut after);
    let mut again = object.clone();
    if let Verdict::Allow(p) = &second.verdict {
        p.apply(&mut again);
    }
    prop_assert_eq!(
        serde_json::to_vec(&after).unwrap(),
        serde_json::to_vec(&again).unwrap(),
        "byte-identical mutation"
    );
    let capability = Capability::for_request(&request.kind, &object, settings);
    if let Err(e) = check_mutation(capability, &object, &after) {
        return Err(TestCaseError::fail(e.to_string()));
    }
    crd_schema::check_output(&object, &after).map_err(TestCaseError::fail)?;
    let idempotent = evaluate(
        &AdmissionRequest::for_object("UPDATE", after.clone()),
        settings,
        lookup,
    );
    prop_assert!(
        idempotent.plan().is_some_and(|p| p.is_empty()),
        "idempotent: second pass wants {:?}",
        idempotent.verdict
    );

    let (explained, explanation) = explain(&request, settings, lookup);
    prop_assert_eq!(&explained, &first, "explain decides as evaluate does");
    let paths: BTreeSet<&str> = support::capi_part(&explanation)
        .paths
        .iter()
        .map(|p| p.path.as_str())
        .collect();
    for path in paths {
        let changed: BTreeSet<&str> = support::capi_part(&explanation)
            .paths
            .iter()
            .filter(|p| p.path == path)
            .flat_map(|p| &p.keys)
            .filter(|k| matches!(&k.fate, Fate::Flows { change, .. } if change != "unchanged"))
            .map(|k| k.key.as_str())
            .collect();
        let planned: BTreeSet<&str> = plan
            .map_edits()
            .filter(|e| e.path.dotted() == path)
            .flat_map(|e| e.set.keys().map(String::as_str))
            .collect();
        prop_assert_eq!(
            changed,
            planned,
            "explained and planned changes of {}",
            path
        );
    }
    // Every field explained as added or corrected is a field edit of the
    // plan, and the other way round.
    let explained_fields: BTreeSet<String> = support::capi_part(&explanation)
        .fields
        .iter()
        .filter(|f| matches!(f.change.as_str(), "added" | "corrected"))
        .map(|f| f.path.clone())
        .collect();
    let planned_fields: BTreeSet<String> = plan
        .edits
        .iter()
        .filter(|e| matches!(e, Edit::Field(_)))
        .map(Edit::target)
        .collect();
    prop_assert_eq!(
        explained_fields,
        planned_fields,
        "explained and planned field changes"
    );
    for label in support::cloud_tags(&explanation)
        .iter()
        .flat_map(|t| &t.labels)
    {
        if let TagFate::Tag { tag_key, .. } = &label.fate {
            prop_assert!(
                after["spec"]["cloudTags"].get(tag_key).is_some(),
                "{} explained as tag {} but not in spec.cloudTags",
                label.qualified_key,
                tag_key
            );
        }
    }
    Ok(())
}

/// Without this the schema check in `check_properties` would prove nothing:
/// every fixture the property tests start from whose kind has a schema in
/// crates/core/tests/schemas is an object its CRD (or XRD) accepts.
#[test]
fn fixtures_are_objects_their_crds_accept() {
    let capi = CAPI
        .iter()
        .flat_map(|(requests, parents)| requests.iter().chain(parents));
    let mut checked = 0;
    for object in capi.chain(XRS.iter()) {
        if let Some(failures) = crd_schema::failures(object) {
            assert!(
                failures.is_empty(),
                "{}: {failures:?}",
                object["metadata"]["name"]
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 50,
        "only {checked} fixtures have a schema in crates/core/tests/schemas"
    );
}

const CAPI_PATHS: &[&[&str]] = &[
    &["metadata", "labels"],
    &["metadata", "annotations"],
    &["spec", "template", "metadata", "labels"],
    &["spec", "machineTemplate", "metadata", "annotations"],
];

/// A value of `unit`, picked by `seed`: equal-by-meaning spellings
/// (`"5m"`, `"5m0s"`, 300), zeros, and keyed entries whose keys repeat
/// across objects with different content.
fn field_value(unit: Unit, seed: usize) -> Value {
    const DURATIONS: &[&str] = &["0s", "10s", "5m", "5m0s", "1m30s", "1.5s", "300s"];
    const SECONDS: &[i64] = &[0, 10, 90, 300];
    const ENUMS: &[&str] = &["Random", "Newest", "Oldest"];
    const GATES: &[&str] = &["example.com/A", "example.com/B", "APIServerPodHealthy"];
    const TAINTS: &[(&str, &str)] = &[
        ("dedicated", "NoSchedule"),
        ("gpu", "NoExecute"),
        ("dedicated", "NoExecute"),
    ];
    match unit {
        Unit::Duration => json!(DURATIONS[seed % DURATIONS.len()]),
        Unit::Seconds | Unit::Integer | Unit::IntegerOmitZero => {
            json!(SECONDS[seed % SECONDS.len()])
        }
        Unit::Enum => json!(ENUMS[seed % ENUMS.len()]),
        Unit::Object => {
            let templates = [
                "{{ .machineSet.name }}-{{ .random }}",
                "{{ .cluster.name }}-w-{{ .random }}",
            ];
            json!({"template": templates[seed % 2]})
        }
        Unit::KeyedList(keys) if keys == ["conditionType"] => Value::Array(
            GATES
                .iter()
                .enumerate()
                .filter(|(i, _)| seed >> i & 1 == 1)
                .map(|(i, gate)| {
                    if seed >> (i + 3) & 1 == 1 {
                        json!({"conditionType": gate, "polarity": "Negative"})
                    } else {
                        json!({"conditionType": gate})
                    }
                })
                .collect(),
        ),
        Unit::KeyedList(_) => Value::Array(
            TAINTS
                .iter()
                .enumerate()
                .filter(|(i, _)| seed >> i & 1 == 1)
                .map(|(i, (key, effect))| {
                    let value = ["a", "b"][seed >> (i + 3) & 1];
                    json!({"key": key, "effect": effect, "value": value, "propagation": "Always"})
                })
                .collect(),
        ),
    }
}

/// Sets `value` at `path`, creating objects on the way and descending
/// into every item of an array; keeps the change only if the object's CRD
/// (when the tests have its schema) still accepts it, so every input is an
/// object a cluster would store.
fn splice_field(object: &mut Value, path: &[&str], value: &Value) {
    fn set(current: &mut Value, path: &[&str], value: &Value) {
        match current {
            Value::Array(items) => items.iter_mut().for_each(|item| set(item, path, value)),
            Value::Object(map) => match path {
                [] => {}
                [last] => {
                    map.insert((*last).to_owned(), value.clone());
                }
                [first, rest @ ..] => {
                    set(map.entry(*first).or_insert_with(|| json!({})), rest, value)
                }
            },
            _ => {}
        }
    }
    if value.as_array().is_some_and(Vec::is_empty) {
        return;
    }
    let before = object.clone();
    set(object, path, value);
    if crd_schema::failures(object).is_some_and(|f| !f.is_empty()) {
        *object = before;
    }
}

/// Where each kind of object holds in-place fields, read from the rule
/// table: a child's targets, a parent's sources at its API version, and
/// for Clusters and ClusterClasses the topology rows' sources under each
/// entry.
fn field_endpoints(object: &Value) -> Vec<(Vec<&'static str>, Unit)> {
    let version = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let topology_parent = matches!(kind, "Cluster" | "ClusterClass");
    let entries: &[&[&str]] = match kind {
        "Cluster" => &[
            &["spec", "topology", "controlPlane"],
            &["spec", "topology", "workers", "machineDeployments"],
            &["spec", "topology", "workers", "machinePools"],
        ],
        "ClusterClass" => &[
            &["spec", "controlPlane"],
            &["spec", "workers", "machineDeployments"],
            &["spec", "workers", "machinePools"],
        ],
        _ => &[&[]],
    };
    let mut out = Vec::new();
    for rule in CAPI_RULES {
        let topology = matches!(rule.parent, ParentLink::Topology(_));
        for flow in rule.flows() {
            let Flow::Field(field) = flow else { continue };
            // A topology row's sources are relative to a Cluster or
            // ClusterClass entry; every other path is the object's own.
            for (relative, side) in [(topology, &field.from), (false, &field.to)] {
                let Some(endpoint) = side.at(version) else {
                    continue;
                };
                if relative != topology_parent {
                    continue;
                }
                for entry in entries {
                    out.push(([*entry, endpoint.path].concat(), endpoint.unit));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Splices generated field values into every place `object` can hold one.
fn with_fields(mut object: Value, seeds: &[usize]) -> Value {
    for ((path, unit), seed) in field_endpoints(&object).iter().zip(seeds.iter().cycle()) {
        if seed % 3 != 0 {
            splice_field(&mut object, path, &field_value(*unit, seed / 3));
        }
    }
    object
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn capi_field_mutations_are_idempotent_typed_contained_deterministic(
        version in 0usize..2,
        pick in any::<prop::sample::Index>(),
        child_seeds in proptest::collection::vec(0usize..4096, 8),
        parent_seeds in proptest::collection::vec(0usize..4096, 8),
    ) {
        let (requests, parents) = &CAPI[version];
        let object = with_fields(pick.get(requests).clone(), &child_seeds);
        let lookup = parents.iter().fold(MapLookup::default(), |lookup, parent| {
            lookup.with_object(with_fields(parent.clone(), &parent_seeds))
        });
        check_properties(object, &Settings::default(), &lookup)?;
    }

    #[test]
    fn capi_mutations_are_idempotent_contained_conservative_deterministic(
        version in 0usize..2,
        pick in any::<prop::sample::Index>(),
        child_maps in proptest::collection::vec(string_map(), 4),
        parent_maps in proptest::collection::vec(string_map(), 4),
    ) {
        let (requests, parents) = &CAPI[version];
        let mut object = pick.get(requests).clone();
        for (path, entries) in CAPI_PATHS.iter().zip(&child_maps) {
            splice(&mut object, path, entries);
        }
        let lookup = parents.iter().fold(MapLookup::default(), |lookup, parent| {
            let mut parent = parent.clone();
            for (path, entries) in CAPI_PATHS.iter().zip(&parent_maps) {
                splice(&mut parent, path, entries);
            }
            lookup.with_object(parent)
        });
        check_properties(object, &Settings::default(), &lookup)?;
    }

    #[test]
    fn xr_mutations_are_idempotent_contained_conservative_deterministic(
        pick in any::<prop::sample::Index>(),
        labels in string_map(),
        extra in string_map(),
        tags in string_map(),
        provider in proptest::sample::select(&support::PROVIDERS[..]),
        opted_in in proptest::collection::btree_set(proptest::sample::select(KEY_POOL), 0..10),
    ) {
        let mut object = pick.get(&XRS).clone();
        let Some(meta) = object["metadata"].as_object_mut() else { return Ok(()); };
        let _ = meta;
        splice(&mut object, &["metadata", "labels"], &labels);
        let extra_json = to_json(&extra).to_string();
        splice(&mut object, &["metadata", "annotations"],
               &BTreeMap::from([("cloud-tags.plexsphere.io/labels".to_owned(), extra_json)]));
        splice(&mut object, &["spec", "cloudTags"], &tags);
        if object["spec"]["parameters"].is_object() {
            object["spec"]["parameters"]["provider"] = json!(provider);
        }
        let seeded = ["platform/origin", "platform/mesh-ip", "platform/domain"];
        let keys: Vec<&str> = opted_in.into_iter().filter(|k| !seeded.contains(k)).collect();
        let settings = json!({"cloudTags": {"propagatingLabels": keys}}).to_string();
        let settings = Settings::from_json(settings.as_bytes()).unwrap();
        check_properties(object, &settings, &MapLookup::default())?;
    }
}
