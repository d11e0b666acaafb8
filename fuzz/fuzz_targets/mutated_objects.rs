//! Structure-aware: real CAPI and Crossplane objects (and the CAPI parents)
//! with arbitrary nodes replaced, removed or extended, evaluated under
//! arbitrary settings. Whatever the input: no panic; an allowed mutation
//! satisfies `invariants::check_mutation` and is idempotent.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use metadata_propagation_policy::evaluate::evaluate;
use metadata_propagation_policy::invariants::{Capability, check_mutation};
use metadata_propagation_policy::lookup::MapLookup;
use metadata_propagation_policy::outcome::Verdict;
use metadata_propagation_policy::request::AdmissionRequest;
use metadata_propagation_policy::settings::Settings;
use serde_json::{Value, json};
use std::sync::LazyLock;

const CHILDREN: &[&str] = &[
    include_str!("../../test_data/capi/v1beta2/machineset_update_drifted_from_md.json"),
    include_str!("../../test_data/capi/v1beta2/machine_create_from_kcp.json"),
    include_str!("../../test_data/capi/v1beta2/dockermachine_create_from_machineset.json"),
    include_str!("../../test_data/capi/v1beta2/machinedeployment_create_topology.json"),
    include_str!("../../test_data/capi/v1beta2/kubeadmcontrolplane_create_topology.json"),
    include_str!("../../test_data/capi/v1beta1/machineset_create_from_md.json"),
    include_str!("../../test_data/capi/v1beta1/kubeadmcontrolplane_create_topology.json"),
    include_str!("../../test_data/xr/xnetwork_stale_update.json"),
    include_str!("../../test_data/xr/xdatabase_hetzner_limits.json"),
    include_str!("../../test_data/xr/xdatabase_openstack_limits.json"),
];

const PARENTS: &[&str] = &[
    include_str!(
        "../../test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml"
    ),
    include_str!("../../test_data/capi/v1beta2/parents/machineset_capi-quickstart-md-1-x7k2p.yaml"),
    include_str!(
        "../../test_data/capi/v1beta2/parents/kubeadmcontrolplane_capi-quickstart-wqx5r.yaml"
    ),
    include_str!("../../test_data/capi/v1beta2/parents/cluster_capi-quickstart.yaml"),
    include_str!("../../test_data/capi/v1beta2/parents/clusterclass_quick-start.yaml"),
    include_str!(
        "../../test_data/capi/v1beta1/parents/machinedeployment_capi-quickstart-md-1.yaml"
    ),
    include_str!("../../test_data/capi/v1beta1/parents/cluster_capi-quickstart.yaml"),
    include_str!("../../test_data/capi/v1beta1/parents/clusterclass_quick-start.yaml"),
];

static OBJECTS: LazyLock<(Vec<Value>, Vec<Value>)> = LazyLock::new(|| {
    let children = CHILDREN
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap()["object"].clone())
        .collect();
    let parents = PARENTS
        .iter()
        .map(|t| serde_norway::from_str::<Value>(t).unwrap())
        .collect();
    (children, parents)
});

#[derive(Arbitrary, Debug)]
enum Small {
    Null,
    Bool(bool),
    Number(i64),
    Text(String),
    Texts(Vec<String>),
    Map(Vec<(String, String)>),
    NestedMap(Vec<(String, Vec<(String, String)>)>),
}

