//! Structure-aware: real CAPI and Crossplane objects (and the CAPI parents)
//! with arbitrary nodes replaced, removed or extended, evaluated under
//! arbitrary settings. Whatever the input: no panic; an allowed mutation
//! satisfies `invariants::check_mutation` and is idempotent.
//!
//! Built for speed: under the address sanitizer every allocation is costly,
//! so an execution copies only what its input changes (profile and numbers
//! in `fuzz/README.md`). The fixtures are parsed once and the unedited ones
//! are shared by every execution: an edited object copies only the maps and
//! lists on the way to the edited node ([`Node`]); an unedited child's
//! request, and an unedited parent's answer to each projection, are built
//! once. A node is found by counting, not by listing every node's path.
//! Nothing checked was dropped, and an input means the same edits, the
//! same settings and the same request as before, so saved inputs replay
//! the same cases.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use metadata_propagation_policy::evaluate::evaluate;
use metadata_propagation_policy::invariants::{Capability, check_mutation};
use metadata_propagation_policy::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_policy::outcome::Verdict;
use metadata_propagation_policy::projection::Projection;
use metadata_propagation_policy::request::AdmissionRequest;
use metadata_propagation_policy::settings::{
    DEFAULT_PROVIDER_PATH, Mode, RawCapiSettings, RawCloudTagSettings, RawSettings, Settings,
};
use serde_json::{Value, json};
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

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

/// A fixture as an input edits it. Unedited parts stay shared with the
/// fixture; an edit opens the objects and arrays on its way ([`Node::open`])
/// and owns what it writes. Edits act on a `Node` exactly as they would on
/// the fixture's `Value` copied whole (serde_json's maps are sorted, as a
/// `BTreeMap` is; checked when the fixtures load).
enum Node<'a> {
    Shared(&'a Value),
    Owned(Value),
    Map(BTreeMap<String, Node<'a>>),
    List(Vec<Node<'a>>),
}

/// How many nodes `value` has, itself included.
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Object(map) => map.values().map(count).sum(),
        Value::Array(items) => items.iter().map(count).sum(),
        _ => 0,
    }
}

impl<'a> Node<'a> {
    fn count(&self) -> usize {
        match self {
            Node::Shared(value) => count(value),
            Node::Owned(value) => count(value),
            Node::Map(map) => 1 + map.values().map(Node::count).sum::<usize>(),
            Node::List(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
        }
    }

    /// An object or array as a `Map` or `List` of its entries; a scalar
    /// stays as it is.
    fn open(&mut self) {
        *self = match std::mem::replace(self, Node::Owned(Value::Null)) {
            Node::Shared(Value::Object(map)) => Node::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Node::Shared(v)))
                    .collect(),
            ),
            Node::Shared(Value::Array(items)) => {
                Node::List(items.iter().map(Node::Shared).collect())
            }
            Node::Owned(Value::Object(map)) => {
                Node::Map(map.into_iter().map(|(k, v)| (k, Node::Owned(v))).collect())
            }
            Node::Owned(Value::Array(items)) => {
                Node::List(items.into_iter().map(Node::Owned).collect())
            }
            other => other,
        }
    }

    fn into_value(self) -> Value {
        match self {
            Node::Shared(value) => value.clone(),
            Node::Owned(value) => value,
            Node::Map(map) => Value::Object(
                map.into_iter()
                    .map(|(k, node)| (k, node.into_value()))
                    .collect(),
            ),
            Node::List(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
        }
    }

    /// The bytes `serde_json::to_vec` gives for [`Node::into_value`].
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Node::Shared(value) => serde_json::to_writer(out, value).unwrap(),
            Node::Owned(value) => serde_json::to_writer(out, value).unwrap(),
            Node::Map(map) => {
                out.push(b'{');
                for (i, (key, node)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, key).unwrap();
                    out.push(b':');
                    node.write_json(out);
                }
                out.push(b'}');
            }
            Node::List(items) => {
                out.push(b'[');
                for (i, node) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    node.write_json(out);
                }
                out.push(b']');
            }
        }
    }

    /// The string at `path`, if there is one.
    fn text(&self, path: &[&str]) -> Option<&str> {
        match self {
            Node::Shared(value) => text_at(value, path),
            Node::Owned(value) => text_at(value, path),
            Node::Map(map) => {
                let (first, rest) = path.split_first()?;
                map.get(*first)?.text(rest)
            }
            Node::List(_) => None,
        }
    }
}

/// The string at `path` in `value`, if there is one.
fn text_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(value, |value, key| value.get(key))?
        .as_str()
}

