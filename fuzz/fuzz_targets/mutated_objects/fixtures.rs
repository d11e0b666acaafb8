//! The fixtures every execution starts from: real CAPI and Crossplane
//! children and the CAPI parents, and the README's ready-made tag profiles,
//! parsed once, with what can be computed from them once (the unedited
//! children's requests and label keys, the parents' keys, JSON and answers).

use metadata_propagation_core::lookup::ObjectRef;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::Value;
use std::sync::{LazyLock, Mutex};

use crate::node::Node;
use crate::parents::{Answers, key_of};

/// The children the input picks from (`Input::child`, modulo their count).
const CHILDREN: &[&str] = &[
    include_str!("../../../test_data/capi/v1beta2/machineset_update_drifted_from_md.json"),
    include_str!("../../../test_data/capi/v1beta2/machine_create_from_kcp.json"),
    include_str!("../../../test_data/capi/v1beta2/dockermachine_create_from_machineset.json"),
    include_str!("../../../test_data/capi/v1beta2/machinedeployment_create_topology.json"),
    include_str!("../../../test_data/capi/v1beta2/kubeadmcontrolplane_create_topology.json"),
    include_str!("../../../test_data/capi/v1beta1/machineset_create_from_md.json"),
    include_str!("../../../test_data/capi/v1beta1/kubeadmcontrolplane_create_topology.json"),
    include_str!("../../../test_data/xr/xnetwork_stale_update.json"),
    include_str!("../../../test_data/xr/xdatabase_hetzner_limits.json"),
    include_str!("../../../test_data/xr/xdatabase_openstack_limits.json"),
];
/// XRs on providers only the README's ready-made profiles select (Azure, GCP
/// labels), picked by `Ready::child` instead of `Input::child`. Kept apart
/// from [`CHILDREN`] so that `Input::child` picks what it always did.
const PROFILE_CHILDREN: &[&str] = &[
    include_str!("../../../test_data/xr/xdatabase_azure_profile.json"),
    include_str!("../../../test_data/xr/xdatabase_gcp_labels_profile.json"),
];
/// The README, whose ready-made tag profiles the settings pick from.
const README: &str = include_str!("../../../README.md");
/// First line of each ready-made profile's ```yaml block in the README.
const READY_MARKER: &str = "# ready-made profile: ";

/// The index into [`Fixtures::children`] of the child an input picks:
/// `profile_child` (modulo [`PROFILE_CHILDREN`]) when set, else `child`
/// (modulo [`CHILDREN`]).
pub fn child_index(child: u8, profile_child: Option<u8>) -> usize {
    match profile_child {
        Some(i) => CHILDREN.len() + usize::from(i) % PROFILE_CHILDREN.len(),
        None => usize::from(child) % CHILDREN.len(),
    }
}
/// The parents every look-up answers from, edited or not.
pub const PARENTS: &[&str] = &[
    include_str!(
        "../../../test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta2/parents/machineset_capi-quickstart-md-1-x7k2p.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta2/parents/kubeadmcontrolplane_capi-quickstart-wqx5r.yaml"
    ),
    include_str!("../../../test_data/capi/v1beta2/parents/cluster_capi-quickstart.yaml"),
    include_str!("../../../test_data/capi/v1beta2/parents/clusterclass_quick-start.yaml"),
    include_str!(
        "../../../test_data/capi/v1beta1/parents/machinedeployment_capi-quickstart-md-1.yaml"
    ),
    include_str!("../../../test_data/capi/v1beta1/parents/cluster_capi-quickstart.yaml"),
    include_str!("../../../test_data/capi/v1beta1/parents/clusterclass_quick-start.yaml"),
];

/// The request for `object`. The API server derives kind from the request
/// path, not the body: take it as a string whatever the mutations did to
/// the body.
pub fn request(object: Value, create: bool) -> AdmissionRequest {
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

/// The fixtures, parsed, and what each execution would otherwise compute
/// again.
pub struct Fixtures {
    /// The children, each fixture's `request.object`: [`CHILDREN`], then
    /// [`PROFILE_CHILDREN`].
    pub children: Vec<Value>,
    /// Each child's label keys: `metadata.labels` and the label-set
    /// annotation's, what an XR can opt into cloud tags.
    pub label_keys: Vec<Vec<String>>,
    /// The README's ready-made profiles, as `cloudTags.profiles` entries.
    pub ready_profiles: Vec<Value>,
    /// Each child's request, for UPDATE and CREATE.
    pub requests: Vec<[AdmissionRequest; 2]>,
    /// The parents, in [`PARENTS`] order.
    pub parents: Vec<Value>,
    /// Each parent's look-up key ([`key_of`]).
    pub keys: Vec<ObjectRef>,
    /// Each parent's JSON, as the host sends it.
    pub json: Vec<Vec<u8>>,
    /// The unedited parents' answers, kept across executions: the same
    /// bytes through the same projection decode to the same value.
    pub answers: Vec<Mutex<Answers>>,
}

/// Parsed on first use, shared by every execution.
pub static FIXTURES: LazyLock<Fixtures> = LazyLock::new(|| {
    let sorted = serde_json::from_str::<Value>(r#"{"b": 1, "a": 2}"#).unwrap();
    assert_eq!(
        sorted.as_object().unwrap().keys().next().unwrap(),
        "a",
        "Node edits maps as serde_json's sorted maps; with preserve_order they differ"
    );
    let children: Vec<Value> = CHILDREN
        .iter()
        .chain(PROFILE_CHILDREN)
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
        label_keys: children.iter().map(label_keys).collect(),
        ready_profiles: ready_profiles(),
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

/// The keys of `object`'s labels and of its label-set annotation.
fn label_keys(object: &Value) -> Vec<String> {
    let metadata = &object["metadata"];
    let annotation = metadata["annotations"]["cloud-tags.plexsphere.io/labels"]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    [
        &metadata["labels"],
        annotation.as_ref().unwrap_or(&Value::Null),
    ]
    .into_iter()
    .filter_map(Value::as_object)
    .flat_map(|map| map.keys().cloned())
    .collect()
}

/// The README's ready-made profiles, read as tests/support/ready_profiles.rs
/// reads them: each ```yaml block opening with [`READY_MARKER`] holds a
/// one-entry list.
fn ready_profiles() -> Vec<Value> {
    let profiles: Vec<Value> = README
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|body| body.starts_with(READY_MARKER))
        .flat_map(|body| serde_norway::from_str::<Vec<Value>>(body).unwrap())
        .collect();
    assert!(
        !profiles.is_empty(),
        "README.md holds no ready-made profile"
    );
    profiles
}
