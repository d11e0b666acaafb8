#!/usr/bin/env python3
"""Writes the dumps `policy-runner audit` is tested on (test_data/dumps):
what `kubectl get clusters,clusterclasses,machinedeployments,machinesets,
machines,machinepools,kubeadmcontrolplanes,dockermachines,kubeadmconfigs -A
-o yaml` prints for a Cluster API quick-start cluster, at v1beta1 and at
v1beta2, each clean and with planted drift; a dump of Crossplane XRs, one
on each provider profile; a dump of AWS, Azure and OpenStack workload
clusters whose infrastructure objects carry cloud tags, clean and with
planted tag drift (see "cloud tags on infrastructure" below); and, in scale/, a management cluster of 100
workload clusters, 10,000 objects at v1beta2 with 100 planted deviations
(see "scale" below), as compact JSON (one item a line, 23.2 MB).

Run from anywhere, after `make runner annotated-policy.wasm`:
`python3 test_data/dumps/gen.py`. Deterministic; commit the output. `make
check-schemas` checks every object strictly against the real CRDs. Which
parent annotations reach a MachineSet or a topology MachineDeployment /
MachinePool is asked of the policy (`Contract`: the runner, RUNNER, in
mutate mode on the module, POLICY, both relative to the repository root),
not copied from its rule table; six runs serve every dump. Those lists are
checked literally elsewhere: crates/core/tests/capi_conformance (CAPI's own cases for
computeDesiredMS and computeMachineDeployment / computeMachinePool) and
test_data/capi/<version>/cases/.

This script only *builds inputs*. The bases are the real, schema-checked
fixtures of test_data/capi/<version>/ (the requests' objects) and their
parents/ (objects as the API server serves them). The children the
controllers create are filled in as those controllers fill them (CAPI v1.14,
cited per function in crates/core/src/capi/rules.rs), so a clean
dump is what a healthy management cluster holds. What the audit must answer
for each dump is written out literally in e2e-tests/audit.bats and
crates/runner/tests/audit.rs, never computed here.

The quick-start world (namespace default, Cluster capi-quickstart, ClusterClass
quick-start) as the dumps hold it:

  ClusterClass quick-start
  └── Cluster capi-quickstart
      ├── KubeadmControlPlane capi-quickstart-wqx5r (topology)  3 Machines
      ├── MachineDeployment capi-quickstart-md-0-p6hg9 (topology md-0)
      │   └── MachineSet capi-quickstart-md-0-p6hg9-v7bqn       2 Machines
      ├── MachineDeployment capi-quickstart-md-1 (user-managed)
      │   └── MachineSet capi-quickstart-md-1-x7k2p              2 Machines
      └── MachinePool capi-quickstart-mp-0-x7b2k (topology mp-0)

Every Machine has its DockerMachine and KubeadmConfig, owned by the Machine
(the Machine controller's ensureExternalOwnershipAndWatch replaces the
MachineSet's / KubeadmControlPlane's owner reference with its own controller
reference once the Machine exists). The MachinePool's DockerMachinePool is
not in the dump: CAPD's DockerMachinePool CRD is not among the reference CRDs.

The in-place fields (docs/capi.md, "In-place fields"; crates/core/src/capi/rules/)
are there as CAPI v1.14 keeps them (seconds below; v1beta1 holds Go-format
duration strings, "5m0s", at `node*Timeout`, v1beta2 integers at
`deletion.node*TimeoutSeconds`):

  ClusterClass  controlPlane: drain 300, deletion 60, gate CISBenchmarkPassed
                worker md class: minReadySeconds 15, drain 600, gate CNIReady
                worker mp class: drain 600
  Cluster       topology controlPlane / md-0 / mp-0: deletion 30, detach 300,
                md-0 and mp-0 minReadySeconds 5 (the topology wins over the class)
  KCP           drain 300, deletion 30, detach 300, gate CISBenchmarkPassed;
                its Machines the same timeouts and KCP's mandatory gates
                (APIServerPodHealthy … EtcdMemberHealthy) before that gate
  md-0 (topology), its MachineSet and Machines: minReadySeconds 5 (v1beta2
                Machines too; a v1beta1 Machine has none), drain 600,
                deletion 30, detach 300, gate CNIReady
  mp-0          minReadySeconds 5, drain 600, deletion 30, detach 300
  md-1 (user)   minReadySeconds 10, drain 120, gate ApprovedForProduction
                (in its last-applied manifest too), and so its MachineSet;
                its Machines the drain, the gate and, set by nobody, the
                Machine webhook's deletion 10

Planted drift (quickstart_<version>_drift.yaml), five objects:
  - MachineSet capi-quickstart-md-1-x7k2p lost label `nodepool` (its
    MachineDeployment's template has `nodepool: pool1`);
  - Machine capi-quickstart-md-1-x7k2p-6nbqt has `nodepool: pool0` (a value
    someone corrected by hand; its MachineSet's template says pool1);
  - MachineDeployment capi-quickstart-md-0-p6hg9 lacks the ClusterClass
    annotation `ClusterClass.machineDeployment.annotation` on
    spec.template.metadata (a ClusterClass change not rolled out yet), and
    its minReadySeconds is 30 where the topology says 5 (edited by hand; its
    MachineSet and, v1beta2, their Machines hold 30 too, as the controllers
    passed it on);
  - MachineSet capi-quickstart-md-0-p6hg9-v7bqn has nodeDrainTimeout 300
    (5m0s) where its MachineDeployment says 600 (10m0s) (edited by hand; its
    Machines hold 300 too);
  - Machine capi-quickstart-md-1-x7k2p-9ttvz lacks the readiness gate
    ops.example.com/ApprovedForProduction its MachineSet's template sets.
  Not drift (v1beta1): KubeadmControlPlane capi-quickstart-wqx5r and Machine
  capi-quickstart-md-0-p6hg9-v7bqn-tt4kd hold nodeVolumeDetachTimeout "5m",
  equal by value to the "5m0s" CAPI writes (as a v1.10 management cluster,
  storing v1beta1, keeps a user's string): neither deviates, nor do the
  KCP's Machines, which hold "5m0s".
"""
import base64
import copy
import hashlib
import json
import math
import os
import subprocess
import tempfile
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAMESPACE = "default"
UID_NAMESPACE = uuid.UUID("3f1d7c52-9a0e-4b8e-8c61-5d2b7a9e0f13")
CREATED = "2025-06-02T09:14:30Z"

RUNNER = os.environ.get("RUNNER") or "target/host/policy-runner"
POLICY = os.environ.get("POLICY") or "annotated-policy.wasm"


class Contract:
    """Which of its parents' annotations reach a child, asked of the policy
    itself rather than copied from its rule table (the annotations CAPI never
    copies: mdutil `annotationsToSkip` for a MachineDeployment's MachineSets,
    the topology upgrade annotations `computeMachineDeployment` /
    `computeMachinePool` drop; crates/core/src/capi/rules/contract.rs).

    The runner (RUNNER, default target/host/policy-runner) evaluates the
    module (POLICY, default annotated-policy.wasm) in mutate mode, default
    settings, on a probe: the child with no annotations at the target
    path, its look-ups answered from the parents (`--parents`). The
    returned patch is applied (`policy-runner patch`), and the keys the
    policy wrote there are the ones that reach the child. The answer
    depends on the child's kind and the keys on offer, not on names or
    values, so it is asked once per (child apiVersion and kind, target,
    keys on offer) and reused: a handful of runs for the 10,000-object
    dump (`runs` counts them)."""

    def __init__(self, runner=RUNNER, policy=POLICY):
        self.runner = os.path.join(ROOT, runner) if "/" in runner else runner
        self.policy = os.path.join(ROOT, policy)
        self.memo = {}
        self.runs = 0

    def mutated(self, child, parents):
        """`child` as the mutating policy leaves it, its parents `parents`."""
        group, _, version = child["apiVersion"].rpartition("/")
        gvk = {"group": group, "version": version, "kind": child["kind"]}
        review = {"request": {
            "uid": "dumps-gen", "kind": gvk, "requestKind": gvk,
            "resource": {"group": group, "version": version, "resource": child["kind"].lower() + "s"},
            "name": child["metadata"]["name"], "namespace": child["metadata"].get("namespace", ""),
            "operation": "CREATE", "userInfo": {"username": "dumps-gen"}, "object": child,
            "oldObject": None, "dryRun": False}}
        with tempfile.TemporaryDirectory() as tmp:
            paths = {name: os.path.join(tmp, f"{name}.json") for name in ("review", "parents", "object", "patch")}
            for name, value in (("review", review), ("object", child),
                                ("parents", {"apiVersion": "v1", "kind": "List", "items": parents})):
                with open(paths[name], "w", encoding="utf-8") as f:
                    json.dump(value, f)
            run = subprocess.run(
                [self.runner, "run", "--allow-context-aware", "--parents", paths["parents"],
                 "-r", paths["review"], self.policy],
                capture_output=True, text=True, check=True, cwd=ROOT)
            self.runs += 1
            unasked = [line for line in run.stderr.splitlines() if "was not looked up" in line]
            response = json.loads(run.stdout.strip().splitlines()[-1])
            if not response.get("allowed") or unasked:
                raise SystemExit(f"the policy does not take {child['kind']} {child['metadata']['name']}"
                                 f" from its parents: {response} {unasked}")
            with open(paths["patch"], "w", encoding="utf-8") as f:
                f.write(base64.b64decode(response["patch"]).decode() if response.get("patch") else "[]")
            patched = subprocess.run(
                [self.runner, "patch", "--object", paths["object"], "--patch", paths["patch"]],
                capture_output=True, text=True, check=True, cwd=ROOT)
        return json.loads(patched.stdout)

    def annotations_reaching(self, child, parents, path, offered):
        """The keys of `offered` (annotation keys the parents hold) the
        policy writes at `path` (a tuple of keys) of a child like `child`."""
        memo_key = (child["apiVersion"], child["kind"], path, frozenset(offered))
        if memo_key not in self.memo:
            probe = copy.deepcopy(child)
            *head, last = path
            node = probe
            for part in head:
                node = node[part]
            node.pop(last, None)
            node = self.mutated(probe, parents)
            for part in path:
                node = node.get(part, {})
            self.memo[memo_key] = frozenset(offered) & set(node)
        return self.memo[memo_key]