/// Calls `action` with the container of `target`'s `node`th node (modulo
/// the node count, depth-first, the root first), opened, and the node's key
/// in it (an array index as text), or with the root and `""` for the root.
fn edit<'a>(target: &mut Node<'a>, node: u16, action: impl FnOnce(&mut Node<'a>, &str)) {
    let mut n = node as usize % target.count();
    let mut container = target;
    container.open();
    if n == 0 {
        return action(container, "");
    }
    n -= 1;
    loop {
        // `n` counts from the container's first child (0), depth-first.
        let mut found = None;
        let mut each = |i: usize, child: &Node| {
            let size = child.count();
            if n < size {
                found = Some(i);
                true
            } else {
                n -= size;
                false
            }
        };
        match &*container {
            Node::Map(map) => map.values().enumerate().any(|(i, c)| each(i, c)),
            Node::List(items) => items.iter().enumerate().any(|(i, c)| each(i, c)),
            _ => false,
        };
        let Some(i) = found else { return };
        if n == 0 {
            let key = match &*container {
                Node::Map(map) => map.keys().nth(i).cloned().unwrap_or_default(),
                _ => i.to_string(),
            };
            return action(container, &key);
        }
        n -= 1;
        container = match container {
            Node::Map(map) => map.values_mut().nth(i),
            Node::List(items) => items.get_mut(i),
            _ => None,
        }
        .expect("the child just counted");
        container.open();
    }
}

/// Applies `mutation` to `target`.
fn apply(target: &mut Node, mutation: Mutation) {
    match mutation {
        Mutation::Replace { node, value, .. } => {
            edit(target, node, |container, key| match container {
                Node::Map(map) if !key.is_empty() => {
                    map.insert(key.to_owned(), Node::Owned(value.into_value()));
                }
                Node::List(items) => {
                    if let Some(slot) = key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                        *slot = Node::Owned(value.into_value());
                    }
                }
                other if key.is_empty() => *other = Node::Owned(value.into_value()),
                _ => {}
            })
        }
        Mutation::Remove { node, .. } => edit(target, node, |container, key| match container {
            Node::Map(map) => {
                map.remove(key);
            }
            Node::List(items) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }),
        Mutation::Insert {
            node,
            key: new_key,
            value,
            ..
        } => edit(target, node, |container, key| {
            // `Value::get_mut` with a key: an object's entry, never an
            // array's.
            let node = match container {
                _ if key.is_empty() => Some(container),
                Node::Map(map) => map.get_mut(key),
                _ => None,
            };
            if let Some(node) = node {
                node.open();
                if let Node::Map(map) = node {
                    map.insert(new_key, Node::Owned(value.into_value()));
                }
            }
        }),
    }
}

/// The request for `object`. The API server derives kind from the request
/// path, not the body: take it as a string whatever the mutations did to
/// the body.
fn request(object: Value, create: bool) -> AdmissionRequest {
    let mut request = AdmissionRequest {
        uid: "fuzz".to_owned(),
        operation: if create { "CREATE" } else { "UPDATE" }.to_owned(),
        namespace: "default".to_owned(),
        ..AdmissionRequest::default()
    };
    let api_version = object["apiVersion"].as_str().unwrap_or("x/v1");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    request.kind.group = group.to_owned();
    request.kind.version = version.to_owned();
    request.kind.kind = object["kind"].as_str().unwrap_or_default().to_owned();
    request.object = object;
    request
}

/// The key a look-up finds a parent by, computed from the parent itself as
/// `MapLookup::with_object` computes it.
fn key_of(object: &Node) -> ObjectRef {
    let text = |path: &[&str]| object.text(path).unwrap_or_default().to_owned();
    ObjectRef {
        api_version: text(&["apiVersion"]),
        kind: text(&["kind"]),
        name: text(&["metadata", "name"]),
        namespace: object.text(&["metadata", "namespace"]).map(str::to_owned),
    }
}

/// What a look-up of a parent answered for each projection asked so far.
type Answers = Vec<(Projection, Result<Value, LookupError>)>;

/// The answer for `projection`: from `answers`, else as `MapLookup`
/// answers, the parent's JSON (as the host sends it) decoded through the
/// projection (so a rule reading a path it did not project fails here
/// too), and kept in `answers`.
fn answer(
    answers: &mut Answers,
    projection: &Projection,
    json: &[u8],
) -> Result<Value, LookupError> {
    if let Some((_, answer)) = answers.iter().find(|(p, _)| p == projection) {
        return answer.clone();
    }
    let answer = projection
        .decode(json)
        .map_err(|e| LookupError::Failed(e.to_string()));
    answers.push((projection.clone(), answer.clone()));
    answer
}

struct Fixtures {
    children: Vec<Value>,
    /// Each child's request, for UPDATE and CREATE.
    requests: Vec<[AdmissionRequest; 2]>,
    parents: Vec<Value>,
    keys: Vec<ObjectRef>,
    json: Vec<Vec<u8>>,
    /// The unedited parents' answers, kept across executions: the same
    /// bytes through the same projection decode to the same value.
    answers: Vec<Mutex<Answers>>,
}

