//! The fixtures every execution starts from: real CAPI and Crossplane
//! children and the CAPI parents, and the ready-made tag profiles of docs/cloud-tags.md,
//! parsed once, with what can be computed from them once (the unedited
//! children's requests and label keys, the parents' keys, JSON and answers).

use metadata_propagation_core::lookup::ObjectRef;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::Value;
use std::sync::{LazyLock, Mutex};

use crate::mutation::{ENTRY_KEYS, FIELD_NAMES};
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
/// XRs on Azure and GCP (once selected only by ready-made profiles, now by
/// the built-in azure and gcp), picked by `Ready::child` instead of
/// `Input::child`. Kept apart from [`CHILDREN`] so that `Input::child` picks
/// what it always did.
const PROFILE_CHILDREN: &[&str] = &[
    include_str!("../../../test_data/xr/xdatabase_azure_profile.json"),
    include_str!("../../../test_data/xr/xdatabase_gcp_labels_profile.json"),
];
/// The in-place field family (timeouts, `minReadySeconds`, readiness gates,
/// taints, deletion order, machine naming) on every parent link of the rule
/// table, both versions, created and drifted: picked by `Fields::child`
/// instead of `Input::child` and `Ready::child`. Kept apart from
/// [`CHILDREN`] so that `Input::child` picks what it always did. Their
/// parents are [`FIELDS_PARENTS`].
const FIELDS_CHILDREN: &[&str] = &[
    // ClusterClass/topology -> KubeadmControlPlane, MachineDeployment, MachinePool
    include_str!("../../../test_data/capi/v1beta2/kubeadmcontrolplane_create_topology_fields.json"),
    include_str!(
        "../../../test_data/capi/v1beta2/kubeadmcontrolplane_update_topology_fields_drifted.json"
    ),
    include_str!("../../../test_data/capi/v1beta2/machinedeployment_create_topology_fields.json"),
    include_str!(
        "../../../test_data/capi/v1beta2/machinedeployment_update_topology_fields_drifted.json"
    ),
    include_str!("../../../test_data/capi/v1beta2/machinepool_create_topology_fields.json"),
    include_str!("../../../test_data/capi/v1beta2/machinepool_update_topology_fields_drifted.json"),
    // MachineDeployment -> MachineSet (md-2; md-1 sets none of the fields)
    include_str!("../../../test_data/capi/v1beta2/machineset_create_fields_from_md.json"),
    include_str!("../../../test_data/capi/v1beta2/machineset_update_fields_drifted_from_md.json"),
    include_str!("../../../test_data/capi/v1beta2/machineset_update_fields_parent_unset.json"),
    // MachineSet -> Machine, DockerMachine
    include_str!("../../../test_data/capi/v1beta2/machine_create_fields_from_machineset.json"),
    include_str!(
        "../../../test_data/capi/v1beta2/machine_update_fields_drifted_from_machineset.json"
    ),
    include_str!(
        "../../../test_data/capi/v1beta2/dockermachine_create_fields_from_machineset.json"
    ),
    // KubeadmControlPlane -> Machine
    include_str!("../../../test_data/capi/v1beta2/machine_create_fields_from_kcp.json"),
    include_str!("../../../test_data/capi/v1beta2/machine_update_fields_drifted_from_kcp.json"),
    // The same in v1beta1
    include_str!("../../../test_data/capi/v1beta1/kubeadmcontrolplane_create_topology_fields.json"),
    include_str!(
        "../../../test_data/capi/v1beta1/kubeadmcontrolplane_update_topology_fields_drifted.json"
    ),
    include_str!("../../../test_data/capi/v1beta1/machinedeployment_create_topology_fields.json"),
    include_str!(
        "../../../test_data/capi/v1beta1/machinedeployment_update_topology_fields_drifted.json"
    ),
    include_str!("../../../test_data/capi/v1beta1/machinepool_create_topology_fields.json"),
    include_str!("../../../test_data/capi/v1beta1/machinepool_update_topology_fields_drifted.json"),
    include_str!("../../../test_data/capi/v1beta1/machineset_create_fields_from_md.json"),
    include_str!("../../../test_data/capi/v1beta1/machineset_update_fields_drifted_from_md.json"),
    include_str!("../../../test_data/capi/v1beta1/machineset_update_fields_parent_unset.json"),
    include_str!("../../../test_data/capi/v1beta1/machine_create_fields_from_machineset.json"),
    include_str!(
        "../../../test_data/capi/v1beta1/machine_update_fields_drifted_from_machineset.json"
    ),
    include_str!(
        "../../../test_data/capi/v1beta1/dockermachine_create_fields_from_machineset.json"
    ),
    include_str!("../../../test_data/capi/v1beta1/machine_create_fields_from_kcp.json"),
    include_str!("../../../test_data/capi/v1beta1/machine_update_fields_drifted_from_kcp.json"),
];
/// Cloud tags on CAPI infrastructure: every provider's row of the target
/// table (`crates/core/src/tags/targets.rs`) and kinds without one (a
/// template, a kind with no key/value tag field), created and updated,
/// right- and wrong-shaped tag fields: picked by `Infra::child` instead of
/// every other choice. Kept apart from [`CHILDREN`] so that `Input::child`
/// picks what it always did. Their parents are [`INFRA_PARENTS`].
const INFRA_CHILDREN: &[&str] = &[
    include_str!("../../../test_data/capi-infra/awscluster_create_topology.json"),
    include_str!("../../../test_data/capi-infra/awscluster_update_cluster_label_changed.json"),
    include_str!("../../../test_data/capi-infra/awscluster_create_handmade.json"),
    include_str!("../../../test_data/capi-infra/awscluster_create_cluster_not_found.json"),
    include_str!("../../../test_data/capi-infra/awscluster_create_room_taken.json"),
    include_str!("../../../test_data/capi-infra/awsmachine_create_from_machineset.json"),
    include_str!("../../../test_data/capi-infra/awsmachine_update_bad_tags.json"),
    include_str!("../../../test_data/capi-infra/awsmachinetemplate_create_topology.json"),
    include_str!("../../../test_data/capi-infra/azurecluster_create_topology.json"),
    include_str!("../../../test_data/capi-infra/azuremachine_update_own_label_changed.json"),
    include_str!("../../../test_data/capi-infra/gcpcluster_create_topology.json"),
    include_str!("../../../test_data/capi-infra/openstackmachine_create_from_machineset.json"),
    include_str!("../../../test_data/capi-infra/openstackmachine_update_create_only.json"),
    include_str!("../../../test_data/capi-infra/hetznercluster_create_topology.json"),
];
/// The Clusters (whose labels become an InfraCluster's, or an
/// OpenStackMachine's, tags) and the MachineSets of [`INFRA_CHILDREN`],
/// after [`FIELDS_PARENTS`] (no key in common): every look-up answers from
/// them too, and an input with `Infra` edits any parent.
const INFRA_PARENTS: &[&str] = &[
    include_str!("../../../test_data/capi-infra/parents/cluster_aws-prod.yaml"),
    include_str!("../../../test_data/capi-infra/parents/cluster_azure-dev.yaml"),
    include_str!("../../../test_data/capi-infra/parents/cluster_gcp-prod.yaml"),
    include_str!("../../../test_data/capi-infra/parents/cluster_openstack-lab.yaml"),
    include_str!("../../../test_data/capi-infra/parents/machineset_aws-prod-md-0-7xk2p.yaml"),
    include_str!("../../../test_data/capi-infra/parents/machineset_openstack-lab-md-0-q8m4z.yaml"),
];
/// Cloud tags on Crossplane managed resources: an upjet v1 cluster-scoped
/// VPC, a v2 namespaced `.m.` VPC, a GKE Cluster and an Azure
/// ResourceGroup, each composed by an XR of [`MR_PARENTS`]: picked by
/// `Mr::child` instead of every other choice. Kept apart from [`CHILDREN`]
/// so that `Input::child` picks what it always did. Each is the object
/// itself (not a request).
const MR_CHILDREN: &[&str] = &[
    include_str!("../../../test_data/managed-resources/vpc-v1.json"),
    include_str!("../../../test_data/managed-resources/vpc-v2.json"),
    include_str!("../../../test_data/managed-resources/gke-cluster.json"),
    include_str!("../../../test_data/managed-resources/resource-group.json"),
];
/// The XRs of [`MR_CHILDREN`] (a v1 cluster-scoped XNetwork, a v2
/// namespaced Network), after [`INFRA_PARENTS`]: every look-up answers from
/// them too, and an input with `Mr` edits any parent.
const MR_PARENTS: &[&str] = &[
    include_str!("../../../test_data/managed-resources/xnetwork.json"),
    include_str!("../../../test_data/managed-resources/network-v2.json"),
];
/// The page whose ready-made tag profiles the settings pick from.
const PROFILES_DOC: &str = include_str!("../../../docs/cloud-tags.md");
/// First line of each ready-made profile's ```yaml block in that page.
const READY_MARKER: &str = "# ready-made profile: ";

