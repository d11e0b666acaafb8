"""The `field_masks` the policy sends with every `kubernetes/get_resource` look-up.

Every look-up asks only for the paths the rule reads of the parent, as a sorted
set of dot paths (a path through an array, such as
`spec.topology.workers.machineDeployments.name`, applies to every item). This
module holds those sets as a table, for the scripts that write or check kwctl
replay sessions:

- test_data/bench/gen.py and test_data/bad/gen.py write them,
- test_data/capi/check_replays.py checks (and with --fix, rewrites) them.

It mirrors the Rust projections in `src/capi/rules.rs` (the owner-based rows)
and `src/capi/topology.rs` (`ClusterShape::cluster_projection` /
`class_projection`). The two must agree: the replay runner matches a look-up's
field_masks EXACTLY (as a set), so when they disagree the e2e tests
(e2e-tests/*.bats) and `make bench` fail with "session expected ... got ...".
Change both together.

Usage:
    from field_masks import masks_for, child_of, yaml_lines
    masks_for(child_api_version, child_kind, parent_api_version, parent_kind)
        -> sorted list of dot paths; ValueError when no row fits the pair.
"""

CORE = "cluster.x-k8s.io"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io"
INFRASTRUCTURE = "infrastructure.cluster.x-k8s.io"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io"

# A kind match is (group, kind); kind None means any kind of the group
# (rules.rs KindMatch).
MACHINE_DEPLOYMENT = (CORE, "MachineDeployment")
MACHINE_SET = (CORE, "MachineSet")
MACHINE = (CORE, "Machine")
ANY_CONTROL_PLANE = (CONTROL_PLANE, None)
ANY_INFRASTRUCTURE = (INFRASTRUCTURE, None)
ANY_BOOTSTRAP = (BOOTSTRAP, None)

# Owner-based look-ups: the parent is named by one of the child's
# ownerReferences. (parent, children, masks); the masks do not depend on the
# API version (rules.rs: "the same paths hold for v1beta1 and v1beta2").
OWNER_LOOKUPS = [
    (MACHINE_DEPLOYMENT, [MACHINE_SET], [
        "metadata.annotations",
        "spec.template.metadata.annotations",
        "spec.template.metadata.labels",
    ]),
    (MACHINE_SET, [MACHINE, ANY_INFRASTRUCTURE, ANY_BOOTSTRAP], [
        "spec.template.metadata.annotations",
        "spec.template.metadata.labels",
    ]),
    (ANY_CONTROL_PLANE, [MACHINE, ANY_INFRASTRUCTURE, ANY_BOOTSTRAP], [
        "spec.machineTemplate.metadata.annotations",
        "spec.machineTemplate.metadata.labels",
    ]),
]

# Topology look-ups (children labelled topology.cluster.x-k8s.io/owned): the
# Cluster, then its ClusterClass. Which entry of the topology the child comes
# from depends on the child's kind.
MACHINE_POOL = (CORE, "MachinePool")

TOPOLOGY_ENTRIES = [
    (ANY_CONTROL_PLANE, "ControlPlane"),
    (MACHINE_DEPLOYMENT, "MachineDeployment"),
    (MACHINE_POOL, "MachinePool"),
]

