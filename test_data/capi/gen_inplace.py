#!/usr/bin/env python3
"""Writes the in-place field fixtures of the cases in <version>/cases/ and e2e-tests/inplace.bats (docs/capi.md, "In-place fields").

Run from anywhere: `python3 test_data/capi/gen_inplace.py` (needs PyYAML).
Deterministic: rerunning reproduces the files byte for byte.

The parents are the quick-start parents of test_data/capi/<version>/parents
(CAPD e2e manifests, see README.md) with the in-place fields CAPI manifests
set: node drain / volume-detach / deletion timeouts (v1beta1 durations as a
v1.14 API server serves them, Go format; v1beta2 `deletion.*Seconds`),
`minReadySeconds`, readiness gates (`conditionType`, `polarity`), taints
(`key`, `effect`, `propagation`, `value`: CAPI's MachineTaint), the deletion
order and the machine naming template. Each version directory gets:

  parents/cluster_capi-quickstart-fields.yaml          Cluster capi-quickstart-fields (topology)
  parents/clusterclass_quick-start-fields.yaml         its ClusterClass
  parents/kubeadmcontrolplane_capi-quickstart-fields-n5x8q.yaml  the topology KCP, as CAPI keeps it
  parents/machinedeployment_capi-quickstart-md-2.yaml  a user-managed MD setting every MD field
  parents/machineset_capi-quickstart-md-2-k4v9c.yaml   its MachineSet, as CAPI keeps it

and the requests <kind>_<scenario>.json (scenarios in SCENARIOS below). The
look-ups each scenario must make are its row of <version>/lookups.tsv,
written by hand there (the one place that lists them): a new scenario needs
a row and a case, which the `fixtures:` test of e2e-tests/capi.bats asks for. Every child's
labels and annotations already are what the contract asks for, so a patch
holds the in-place fields only (except the `_in_place_off` scenarios, which
carry one metadata deviation to show that metadata still flows). The
expected results are written out by hand in the cases, <version>/cases/.
"""
import copy
import json
import os
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

NS = "default"
CLUSTER = "capi-quickstart-fields"
CLASS = "quick-start-fields"
KCP = "capi-quickstart-fields-n5x8q"
MD = "capi-quickstart-md-2"
MS = "capi-quickstart-md-2-k4v9c"
MS_HASH = "2580411937-k4v9c"
OLD_MS = "capi-quickstart-md-2-7hx5d"
OLD_MS_HASH = "1965233804-7hx5d"
MD0 = "capi-quickstart-fields-md-0-t2wq9"
MP0 = "capi-quickstart-fields-mp-0-b8r4c"

NAMING = {"template": "{{ .machineSet.name }}-{{ .random }}"}
OLD_NAMING = {"template": "{{ .machineSet.name }}-old-{{ .random }}"}

# Readiness gates and taints, keys in sorted order (so that compact JSON of
# an entry reads the same sorted or in insertion order).
GATE_CP = {"conditionType": "hardening.platform.example.com/CISBenchmarkPassed", "polarity": "Positive"}
GATE_MD = {"conditionType": "network.platform.example.com/CNIReady", "polarity": "Positive"}
GATE_USER = {"conditionType": "ops.example.com/ApprovedForProduction"}
TAINT_CP_TOPOLOGY = {"effect": "PreferNoSchedule", "key": "platform.example.com/maintenance-window",
                     "propagation": "Always", "value": "sun-0200"}
TAINT_CP_CLASS = {"effect": "NoSchedule", "key": "platform.example.com/control-plane-only",
                  "propagation": "OnInitialization"}
TAINT_MD = {"effect": "NoSchedule", "key": "workload.example.com/dedicated",
            "propagation": "Always", "value": "payments"}
TAINT_MP = {"effect": "NoExecute", "key": "workload.example.com/spot",
            "propagation": "Always", "value": "true"}
TAINT_USER = {"effect": "NoSchedule", "key": "ops.example.com/quarantine", "propagation": "Always"}
KCP_MANDATORY_GATES = [{"conditionType": c} for c in (
    "APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy",
    "EtcdPodHealthy", "EtcdMemberHealthy")]


def with_(d, **changes):
    out = copy.deepcopy(d)
    out.update(changes)
    return out


def uid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "capi-inplace/" + name))


def load_parent(version, name):
    with open(os.path.join(HERE, version, "parents", name)) as f:
        return yaml.safe_load(f)


def load_request(version, scenario):
    with open(os.path.join(HERE, version, scenario + ".json")) as f:
        return json.load(f)


def timeouts(version, drain=None, detach=None, deletion=None, seconds_base=None):
    """The node timeouts of one object part at `version`: v1beta1 duration
    strings (top level), v1beta2 seconds under `deletion`."""
    values = {"nodeDrainTimeout": drain, "nodeVolumeDetachTimeout": detach,
              "nodeDeletionTimeout": deletion}
    if version == "v1beta1":
        return {k: v for k, v in values.items() if v is not None}
    deletion_block = dict(seconds_base or {})
    for k, v in values.items():
        if v is not None:
            deletion_block[k + "Seconds"] = v
    return {"deletion": deletion_block} if deletion_block else {}


def merged(a, b):
    out = dict(b or {})
    out.update(a or {})
    return out