/// The index into [`Fixtures::children`] of the child an input picks:
/// `mr_child` (modulo [`MR_CHILDREN`]) when set, else
/// `infra_child` (modulo [`INFRA_CHILDREN`]) when set, else `fields_child`
/// (modulo [`FIELDS_CHILDREN`]) when set, else
/// `profile_child` (modulo [`PROFILE_CHILDREN`]) when set, else `child`
/// (modulo [`CHILDREN`]).
pub fn child_index(
    child: u8,
    profile_child: Option<u8>,
    fields_child: Option<u8>,
    infra_child: Option<u8>,
    mr_child: Option<u8>,
) -> usize {
    if let Some(i) = mr_child {
        return CHILDREN.len()
            + PROFILE_CHILDREN.len()
            + FIELDS_CHILDREN.len()
            + INFRA_CHILDREN.len()
            + usize::from(i) % MR_CHILDREN.len();
    }
    if let Some(i) = infra_child {
        return CHILDREN.len()
            + PROFILE_CHILDREN.len()
            + FIELDS_CHILDREN.len()
            + usize::from(i) % INFRA_CHILDREN.len();
    }
    match (fields_child, profile_child) {
        (Some(i), _) => {
            CHILDREN.len() + PROFILE_CHILDREN.len() + usize::from(i) % FIELDS_CHILDREN.len()
        }
        (None, Some(i)) => CHILDREN.len() + usize::from(i) % PROFILE_CHILDREN.len(),
        (None, None) => usize::from(child) % CHILDREN.len(),
    }
}
/// The parents every look-up answers from, edited or not, and the ones an
/// input without `Fields` edits (`Mutation::in_parent` modulo their count).
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
/// The parents of [`FIELDS_CHILDREN`], which set the in-place fields, after
/// [`PARENTS`] (no key in common): every look-up answers from them too, and
/// an input with `Fields` edits any of the two lists (`in_parent` modulo
/// [`ALL_PARENTS`]). Kept apart so that an input without `Fields` edits the
/// parent it always did.
const FIELDS_PARENTS: &[&str] = &[
    include_str!("../../../test_data/capi/v1beta2/parents/cluster_capi-quickstart-fields.yaml"),
    include_str!("../../../test_data/capi/v1beta2/parents/clusterclass_quick-start-fields.yaml"),
    include_str!(
        "../../../test_data/capi/v1beta2/parents/kubeadmcontrolplane_capi-quickstart-fields-n5x8q.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-2.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta2/parents/machineset_capi-quickstart-md-2-k4v9c.yaml"
    ),
    include_str!("../../../test_data/capi/v1beta1/parents/cluster_capi-quickstart-fields.yaml"),
    include_str!("../../../test_data/capi/v1beta1/parents/clusterclass_quick-start-fields.yaml"),
    include_str!(
        "../../../test_data/capi/v1beta1/parents/kubeadmcontrolplane_capi-quickstart-fields-n5x8q.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta1/parents/machinedeployment_capi-quickstart-md-2.yaml"
    ),
    include_str!(
        "../../../test_data/capi/v1beta1/parents/machineset_capi-quickstart-md-2-k4v9c.yaml"
    ),
];
/// How many parents an input with `Fields` edits: [`PARENTS`], then
/// [`FIELDS_PARENTS`]. An input with `Infra` edits [`INFRA_PARENTS`] too.
pub const ALL_PARENTS: usize = PARENTS.len() + FIELDS_PARENTS.len();

