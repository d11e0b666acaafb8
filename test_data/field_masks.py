"""The `field_masks` the policy sends with every `kubernetes/get_resource` look-up.

Every look-up asks only for the paths the rule reads of the parent, as a sorted
set of dot paths (a path through an array, such as
`spec.topology.workers.machineDeployments.name`, applies to every item). This
module holds those sets as a table, for the scripts that write or check kwctl
replay sessions:

- test_data/bench/gen.py, test_data/bad/gen.py and test_data/capi/gen_inplace.py
  write them,
- test_data/capi/check_replays.py checks (and with --fix, rewrites) them.

It mirrors the Rust projections in `crates/core/src/capi/rules.rs` (the
owner-based rows) and `crates/core/src/capi/topology.rs`
(`ClusterShape::cluster_projection` / `class_projection`). The two must
agree: the replay runner matches a look-up's field_masks EXACTLY (as a set),
so when they disagree the e2e tests (e2e-tests/*.bats) and `make bench` fail
with "session expected ... got ...". Change both together.

Every look-up's masks are the rule's metadata paths plus, unless the
policy runs with `capi.inPlaceFields: false`, the source paths of the rule's
in-place fields (timeouts, minReadySeconds, readiness gates, taints, deletion
order, machine naming) at the PARENT's API version
(`crates/core/src/capi/rules.rs` `FieldFlow`, `crates/core/src/capi.rs`
`read_paths`): a v1beta1 MachineDeployment is asked for
`spec.template.spec.nodeDrainTimeout`, a v1beta2 one for
`spec.template.spec.deletion.nodeDrainTimeoutSeconds` (whatever the child's
version). For topology children the field paths are relative to the Cluster's
topology entry and to the ClusterClass entry. InfraMachines and
BootstrapConfigs have no field flows: their look-ups ask for metadata only.

Usage:
    from field_masks import masks_for, child_of, yaml_lines
    masks_for(child_api_version, child_kind, parent_api_version, parent_kind,
              in_place_fields=True)
        -> sorted list of dot paths; ValueError when no row fits the pair.
    in_place_fields=False gives the masks of a policy configured with
    `capi.inPlaceFields: false` (metadata paths only).

Replay sessions of requests run with `capi.inPlaceFields: false` are named
`replay_<kind>_<scenario>_in_place_off.yml` (test_data/capi/check_replays.py
reads `in_place_fields_setting(scenario)`).
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

# The node timeouts: v1beta1 durations, v1beta2 seconds under `deletion`.
TIMEOUTS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")


def timeouts(prefix, version):
    """The three node timeouts under `prefix` (a dot path, "" for the root)
    at `version`."""
    head = f"{prefix}." if prefix else ""
    if version == "v1beta1":
        return [f"{head}{t}" for t in TIMEOUTS]
    return [f"{head}deletion.{t}Seconds" for t in TIMEOUTS]


# Owner-based look-ups: the parent is named by one of the child's
# ownerReferences. (parent, children, metadata masks, in-place field sources
# by the parent's API version). The metadata paths hold for v1beta1 and
# v1beta2; the field sources do not (rules.rs `FieldFlow` `from`).
# InfraMachines and BootstrapConfigs get metadata only (no field flows).
OWNER_LOOKUPS = [
    (MACHINE_DEPLOYMENT, [MACHINE_SET], [
        "metadata.annotations",
        "spec.template.metadata.annotations",
        "spec.template.metadata.labels",
    ], {
        # MachineDeployment -> MachineSet (CAPI computeDesiredMS)
        "v1beta1": [
            "spec.minReadySeconds",
            "spec.strategy.rollingUpdate.deletePolicy",
            "spec.machineNamingStrategy",
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
            *timeouts("spec.template.spec", "v1beta1"),
        ],
        "v1beta2": [
            "spec.template.spec.minReadySeconds",
            "spec.deletion.order",
            "spec.machineNaming",
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
            *timeouts("spec.template.spec", "v1beta2"),
        ],
    }),
    (MACHINE_SET, [MACHINE], [
        "spec.template.metadata.annotations",
        "spec.template.metadata.labels",
    ], {
        # MachineSet -> Machine (CAPI machineset computeDesiredMachine); a
        # v1beta1 Machine has no minReadySeconds, so a v1beta1 MachineSet's
        # is not read.
        "v1beta1": [
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
            *timeouts("spec.template.spec", "v1beta1"),
        ],
        "v1beta2": [
            "spec.template.spec.minReadySeconds",
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
            *timeouts("spec.template.spec", "v1beta2"),
        ],
    }),
    (MACHINE_SET, [ANY_INFRASTRUCTURE, ANY_BOOTSTRAP], [
        "spec.template.metadata.annotations",
        "spec.template.metadata.labels",
    ], {}),
    (ANY_CONTROL_PLANE, [MACHINE], [
        "spec.machineTemplate.metadata.annotations",
        "spec.machineTemplate.metadata.labels",
    ], {
        # control plane -> Machine (KCP ComputeDesiredMachine); never
        # minReadySeconds.
        "v1beta1": [
            "spec.machineTemplate.readinessGates",
            "spec.machineTemplate.taints",
            *timeouts("spec.machineTemplate", "v1beta1"),
        ],
        "v1beta2": [
            "spec.machineTemplate.spec.readinessGates",
            "spec.machineTemplate.spec.taints",
            *timeouts("spec.machineTemplate.spec", "v1beta2"),
        ],
    }),
    (ANY_CONTROL_PLANE, [ANY_INFRASTRUCTURE, ANY_BOOTSTRAP], [
        "spec.machineTemplate.metadata.annotations",
        "spec.machineTemplate.metadata.labels",
    ], {}),
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

# In-place fields of topology children, relative to the topology entry
# (`spec.topology.controlPlane`, `spec.topology.workers.<list>[]`) and, with
# the same relative path, the ClusterClass entry (`spec.controlPlane`,
# `spec.workers.<list>[]`), by API version (rules.rs
# TOPOLOGY_{CONTROL_PLANE,MACHINE_DEPLOYMENT,MACHINE_POOL}_FIELDS).
TOPOLOGY_FIELDS = {
    ("v1beta1", "ControlPlane"): [*timeouts("", "v1beta1"), "readinessGates", "taints"],
    ("v1beta2", "ControlPlane"): [*timeouts("", "v1beta2"), "readinessGates", "taints"],
    ("v1beta1", "MachineDeployment"): [
        "minReadySeconds", *timeouts("", "v1beta1"), "readinessGates", "taints",
        "strategy.rollingUpdate.deletePolicy"],
    ("v1beta2", "MachineDeployment"): [
        "minReadySeconds", *timeouts("", "v1beta2"), "readinessGates", "taints",
        "deletion.order"],
    # pools have no readiness gates and no deletion order
    ("v1beta1", "MachinePool"): ["minReadySeconds", *timeouts("", "v1beta1"), "taints"],
    ("v1beta2", "MachinePool"): ["minReadySeconds", *timeouts("", "v1beta2"), "taints"],
}

# Where the topology entry and the class entry sit.
TOPOLOGY_ENTRY_PATHS = {
    ("Cluster", "ControlPlane"): "spec.topology.controlPlane",
    ("Cluster", "MachineDeployment"): "spec.topology.workers.machineDeployments",
    ("Cluster", "MachinePool"): "spec.topology.workers.machinePools",
    ("ClusterClass", "ControlPlane"): "spec.controlPlane",
    ("ClusterClass", "MachineDeployment"): "spec.workers.machineDeployments",
    ("ClusterClass", "MachinePool"): "spec.workers.machinePools",
}

TOPOLOGY_PARENT_KINDS = {"Cluster", "ClusterClass"}


def version_of(api_version):
    """`cluster.x-k8s.io/v1beta2` -> `v1beta2`."""
    return api_version.rpartition("/")[2]


def _collapse(paths):
    """Sorted, without duplicates, and without a path under another one (the
    policy's projection keeps a whole subtree once: projection.rs)."""
    out = []
    for p in sorted(set(paths)):
        if not any(p.startswith(q + ".") for q in out):
            out.append(p)
    return out


def group_of(api_version):
    """`cluster.x-k8s.io/v1beta2` -> `cluster.x-k8s.io`; `v1` -> ``."""
    return api_version.rpartition("/")[0]


def _matches(match, api_version, kind):
    group, wanted = match
    return group_of(api_version) == group and wanted in (None, kind)


def masks_for(child_api_version, child_kind, parent_api_version, parent_kind,
              in_place_fields=True):
    """The sorted field_masks of the look-up of (parent_api_version,
    parent_kind) made for a child of (child_api_version, child_kind), by a
    policy with `capi.inPlaceFields: <in_place_fields>` (default true).

    Raises ValueError when the pair fits no row: the policy makes no such
    look-up, so a replay session holding one is wrong."""
    version = version_of(parent_api_version)
    if group_of(parent_api_version) == CORE and parent_kind in TOPOLOGY_PARENT_KINDS:
        entries = [e for m, e in TOPOLOGY_ENTRIES if _matches(m, child_api_version, child_kind)]
        entry = entries[0] if entries else None
        key = (parent_api_version, parent_kind, entry)
        if key not in TOPOLOGY_LOOKUPS:
            raise ValueError(
                f"no topology look-up of {parent_api_version} {parent_kind} "
                f"for a {child_api_version} {child_kind}")
        masks = list(TOPOLOGY_LOOKUPS[key])
        if in_place_fields:
            base = TOPOLOGY_ENTRY_PATHS[(parent_kind, entry)]
            masks += [f"{base}.{rel}" for rel in TOPOLOGY_FIELDS.get((version, entry), [])]
        return _collapse(masks)
    for parent, children, masks, fields in OWNER_LOOKUPS:
        if _matches(parent, parent_api_version, parent_kind) and any(
                _matches(c, child_api_version, child_kind) for c in children):
            masks = list(masks)
            if in_place_fields:
                masks += fields.get(version, [])
            return _collapse(masks)
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


IN_PLACE_OFF_SUFFIX = "_in_place_off"


def in_place_fields_setting(scenario):
    """The `capi.inPlaceFields` setting a fixture scenario runs with: false
    for scenarios named `..._in_place_off` (e2e-tests/inplace.bats passes
    `{"capi":{"inPlaceFields":false}}` to them), true otherwise."""
    return not scenario.endswith(IN_PLACE_OFF_SUFFIX)


def yaml_lines(masks, indent="    "):
    """The `field_masks:` entry of a `!KubernetesGetResource` request block,
    in block style as kwctl's serde_yaml writes it, one line per item."""
    return f"{indent}field_masks:\n" + "".join(f"{indent}- {m}\n" for m in masks)