def read_yaml(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return yaml.safe_load(f)


def read_object(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return json.load(f)["object"]


def uid(version, kind, name):
    return str(uuid.uuid5(UID_NAMESPACE, f"{version}/{kind}/{name}"))


def merge(*maps):
    """CAPI util.MergeMap: keys of every map; the first map holding a key wins."""
    out = {}
    for m in maps:
        for k, v in (m or {}).items():
            out.setdefault(k, v)
    return out


def owner(obj, controller=True):
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def served(obj, version, generation=1, created=CREATED):
    """The server-set metadata of a stored object."""
    meta = obj["metadata"]
    meta.setdefault("uid", uid(version, obj["kind"], meta["name"]))
    meta.setdefault("resourceVersion", str(50400 + len(meta["name"])))
    meta.setdefault("generation", generation)
    meta.setdefault("creationTimestamp", created)
    return obj


def ref(version, group, kind, name):
    """A Machine's bootstrap / infrastructure reference at `version`:
    v1beta2 ContractVersionedObjectReference, v1beta1 ObjectReference."""
    if version == "v1beta2":
        return {"apiGroup": group, "kind": kind, "name": name}
    return {"apiVersion": f"{group}/{version}", "kind": kind, "name": name, "namespace": NAMESPACE}


# ------------------------------------------------------------ in-place fields
# The fields CAPI propagates in place besides metadata (docs/capi.md,
# "In-place fields"; the tables in crates/core/src/capi/rules/). Values are held here in
# whole seconds and written per version: v1beta1 `node*Timeout` duration
# strings in Go's Duration.String() format (what metav1.Duration serializes,
# and what a v1.14 API server serves from its v1beta2 storage), v1beta2
# `deletion.node*TimeoutSeconds` integers.
TIMEOUTS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")
# Readiness gates of the quick-start world (the ClusterClass's control plane
# and worker class, and the user-managed MachineDeployment md-1).
GATE_CP = {"conditionType": "hardening.platform.example.com/CISBenchmarkPassed"}
GATE_MD = {"conditionType": "network.platform.example.com/CNIReady"}
GATE_MD1 = {"conditionType": "ops.example.com/ApprovedForProduction"}
# KCP ComputeDesiredMachine: the mandatory gates, then (managed etcd) the
# etcd ones, then the KCP's machineTemplate gates, first one of a
# conditionType wins.
KCP_MANDATORY_GATES = [{"conditionType": c} for c in (
    "APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy",
    "EtcdPodHealthy", "EtcdMemberHealthy")]
# The Machine defaulting webhook's nodeDeletionTimeout (v1.14
# DefaultMachineNodeDeletionTimeoutSeconds), when no parent sets one.
MACHINE_NODE_DELETION_TIMEOUT = 10
UNITS = {"h": 3600, "m": 60, "s": 1}


def go_duration(seconds):
    """Go's time.Duration.String() of whole seconds: 0s, 10s, 1m30s, 5m0s, 1h0m0s."""
    if seconds == 0:
        return "0s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def duration_seconds(text):
    """Whole seconds of a duration string with h/m/s units ("5m", "1m30s")."""
    total, number = 0, ""
    for ch in text:
        if ch.isdigit():
            number += ch
        else:
            total += int(number) * UNITS[ch]
            number = ""
    assert not number, text
    return total


def get_timeouts(version, block):
    """{field: seconds} of the node timeouts `block` sets: v1beta1 at its top
    level, v1beta2 under `deletion` (`<field>Seconds`)."""
    if version == "v1beta1":
        return {t: duration_seconds(block[t]) for t in TIMEOUTS if t in block}
    deletion = block.get("deletion", {})
    return {t: deletion[t + "Seconds"] for t in TIMEOUTS if t + "Seconds" in deletion}


def set_timeouts(version, block, values):
    """Writes the node timeouts `values` ({field: seconds}) into `block` as
    CAPI writes them at `version`."""
    for t, seconds in values.items():
        if version == "v1beta1":
            block[t] = go_duration(seconds)
        else:
            block.setdefault("deletion", {})[t + "Seconds"] = seconds


def merge_gates(*lists):
    """Readiness gates of several lists, the first of a conditionType wins."""
    out, seen = [], set()
    for gates in lists:
        for gate in gates or []:
            if gate["conditionType"] not in seen:
                seen.add(gate["conditionType"])
                out.append(copy.deepcopy(gate))
    return out


def template_spec(obj):
    return obj["spec"]["template"]["spec"]


def cp_machine_template(version, kcp):
    """The part of a KubeadmControlPlane's machineTemplate that holds the
    Machine fields: v1beta1 the machineTemplate, v1beta2 its `spec`."""
    mt = kcp["spec"]["machineTemplate"]
    return mt if version == "v1beta1" else mt["spec"]


def min_ready_block(version, obj):
    """Where a MachineDeployment / MachinePool / MachineSet keeps
    minReadySeconds: v1beta1 `spec`, v1beta2 `spec.template.spec`."""
    return obj["spec"] if version == "v1beta1" else template_spec(obj)


def without_gate(obj_spec, condition_type):
    """Drops one readiness gate (and the list when it empties)."""
    gates = [g for g in obj_spec.get("readinessGates", []) if g["conditionType"] != condition_type]
    assert len(gates) < len(obj_spec.get("readinessGates", [])), condition_type
    if gates:
        obj_spec["readinessGates"] = gates
    else:
        obj_spec.pop("readinessGates")


class QuickStart:
    """The quick-start world at one API version."""

    contract = None  # the Contract main() sets: what the policy lets reach a child

    def __init__(self, version):
        self.v = version
        self.ns = NAMESPACE
        base = f"test_data/capi/{version}"
        self.cluster = read_yaml(f"{base}/parents/cluster_capi-quickstart.yaml")
        self.clusterclass = read_yaml(f"{base}/parents/clusterclass_quick-start.yaml")
        self.kcp = read_yaml(f"{base}/parents/kubeadmcontrolplane_capi-quickstart-wqx5r.yaml")
        self.md1 = read_yaml(f"{base}/parents/machinedeployment_capi-quickstart-md-1.yaml")
        self.ms1 = read_yaml(f"{base}/parents/machineset_capi-quickstart-md-1-x7k2p.yaml")
        self.md0_created = read_object(f"{base}/machinedeployment_create_topology.json")
        self.mp0_created = read_object(f"{base}/machinepool_create_topology.json")
        self.machine_from_ms = read_object(f"{base}/machine_create_from_machineset.json")
        self.machine_from_kcp = read_object(f"{base}/machine_create_from_kcp.json")
        self.dockermachine = read_object(f"{base}/dockermachine_create_from_machineset.json")
        self.kubeadmconfig = read_object(f"{base}/kubeadmconfig_create_from_kcp.json")
        self.add_in_place_fields()

    # ------------------------------------------------------ in-place fields
    def add_in_place_fields(self):
        """The in-place fields as a CAPI v1.14 management cluster holds them
        in the parents: the ClusterClass and the Cluster's topology set them
        (v1beta1 durations served in Go format), the topology KCP holds what
        they set (computeControlPlane), the user-managed md-1 sets its own
        and its MachineSet holds them (computeDesiredMS). The topology MD and
        MP, the other MachineSets and the Machines get theirs as they are
        built."""
        v = self.v
        topo = self.cluster["spec"]["topology"]
        for entry in ([topo["controlPlane"]] + topo["workers"]["machineDeployments"]
                      + topo["workers"]["machinePools"]):
            set_timeouts(v, entry, get_timeouts(v, entry))
        cc = self.clusterclass["spec"]
        # topology sets nodeDeletionTimeout 30s (wins) and minReadySeconds 5 (wins)
        set_timeouts(v, cc["controlPlane"], {"nodeDrainTimeout": 300, "nodeDeletionTimeout": 60})
        cc["controlPlane"]["readinessGates"] = [GATE_CP]
        md_class = cc["workers"]["machineDeployments"][0]
        md_class["minReadySeconds"] = 15
        set_timeouts(v, md_class, {"nodeDrainTimeout": 600})
        md_class["readinessGates"] = [GATE_MD]
        set_timeouts(v, cc["workers"]["machinePools"][0], {"nodeDrainTimeout": 600})
        # the topology KCP: topology ?? class (the template's nodeDrainTimeout
        # of 1s gives way to the class's 5m)
        fields = self.topology_fields()
        mt = cp_machine_template(v, self.kcp)
        set_timeouts(v, mt, fields["timeouts"])
        mt["readinessGates"] = fields["readinessGates"]
        # the user-managed md-1 (its manifest sets them) and its MachineSet
        md1 = self.md1
        min_ready_block(v, md1)["minReadySeconds"] = 10
        set_timeouts(v, template_spec(md1), {"nodeDrainTimeout": 120})
        template_spec(md1)["readinessGates"] = [GATE_MD1]
        annotations = md1["metadata"]["annotations"]
        applied = json.loads(annotations["kubectl.kubernetes.io/last-applied-configuration"])
        min_ready_block(v, applied)["minReadySeconds"] = 10
        set_timeouts(v, template_spec(applied), {"nodeDrainTimeout": 120})
        template_spec(applied)["readinessGates"] = [GATE_MD1]
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = \
            json.dumps(applied, separators=(",", ":")) + "\n"
        if "cluster.x-k8s.io/conversion-data" in annotations:  # v1beta1 served from v1beta2 storage
            data = json.loads(annotations["cluster.x-k8s.io/conversion-data"])
            data["spec"]["template"]["spec"]["minReadySeconds"] = 10
            annotations["cluster.x-k8s.io/conversion-data"] = json.dumps(data, separators=(",", ":"))
        self.sync_machineset(self.ms1, md1)

    def topology_fields(self, list_name=None, name=None):
        """computeControlPlane (no list) / computeMachineDeployment /
        computeMachinePool: each timeout and minReadySeconds from the
        topology entry when it sets it, else from the class; the readiness
        gates whole from one side."""
        topo = self.cluster["spec"]["topology"]
        if list_name is None:
            entry, cls = topo["controlPlane"], self.clusterclass["spec"]["controlPlane"]
        else:
            entry = next(e for e in topo["workers"][list_name] if e["name"] == name)
            cls = next(e for e in self.clusterclass["spec"]["workers"][list_name] if e["class"] == entry["class"])
        fields = {"timeouts": merge(get_timeouts(self.v, entry), get_timeouts(self.v, cls))}
        for key in ("minReadySeconds", "readinessGates"):
            if key in entry or key in cls:
                fields[key] = copy.deepcopy(entry.get(key, cls.get(key)))
        return fields

    def sync_machineset(self, ms, md):
        """computeDesiredMS (v1.14, every MachineSet of the MD): the
        template's timeouts, readiness gates (and v1beta2 minReadySeconds),
        minReadySeconds (v1beta1: int32 omitempty, 0 never written), the
        deletion order and the machine naming from the MachineDeployment."""
        src, dst, spec = template_spec(md), template_spec(ms), ms["spec"]
        for key in TIMEOUTS + ("deletion", "readinessGates", "taints", "minReadySeconds"):
            dst.pop(key, None)
            if key in src:
                dst[key] = copy.deepcopy(src[key])
        if self.v == "v1beta1":
            min_ready = md["spec"].get("minReadySeconds", 0)
            order = md["spec"].get("strategy", {}).get("rollingUpdate", {}).get("deletePolicy", "")
            for key, value in (("minReadySeconds", min_ready), ("deletePolicy", order)):
                spec.pop(key, None)
                if value:
                    spec[key] = value
            naming = "machineNamingStrategy"
        else:
            order = md["spec"].get("deletion", {}).get("order", "")
            spec.pop("deletion", None)
            if order:
                spec["deletion"] = {"order": order}
            naming = "machineNaming"
        spec.pop(naming, None)
        if naming in md["spec"]:
            spec[naming] = copy.deepcopy(md["spec"][naming])

    # ------------------------------------------------------------ topology
    def class_worker_metadata(self, list_name, class_name):
        """The ClusterClass's metadata for a worker class: v1beta1
        `.template.metadata`, v1beta2 `.metadata` (blueprint.go)."""
        entry = next(e for e in self.clusterclass["spec"]["workers"][list_name] if e["class"] == class_name)
        return (entry.get("template", {}) if self.v == "v1beta1" else entry).get("metadata", {})

    def topology_metadata(self, list_name, name, created):
        """computeMachineDeployment / computeMachinePool: MergeMap(topology
        entry metadata, class metadata); the annotations only those the
        policy lets reach `created`'s kind (the upgrade annotations do not:
        `Contract`)."""
        entry = next(e for e in self.cluster["spec"]["topology"]["workers"][list_name] if e["name"] == name)
        cls = self.class_worker_metadata(list_name, entry["class"])
        labels = merge(entry.get("metadata", {}).get("labels"), cls.get("labels"))
        annotations = merge(entry.get("metadata", {}).get("annotations"), cls.get("annotations"))
        reaching = self.contract.annotations_reaching(
            created, [self.cluster, self.clusterclass], ("metadata", "annotations"), annotations)
        return labels, {k: v for k, v in annotations.items() if k in reaching}

    def topology_md(self, created=None, topology_name="md-0"):
        md = copy.deepcopy(created or self.md0_created)
        labels, annotations = self.topology_metadata("machineDeployments", topology_name, md)
        name = md["metadata"]["name"]
        meta = md["metadata"]
        meta["labels"] = merge(meta["labels"], labels)
        # the MachineDeployment controller's revision bookkeeping
        meta["annotations"] = merge(annotations, {"machinedeployment.clusters.x-k8s.io/revision": "1"})
        # the MD controller adds the Cluster as a (non-controller) owner
        meta["ownerReferences"] = [owner(self.cluster, controller=False)]
        template = md["spec"]["template"]["metadata"]
        # defaulting webhook: deployment-name in the selector and the template
        template["labels"] = merge(template["labels"], labels,
                                   {"cluster.x-k8s.io/deployment-name": name})
        template["annotations"] = dict(annotations)
        md["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"] = name
        fields = self.topology_fields("machineDeployments", topology_name)
        set_timeouts(self.v, template_spec(md), fields["timeouts"])
        if "minReadySeconds" in fields:
            min_ready_block(self.v, md)["minReadySeconds"] = fields["minReadySeconds"]
        if "readinessGates" in fields:
            template_spec(md)["readinessGates"] = fields["readinessGates"]
        md["status"] = copy.deepcopy(self.md1["status"])
        md["status"]["selector"] = ",".join(
            f"{k}={v}" for k, v in sorted(md["spec"]["selector"]["matchLabels"].items()))
        return served(md, self.v, generation=2)

    def topology_mp(self):
        mp = copy.deepcopy(self.mp0_created)
        labels, annotations = self.topology_metadata("machinePools", "mp-0", mp)
        meta = mp["metadata"]
        meta["labels"] = merge(meta["labels"], labels)
        meta["annotations"] = dict(annotations)
        meta["ownerReferences"] = [owner(self.cluster, controller=False)]
        template = mp["spec"]["template"]["metadata"]
        template["labels"] = merge(template["labels"], labels)
        template["annotations"] = dict(annotations)
        fields = self.topology_fields("machinePools", "mp-0")  # pools have no readiness gates
        set_timeouts(self.v, template_spec(mp), fields["timeouts"])
        if "minReadySeconds" in fields:
            min_ready_block(self.v, mp)["minReadySeconds"] = fields["minReadySeconds"]
        if self.v == "v1beta2":
            mp["status"] = {
                "phase": "Running", "replicas": 2, "readyReplicas": 2, "availableReplicas": 2,
                "upToDateReplicas": 2, "observedGeneration": 1,
                "initialization": {"infrastructureProvisioned": True, "bootstrapDataSecretCreated": True},
            }
        else:
            mp["status"] = {
                "phase": "Running", "replicas": 2, "readyReplicas": 2, "availableReplicas": 2,
                "bootstrapReady": True, "infrastructureReady": True, "observedGeneration": 1,
            }
        return served(mp, self.v)

    # -------------------------------------------------------------- workers
    def machineset(self, md, suffix, template_hash, replicas=2, max_replicas=3):
        """computeDesiredMS: labels and template labels = MD template labels +
        machine-template-hash (+ deployment-name); annotations = the MD
        annotations the policy lets reach a MachineSet (not mdutil's
        annotationsToSkip: `Contract`) + the revision annotations; template
        annotations = MD template annotations."""
        name = f"{md['metadata']['name']}-{suffix}"
        template = copy.deepcopy(md["spec"]["template"])
        template["metadata"]["labels"]["machine-template-hash"] = template_hash
        labels = dict(template["metadata"]["labels"])
        annotations = {
            "machinedeployment.clusters.x-k8s.io/desired-replicas": str(replicas),
            "machinedeployment.clusters.x-k8s.io/max-replicas": str(max_replicas),
            "machinedeployment.clusters.x-k8s.io/revision":
                md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"],
        }
        if self.v == "v1beta2":
            annotations["cluster.x-k8s.io/disable-machine-create"] = "false"
        ms = copy.deepcopy(self.ms1)
        ms["metadata"] = {
            "name": name, "namespace": self.ns, "labels": labels, "annotations": annotations,
            "ownerReferences": [owner(md)],
        }
        ms["spec"]["selector"]["matchLabels"] = dict(
            md["spec"]["selector"]["matchLabels"], **{"machine-template-hash": template_hash})
        ms["spec"]["template"] = template
        self.sync_machineset(ms, md)
        md_annotations = md["metadata"].get("annotations", {})
        reaching = self.contract.annotations_reaching(ms, [md], ("metadata", "annotations"), md_annotations)
        ms["metadata"]["annotations"] = dict(
            {k: v for k, v in md_annotations.items() if k in reaching}, **annotations)
        ms["status"]["selector"] = ",".join(
            f"{k}={v}" for k, v in sorted(ms["spec"]["selector"]["matchLabels"].items()))
        return served(ms, self.v)

    def machine(self, name, owner_obj, labels, annotations, spec, failure_domain):
        m = {
            "apiVersion": f"cluster.x-k8s.io/{self.v}",
            "kind": "Machine",
            "metadata": {
                "name": name, "namespace": self.ns, "labels": labels,
                "finalizers": ["machine.cluster.x-k8s.io"],
                "ownerReferences": [owner(owner_obj)],
            },
            "spec": spec,
        }
        if annotations:
            m["metadata"]["annotations"] = annotations
        spec["bootstrap"] = {"configRef": ref(self.v, "bootstrap.cluster.x-k8s.io", "KubeadmConfig", name)}
        spec["infrastructureRef"] = ref(self.v, "infrastructure.cluster.x-k8s.io", "DockerMachine", name)
        spec["failureDomain"] = failure_domain
        spec["providerID"] = f"docker:////{name}"
        if self.v == "v1beta2":
            m["status"] = {
                "nodeRef": {"name": name}, "phase": "Running", "observedGeneration": 2,
                "initialization": {"infrastructureProvisioned": True, "bootstrapDataSecretCreated": True},
            }
        else:
            m["status"] = {
                "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": name,
                            "uid": uid(self.v, "Node", name)},
                "phase": "Running", "bootstrapReady": True, "infrastructureReady": True,
                "observedGeneration": 2,
            }
        return served(m, self.v, generation=2)

    def ms_machine(self, ms, suffix):
        """computeDesiredMachine (MachineSet): template labels + set-name
        (+ deployment-name from the MS labels), template annotations."""
        name = f"{ms['metadata']['name']}-{suffix}"
        template = ms["spec"]["template"]
        labels = merge({"cluster.x-k8s.io/set-name": ms["metadata"]["name"],
                        "cluster.x-k8s.io/deployment-name": ms["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"]},
                       template["metadata"]["labels"])
        spec = copy.deepcopy(template["spec"])
        self.default_node_deletion_timeout(spec)
        return self.machine(name, ms, labels, dict(template["metadata"].get("annotations", {})),
                            spec, template["spec"].get("failureDomain", "fd4"))

    def kcp_machine(self, suffix, failure_domain):
        """ComputeDesiredMachine (KCP): machineTemplate metadata + the
        control-plane labels (forced over the template's) and annotations."""
        name = f"{self.kcp['metadata']['name']}-{suffix}"
        template = self.kcp["spec"]["machineTemplate"]["metadata"]
        base = self.machine_from_kcp["metadata"]
        labels = merge(base["labels"], template["labels"])
        annotations = merge(base.get("annotations"), template.get("annotations"))
        spec = copy.deepcopy(self.machine_from_kcp["spec"])
        # the KCP's timeouts and readiness gates after its mandatory ones
        mt = cp_machine_template(self.v, self.kcp)
        for key in TIMEOUTS + ("deletion", "readinessGates"):
            spec.pop(key, None)
        set_timeouts(self.v, spec, get_timeouts(self.v, mt))
        self.default_node_deletion_timeout(spec)
        spec["readinessGates"] = merge_gates(KCP_MANDATORY_GATES, mt.get("readinessGates"))
        return self.machine(name, self.kcp, labels, annotations, spec, failure_domain)

    def default_node_deletion_timeout(self, spec):
        """The Machine defaulting webhook: nodeDeletionTimeout 10s when unset."""
        if "nodeDeletionTimeout" not in get_timeouts(self.v, spec):
            set_timeouts(self.v, spec, {"nodeDeletionTimeout": MACHINE_NODE_DELETION_TIMEOUT})

    # -------------------------------------------- infrastructure, bootstrap
    def docker_machine(self, machine, cloned_from):
        """computeDesiredInfraMachine: the Machine's labels and annotations
        and the cloned-from annotations; owned by the Machine."""
        name = machine["metadata"]["name"]
        dm = copy.deepcopy(self.dockermachine)
        dm["metadata"] = {
            "name": name, "namespace": self.ns,
            "labels": dict(machine["metadata"]["labels"]),
            "annotations": merge(machine["metadata"].get("annotations"), {
                "cluster.x-k8s.io/cloned-from-groupkind": "DockerMachineTemplate.infrastructure.cluster.x-k8s.io",
                "cluster.x-k8s.io/cloned-from-name": cloned_from,
            }),
            "ownerReferences": [owner(machine)],
        }
        dm["spec"]["providerID"] = f"docker:////{name}"
        address = [{"type": "InternalIP", "address": f"172.18.0.{10 + len(name) % 200}"}]
        if self.v == "v1beta2":
            dm["status"] = {"initialization": {"provisioned": True}, "addresses": address}
        else:
            dm["status"] = {"ready": True, "addresses": address}
        return served(dm, self.v)

    def kubeadm_config(self, machine, role, cloned_from=None):
        """ComputeDesiredKubeadmConfig / computeDesiredBootstrapConfig: the
        Machine's labels and annotations; owned by the Machine. The first
        control-plane node inits, every other node joins."""
        name = machine["metadata"]["name"]
        kc = copy.deepcopy(self.kubeadmconfig)
        kc["metadata"] = {
            "name": name, "namespace": self.ns,
            "labels": dict(machine["metadata"]["labels"]),
            "ownerReferences": [owner(machine)],
        }
        annotations = dict(machine["metadata"].get("annotations", {}))
        if cloned_from:
            annotations.update({
                "cluster.x-k8s.io/cloned-from-groupkind": "KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io",
                "cluster.x-k8s.io/cloned-from-name": cloned_from,
            })
        if annotations:
            kc["metadata"]["annotations"] = annotations
        spec = kc["spec"]
        if role != "init":
            join = {"nodeRegistration": spec.pop("initConfiguration")["nodeRegistration"]}
            if role == "control-plane":
                join["controlPlane"] = {}
            else:
                spec.pop("clusterConfiguration", None)
                spec.pop("files", None)
            spec["joinConfiguration"] = join
        if self.v == "v1beta2":
            kc["status"] = {"initialization": {"dataSecretCreated": True}, "dataSecretName": name,
                            "observedGeneration": 1}
        else:
            kc["status"] = {"ready": True, "dataSecretName": name, "observedGeneration": 1}
        return served(kc, self.v)

    # ------------------------------------------------------------------ dump
    def objects(self):
        md0 = self.topology_md()
        ms0 = self.machineset(md0, "v7bqn", "1870432511-v7bqn")
        mp0 = self.topology_mp()
        kcp_machines = [self.kcp_machine(s, fd) for s, fd in
                        (("hb7xq", "fd1"), ("4mnnp", "fd2"), ("zq2cd", "fd3"))]
        ms0_machines = [self.ms_machine(ms0, s) for s in ("8wq2x", "tt4kd")]
        ms1_machines = [self.ms_machine(self.ms1, s) for s in ("6nbqt", "9ttvz")]
        cp_template = self.kcp["spec"]["machineTemplate"].get("spec", self.kcp["spec"]["machineTemplate"])
        cp_infra = cp_template["infrastructureRef"]["name"]
        md0_spec = md0["spec"]["template"]["spec"]
        md1_spec = self.md1["spec"]["template"]["spec"]
        docker_machines, kubeadm_configs = [], []
        for i, m in enumerate(kcp_machines):
            docker_machines.append(self.docker_machine(m, cp_infra))
            kubeadm_configs.append(self.kubeadm_config(m, "init" if i == 0 else "control-plane"))
        for machines, spec in ((ms0_machines, md0_spec), (ms1_machines, md1_spec)):
            for m in machines:
                docker_machines.append(self.docker_machine(m, spec["infrastructureRef"]["name"]))
                kubeadm_configs.append(self.kubeadm_config(m, "worker", spec["bootstrap"]["configRef"]["name"]))
        # in the order kubectl prints the resource types it was asked for
        return ([self.cluster, self.clusterclass, md0, self.md1, ms0, self.ms1]
                + kcp_machines + ms0_machines + ms1_machines
                + [mp0, self.kcp] + docker_machines + kubeadm_configs)


def plant_drift(objects, version):
    """The planted drift of quickstart_<version>_drift.yaml (see the top)."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    # metadata
    ms = by_name[("MachineSet", "capi-quickstart-md-1-x7k2p")]
    del ms["metadata"]["labels"]["nodepool"]
    machine = by_name[("Machine", "capi-quickstart-md-1-x7k2p-6nbqt")]
    machine["metadata"]["labels"]["nodepool"] = "pool0"
    md = by_name[("MachineDeployment", "capi-quickstart-md-0-p6hg9")]
    del md["spec"]["template"]["metadata"]["annotations"]["ClusterClass.machineDeployment.annotation"]
    # in-place fields
    ms0 = by_name[("MachineSet", "capi-quickstart-md-0-p6hg9-v7bqn")]
    ms0_machines = [by_name[("Machine", f"capi-quickstart-md-0-p6hg9-v7bqn-{s}")] for s in ("8wq2x", "tt4kd")]
    assert min_ready_block(version, md)["minReadySeconds"] == 5
    for obj in (md, ms0):
        min_ready_block(version, obj)["minReadySeconds"] = 30
    if version == "v1beta2":
        for m in ms0_machines:
            m["spec"]["minReadySeconds"] = 30
    assert get_timeouts(version, template_spec(ms0))["nodeDrainTimeout"] == 600
    set_timeouts(version, template_spec(ms0), {"nodeDrainTimeout": 300})
    for m in ms0_machines:
        set_timeouts(version, m["spec"], {"nodeDrainTimeout": 300})
    without_gate(by_name[("Machine", "capi-quickstart-md-1-x7k2p-9ttvz")]["spec"], GATE_MD1["conditionType"])
    # not drift: a v1beta1 duration equal by value to the one CAPI writes
    if version == "v1beta1":
        kcp = by_name[("KubeadmControlPlane", "capi-quickstart-wqx5r")]["spec"]["machineTemplate"]
        tt4kd = ms0_machines[1]["spec"]
        for spec in (kcp, tt4kd):
            assert spec["nodeVolumeDetachTimeout"] == "5m0s"
            spec["nodeVolumeDetachTimeout"] = "5m"


def kube_list(objects):
    """A `kind: List`, as `kubectl get -o yaml` prints several resources."""
    return {"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}}


HEADER = """\
# Generated by test_data/dumps/gen.py ({what}); do not edit.
# `kubectl get clusters,clusterclasses,machinedeployments,machinesets,machines,machinepools,
#  kubeadmcontrolplanes,dockermachines,kubeadmconfigs -A -o yaml` of a quick-start management cluster.
"""


def dump_yaml(documents):
    return yaml.safe_dump_all(documents, sort_keys=True, allow_unicode=True, width=100,
                              default_flow_style=False)


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(text)


# ------------------------------------------------------------------- XRs
XR_DIR = "test_data/xr"


def xr_objects():
    """One XR per provider profile, from test_data/xr (settings:
    test_data/xr/settings_propagating.json):
    - aws: XNetwork payments-network-7xk2p (examples/xnetwork_aws.json) as
      the policy left it: its three opted-in labels are tags;
    - hetzner: XDatabase team-payments/payments-db, converged
      (xdatabase_converged_hetzner.json): tags, a user tag, a recorded skip;
    - openstack: XDatabase team-orders/orders-db (examples) created before
      the policy: no tags yet;
    - generic: XDatabase team-data/analytics-db (xdatabase_ibm_generic.json,
      renamed: provider ibm, which no profile lists) with a stale tag for a
      label no longer opted in."""
    aws = read_json(f"{XR_DIR}/examples/xnetwork_aws.json")
    aws["spec"]["cloudTags"] = {
        "plexsphere:acme:checkout/owner": "team-payments",
        "plexsphere:platform/env": "prod",
        "plexsphere:platform/team": "payments",
    }
    hetzner = read_object(f"{XR_DIR}/xdatabase_converged_hetzner.json")
    openstack = read_json(f"{XR_DIR}/examples/xdatabase_openstack.json")
    generic = read_object(f"{XR_DIR}/xdatabase_ibm_generic.json")
    generic["metadata"].update(name="analytics-db", namespace="team-data")
    generic["metadata"]["uid"] = uid("v1alpha1", "XDatabase", "analytics-db")
    generic["spec"]["cloudTags"] = {"plexsphere:platform/cost-center": "4711"}
    return [aws, hetzner, openstack, generic]


def read_json(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        document = json.load(f)
    return document.get("object", document)


# ------------------------------------------------------------------ scale
# test_data/dumps/scale/: a management cluster of 100 workload clusters,
# 10,000 objects, all at v1beta2 (the version `kubectl get` prints on CAPI
# v1.14: a real dump holds every kind at one version). Timed by
# `make audit-bench` (BENCHMARKS.md, "Audit at scale"); its planted drift is
# counted in e2e-tests/audit.bats.
#
#   25 namespaces team-01 … team-25, each with its ClusterClass quick-start
#   (the quick-start fixture's) shared by 4 Clusters <ns>-<env>
#   (dev, prod-1, prod-2, staging), each built as the quick-start Cluster,
#   renamed, with three topology MachineDeployments:
#     Cluster                                   (topology: md-0, md-1, md-2, mp-0)
#     ├── KubeadmControlPlane (3 replicas)      3 Machines
#     ├── MachineDeployment md-0 (10 or 9)      1 MachineSet, 10 or 9 Machines
#     ├── MachineDeployment md-1 (9)            1 MachineSet, 9 Machines
#     ├── MachineDeployment md-2 (9)            1 MachineSet, 9 Machines
#     └── MachinePool mp-0
#   and a DockerMachine and a KubeadmConfig per Machine. md-0 has 10
#   replicas in each namespace's first Cluster, 9 elsewhere: 25 x (1
#   ClusterClass) + 100 x (1 + 1 + 3x3 + 3x2 + 1) + 3 x 2,725 worker Machines
#   = 25 + 1,800 + 8,175 = 10,000 objects. Names, uids, resourceVersions
#   and DockerMachine addresses are distinct, creation times distinct per
#   Cluster; name suffixes are drawn deterministically (sha256) from the
#   alphabet of apimachinery's rand.String.
#
# Every object carries the in-place fields as the quick-start dump does
# (see the top), the three MachineDeployments those of topology md-0.
#
# Planted drift: one object in each Cluster (100 objects, 1%), by the
# Cluster's index i (0-99, in namespace then name order), kind i % 10 in
# MachineDeployment md-(i % 3) where that matters; five metadata drifts
# and five field drifts, 10 Clusters each:
#   0: the MachineSet lost its label `nodepool`;
#   1: the MachineSet's first Machine has `nodepool` corrected by hand;
#   2: the MachineDeployment lacks the ClusterClass annotation
#      `ClusterClass.machineDeployment.annotation` on spec.template.metadata;
#   3: the control plane's first Machine lacks the annotation
#      `ClusterClass.controlPlane.annotation` (KCP machineTemplate);
#   4: the MachinePool lost the topology label `Cluster.topology.machinePool.label`;
#   5: the MachineSet's nodeDrainTimeoutSeconds is 300, its MachineDeployment
#      says 600 (edited by hand; its Machines hold 300 too);
#   6: the MachineSet's first Machine lacks the readiness gate
#      network.platform.example.com/CNIReady its MachineSet sets;
#   7: the MachineDeployment's minReadySeconds is 30, the topology says 5
#      (edited by hand; its MachineSet and Machines hold 30 too);
#   8: the control plane's first Machine has nodeDeletionTimeoutSeconds 10
#      (the Machine webhook's default), its KubeadmControlPlane says 30;
#   9: the KubeadmControlPlane lacks the ClusterClass's readiness gate
#      hardening.platform.example.com/CISBenchmarkPassed (a ClusterClass
#      change not rolled out yet: its Machines lack it too, and comply).
# --------------------------------------------- cloud tags on infrastructure
# capi_infra_<clean|drift>.yaml (settings: capi_infra.settings.json, with
# `cloudTags.capiInfrastructure: true`): what `kubectl get clusters,
# machinedeployments,machinesets,machines,awsclusters,awsmachines,
# azureclusters,openstackmachines -A -o yaml` prints for three user-managed
# workload clusters (no ClusterClass), their infrastructure objects carrying
# the tags the policy writes (docs/infrastructure-tags.md):
#
#   Cluster aws-prod          environment=prod cost-center=cc-4711 acme.io/team=payments
#   ├── AWSCluster aws-prod                       the Cluster's labels as tags
#   └── MachineDeployment aws-prod-md-0           nodepool=md-0 cost-center=cc-pool-a
#       └── MachineSet aws-prod-md-0-7xk2p
#           └── Machine ×2 → AWSMachine           their own labels as tags
#   Cluster azure-dev         environment=dev cost-center=cc-0815
#   └── AzureCluster azure-dev                    beside a user tag
#   Cluster openstack-lab     environment=lab cost-center=cc-0042
#   └── MachineDeployment … → Machine → OpenStackMachine
#                                                 the Cluster's and its own labels
#
# The objects are built as the controllers build them (the Cluster
# controller's controller reference on its InfraCluster, the MachineDeployment
# and MachineSet controllers' labels, the Machine controller taking its
# InfraMachine over), the tags written by hand. Planted drift
# (capi_infra_drift.yaml):
#   - Cluster aws-prod's acme.io/team is now payments-core: the AWSCluster's
#     tag still says payments;
#   - AWSMachine aws-prod-md-0-7xk2p-b6j3q lost its tag plexsphere:cost-center;
#   - AzureCluster azure-dev carries plexsphere:project, which no opted-in
#     label produces;
#   - OpenStackMachine openstack-lab-md-0-q8m4z-f5d9c lacks
#     plexsphere:environment: not drift, as CAPO's serverMetadata is immutable
#     and the policy stamps it on CREATE only (the audit evaluates UPDATEs).
INFRA = "infrastructure.cluster.x-k8s.io"
INFRA_CREATED = "2026-03-02T10:15:00Z"


INFRA_HEADER = """\
# Generated by test_data/dumps/gen.py ({what}); do not edit. Settings: capi_infra.settings.json.
# `kubectl get clusters,machinedeployments,machinesets,machines,awsclusters,awsmachines,azureclusters,
#  openstackmachines -A -o yaml` of a management cluster with AWS, Azure and OpenStack workload clusters.
"""


def infra_served(obj, generation=1):
    return served(obj, "infra", generation, INFRA_CREATED)


def infra_cluster_pair(name, labels, infra_kind, infra_version, infra_spec, tags_field, tags):
    """A user-managed Cluster and its InfraCluster, which the Cluster
    controller gives a controller reference to the Cluster."""
    cluster = infra_served({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels,
                     "finalizers": ["cluster.cluster.x-k8s.io"]},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane",
                                "name": f"{name}-control-plane"},
            "infrastructureRef": {"apiGroup": INFRA, "kind": infra_kind, "name": name},
        },
    }, generation=2)
    spec = dict(infra_spec)
    spec[tags_field] = tags
    infra = infra_served({
        "apiVersion": f"{INFRA}/{infra_version}", "kind": infra_kind,
        "metadata": {"name": name, "namespace": NAMESPACE,
                     "labels": {"cluster.x-k8s.io/cluster-name": name},
                     "ownerReferences": [owner(cluster)]},
        "spec": spec,
    })
    return cluster, infra


def infra_pool(cluster, md_suffix, ms_suffix, template_hash, pool_labels, template_kind, template_name,
               machines):
    """A user-managed MachineDeployment (owned by its Cluster), its
    MachineSet and Machines; `machines` is [(suffix, infra builder)], each
    builder given the Machine's name, labels and annotations."""
    name = cluster["metadata"]["name"]
    md_name = f"{name}-{md_suffix}"
    ms_name = f"{md_name}-{ms_suffix}"
    bootstrap = {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate",
                               "name": md_name}}
    template_spec_ = {"clusterName": name, "version": "v1.33.1", "bootstrap": bootstrap,
                      "infrastructureRef": {"apiGroup": INFRA, "kind": template_kind, "name": template_name}}
    selector = {"cluster.x-k8s.io/cluster-name": name, "cluster.x-k8s.io/deployment-name": md_name}
    md_template_labels = dict(selector, **pool_labels)
    md = infra_served({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "metadata": {"name": md_name, "namespace": NAMESPACE,
                     "labels": {"cluster.x-k8s.io/cluster-name": name},
                     "annotations": {"machinedeployment.clusters.x-k8s.io/revision": "1"},
                     "ownerReferences": [owner(cluster, controller=False)]},
        "spec": {"clusterName": name, "replicas": len(machines), "selector": {"matchLabels": selector},
                 "template": {"metadata": {"labels": md_template_labels}, "spec": template_spec_}},
    })
    ms_labels = dict(md_template_labels, **{"machine-template-hash": template_hash})
    ms = infra_served({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
        "metadata": {"name": ms_name, "namespace": NAMESPACE, "labels": dict(ms_labels),
                     "annotations": {"machinedeployment.clusters.x-k8s.io/desired-replicas": str(len(machines)),
                                     "machinedeployment.clusters.x-k8s.io/max-replicas": str(len(machines) + 1),
                                     "machinedeployment.clusters.x-k8s.io/revision": "1"},
                     "ownerReferences": [owner(md)]},
        "spec": {"clusterName": name, "replicas": len(machines),
                 "selector": {"matchLabels": dict(selector, **{"machine-template-hash": template_hash})},
                 "template": {"metadata": {"labels": dict(ms_labels)}, "spec": copy.deepcopy(template_spec_)}},
    })
    out_machines, out_infra = [], []
    for suffix, build in machines:
        m_name = f"{ms_name}-{suffix}"
        labels = dict(ms_labels, **{"cluster.x-k8s.io/set-name": ms_name})
        machine = infra_served({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": m_name, "namespace": NAMESPACE, "labels": labels,
                         "finalizers": ["machine.cluster.x-k8s.io"], "ownerReferences": [owner(ms)]},
            "spec": dict(copy.deepcopy(template_spec_),
                         bootstrap={"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig",
                                                  "name": m_name}},
                         infrastructureRef={"apiGroup": INFRA, "kind": template_kind.removesuffix("Template"),
                                            "name": m_name}),
        }, generation=2)
        annotations = {"cluster.x-k8s.io/cloned-from-groupkind": f"{template_kind}.{INFRA}",
                       "cluster.x-k8s.io/cloned-from-name": template_name}
        infra = build(m_name, dict(labels), annotations)
        infra["metadata"]["ownerReferences"] = [owner(machine)]
        out_machines.append(machine)
        out_infra.append(infra_served(infra))
    return [md], [ms], out_machines, out_infra