impl Small {
    fn into_value(self) -> Value {
        let map = |entries: Vec<(String, String)>| {
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            )
        };
        match self {
            Small::Null => Value::Null,
            Small::Bool(b) => json!(b),
            Small::Number(n) => json!(n),
            Small::Text(s) => json!(s),
            Small::Texts(v) => json!(v),
            Small::Map(entries) => map(entries),
            Small::NestedMap(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, inner)| (k, map(inner)))
                    .collect(),
            ),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Mutation {
    Replace {
        in_parent: Option<u8>,
        node: u16,
        value: Small,
    },
    Remove {
        in_parent: Option<u8>,
        node: u16,
    },
    Insert {
        in_parent: Option<u8>,
        node: u16,
        key: String,
        value: Small,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    child: u8,
    operation: bool,
    mutations: Vec<Mutation>,
    propagating: Vec<String>,
    provider_path: Option<String>,
    validate_mode: bool,
}

/// Every node of `value` as a path of keys/indices (depth-first).
fn nodes(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                prefix.push(k.clone());
                nodes(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                prefix.push(i.to_string());
                nodes(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter()
        .try_fold(root, |current, segment| match current {
            Value::Object(map) => map.get_mut(segment),
            Value::Array(items) => items.get_mut(segment.parse::<usize>().ok()?),
            _ => None,
        })
}

fn mutate(
    target: &mut Value,
    node: u16,
    action: impl FnOnce(&mut Value, Option<&mut Value>, &str),
) {
    let mut all = Vec::new();
    nodes(target, &mut Vec::new(), &mut all);
    let path = &all[node as usize % all.len()];
    match path.split_last() {
        None => action(target, None, ""),
        Some((last, parent_path)) => {
            if let Some(parent) = node_mut(target, parent_path) {
                let mut detached = std::mem::take(parent);
                action(&mut detached, None, last);
                *parent = detached;
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let (children, parents) = &*OBJECTS;
    let mut child = children[input.child as usize % children.len()].clone();
    let mut parents = parents.clone();
    for mutation in input.mutations.into_iter().take(8) {
        let (in_parent, node) = match &mutation {
            Mutation::Replace {
                in_parent, node, ..
            }
            | Mutation::Remove { in_parent, node }
            | Mutation::Insert {
                in_parent, node, ..
            } => (*in_parent, *node),
        };
        let target = match in_parent {
            Some(i) => &mut parents[i as usize % PARENTS.len()],
            None => &mut child,
        };
        match mutation {
            Mutation::Replace { value, .. } => {
                mutate(target, node, |container, _, key| match container {
                    Value::Object(map) if !key.is_empty() => {
                        map.insert(key.to_owned(), value.into_value());
                    }
                    Value::Array(items) => {
                        if let Some(slot) = key.parse::<usize>().ok().and_then(|i| items.get_mut(i))
                        {
                            *slot = value.into_value();
                        }
                    }
                    other if key.is_empty() => *other = value.into_value(),
                    _ => {}
                })
            }
            Mutation::Remove { .. } => mutate(target, node, |container, _, key| match container {
                Value::Object(map) => {
                    map.remove(key);
                }
                Value::Array(items) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < items.len() {
                            items.remove(i);
                        }
                    }
                }
                _ => {}
            }),
            Mutation::Insert {
                key: new_key,
                value,
                ..
            } => mutate(target, node, |container, _, key| {
                let node = if key.is_empty() {
                    Some(container)
                } else {
                    container.get_mut(key)
                };
                if let Some(Value::Object(map)) = node {
                    map.insert(new_key, value.into_value());
                }
            }),
        }
    }

    let mut settings = json!({"cloudTags": {"propagatingLabels": input.propagating}});
    if let Some(path) = input.provider_path {
        settings["cloudTags"]["providerPath"] = json!(path);
    }
    if input.validate_mode {
        settings["mode"] = json!("validate");
    }
    let Ok(settings) = Settings::from_json(settings.to_string().as_bytes()) else {
        return;
    };
    let lookup = parents
        .into_iter()
        .fold(MapLookup::new(), MapLookup::with_object);
    // The API server derives kind from the request path, not the body: take
    // it as a string whatever the mutations did to the body.
    let kind = child["kind"].as_str().unwrap_or_default().to_owned();
    let api_version = child["apiVersion"].as_str().unwrap_or("x/v1").to_owned();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let request: AdmissionRequest = serde_json::from_value(json!({
        "uid": "fuzz",
        "operation": if input.operation { "CREATE" } else { "UPDATE" },
        "namespace": "default",
        "kind": {"group": group, "version": version, "kind": kind},
        "object": child,
    }))
    .unwrap();
    let outcome = evaluate(&request, &settings, &lookup);
    let Verdict::Allow(plan) = &outcome.verdict else {
        return;
    };
    let mut after = request.object.clone();
    plan.apply(&mut after);
    if let Err(e) = check_mutation(Capability::for_group(group), &request.object, &after) {
        panic!("invariant violated: {e}");
    }
    let again = AdmissionRequest {
        object: after,
        ..request
    };
    let second = evaluate(&again, &settings, &lookup);
    assert!(
        second.plan().is_some_and(|p| p.is_empty()),
        "not idempotent: {:?}",
        second.verdict
    );
});