/// The request for `object`. The API server derives kind from the request
/// path, not the body: take it as a string whatever the mutations did to
/// the body. The namespace too: a CAPI object's request is in `default`
/// (as the saved corpus inputs mean); any other kind's is the one its
/// object names, empty for a cluster-scoped one (the policy tells a
/// Crossplane v1 composite resource by its having none).
pub fn request(object: Value, create: bool) -> AdmissionRequest {
    let api_version = object["apiVersion"].as_str().unwrap_or("x/v1");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    // Cluster API's groups: `cluster.x-k8s.io` and its subdomains.
    let namespace = if group == "cluster.x-k8s.io" || group.ends_with(".cluster.x-k8s.io") {
        "default"
    } else {
        object["metadata"]["namespace"].as_str().unwrap_or_default()
    };
    let mut request = AdmissionRequest {
        uid: "fuzz".to_owned(),
        operation: if create { "CREATE" } else { "UPDATE" }.to_owned(),
        namespace: namespace.to_owned(),
        ..AdmissionRequest::default()
    };
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
    /// [`PROFILE_CHILDREN`], then [`FIELDS_CHILDREN`], then
    /// [`INFRA_CHILDREN`], then [`MR_CHILDREN`] (objects themselves).
    pub children: Vec<Value>,
    /// Each child's label keys: `metadata.labels` and the label-set
    /// annotation's, what an XR can opt into cloud tags.
    pub label_keys: Vec<Vec<String>>,
    /// The ready-made profiles of docs/cloud-tags.md, as `cloudTags.profiles` entries.
    pub ready_profiles: Vec<Value>,
    /// Each child's request, for UPDATE and CREATE.
    pub requests: Vec<[AdmissionRequest; 2]>,
    /// The parents: [`PARENTS`], then [`FIELDS_PARENTS`], then
    /// [`INFRA_PARENTS`], then [`MR_PARENTS`].
    pub parents: Vec<Value>,
    /// Every value any fixture holds under an in-place field's name
    /// ([`FIELD_NAMES`]), once: what `Rich::Seen` writes.
    pub field_values: Vec<Value>,
    /// Every string any fixture's readiness gates and taints hold under an
    /// entry key ([`ENTRY_KEYS`]), and the enum values the API knows, once:
    /// what `Text::Seen` writes, so an entry can repeat a parent's key.
    pub entry_texts: Vec<String>,
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
        .chain(FIELDS_CHILDREN)
        .chain(INFRA_CHILDREN)
        .map(|t| serde_json::from_str::<Value>(t).unwrap()["object"].clone())
        .chain(MR_CHILDREN.iter().map(|t| serde_json::from_str(t).unwrap()))
        .collect();
    let parents: Vec<Value> = PARENTS
        .iter()
        .chain(FIELDS_PARENTS)
        .chain(INFRA_PARENTS)
        .chain(MR_PARENTS)
        .map(|t| serde_norway::from_str::<Value>(t).unwrap())
        .collect();
    let mut field_values = Vec::new();
    let mut entry_texts = ENUM_TEXTS.iter().map(|t| t.to_string()).collect();
    // Not from the infrastructure and MR fixtures: `Rich::Seen` and
    // `Text::Seen` index these lists, and saved inputs must keep picking
    // what they did.
    let harvested = children[..CHILDREN.len() + PROFILE_CHILDREN.len() + FIELDS_CHILDREN.len()]
        .iter()
        .chain(&parents[..ALL_PARENTS]);
    for fixture in harvested {
        harvest(fixture, &mut field_values, &mut entry_texts);
    }
    Fixtures {
        field_values,
        entry_texts,
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

/// Enum values of the keyed lists' entries (`polarity`, `effect`,
/// `propagation`), whether or not a fixture uses them.
const ENUM_TEXTS: &[&str] = &[
    "Positive",
    "Negative",
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    "Always",
    "OnInitialization",
];

/// Adds to `values` what `value` holds under an in-place field's name, and
/// to `texts` the strings its readiness gates' and taints' entries hold
/// under an entry key, each once.
fn harvest(value: &Value, values: &mut Vec<Value>, texts: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if FIELD_NAMES.contains(&key.as_str()) && !values.contains(inner) {
                    values.push(inner.clone());
                }
                if matches!(key.as_str(), "readinessGates" | "taints") {
                    let entries = inner.as_array().into_iter().flatten();
                    for (key, text) in entries.filter_map(Value::as_object).flatten() {
                        if let (true, Some(text)) =
                            (ENTRY_KEYS.contains(&key.as_str()), text.as_str())
                            && !texts.iter().any(|t| t == text)
                        {
                            texts.push(text.to_owned());
                        }
                    }
                }
                harvest(inner, values, texts);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| harvest(item, values, texts)),
        _ => {}
    }
}

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

/// The ready-made profiles of docs/cloud-tags.md, read as
/// crates/core/tests/support/ready_profiles.rs reads them: each ```yaml
/// block opening with [`READY_MARKER`] holds a one-entry list.
fn ready_profiles() -> Vec<Value> {
    let profiles: Vec<Value> = PROFILES_DOC
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|body| body.starts_with(READY_MARKER))
        .flat_map(|body| serde_norway::from_str::<Vec<Value>>(body).unwrap())
        .collect();
    assert!(
        !profiles.is_empty(),
        "docs/cloud-tags.md holds no ready-made profile"
    );
    profiles
}