def aws_machine(name, labels, annotations, tags):
    return {"apiVersion": f"{INFRA}/v1beta2", "kind": "AWSMachine",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "annotations": annotations},
            "spec": {"providerID": f"aws:///eu-central-1a/i-0{hashlib.sha1(name.encode()).hexdigest()[:16]}",
                     "instanceType": "m6i.xlarge", "ami": {"id": "ami-0a1b2c3d4e5f60718"},
                     "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
                     "sshKeyName": "platform-admin", "rootVolume": {"size": 80, "type": "gp3"},
                     "additionalTags": tags}}


def openstack_machine(name, labels, annotations, metadata):
    return {"apiVersion": f"{INFRA}/v1beta1", "kind": "OpenStackMachine",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "annotations": annotations},
            "spec": {"providerID": "openstack:///0b5b1f2e-6a5c-4c1e-9f4e-5d9b2a7c3e11",
                     "flavor": "g1.xlarge.gpu", "image": {"filter": {"name": "ubuntu-2404-kube-v1.33.1"}},
                     "sshKeyName": "platform-admin", "serverMetadata": metadata}}


def infra_objects():
    """The clean capi_infra dump (see above), in kubectl's order."""
    aws, awscluster = infra_cluster_pair(
        "aws-prod", {"environment": "prod", "cost-center": "cc-4711", "acme.io/team": "payments"},
        "AWSCluster", "v1beta2",
        {"region": "eu-central-1", "sshKeyName": "platform-admin",
         "controlPlaneLoadBalancer": {"loadBalancerType": "nlb", "scheme": "internet-facing"},
         "network": {"vpc": {"availabilityZoneUsageLimit": 3, "availabilityZoneSelection": "Ordered"}}},
        "additionalTags",
        {"owner-email": "sre@acme.example", "plexsphere:environment": "prod",
         "plexsphere:cost-center": "cc-4711", "plexsphere:acme.io/team": "payments"})
    azure, azurecluster = infra_cluster_pair(
        "azure-dev", {"environment": "dev", "cost-center": "cc-0815"}, "AzureCluster", "v1beta1",
        {"location": "westeurope", "resourceGroup": "azure-dev",
         "subscriptionID": "00000000-1111-2222-3333-444444444444",
         "identityRef": {"apiVersion": f"{INFRA}/v1beta1", "kind": "AzureClusterIdentity",
                         "name": "cluster-identity"},
         "networkSpec": {"vnet": {"name": "azure-dev-vnet"}}},
        "additionalTags",
        {"CostOwner": "platform-team", "plexsphere:environment": "dev", "plexsphere:cost-center": "cc-0815"})
    openstack = infra_served({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "openstack-lab", "namespace": NAMESPACE,
                     "labels": {"environment": "lab", "cost-center": "cc-0042"},
                     "finalizers": ["cluster.cluster.x-k8s.io"]},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                 "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane",
                                     "name": "openstack-lab-control-plane"},
                 "infrastructureRef": {"apiGroup": INFRA, "kind": "OpenStackCluster", "name": "openstack-lab"}},
    }, generation=2)
    aws_tags = {"plexsphere:cost-center": "cc-pool-a"}
    aws_pool = infra_pool(
        aws, "md-0", "7xk2p", "1734652903-7xk2p", {"nodepool": "md-0", "cost-center": "cc-pool-a"},
        "AWSMachineTemplate", "aws-prod-md-0-6c4vd",
        [(s, lambda n, l, a: aws_machine(n, l, a, dict(aws_tags))) for s in ("h2k8d", "b6j3q")])
    os_pool = infra_pool(
        openstack, "md-0", "q8m4z", "2290617412-q8m4z", {"nodepool": "md-0"},
        "OpenStackMachineTemplate", "openstack-lab-md-0-k7t2m",
        [("f5d9c", lambda n, l, a: openstack_machine(n, l, a, [
            {"key": "role", "value": "gpu-worker"},
            {"key": "plexsphere:cost-center", "value": "cc-0042"},
            {"key": "plexsphere:environment", "value": "lab"}]))])
    parts = [sum((p[i] for p in (aws_pool, os_pool)), []) for i in range(4)]
    return ([aws, azure, openstack] + parts[0] + parts[1] + parts[2]
            + [awscluster] + [o for o in parts[3] if o["kind"] == "AWSMachine"]
            + [azurecluster] + [o for o in parts[3] if o["kind"] == "OpenStackMachine"])