# --------------------------------------------------------------------------
# Parents
# --------------------------------------------------------------------------
def cluster(version):
    c = load_parent(version, "cluster_capi-quickstart.yaml")
    c["metadata"].update(name=CLUSTER, uid=uid(f"{version}/cluster/{CLUSTER}"))
    c["metadata"]["labels"] = {"cni": f"{CLUSTER}-crs-0"}
    spec = c["spec"]
    spec["controlPlaneRef"]["name"] = KCP
    spec["infrastructureRef"]["name"] = f"{CLUSTER}-r2d7c"
    topo = spec["topology"]
    if version == "v1beta1":
        topo["class"] = CLASS
    else:
        topo["classRef"]["name"] = CLASS
    cp = topo["controlPlane"]
    for k in ("nodeDeletionTimeout", "nodeVolumeDetachTimeout", "deletion"):
        cp.pop(k, None)
    # 0 = never time out (CAPI e2e); the volume-detach timeout as served in Go format
    cp.update(timeouts(version, deletion="0s" if version == "v1beta1" else 0,
                       detach="5m0s" if version == "v1beta1" else 300))
    cp["taints"] = [TAINT_CP_TOPOLOGY]
    replicas = cp.pop("replicas")
    cp["replicas"] = replicas
    for entry in topo["workers"]["machineDeployments"] + topo["workers"]["machinePools"]:
        for k in ("nodeDeletionTimeout", "nodeVolumeDetachTimeout"):
            if k in entry:
                entry[k] = {"30s": "30s", "5m": "5m0s"}[entry[k]]
    return c