static FIXTURES: LazyLock<Fixtures> = LazyLock::new(|| {
    let sorted = serde_json::from_str::<Value>(r#"{"b": 1, "a": 2}"#).unwrap();
    assert_eq!(
        sorted.as_object().unwrap().keys().next().unwrap(),
        "a",
        "Node edits maps as serde_json's sorted maps; with preserve_order they differ"
    );
    let children: Vec<Value> = CHILDREN
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap()["object"].clone())
        .collect();
    let parents: Vec<Value> = PARENTS
        .iter()
        .map(|t| serde_norway::from_str::<Value>(t).unwrap())
        .collect();
    Fixtures {
        requests: children
            .iter()
            .map(|child| [false, true].map(|create| request(child.clone(), create)))
            .collect(),
        children,
        keys: parents.iter().map(|p| key_of(&Node::Shared(p))).collect(),
        json: parents
            .iter()
            .map(|p| serde_json::to_vec(p).unwrap())
            .collect(),
        answers: parents.iter().map(|_| Mutex::default()).collect(),
        parents,
    }
});

/// A parent in one execution: a fixture, or a fixture the input edited.
enum Parent {
    Unedited(usize),
    Edited {
        object: Node<'static>,
        key: ObjectRef,
        json: OnceCell<Vec<u8>>,
        answers: RefCell<Answers>,
    },
}

/// The parents, answered as a `MapLookup` holding them answers: the last
/// parent with the requested key; none: NotFound.
struct Parents(Vec<Parent>);

impl Lookup for Parents {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        let fixtures = &*FIXTURES;
        let found = self.0.iter().rev().find(|parent| match parent {
            Parent::Unedited(i) => fixtures.keys[*i] == *object,
            Parent::Edited { key, .. } => key == object,
        });
        match found.ok_or(LookupError::NotFound)? {
            Parent::Unedited(i) => {
                let mut answers = fixtures.answers[*i].lock().unwrap();
                answer(&mut answers, projection, &fixtures.json[*i])
            }
            Parent::Edited {
                object,
                json,
                answers,
                ..
            } => {
                let json = json.get_or_init(|| {
                    let mut json = Vec::new();
                    object.write_json(&mut json);
                    json
                });
                answer(&mut answers.borrow_mut(), projection, json)
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let fixtures = &*FIXTURES;
    let child_index = input.child as usize % fixtures.children.len();
    let mut child = Node::Shared(&fixtures.children[child_index]);
    let mut parents: Vec<Node> = fixtures.parents.iter().map(Node::Shared).collect();
    for mutation in input.mutations.into_iter().take(8) {
        let in_parent = match &mutation {
            Mutation::Replace { in_parent, .. }
            | Mutation::Remove { in_parent, .. }
            | Mutation::Insert { in_parent, .. } => *in_parent,
        };
        let target = match in_parent {
            Some(i) => &mut parents[i as usize % PARENTS.len()],
            None => &mut child,
        };
        apply(target, mutation);
    }

    // What `Settings::from_json` makes of the same document: parsed, then
    // every part prepared; a document it refuses ends the case.
    let settings = Settings::from(RawSettings {
        mode: if input.validate_mode {
            Mode::Validate
        } else {
            Mode::Mutate
        },
        capi: RawCapiSettings::default(),
        cloud_tags: RawCloudTagSettings {
            propagating_labels: input.propagating,
            provider_path: input
                .provider_path
                .unwrap_or_else(|| DEFAULT_PROVIDER_PATH.to_owned()),
            profiles: Vec::new(),
        },
    });
    if settings.sync_machine_labels().is_err()
        || settings.sync_machine_annotations().is_err()
        || settings.cloud_tags().is_err()
    {
        return;
    }
    let lookup = Parents(
        parents
            .into_iter()
            .enumerate()
            .map(|(i, parent)| match parent {
                Node::Shared(_) => Parent::Unedited(i),
                object => Parent::Edited {
                    key: key_of(&object),
                    object,
                    json: OnceCell::new(),
                    answers: RefCell::default(),
                },
            })
            .collect(),
    );
    let edited;
    let request = match child {
        Node::Shared(_) => &fixtures.requests[child_index][input.operation as usize],
        child => {
            edited = request(child.into_value(), input.operation);
            &edited
        }
    };

    let outcome = evaluate(request, &settings, &lookup);
    let Verdict::Allow(plan) = outcome.verdict else {
        return;
    };
    // An empty plan changes nothing: the object after it is the request's.
    let mutated;
    let after = if plan.is_empty() {
        request
    } else {
        let mut object = request.object.clone();
        plan.apply_owned(&mut object);
        mutated = AdmissionRequest {
            uid: request.uid.clone(),
            kind: request.kind.clone(),
            operation: request.operation.clone(),
            namespace: request.namespace.clone(),
            object,
        };
        &mutated
    };
    let capability = Capability::for_group(&request.kind.group);
    if let Err(e) = check_mutation(capability, &request.object, &after.object) {
        panic!("invariant violated: {e}");
    }
    let second = evaluate(after, &settings, &lookup);
    assert!(
        second.plan().is_some_and(|p| p.is_empty()),
        "not idempotent: {:?}",
        second.verdict
    );
});