def plant_infra_drift(objects):
    """The planted drift of capi_infra_drift.yaml (see above)."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    by_name[("Cluster", "aws-prod")]["metadata"]["labels"]["acme.io/team"] = "payments-core"
    del by_name[("AWSMachine", "aws-prod-md-0-7xk2p-b6j3q")]["spec"]["additionalTags"]["plexsphere:cost-center"]
    by_name[("AzureCluster", "azure-dev")]["spec"]["additionalTags"]["plexsphere:project"] = "apollo"
    metadata = by_name[("OpenStackMachine", "openstack-lab-md-0-q8m4z-f5d9c")]["spec"]["serverMetadata"]
    metadata[:] = [e for e in metadata if e["key"] != "plexsphere:environment"]


SCALE_DIR = "scale"
SCALE_FILE = "capi_v1beta2_100_clusters.json"
SCALE_NAMESPACES = 25
SCALE_ENVS = ("dev", "prod-1", "prod-2", "staging")
SCALE_MDS = 3
SCALE_WORKERS = 9
SCALE_DRIFT_KINDS = 10
# The random suffixes of the quick-start fixtures' names, redrawn per Cluster.
FIXTURE_TOKENS = ("wqx5r", "9tq7m", "2x8vd", "p6hg9", "ljqw8", "s4xkq", "x7b2k", "q9z4t", "h5n8v")
RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery util/rand
# `kubectl get a,b,c -A` prints kind by kind in the order asked, each sorted by namespace and name.
KUBECTL_ORDER = ("Cluster", "ClusterClass", "MachineDeployment", "MachineSet", "Machine", "MachinePool",
                 "KubeadmControlPlane", "DockerMachine", "KubeadmConfig")


def rand5(seed):
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(RAND_ALPHABET[b % len(RAND_ALPHABET)] for b in digest[:5])


def template_hash(seed):
    return str(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:4], "big"))


class ScaleCluster(QuickStart):
    """One workload Cluster of the scale dump: the v1beta2 quick-start
    fixtures renamed to `name` in namespace `ns`, three topology
    MachineDeployments, the children built by the QuickStart methods."""

    def __init__(self, base, ns, name, index, md0_replicas):
        self.v, self.ns, self.name, self.index = base.v, ns, name, index
        self.tokens = {t: rand5(f"{ns}/{name}/{t}") for t in FIXTURE_TOKENS}
        # the namespace's copy (scale_objects writes one per namespace)
        self.clusterclass = dict(base.clusterclass, metadata=dict(base.clusterclass["metadata"], namespace=ns))
        self.cluster = self.rename(base.cluster)
        self.kcp = self.rename(base.kcp)
        self.md1 = self.rename(base.md1)  # only its status is read
        self.ms1 = self.rename(base.ms1)  # only its spec and status are read
        self.md0_created = self.rename(base.md0_created)
        self.mp0_created = self.rename(base.mp0_created)
        self.machine_from_ms = base.machine_from_ms
        self.machine_from_kcp = self.rename(base.machine_from_kcp)
        self.dockermachine = base.dockermachine
        self.kubeadmconfig = base.kubeadmconfig
        self.replicas = [md0_replicas] + [SCALE_WORKERS] * (SCALE_MDS - 1)
        self.cluster["spec"]["controlPlaneEndpoint"]["host"] = f"172.18.{index // 200}.{index % 200 + 2}"
        # the topology: md-0 … md-2 from the fixture's md-0, each with its
        # own nodepool label, replicas and failure domain
        workers = self.cluster["spec"]["topology"]["workers"]
        md0 = workers["machineDeployments"][0]
        workers["machineDeployments"] = []
        for i, replicas in enumerate(self.replicas):
            entry = copy.deepcopy(md0)
            entry.update(name=f"md-{i}", replicas=replicas, failureDomain=f"fd{4 + i}")
            entry["metadata"]["labels"]["nodepool"] = f"md-{i}"
            workers["machineDeployments"].append(entry)

    def rename(self, obj, extra=()):
        text = json.dumps(obj).replace("capi-quickstart", self.name)
        for old, new in extra:
            text = text.replace(old, new)
        for old, new in self.tokens.items():
            text = text.replace(f"-{old}", f"-{new}")
        out = json.loads(text)
        out["metadata"]["namespace"] = self.ns
        out["metadata"]["uid"] = "redrawn-by-scale_objects"
        return out

    def docker_machine(self, machine, cloned_from):
        dm = super().docker_machine(machine, cloned_from)
        self.address += 1
        dm["status"]["addresses"][0]["address"] = f"10.{self.index}.{self.address // 250}.{self.address % 250 + 2}"
        return dm

    def objects(self):
        self.address = 0
        seed = f"{self.ns}/{self.name}"
        kcp_machines = [self.kcp_machine(rand5(f"{seed}/cp/{i}"), f"fd{i + 1}") for i in range(3)]
        mds, mss, workers, worker_specs = [], [], [], []
        for i, replicas in enumerate(self.replicas):
            token = rand5(f"{seed}/md-{i}")
            created = self.rename(self.md0_created, extra=[("md-0", f"md-{i}"),
                                                           (self.tokens["p6hg9"], token)])
            created["spec"]["replicas"] = replicas
            created["spec"]["template"]["spec"]["failureDomain"] = f"fd{4 + i}"
            md = self.topology_md(created, f"md-{i}")
            for key in ("replicas", "readyReplicas", "availableReplicas", "upToDateReplicas"):
                md["status"][key] = replicas
            suffix = rand5(f"{seed}/md-{i}/ms")
            ms = self.machineset(md, suffix, f"{template_hash(seed + f'/md-{i}')}-{suffix}",
                                 replicas, replicas + math.ceil(replicas * 20 / 100))
            ms["spec"]["replicas"] = replicas
            for key in ("replicas", "readyReplicas", "availableReplicas", "upToDateReplicas"):
                ms["status"][key] = replicas
            mds.append(md)
            mss.append(ms)
            for j in range(replicas):
                workers.append(self.ms_machine(ms, rand5(f"{seed}/md-{i}/m/{j}")))
                worker_specs.append(md["spec"]["template"]["spec"])
        mp = self.topology_mp()
        cp_infra = self.kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]["name"]
        docker_machines, kubeadm_configs = [], []
        for i, m in enumerate(kcp_machines):
            docker_machines.append(self.docker_machine(m, cp_infra))
            kubeadm_configs.append(self.kubeadm_config(m, "init" if i == 0 else "control-plane"))
        for m, spec in zip(workers, worker_specs):
            docker_machines.append(self.docker_machine(m, spec["infrastructureRef"]["name"]))
            kubeadm_configs.append(self.kubeadm_config(m, "worker", spec["bootstrap"]["configRef"]["name"]))
        self.parts = {"kcp_machines": kcp_machines, "mds": mds, "mss": mss, "workers": workers, "mp": mp}
        return ([self.cluster, self.kcp, mp] + kcp_machines + mds + mss + workers
                + docker_machines + kubeadm_configs)

    def plant_drift(self):
        """One deviating object, by the Cluster's index (see "scale" above)."""
        i, p = self.index, self.parts
        md = i % SCALE_MDS
        kind = i % SCALE_DRIFT_KINDS
        ms_name = p["mss"][md]["metadata"]["name"]
        ms_machines = [m for m in p["workers"] if m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] == ms_name]
        if kind == 0:
            del p["mss"][md]["metadata"]["labels"]["nodepool"]
        elif kind == 1:
            ms_machines[0]["metadata"]["labels"]["nodepool"] = "pool-hand-edited"
        elif kind == 2:
            del p["mds"][md]["spec"]["template"]["metadata"]["annotations"]["ClusterClass.machineDeployment.annotation"]
        elif kind == 3:
            del p["kcp_machines"][0]["metadata"]["annotations"]["ClusterClass.controlPlane.annotation"]
        elif kind == 4:
            del p["mp"]["metadata"]["labels"]["Cluster.topology.machinePool.label"]
        elif kind == 5:
            # edited by hand on the MachineSet, which passed it on to its Machines
            p["mss"][md]["spec"]["template"]["spec"]["deletion"]["nodeDrainTimeoutSeconds"] = 300
            for m in ms_machines:
                m["spec"]["deletion"]["nodeDrainTimeoutSeconds"] = 300
        elif kind == 6:
            without_gate(ms_machines[0]["spec"], GATE_MD["conditionType"])
        elif kind == 7:
            # edited by hand on the MachineDeployment, passed on to its MachineSet and Machines
            for obj in [p["mds"][md], p["mss"][md]]:
                obj["spec"]["template"]["spec"]["minReadySeconds"] = 30
            for m in ms_machines:
                m["spec"]["minReadySeconds"] = 30
        elif kind == 8:
            p["kcp_machines"][0]["spec"]["deletion"]["nodeDeletionTimeoutSeconds"] = MACHINE_NODE_DELETION_TIMEOUT
        else:
            # a ClusterClass gate not rolled out yet: neither on the KCP nor on its Machines
            without_gate(self.kcp["spec"]["machineTemplate"]["spec"], GATE_CP["conditionType"])
            for m in p["kcp_machines"]:
                without_gate(m["spec"], GATE_CP["conditionType"])