# (parent apiVersion, parent kind, entry) -> masks.
TOPOLOGY_LOOKUPS = {
    ("cluster.x-k8s.io/v1beta1", "Cluster", "ControlPlane"): [
        "spec.topology.class",
        "spec.topology.classNamespace",
        "spec.topology.controlPlane.metadata.annotations",
        "spec.topology.controlPlane.metadata.labels",
    ],
    ("cluster.x-k8s.io/v1beta2", "Cluster", "ControlPlane"): [
        "spec.topology.classRef.name",
        "spec.topology.classRef.namespace",
        "spec.topology.controlPlane.metadata.annotations",
        "spec.topology.controlPlane.metadata.labels",
    ],
    ("cluster.x-k8s.io/v1beta1", "Cluster", "MachineDeployment"): [
        "spec.topology.class",
        "spec.topology.classNamespace",
        "spec.topology.workers.machineDeployments.class",
        "spec.topology.workers.machineDeployments.metadata.annotations",
        "spec.topology.workers.machineDeployments.metadata.labels",
        "spec.topology.workers.machineDeployments.name",
    ],
    ("cluster.x-k8s.io/v1beta2", "Cluster", "MachineDeployment"): [
        "spec.topology.classRef.name",
        "spec.topology.classRef.namespace",
        "spec.topology.workers.machineDeployments.class",
        "spec.topology.workers.machineDeployments.metadata.annotations",
        "spec.topology.workers.machineDeployments.metadata.labels",
        "spec.topology.workers.machineDeployments.name",
    ],
    ("cluster.x-k8s.io/v1beta1", "ClusterClass", "ControlPlane"): [
        "spec.controlPlane.machineInfrastructure",
        "spec.controlPlane.metadata.annotations",
        "spec.controlPlane.metadata.labels",
    ],
    ("cluster.x-k8s.io/v1beta2", "ClusterClass", "ControlPlane"): [
        "spec.controlPlane.machineInfrastructure",
        "spec.controlPlane.metadata.annotations",
        "spec.controlPlane.metadata.labels",
    ],
    ("cluster.x-k8s.io/v1beta1", "ClusterClass", "MachineDeployment"): [
        "spec.workers.machineDeployments.class",
        "spec.workers.machineDeployments.template.metadata.annotations",
        "spec.workers.machineDeployments.template.metadata.labels",
    ],
    ("cluster.x-k8s.io/v1beta2", "ClusterClass", "MachineDeployment"): [
        "spec.workers.machineDeployments.class",
        "spec.workers.machineDeployments.metadata.annotations",
        "spec.workers.machineDeployments.metadata.labels",
    ],
}

# A MachinePool's entry is read like a MachineDeployment's, from the
# machinePools lists (topology.rs `workers`).
for (api_version, kind, entry), masks in list(TOPOLOGY_LOOKUPS.items()):
    if entry == "MachineDeployment":
        TOPOLOGY_LOOKUPS[(api_version, kind, "MachinePool")] = [
            m.replace(".machineDeployments.", ".machinePools.") for m in masks
        ]

TOPOLOGY_PARENT_KINDS = {"Cluster", "ClusterClass"}


def group_of(api_version):
    """`cluster.x-k8s.io/v1beta2` -> `cluster.x-k8s.io`; `v1` -> ``."""
    return api_version.rpartition("/")[0]


def _matches(match, api_version, kind):
    group, wanted = match
    return group_of(api_version) == group and wanted in (None, kind)


def masks_for(child_api_version, child_kind, parent_api_version, parent_kind):
    """The sorted field_masks of the look-up of (parent_api_version,
    parent_kind) made for a child of (child_api_version, child_kind).

    Raises ValueError when the pair fits no row: the policy makes no such
    look-up, so a replay session holding one is wrong."""
    if group_of(parent_api_version) == CORE and parent_kind in TOPOLOGY_PARENT_KINDS:
        entries = [e for m, e in TOPOLOGY_ENTRIES if _matches(m, child_api_version, child_kind)]
        key = (parent_api_version, parent_kind, entries[0] if entries else None)
        if key not in TOPOLOGY_LOOKUPS:
            raise ValueError(
                f"no topology look-up of {parent_api_version} {parent_kind} "
                f"for a {child_api_version} {child_kind}")
        return sorted(TOPOLOGY_LOOKUPS[key])
    for parent, children, masks in OWNER_LOOKUPS:
        if _matches(parent, parent_api_version, parent_kind) and any(
                _matches(c, child_api_version, child_kind) for c in children):
            return sorted(masks)
    raise ValueError(
        f"no owner look-up of {parent_api_version} {parent_kind} "
        f"for a {child_api_version} {child_kind}")


def child_of(admission_request):
    """(apiVersion, kind) of the object under admission: from
    request.object, or from request.kind when there is no object (DELETE).
    Accepts a bare AdmissionRequest or one wrapped in {"request": ...}."""
    request = admission_request.get("request", admission_request)
    obj = request.get("object")
    if isinstance(obj, dict) and "apiVersion" in obj and "kind" in obj:
        return obj["apiVersion"], obj["kind"]
    gvk = request["kind"]
    api_version = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
    return api_version, gvk["kind"]


def yaml_lines(masks, indent="    "):
    """The `field_masks:` entry of a `!KubernetesGetResource` request block,
    in block style as kwctl's serde_yaml writes it, one line per item."""
    return f"{indent}field_masks:\n" + "".join(f"{indent}- {m}\n" for m in masks)