def cluster_class(version):
    cc = load_parent(version, "clusterclass_quick-start.yaml")
    cc["metadata"].update(name=CLASS, uid=uid(f"{version}/clusterclass/{CLASS}"))
    cp = cc["spec"]["controlPlane"]
    # topology sets the volume-detach timeout (5m) and taints: those win
    cp.update(timeouts(version, drain="10m0s" if version == "v1beta1" else 600,
                       detach="2m0s" if version == "v1beta1" else 120))
    cp["readinessGates"] = [GATE_CP]
    cp["taints"] = [TAINT_CP_CLASS]
    md = cc["spec"]["workers"]["machineDeployments"][0]
    md["minReadySeconds"] = 15  # topology md-0 sets 5: topology wins
    if version == "v1beta1":
        md.update(timeouts(version, drain="10m0s"))
        md["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"deletePolicy": "Oldest"}}
    else:
        md["deletion"] = {"nodeDrainTimeoutSeconds": 600, "order": "Oldest"}
    md["readinessGates"] = [GATE_MD]
    md["taints"] = [TAINT_MD]
    mp = cc["spec"]["workers"]["machinePools"][0]
    mp.update(timeouts(version, drain="10m0s" if version == "v1beta1" else 600))
    mp["taints"] = [TAINT_MP]
    return cc


def kcp(version):
    """The topology KubeadmControlPlane as CAPI keeps it: the quick-start KCP
    with this Cluster's name and the fields the Cluster and the ClusterClass
    set (topology ?? class, field by field; lists whole)."""
    k = load_parent(version, "kubeadmcontrolplane_capi-quickstart-wqx5r.yaml")
    m = k["metadata"]
    m.update(name=KCP, uid=uid(f"{version}/kcp/{KCP}"))
    m["labels"]["cluster.x-k8s.io/cluster-name"] = CLUSTER
    m["ownerReferences"][0].update(name=CLUSTER, uid=uid(f"{version}/cluster/{CLUSTER}"))
    mt = k["spec"]["machineTemplate"]
    mt["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = CLUSTER
    if version == "v1beta1":
        mt["infrastructureRef"]["name"] = f"{CLUSTER}-control-plane-q2w5e"
        for key in ("nodeDrainTimeout", "nodeDeletionTimeout", "nodeVolumeDetachTimeout"):
            mt.pop(key)
        mt.update(timeouts(version, drain="10m0s", detach="5m0s", deletion="0s"))
        mt["readinessGates"] = [GATE_CP]
        mt["taints"] = [TAINT_CP_TOPOLOGY]
    else:
        spec = mt["spec"]
        spec["infrastructureRef"]["name"] = f"{CLUSTER}-control-plane-q2w5e"
        spec["deletion"] = {"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 0,
                            "nodeVolumeDetachTimeoutSeconds": 300}
        spec["readinessGates"] = [GATE_CP]
        spec["taints"] = [TAINT_CP_TOPOLOGY]
    k["status"]["selector"] = f"cluster.x-k8s.io/cluster-name={CLUSTER},cluster.x-k8s.io/control-plane"
    return k


def last_applied(md, version):
    """kubectl's last-applied-configuration of the user's manifest."""
    spec = md["spec"]
    tspec = {k: v for k, v in spec["template"]["spec"].items()}
    applied_spec = {"clusterName": spec["clusterName"], "replicas": spec["replicas"],
                    "selector": {"matchLabels": None}}
    if version == "v1beta1":
        applied_spec.update(minReadySeconds=spec["minReadySeconds"],
                            machineNamingStrategy=spec["machineNamingStrategy"],
                            strategy={"rollingUpdate": {"deletePolicy": "Oldest"}})
    else:
        applied_spec.update(machineNaming=spec["machineNaming"], deletion={"order": "Oldest"})
    template_labels = {k: v for k, v in spec["template"]["metadata"]["labels"].items()
                       if not k.startswith("cluster.x-k8s.io/")}
    applied_spec["template"] = {
        "metadata": {"labels": template_labels,
                     "annotations": spec["template"]["metadata"]["annotations"]},
        "spec": tspec}
    applied = {"apiVersion": md["apiVersion"], "kind": "MachineDeployment",
               "metadata": {"name": MD, "namespace": NS, "labels": {"environment": "staging"},
                            "annotations": {k: v for k, v in md["metadata"]["annotations"].items()
                                            if "autoscaler" in k}},
               "spec": applied_spec}
    return json.dumps(applied, separators=(",", ":")) + "\n"


def machine_deployment(version):
    md = load_parent(version, "machinedeployment_capi-quickstart-md-1.yaml")
    m = md["metadata"]
    m.update(name=MD, uid=uid(f"{version}/md/{MD}"))
    m["annotations"].pop("cluster.x-k8s.io/conversion-data", None)
    spec = md["spec"]
    spec["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"] = MD
    tm = spec["template"]["metadata"]
    tm["labels"]["cluster.x-k8s.io/deployment-name"] = MD
    tm["labels"]["nodepool"] = "pool2"
    ts = spec["template"]["spec"]
    ts["bootstrap"]["configRef"]["name"] = MD
    ts["infrastructureRef"]["name"] = MD
    if version == "v1beta1":
        ts.pop("nodeDeletionTimeout")
        ts.update(timeouts(version, drain="10m0s", deletion="30s"))
        ts["readinessGates"] = [GATE_MD]
        ts["taints"] = [TAINT_MD]
        spec["minReadySeconds"] = 30
        spec["strategy"]["rollingUpdate"]["deletePolicy"] = "Oldest"
        spec["machineNamingStrategy"] = NAMING
    else:
        ts["minReadySeconds"] = 30
        ts.update(timeouts(version, drain=600, deletion=30))
        ts["readinessGates"] = [GATE_MD]
        ts["taints"] = [TAINT_MD]
        spec["deletion"]["order"] = "Oldest"
        spec["machineNaming"] = NAMING
    m["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = last_applied(md, version)
    md["status"]["selector"] = (f"cluster.x-k8s.io/cluster-name=capi-quickstart,"
                                f"cluster.x-k8s.io/deployment-name={MD}")
    return md


def machine_set(version, name=MS, hash_=MS_HASH):
    """A MachineSet of MD as the MD controller keeps it (fields included)."""
    md = machine_deployment(version)
    ms = load_parent(version, "machineset_capi-quickstart-md-1-x7k2p.yaml")
    m = ms["metadata"]
    m.update(name=name, uid=uid(f"{version}/ms/{name}"))
    m["labels"] = dict(md["spec"]["template"]["metadata"]["labels"], **{"machine-template-hash": hash_})
    m["ownerReferences"][0].update(name=MD, uid=md["metadata"]["uid"])
    spec = ms["spec"]
    spec["selector"]["matchLabels"].update({"cluster.x-k8s.io/deployment-name": MD,
                                            "machine-template-hash": hash_})
    spec["template"]["metadata"] = copy.deepcopy(md["spec"]["template"]["metadata"])
    spec["template"]["metadata"]["labels"]["machine-template-hash"] = hash_
    spec["template"]["spec"] = copy.deepcopy(md["spec"]["template"]["spec"])
    if version == "v1beta1":
        spec["deletePolicy"] = "Oldest"
        spec["minReadySeconds"] = 30
        spec["machineNamingStrategy"] = NAMING
    else:
        spec["deletion"]["order"] = "Oldest"
        spec["machineNaming"] = NAMING
    ms["status"]["selector"] = (f"cluster.x-k8s.io/cluster-name=capi-quickstart,"
                                f"cluster.x-k8s.io/deployment-name={MD},machine-template-hash={hash_}")
    return ms


HEADERS = {
    "cluster": [
        "Cluster capi-quickstart-fields (managed topology) as served by the API server: Cluster capi-quickstart",
        "(see cluster_capi-quickstart.yaml) with ClusterClass quick-start-fields and these in-place fields:",
        "controlPlane: node deletion timeout 0 (never time out), volume-detach 5m (served in Go format: 5m0s),",
        "a PreferNoSchedule maintenance taint; md-0 / mp-0 as in cluster-with-topology.yaml (30s, 5m, minReadySeconds 5).",
    ],
    "clusterclass": [
        "ClusterClass quick-start-fields: quick-start (see clusterclass_quick-start.yaml) with in-place fields:",
        "controlPlane: drain 10m, volume-detach 2m (the topology's 5m wins), a readiness gate, a taint (the topology's list wins);",
        "default-worker MD class: minReadySeconds 15 (topology's 5 wins), drain 10m, deletion order Oldest, a gate, a taint;",
        "default-worker MP class: drain 10m, a taint.",
    ],
    "kubeadmcontrolplane": [
        "KubeadmControlPlane capi-quickstart-fields-n5x8q as the topology controller keeps it for Cluster",
        "capi-quickstart-fields: kubeadmcontrolplane_capi-quickstart-wqx5r.yaml with the merged fields",
        "(topology ?? class per field, lists whole): drain 10m, volume-detach 5m, deletion 0, the class's gate,",
        "the topology's taint.",
    ],
    "machinedeployment": [
        "User-managed MachineDeployment capi-quickstart-md-2: machinedeployment_capi-quickstart-md-1.yaml (bases/md.yaml)",
        "renamed, nodepool=pool2, with every field an MD hands its MachineSets: minReadySeconds 30, deletion order",
        "Oldest, machine naming template, drain 10m, deletion 30s (no volume-detach timeout), a readiness gate and a",
        "NoSchedule taint (MachineTaintPropagation).",
    ],
    "machineset": [
        "MachineSet capi-quickstart-md-2-k4v9c as the MachineDeployment controller keeps it (computeDesiredMS):",
        "MD template metadata + machine-template-hash, MD annotations minus the skipped ones, and the MD's fields.",
    ],
}


def write_parent(version, kind, obj):
    name = obj["metadata"]["name"]
    path = os.path.join(HERE, version, "parents", f"{kind}_{name}.yaml")
    header = "".join(f"# {line}\n" for line in HEADERS[kind])
    header += "# Written by test_data/capi/gen_inplace.py.\n"
    with open(path, "w") as f:
        f.write(header + yaml.safe_dump(obj, sort_keys=False, width=1000, allow_unicode=True))


# --------------------------------------------------------------------------
# Children
# --------------------------------------------------------------------------
SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp")


def created(obj):
    obj = copy.deepcopy(obj)
    for key in SERVER_FIELDS:
        obj["metadata"].pop(key, None)
    obj["metadata"].pop("finalizers", None)
    obj.pop("status", None)
    return obj


def resource(kind):
    return {"MachineSet": "machinesets", "Machine": "machines", "MachineDeployment": "machinedeployments",
            "MachinePool": "machinepools", "KubeadmControlPlane": "kubeadmcontrolplanes",
            "DockerMachine": "dockermachines"}[kind]


CAPI_USER = {"username": "system:serviceaccount:capi-system:capi-manager",
             "uid": "9b1d6a70-6a3c-4f61-8a5e-4a1f3f0d2c11",
             "groups": ["system:serviceaccounts", "system:serviceaccounts:capi-system",
                        "system:authenticated"]}
ADMIN = {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]}


def request(version, scenario, obj, old=None, user=CAPI_USER):
    group, _, ver = obj["apiVersion"].rpartition("/")
    kind = {"group": group, "version": ver, "kind": obj["kind"]}
    res = {"group": group, "version": ver, "resource": resource(obj["kind"])}
    operation = "UPDATE" if old is not None else "CREATE"
    return {
        "uid": uid(f"{version}/request/{scenario}"),
        "kind": kind, "resource": res, "requestKind": kind, "requestResource": res,
        "name": obj["metadata"]["name"], "namespace": NS,
        "operation": operation, "userInfo": user,
        "object": obj, "oldObject": old, "dryRun": False,
        "options": {"kind": "UpdateOptions" if old is not None else "CreateOptions",
                    "apiVersion": "meta.k8s.io/v1", "fieldManager": "manager"},
    }


def set_path(obj, path, value):
    node = obj
    for part in path[:-1]:
        node = node.setdefault(part, {})
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def tpl(version, *v1beta1_path, v1beta2_path=None):
    return list(v1beta1_path) if version == "v1beta1" else list(v1beta2_path)


# --- topology KubeadmControlPlane ----------------------------------------
def kcp_fields_path(version):
    return ["spec", "machineTemplate"] if version == "v1beta1" else ["spec", "machineTemplate", "spec"]


def set_kcp_fields(version, obj, drain, detach, deletion, gates, taints):
    base = obj
    for part in kcp_fields_path(version):
        base = base[part]
    for key in ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout",
                "deletion", "readinessGates", "taints"):
        base.pop(key, None)
    base.update(timeouts(version, drain=drain, detach=detach, deletion=deletion))
    if gates is not None:
        base["readinessGates"] = gates
    if taints is not None:
        base["taints"] = taints


def topology_kcp_create(version):
    """The KCP as the topology controller created it from a stale cache:
    the template's drain timeout (1s), no deletion timeout, no gates, no
    taints; the volume-detach timeout written as the user wrote it (5m)."""
    obj = created(kcp(version))
    if version == "v1beta1":
        set_kcp_fields(version, obj, "1s", "5m", None, None, None)
    else:
        set_kcp_fields(version, obj, 1, 300, None, None, None)
    return request(version, "kubeadmcontrolplane_create_topology_fields", obj)


def topology_kcp_update(version):
    """kubectl edit of the KCP: deletion timeout 1m instead of 0, the class
    gate's polarity flipped, the topology taint's value changed; a user's gate
    and taint (child-only entries) stay."""
    old = kcp(version)
    obj = copy.deepcopy(old)
    v1 = version == "v1beta1"
    gates = [GATE_USER, with_(GATE_CP, polarity="Negative")]
    taints = [with_(TAINT_CP_TOPOLOGY, value="none"), TAINT_USER]
    set_kcp_fields(version, obj, "10m0s" if v1 else 600, "5m0s" if v1 else 300,
                   "1m" if v1 else 60, gates, taints)
    set_kcp_fields(version, old, "10m0s" if v1 else 600, "5m0s" if v1 else 300,
                   "0s" if v1 else 0, [GATE_USER, GATE_CP], [TAINT_CP_TOPOLOGY, TAINT_USER])
    return request(version, "kubeadmcontrolplane_update_topology_fields_drifted", obj, old, ADMIN)


def topology_kcp_in_place_off(version):
    """topology_kcp_create with one label missing: with capi.inPlaceFields:
    false only that label is added."""
    req = topology_kcp_create(version)
    req["uid"] = uid(f"{version}/request/kubeadmcontrolplane_create_topology_fields_in_place_off")
    del req["object"]["metadata"]["labels"]["ClusterClass.controlPlane.label"]
    return req


# --- topology MachineDeployment / MachinePool ----------------------------
def topology_metadata(version, list_name, entry_name, name_label):
    c, cc = cluster(version), cluster_class(version)
    entry = next(e for e in c["spec"]["topology"]["workers"][list_name] if e["name"] == entry_name)
    klass = next(e for e in cc["spec"]["workers"][list_name] if e["class"] == entry["class"])
    class_meta = klass["template"]["metadata"] if version == "v1beta1" else klass["metadata"]
    labels = merged(entry["metadata"].get("labels"), class_meta.get("labels"))
    annotations = merged(entry["metadata"].get("annotations"), class_meta.get("annotations"))
    for k in ("topology.cluster.x-k8s.io/hold-upgrade-sequence", "topology.cluster.x-k8s.io/defer-upgrade"):
        annotations.pop(k, None)
    own = {"cluster.x-k8s.io/cluster-name": CLUSTER, "topology.cluster.x-k8s.io/owned": "",
           name_label: entry_name}
    return dict(own, **labels), annotations, own


def topology_md(version, created_obj=True):
    base = load_request(version, "machinedeployment_create_topology")["object"]
    obj = copy.deepcopy(base)
    labels, annotations, own = topology_metadata(version, "machineDeployments", "md-0",
                                                 "topology.cluster.x-k8s.io/deployment-name")
    obj["metadata"].update(name=MD0, labels=labels, annotations=annotations)
    spec = obj["spec"]
    spec["clusterName"] = CLUSTER
    spec["selector"]["matchLabels"] = dict(own)
    spec["template"]["metadata"] = {"labels": dict(labels), "annotations": dict(annotations)}
    ts = spec["template"]["spec"]
    ts["clusterName"] = CLUSTER
    ts["bootstrap"]["configRef"]["name"] = f"{CLUSTER}-md-0-bootstrap-f9c2m"
    ts["infrastructureRef"]["name"] = f"{CLUSTER}-md-0-infra-w3k8d"
    return obj


def topology_md_create(version):
    """Created from a stale cache: minReadySeconds and the topology's two
    timeouts right (the volume-detach timeout as the user wrote it, 5m), no
    drain timeout, no gates, no taints, no deletion order."""
    obj = topology_md(version)
    ts = obj["spec"]["template"]["spec"]
    if version == "v1beta1":
        ts["nodeVolumeDetachTimeout"] = "5m"
        assert obj["spec"]["minReadySeconds"] == 5 and "deletePolicy" not in obj["spec"]["strategy"]["rollingUpdate"]
    else:
        assert ts["minReadySeconds"] == 5 and "deletion" not in obj["spec"]
    return request(version, "machinedeployment_create_topology_fields", obj)


def topology_md_update(version):
    """kubectl edit: minReadySeconds 0, deletion order Newest, only a user's
    gate (the class gate is missing), the class taint's propagation changed;
    the drain timeout written as 10m (equal to the class's 10m0s / 600)."""
    obj = topology_md(version)
    obj["metadata"].update(uid=uid(f"{version}/md/{MD0}"), resourceVersion="61250", generation=3,
                           creationTimestamp="2025-06-02T09:05:42Z")
    ts = obj["spec"]["template"]["spec"]
    old = copy.deepcopy(obj)
    ots = old["spec"]["template"]["spec"]
    if version == "v1beta1":
        ts.update(nodeDrainTimeout="10m")
        obj["spec"]["minReadySeconds"] = 0
        obj["spec"]["strategy"]["rollingUpdate"]["deletePolicy"] = "Newest"
        ots.update(nodeDrainTimeout="10m0s", nodeVolumeDetachTimeout="5m0s")
        old["spec"]["strategy"]["rollingUpdate"]["deletePolicy"] = "Oldest"
    else:
        ts["deletion"]["nodeDrainTimeoutSeconds"] = 600
        ts["minReadySeconds"] = 0
        obj["spec"]["deletion"] = {"order": "Newest"}
        ots["deletion"]["nodeDrainTimeoutSeconds"] = 600
        old["spec"]["deletion"] = {"order": "Oldest"}
    ts["readinessGates"] = [GATE_USER]
    ts["taints"] = [with_(TAINT_MD, propagation="OnInitialization")]
    ots["readinessGates"] = [GATE_USER, GATE_MD]
    ots["taints"] = [TAINT_MD]
    return request(version, "machinedeployment_update_topology_fields_drifted", obj, old, ADMIN)


def topology_mp(version):
    base = load_request(version, "machinepool_create_topology")["object"]
    obj = copy.deepcopy(base)
    labels, annotations, own = topology_metadata(version, "machinePools", "mp-0",
                                                 "topology.cluster.x-k8s.io/pool-name")
    obj["metadata"].update(name=MP0, labels=labels, annotations=annotations)
    spec = obj["spec"]
    spec["clusterName"] = CLUSTER
    spec["template"]["metadata"] = {"labels": dict(labels), "annotations": dict(annotations)}
    ts = spec["template"]["spec"]
    ts["clusterName"] = CLUSTER
    ts["bootstrap"]["configRef"]["name"] = f"{CLUSTER}-mp-0-h2x6z"
    ts["infrastructureRef"]["name"] = f"{CLUSTER}-mp-0-l7q3n"
    return obj


def topology_mp_create(version):
    """Created from a stale cache: no minReadySeconds, no drain timeout, no
    taints; v1beta2 carries the webhook's nodeDeletionTimeoutSeconds: 10."""
    obj = topology_mp(version)
    ts = obj["spec"]["template"]["spec"]
    if version == "v1beta1":
        del obj["spec"]["minReadySeconds"]
    else:
        del ts["minReadySeconds"]
        ts["deletion"]["nodeDeletionTimeoutSeconds"] = 10
    return request(version, "machinepool_create_topology_fields", obj)


def topology_mp_update(version):
    """minReadySeconds 0 and drain timeout 5m on the pool; a user's taint is
    there, the class taint is missing (appended)."""
    obj = topology_mp(version)
    obj["metadata"].update(uid=uid(f"{version}/mp/{MP0}"), resourceVersion="61377", generation=2,
                           creationTimestamp="2025-06-02T09:05:42Z")
    old = copy.deepcopy(obj)
    ts, ots = obj["spec"]["template"]["spec"], old["spec"]["template"]["spec"]
    if version == "v1beta1":
        obj["spec"]["minReadySeconds"] = 0
        ts["nodeDrainTimeout"] = "5m0s"
        ots["nodeDrainTimeout"] = "10m0s"
    else:
        ts["minReadySeconds"] = 0
        ts["deletion"]["nodeDrainTimeoutSeconds"] = 300
        ots["deletion"]["nodeDrainTimeoutSeconds"] = 600
    ts["taints"] = [TAINT_USER]
    ots["taints"] = [TAINT_USER, TAINT_MP]
    return request(version, "machinepool_update_topology_fields_drifted", obj, old, ADMIN)


# --- MachineDeployment -> MachineSet -------------------------------------
def ms_create(version):
    """The MachineSet the MD controller created from a stale MD: minReadySeconds
    0, deletion order Random, no naming, the webhook's 10s deletion timeout,
    no drain timeout, gates or taints; a volume-detach timeout of 2m that the
    MD does not set (kept)."""
    obj = created(machine_set(version))
    spec, ts = obj["spec"], obj["spec"]["template"]["spec"]
    for k in ("readinessGates", "taints", "nodeDrainTimeout", "nodeDeletionTimeout", "deletion"):
        ts.pop(k, None)
    if version == "v1beta1":
        spec["minReadySeconds"] = 0
        spec["deletePolicy"] = "Random"
        del spec["machineNamingStrategy"]
        ts.update(nodeDeletionTimeout="10s", nodeVolumeDetachTimeout="2m")
    else:
        del ts["minReadySeconds"]
        spec["deletion"]["order"] = "Random"
        del spec["machineNaming"]
        ts["deletion"] = {"nodeVolumeDetachTimeoutSeconds": 120}
    return request(version, "machineset_create_fields_from_md", obj)


def ms_in_place_off(version):
    req = ms_create(version)
    req["uid"] = uid(f"{version}/request/machineset_create_fields_from_md_in_place_off")
    del req["object"]["metadata"]["labels"]["nodepool"]
    return req


def ms_update(version):
    """An older MachineSet of the MD (CAPI v1.14 updates every MachineSet):
    minReadySeconds 10, an older naming template, the MD taint's value
    changed; the drain timeout written as 600s (equal by value to 10m0s)."""
    old = machine_set(version, OLD_MS, OLD_MS_HASH)
    old["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "1"
    old["spec"]["replicas"] = 0
    obj = copy.deepcopy(old)
    spec, ts = obj["spec"], obj["spec"]["template"]["spec"]
    if version == "v1beta1":
        spec["minReadySeconds"] = 10
        spec["machineNamingStrategy"] = OLD_NAMING
        ts["nodeDrainTimeout"] = "600s"
    else:
        ts["minReadySeconds"] = 10
        spec["machineNaming"] = OLD_NAMING
    ts["taints"] = [with_(TAINT_MD, value="batch")]
    return request(version, "machineset_update_fields_drifted_from_md", obj, old, ADMIN)


def ms_parent_unset(version):
    """A MachineSet of capi-quickstart-md-1, which sets none of these fields
    (v1beta1: only minReadySeconds 0, deletePolicy Random and the webhook's
    10s; v1beta2: only deletion order Random): the MachineSet's own values
    stay, no patch. v1beta1: no minReadySeconds on the MS (0 is never written)."""
    base = load_request(version, "machineset_update_drifted_from_md")
    obj = copy.deepcopy(base["oldObject"])
    # the MD's current metadata (revision 2 set, as machineset_create_from_md)
    ref = load_request(version, "machineset_create_from_md")["object"]
    obj["metadata"]["annotations"].update({k: v for k, v in ref["metadata"]["annotations"].items()
                                           if "autoscaler" in k or "disable-machine-create" in k})
    md1 = load_parent(version, "machinedeployment_capi-quickstart-md-1.yaml")
    labels = dict(md1["spec"]["template"]["metadata"]["labels"])
    labels["machine-template-hash"] = obj["metadata"]["labels"]["machine-template-hash"]
    obj["metadata"]["labels"] = dict(labels)
    obj["spec"]["template"]["metadata"] = {"labels": dict(labels), "annotations": dict(
        md1["spec"]["template"]["metadata"]["annotations"])}
    spec, ts = obj["spec"], obj["spec"]["template"]["spec"]
    ts["readinessGates"] = [GATE_USER]
    ts["taints"] = [TAINT_USER]
    if version == "v1beta1":
        spec.pop("minReadySeconds", None)
        spec["machineNamingStrategy"] = NAMING
        ts.update(nodeDrainTimeout="3m0s", nodeVolumeDetachTimeout="2m0s")
    else:
        ts["minReadySeconds"] = 10
        spec["machineNaming"] = NAMING
        ts["deletion"] = {"nodeDrainTimeoutSeconds": 180, "nodeVolumeDetachTimeoutSeconds": 120}
    old = copy.deepcopy(obj)
    old["spec"]["replicas"] = 1
    return request(version, "machineset_update_fields_parent_unset", obj, old, ADMIN)


# --- MachineSet -> Machine ------------------------------------------------
def machine_of_ms(version, name):
    base = load_request(version, "machine_create_from_machineset")["object"]
    ms = machine_set(version)
    obj = copy.deepcopy(base)
    m = obj["metadata"]
    m["name"] = name
    m["labels"] = dict(ms["spec"]["template"]["metadata"]["labels"], **{"cluster.x-k8s.io/set-name": MS})
    m["annotations"] = dict(ms["spec"]["template"]["metadata"]["annotations"])
    m["ownerReferences"][0].update(name=MS, uid=ms["metadata"]["uid"])
    spec = obj["spec"]
    spec["bootstrap"]["configRef"]["name"] = name
    spec["infrastructureRef"]["name"] = name
    return obj


def machine_from_ms_create(version):
    """Created from a stale MachineSet: the webhook's 10s deletion timeout, no
    drain timeout, gates or taints (v1beta2: no minReadySeconds); a
    volume-detach timeout of 2m the MachineSet does not set (kept)."""
    obj = machine_of_ms(version, f"{MS}-w6r2p")
    spec = obj["spec"]
    if version == "v1beta1":
        spec.update(nodeDeletionTimeout="10s", nodeVolumeDetachTimeout="2m")
    else:
        spec["deletion"] = {"nodeDeletionTimeoutSeconds": 10, "nodeVolumeDetachTimeoutSeconds": 120}
    return request(version, "machine_create_fields_from_machineset", obj)


def machine_from_ms_update(version):
    """Label edit on a running Machine whose gate polarity was flipped and
    whose MS taint is missing (a user's quarantine taint is there); drain
    timeout written as 10m (equal); v1beta2 minReadySeconds 0 (replaced: 0
    is a value)."""
    obj = machine_of_ms(version, f"{MS}-j8d4m")
    obj["metadata"].update(uid=uid(f"{version}/machine/{MS}-j8d4m"), resourceVersion="62001",
                           generation=2, creationTimestamp="2025-06-02T09:21:10Z",
                           finalizers=["machine.cluster.x-k8s.io"])
    spec = obj["spec"]
    old = copy.deepcopy(obj)
    ospec = old["spec"]
    if version == "v1beta1":
        spec.update(nodeDrainTimeout="10m", nodeDeletionTimeout="30s")
        ospec.update(nodeDrainTimeout="10m0s", nodeDeletionTimeout="30s")
    else:
        spec["minReadySeconds"] = 0
        spec["deletion"] = {"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 30}
        ospec["minReadySeconds"] = 30
        ospec["deletion"] = dict(spec["deletion"])
    spec["readinessGates"] = [with_(GATE_MD, polarity="Negative")]
    spec["taints"] = [TAINT_USER]
    ospec["readinessGates"] = [GATE_MD]
    ospec["taints"] = [TAINT_USER, TAINT_MD]
    return request(version, "machine_update_fields_drifted_from_machineset", obj, old, ADMIN)


def dockermachine_from_ms(version):
    """A DockerMachine of the MachineSet: metadata only, no field flows (its
    look-up asks for the metadata paths only); nothing to change."""
    base = load_request(version, "dockermachine_create_from_machineset")["object"]
    ms = machine_set(version)
    obj = copy.deepcopy(base)
    name = f"{MS}-w6r2p"
    obj["metadata"]["name"] = name
    obj["metadata"]["labels"] = dict(ms["spec"]["template"]["metadata"]["labels"],
                                     **{"cluster.x-k8s.io/set-name": MS})
    obj["metadata"]["annotations"] = dict(
        ms["spec"]["template"]["metadata"]["annotations"],
        **{"cluster.x-k8s.io/cloned-from-groupkind": "DockerMachineTemplate.infrastructure.cluster.x-k8s.io",
           "cluster.x-k8s.io/cloned-from-name": MD})
    obj["metadata"]["ownerReferences"][0].update(name=MS, uid=ms["metadata"]["uid"])
    return request(version, "dockermachine_create_fields_from_machineset", obj)


# --- KubeadmControlPlane -> Machine --------------------------------------
def machine_of_kcp(version, name):
    base = load_request(version, "machine_create_from_kcp")["object"]
    k = kcp(version)
    obj = copy.deepcopy(base)
    m = obj["metadata"]
    m["name"] = name
    mt = k["spec"]["machineTemplate"]["metadata"]
    m["labels"] = dict(mt["labels"], **{"cluster.x-k8s.io/control-plane": "",
                                        "cluster.x-k8s.io/control-plane-name": KCP})
    m["annotations"] = dict({a: v for a, v in base["metadata"].get("annotations", {}).items()
                             if a in ("controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration",
                                      "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup")},
                            **mt["annotations"])
    m["ownerReferences"][0].update(name=KCP, uid=k["metadata"]["uid"])
    spec = obj["spec"]
    spec["clusterName"] = CLUSTER
    spec["bootstrap"]["configRef"]["name"] = name
    spec["infrastructureRef"]["name"] = name
    for key in ("nodeDrainTimeout", "nodeDeletionTimeout", "nodeVolumeDetachTimeout", "deletion"):
        spec.pop(key, None)
    return obj


def machine_from_kcp_create(version):
    """Created from a stale KCP: the template's 1s drain timeout, the
    webhook's 10s deletion timeout (the KCP says 0), volume-detach written as
    5m (equal to 5m0s); KCP's five mandatory gates without the KCP's own
    gate (appended after them); no taints."""
    obj = machine_of_kcp(version, f"{KCP}-c4k7v")
    spec = obj["spec"]
    spec.update(timeouts(version, drain="1s" if version == "v1beta1" else 1,
                         detach="5m" if version == "v1beta1" else 300,
                         deletion="10s" if version == "v1beta1" else 10))
    spec["readinessGates"] = copy.deepcopy(KCP_MANDATORY_GATES)
    return request(version, "machine_create_fields_from_kcp", obj)


def machine_from_kcp_update(version):
    """UPDATE of a control-plane Machine: drain timeout 5m instead of 10m, the
    KCP gate's polarity flipped, the taint's value changed; the mandatory
    gates stay."""
    obj = machine_of_kcp(version, f"{KCP}-s9m2x")
    obj["metadata"].update(uid=uid(f"{version}/machine/{KCP}-s9m2x"), resourceVersion="62418",
                           generation=2, creationTimestamp="2025-06-02T09:08:31Z")
    spec = obj["spec"]
    old = copy.deepcopy(obj)
    v1 = version == "v1beta1"
    spec.update(timeouts(version, drain="5m0s" if v1 else 300, detach="5m0s" if v1 else 300,
                         deletion="0s" if v1 else 0))
    old["spec"].update(timeouts(version, drain="10m0s" if v1 else 600, detach="5m0s" if v1 else 300,
                                deletion="0s" if v1 else 0))
    spec["readinessGates"] = KCP_MANDATORY_GATES + [with_(GATE_CP, polarity="Negative")]
    spec["taints"] = [with_(TAINT_CP_TOPOLOGY, value="none")]
    old["spec"]["readinessGates"] = KCP_MANDATORY_GATES + [GATE_CP]
    old["spec"]["taints"] = [TAINT_CP_TOPOLOGY]
    return request(version, "machine_update_fields_drifted_from_kcp", obj, old, ADMIN)


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------
# scenario -> request builder (the look-ups: <version>/lookups.tsv)
SCENARIOS = {
    "kubeadmcontrolplane_create_topology_fields": topology_kcp_create,
    "kubeadmcontrolplane_update_topology_fields_drifted": topology_kcp_update,
    "kubeadmcontrolplane_create_topology_fields_in_place_off": topology_kcp_in_place_off,
    "machinedeployment_create_topology_fields": topology_md_create,
    "machinedeployment_update_topology_fields_drifted": topology_md_update,
    "machinepool_create_topology_fields": topology_mp_create,
    "machinepool_update_topology_fields_drifted": topology_mp_update,
    "machineset_create_fields_from_md": ms_create,
    "machineset_create_fields_from_md_in_place_off": ms_in_place_off,
    "machineset_update_fields_drifted_from_md": ms_update,
    "machineset_update_fields_parent_unset": ms_parent_unset,
    "machine_create_fields_from_machineset": machine_from_ms_create,
    "machine_update_fields_drifted_from_machineset": machine_from_ms_update,
    "dockermachine_create_fields_from_machineset": dockermachine_from_ms,
    "machine_create_fields_from_kcp": machine_from_kcp_create,
    "machine_update_fields_drifted_from_kcp": machine_from_kcp_update,
}


def main():
    for version in ("v1beta1", "v1beta2"):
        write_parent(version, "cluster", cluster(version))
        write_parent(version, "clusterclass", cluster_class(version))
        write_parent(version, "kubeadmcontrolplane", kcp(version))
        write_parent(version, "machinedeployment", machine_deployment(version))
        write_parent(version, "machineset", machine_set(version))
        for scenario, build in SCENARIOS.items():
            with open(os.path.join(HERE, version, f"{scenario}.json"), "w") as f:
                json.dump(build(version), f, indent=2, ensure_ascii=False)
                f.write("\n")


if __name__ == "__main__":
    main()