def scale_objects():
    base = QuickStart("v1beta2")
    objects = []
    index = 0
    for n in range(SCALE_NAMESPACES):
        ns = f"team-{n + 1:02d}"
        cc = copy.deepcopy(base.clusterclass)
        cc["metadata"]["namespace"] = ns
        cc["metadata"].pop("uid", None)
        objects.append(cc)
        for e, env in enumerate(SCALE_ENVS):
            cluster = ScaleCluster(base, ns, f"{ns}-{env}", index, SCALE_WORKERS + (e == 0))
            built = cluster.objects()
            cluster.plant_drift()
            minute = 17 * index
            created = f"2025-06-{2 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"
            for o in built:
                o["metadata"]["creationTimestamp"] = created
            objects += built
            index += 1
    objects.sort(key=lambda o: (KUBECTL_ORDER.index(o["kind"]), o["metadata"]["namespace"], o["metadata"]["name"]))
    # uids from namespace/name, owner references to them, one resourceVersion each
    uids = {}
    for o in objects:
        meta = o["metadata"]
        meta["uid"] = str(uuid.uuid5(UID_NAMESPACE, f"scale/{o['kind']}/{meta['namespace']}/{meta['name']}"))
        uids[(meta["namespace"], o["kind"], meta["name"])] = meta["uid"]
    for rv, o in enumerate(objects):
        meta = o["metadata"]
        meta["resourceVersion"] = str(1200000 + 37 * rv)
        for ref_ in meta.get("ownerReferences", []):
            ref_["uid"] = uids[(meta["namespace"], ref_["kind"], ref_["name"])]
    return objects


def compact_list(objects):
    """A `kind: List` as compact JSON, one item per line: what `kubectl get
    -o json` prints, without the indentation (a third of the size)."""
    items = ",\n".join(json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for o in objects)
    return '{"apiVersion":"v1","items":[\n' + items + '\n],"kind":"List","metadata":{"resourceVersion":""}}\n'


def main():
    QuickStart.contract = Contract()
    for version in ("v1beta1", "v1beta2"):
        objects = QuickStart(version).objects()
        write(f"quickstart_{version}_clean.yaml",
              HEADER.format(what=f"{version}, clean") + dump_yaml([kube_list(objects)]))
        drifted = copy.deepcopy(objects)
        plant_drift(drifted, version)
        write(f"quickstart_{version}_drift.yaml",
              HEADER.format(what=f"{version}, planted drift: see gen.py") + dump_yaml([kube_list(drifted)]))
    objects = infra_objects()
    write("capi_infra_clean.yaml", INFRA_HEADER.format(what="clean") + dump_yaml([kube_list(objects)]))
    plant_infra_drift(objects)
    write("capi_infra_drift.yaml",
          INFRA_HEADER.format(what="planted drift: see gen.py") + dump_yaml([kube_list(objects)]))
    write("xr_providers.yaml",
          "# Generated by test_data/dumps/gen.py; do not edit. One Crossplane XR per provider profile,\n"
          "# as several YAML documents. Settings: test_data/xr/settings_propagating.json.\n"
          + dump_yaml(xr_objects()))
    os.makedirs(os.path.join(HERE, SCALE_DIR), exist_ok=True)
    write(os.path.join(SCALE_DIR, SCALE_FILE), compact_list(scale_objects()))


if __name__ == "__main__":
    main()
