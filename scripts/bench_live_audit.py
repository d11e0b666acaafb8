#!/usr/bin/env python3
"""The live audit's cost at a real control plane's size, against the test bed (`make bench-live-audit`,
scripts/bench-live-audit.sh runs it).

Usage: scripts/bench_live_audit.py run      (the test bed up, KUBECONFIG and PATH set: the shell script does it)
       scripts/bench_live_audit.py cleanup  (deletes what `run` created, on a test bed that stays up)

In the namespace `bench-live-audit` of the running test bed it creates, per step of COUNTS (cumulative, default
10,000 then 50,000 then 100,000 objects), the mix a management cluster holds, every object stored as the
policies' webhooks make it:
-  1 % paused Clusters (`spec.paused: true`: CAPI's controllers leave everything below them alone) and 1 %
   AWSClusters tied to them; 4 % MachineDeployments and 4 % MachineSets (one each, four to a Cluster);
   20 % Machines (five to a MachineSet) and 20 % AWSMachines, each owned by its Machine;
-  2 % v2 XRs (Network, network.example.org) and 40 % Crossplane managed resources they compose, twenty to an
   XR (namespaced AWS VPCs and SecurityGroups, alternately); 8 % XRs the xr-cloud-tags policy acts on
   (XDatabase, platform.example.org, AWS and GCP alike): 10 % XRs in all.
The Clusters and the Networks are the parents no policy's rules list: the runner reads each with one masked
GET. The objects are created by direct API calls (16 connections at once, the test bed's admin certificate),
through the admission webhooks; the time each step's creation took is measured and printed. Each step then
waits until the controllers are done with it (CAPI's manager patches every new Machine and MachineSet once,
paused Cluster or not): no write in the namespace for 5 s in the API server's audit log.

After each step it runs `policy-runner audit --cluster` on the three policies the test bed deploys
(capi-metadata-propagation, xr-cloud-tags, managed-resource-tags), unpaced (--qps 1000 --burst 1000) and at
the default pace (--qps 5 --burst 10), and records the wall time, the run's own time from its first request to
its report (its summary's `seconds`), the requests the runner counts by verb (its JSON `requests`), the same
from the API server's `apiserver_request_total` (its /metrics, before and after; the policies' groups, the
XRs', Kubewarden's and the webhook configurations'), and the runner's peak memory (getrusage RUSAGE_CHILDREN of
a wrapper process around it alone).

Then `--fix` of FIX_OBJECTS (default 10,000) deviating objects at --qps FIX_QPS (default 100): half Machines
under a new MachineSet, half XDatabases on AWS, created with the three webhooks deleted and then registered
again; the time from its line `fix: writing N objects` to its exit (the writes) against FIX_OBJECTS / FIX_QPS
seconds; its writes counted in the API server's audit log too.

Checked, and the table is not written when one fails (each failure is named on stderr):
- requests: every run's LISTs are the API server's and the pages of each kind listed (ceil(objects / 500), an
  empty kind one page); its GETs are the API server's; its discovery requests are 2 (aggregated discovery);
  with the test bed the bench's own, its requests are exactly the pages + discovery + one GET per parent not
  listed (the Clusters and Networks) + the 3 policies and their 3 webhook configurations; the API server
  served no GET of any kind the policies list (no GET per object), in any run, the fix's included;
- memory: the runner's peak RSS at the largest size is at most 256 MiB, and at most 1.5 times its peak at
  the smallest size;
- time: the unpaced audit at the largest size takes at most 120 s from its first request to its report;
- the fix: exit 0, every deviating object `fixed`, exactly one PATCH per object (the runner's count, the API
  server's, the audit log's, each answered 200), no GET of a fixed object, no more GETs than an audit makes,
  its writes within 1.15 × FIX_OBJECTS / FIX_QPS seconds; an audit afterwards finds nothing deviating.
The bounds on memory and time are meant at the default sizes (100,000 objects); smaller COUNTS check them at
the largest size given.

Prints a markdown table on stdout; the shell script writes it into BENCHMARKS.md (section live-audit) when
every parameter is the default, every check holds and the tree is clean.
"""

import concurrent.futures
import http.client
import json
import math
import os
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = os.path.join(ROOT, "target", "cluster")
RUNNER = os.environ.get("RUNNER") or os.path.join(ROOT, "target", "host", "policy-runner")
NS = "bench-live-audit"
POLICIES = ["capi-metadata-propagation", "xr-cloud-tags", "managed-resource-tags"]
CONFIGS = ["clusterwide-" + p for p in POLICIES]
COUNTS = [int(n) for n in os.environ.get("COUNTS", "10000 50000 100000").split()]
FIX_OBJECTS = int(os.environ.get("FIX_OBJECTS", "10000"))
FIX_QPS = float(os.environ.get("FIX_QPS", "100"))
FRESH = os.environ.get("BENCH_FRESH_TESTBED") == "1"
PAGE = 500
# Aggregated discovery: /api and /apis, each one request.
DISCOVERY = 2
# The bounds (the issue "The live audit at a real control plane's size").
RSS_MAX_MB, RSS_GROWTH, UNPACED_MAX_S, FIX_SLACK = 256, 1.5, 120, 1.15
CONNECTIONS = 16
# Each step's objects, in percent of the step: Clusters, AWSClusters, MachineDeployments, MachineSets,
# Machines, AWSMachines, Networks (XRs composing MRs), managed resources, XDatabases (XRs listed).
MIX = {"clusters": 1, "awsclusters": 1, "mds": 4, "mss": 4, "machines": 20, "awsmachines": 20,
       "networks": 2, "mrs": 40, "xdatabases": 8}
PACES = [("unpaced (--qps 1000 --burst 1000)", ["--qps", "1000", "--burst", "1000"]),
         ("default pace (--qps 5 --burst 10)", [])]
GROUPS = {"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io",
          "infrastructure.cluster.x-k8s.io", "platform.example.org", "network.example.org", "policies.kubewarden.io",
          # the webhook configuration registered for each policy, whose selectors the runner reads
          "admissionregistration.k8s.io"}
# The parents no policy's rules list (read with a GET each), and the kinds of policy objects read by name.
UNLISTED = {("cluster.x-k8s.io", "clusters"), ("network.example.org", "networks"),
            ("policies.kubewarden.io", "clusteradmissionpolicies"),
            ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
            ("admissionregistration.k8s.io", "validatingwebhookconfigurations")}
CAPI = "cluster.x-k8s.io/v1beta2"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta2"
PLURALS = {"Cluster": "clusters", "AWSCluster": "awsclusters", "MachineDeployment": "machinedeployments",
           "MachineSet": "machinesets", "Machine": "machines", "AWSMachine": "awsmachines", "Network": "networks",
           "VPC": "vpcs", "SecurityGroup": "securitygroups", "XDatabase": "xdatabases"}
# Run around the runner alone, so that RUSAGE_CHILDREN's peak is the runner's, not a kubectl's.
WRAPPER = r"""
import json, resource, subprocess, sys, time
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
start, writing = time.monotonic(), None
with open(out, "w") as o, open(err, "w") as e:
    p = subprocess.Popen(cmd, stdout=o, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if writing is None and line.startswith("fix: writing"):
            writing = time.monotonic()
        e.write(line)
    rc = p.wait()
end = time.monotonic()
print(json.dumps({"rc": rc, "wall": end - start, "writes": None if writing is None else end - writing,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def log(message):
    print(f"bench-live-audit: {message}", file=sys.stderr, flush=True)


def kubectl(*args, stdin=None, check=True):
    out = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"bench-live-audit: kubectl {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


class Api:
    """The test bed's API server, as its admin (system:masters: API Priority and Fairness leaves it alone),
    one keep-alive connection per thread."""

    def __init__(self):
        server = kubectl("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}").strip()
        url = urllib.parse.urlsplit(server)
        self.host, self.port = url.hostname, url.port or 443
        pki = os.path.join(STATE, "pki")
        self.tls = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.tls.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.local = threading.local()

    def request(self, method, path, body=None, content_type="application/json"):
        """(status, decoded JSON or text); a dropped connection is opened again and the request sent again."""
        for attempt in range(5):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(self.host, self.port, context=self.tls,
                                                                     timeout=120)
            try:
                conn.request(method, path, body=None if body is None else json.dumps(body),
                             headers={"Content-Type": content_type, "Accept": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.5 * (attempt + 1))
                continue
            try:
                return resp.status, json.loads(data)
            except ValueError:
                return resp.status, data.decode("utf-8", "replace")
        raise AssertionError("unreachable")

    def collection(self, api_version, kind, namespace=NS):
        prefix = "/api" if "/" not in api_version else "/apis"
        return f"{prefix}/{api_version}/namespaces/{namespace}/{PLURALS[kind]}"

    def create(self, obj):
        """OBJ created (its stored form): a 429, 5xx or webhook failure is tried again, a 409 read back."""
        path = self.collection(obj["apiVersion"], obj["kind"], obj["metadata"]["namespace"])
        for attempt in range(10):
            status, stored = self.request("POST", path, obj)
            if status == 201 or status == 200:
                return stored
            if status == 409:
                status, stored = self.request("GET", f"{path}/{obj['metadata']['name']}")
                if status == 200:
                    return stored
            if status in (429, 500, 502, 503, 504) and attempt < 9:
                time.sleep(0.2 * (attempt + 1))
                continue
            sys.exit(f"bench-live-audit: create {obj['kind']} {obj['metadata']['name']}: {status} {stored}")
        raise AssertionError("unreachable")

    def create_all(self, objs):
        """OBJS created, CONNECTIONS at once; their stored forms, in order."""
        if not objs:
            return []
        with concurrent.futures.ThreadPoolExecutor(CONNECTIONS) as pool:
            return list(pool.map(self.create, objs, chunksize=64))

    def names(self, api_version, kind):
        """Every object of KIND in the bench's namespace: name -> (uid, finalizers)."""
        found, token = {}, ""
        while True:
            status, page = self.request("GET", self.collection(api_version, kind) + "?limit=500"
                                        + (f"&continue={urllib.parse.quote(token)}" if token else ""))
            if status != 200:
                return found
            for o in page["items"]:
                found[o["metadata"]["name"]] = (o["metadata"]["uid"], o["metadata"].get("finalizers"))
            token = page["metadata"].get("continue")
            if not token:
                return found


def owner(api_version, kind, stored):
    return {"apiVersion": api_version, "kind": kind, "name": stored["metadata"]["name"],
            "uid": stored["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def cluster(name, i):
    return {"apiVersion": CAPI, "kind": "Cluster",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"environment": "prod", "cost-center": f"cc-{1000 + i % 100}", "acme.io/team": "bench"}},
            "spec": {"paused": True, "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSCluster",
                                           "name": name}}}


def aws_cluster(stored_cluster):
    name = stored_cluster["metadata"]["name"]
    return {"apiVersion": INFRA, "kind": "AWSCluster",
            "metadata": {"name": name, "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": name},
                         "ownerReferences": [owner(CAPI, "Cluster", stored_cluster)]},
            "spec": {"region": "eu-west-1", "additionalTags": {"owner": "bench"}}}


def machine_spec(cluster_name, name):
    return {"clusterName": cluster_name, "version": "v1.34.4", "bootstrap": {"dataSecretName": "bench"},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachineTemplate",
                                  "name": name}}


def selector(cluster_name, md):
    return {"cluster.x-k8s.io/cluster-name": cluster_name, "cluster.x-k8s.io/deployment-name": md}


def machine_deployment(md, cluster_name, replicas):
    sel = selector(cluster_name, md)
    return {"apiVersion": CAPI, "kind": "MachineDeployment",
            "metadata": {"name": md, "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": cluster_name},
                         "annotations": {"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}},
            "spec": {"clusterName": cluster_name, "replicas": replicas, "selector": {"matchLabels": sel},
                     "template": {"metadata": {"labels": {**sel, "nodepool": md, "cost-center": "cc-pool"},
                                               "annotations": {"pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"}},
                                  "spec": machine_spec(cluster_name, md)}}}


def machine_set(stored_md):
    md, cluster_name = stored_md["metadata"]["name"], stored_md["spec"]["clusterName"]
    sel = selector(cluster_name, md)
    return {"apiVersion": CAPI, "kind": "MachineSet",
            "metadata": {"name": f"{md}-ms", "namespace": NS, "labels": dict(sel),
                         "ownerReferences": [owner(CAPI, "MachineDeployment", stored_md)]},
            "spec": {"clusterName": cluster_name, "replicas": stored_md["spec"]["replicas"],
                     "selector": {"matchLabels": sel},
                     "template": {"metadata": {"labels": dict(sel)}, "spec": machine_spec(cluster_name, md)}}}


def machine(stored_ms, name):
    labels = dict(stored_ms["spec"]["selector"]["matchLabels"])
    labels["cluster.x-k8s.io/set-name"] = stored_ms["metadata"]["name"]
    cluster_name = stored_ms["spec"]["clusterName"]
    return {"apiVersion": CAPI, "kind": "Machine",
            "metadata": {"name": name, "namespace": NS, "labels": labels,
                         "ownerReferences": [owner(CAPI, "MachineSet", stored_ms)]},
            "spec": {"clusterName": cluster_name, "version": "v1.34.4", "bootstrap": {"dataSecretName": "bench"},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachine",
                                           "name": name}}}


def aws_machine(stored_machine):
    name = stored_machine["metadata"]["name"]
    return {"apiVersion": INFRA, "kind": "AWSMachine",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"cluster.x-k8s.io/cluster-name": stored_machine["spec"]["clusterName"]},
                         "ownerReferences": [owner(CAPI, "Machine", stored_machine)]},
            "spec": {"instanceType": "m5.large"}}


def network(name, i):
    return {"apiVersion": "network.example.org/v1alpha1", "kind": "Network",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"environment": "prod", "cost-center": f"cc-{2000 + i % 100}", "acme.io/team": "bench",
                                    "crossplane.io/composite": name}},
            "spec": {"crossplane": {}, "parameters": {"region": "eu-west-1"}}}


def managed_resource(name, i, stored_network):
    net = stored_network["metadata"]["name"]
    meta = {"name": name, "namespace": NS, "labels": {"crossplane.io/composite": net},
            "annotations": {"crossplane.io/composition-resource-name": f"mr-{i % 20}"},
            "ownerReferences": [owner("network.example.org/v1alpha1", "Network", stored_network)]}
    if i % 2 == 0:
        return {"apiVersion": "ec2.aws.m.upbound.io/v1beta1", "kind": "VPC", "metadata": meta,
                "spec": {"forProvider": {"region": "eu-west-1", "cidrBlock": f"10.{i // 256 % 256}.{i % 256}.0/24",
                                         "tags": {"Name": net}}}}
    return {"apiVersion": "ec2.aws.m.upbound.io/v1beta1", "kind": "SecurityGroup", "metadata": meta,
            "spec": {"forProvider": {"region": "eu-west-1", "name": name, "description": "bench",
                                     "tags": {"Name": net}}}}


def xdatabase(name, i, provider=None):
    return {"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"platform/env": "prod", "platform/cost-center": f"cc-{3000 + i % 50}"}},
            "spec": {"crossplane": {}, "parameters": {"provider": provider or ("aws" if i % 2 == 0 else "gcp"),
                                                     "size": "small"}}}


def shares(new):
    """How many of each part of MIX a step of NEW objects creates (Machines take the rounding)."""
    counts = {k: new * pct // 100 for k, pct in MIX.items()}
    counts["machines"] += new - sum(counts.values())
    for k, n in counts.items():
        if n < 1:
            sys.exit(f"bench-live-audit: a step of {new} objects has no {k}: COUNTS steps need 100 objects or more")
    return counts


def step(api, number, new):
    """NEW objects of the mix, created in dependency order; the parents (Clusters, Networks) and the seconds."""
    n = shares(new)
    log(f"step {number}: {new} objects: " + ", ".join(f"{v} {k}" for k, v in n.items()))
    started = time.monotonic()
    clusters = api.create_all([cluster(f"b{number}-c{i}", i) for i in range(n["clusters"])])
    infra = [aws_cluster(clusters[i % len(clusters)]) for i in range(n["awsclusters"])]
    # One AWSCluster per Cluster; a mix that asks for more names them apart.
    for i, o in enumerate(infra):
        if i >= len(clusters):
            o["metadata"]["name"] += f"-{i}"
    api.create_all(infra)
    mds = api.create_all([machine_deployment(f"b{number}-md{j}", clusters[j % len(clusters)]["metadata"]["name"],
                                             math.ceil(n["machines"] / n["mds"])) for j in range(n["mds"])])
    mss = api.create_all([machine_set(mds[j % len(mds)]) for j in range(n["mss"])])
    for j, o in enumerate(mss):
        if j >= len(mds):
            o["metadata"]["name"] += f"-{j}"
    machines = api.create_all([machine(mss[k % len(mss)], f"b{number}-m{k:06d}") for k in range(n["machines"])])
    aws_machines = [aws_machine(machines[k % len(machines)]) for k in range(n["awsmachines"])]
    for k, o in enumerate(aws_machines):
        if k >= len(machines):
            o["metadata"]["name"] += f"-{k}"
    api.create_all(aws_machines)
    networks = api.create_all([network(f"b{number}-net{i}", i) for i in range(n["networks"])])
    api.create_all([managed_resource(f"b{number}-mr{i:06d}", i, networks[i // 20 % len(networks)])
                    for i in range(n["mrs"])] +
                   [xdatabase(f"b{number}-xdb{i:06d}", i) for i in range(n["xdatabases"])])
    seconds = time.monotonic() - started
    log(f"step {number}: {new} objects created in {seconds:.0f} s ({new / seconds:.0f} a second)")
    settle(f"step {number}")
    # Every Network has children, every Cluster an AWSCluster: the parents the runner reads.
    return n["clusters"] + n["networks"], seconds


def settle(what, quiet=5, limit=900):
    """Waits until the controllers are done with what was just created: no write in the bench's namespace
    in the API server's audit log for QUIET seconds (CAPI's manager patches each new Machine and MachineSet
    once, paused Cluster or not, and a backlog of thousands takes a while); the seconds waited."""
    started = time.monotonic()
    path = os.path.join(STATE, "audit.log")
    needle = f'"namespace":"{NS}"'
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        last = time.monotonic()
        while time.monotonic() - last < quiet:
            time.sleep(0.5)
            for line in f.read().split(b"\n"):
                if needle.encode() in line and b'"stage":"ResponseComplete"' in line:
                    last = time.monotonic()
            if time.monotonic() - started > limit:
                sys.exit(f"bench-live-audit: {what}: the controllers still write after {limit} s")
    waited = time.monotonic() - started
    log(f"{what}: the controllers' writes over after {waited:.0f} s")
    return waited


def metrics():
    """apiserver_request_total by (verb, group, resource, version), the groups the runner reads."""
    counts = {}
    for line in kubectl("get", "--raw", "/metrics").splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, value = line.rsplit(" ", 1)
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels_text))
        group, resource = labels.get("group", ""), labels.get("resource", "")
        if not resource or labels.get("subresource") or labels.get("dry_run") or \
                not (group in GROUPS or group.endswith(".upbound.io")):
            continue
        key = (labels.get("verb"), group, resource, labels.get("version", ""))
        counts[key] = counts.get(key, 0) + float(value)
    return counts


def delta(before, after):
    return {k: int(v - before.get(k, 0)) for k, v in after.items() if v - before.get(k, 0) > 0}


def by_verb(d, verb):
    return sum(v for (vb, _, _, _), v in d.items() if vb == verb)


def gets_of_listed(d, listed_kinds):
    """The GETs the API server served of a kind the run listed (an object read again): "resource N", sorted."""
    return sorted(f"{resource}.{group} {v}" for (verb, group, resource, _), v in d.items()
                  if verb == "GET" and (group, resource) in listed_kinds and (group, resource) not in UNLISTED)


def expected_pages(d):
    """The pages each kind the runner listed (the LIST delta's kinds) takes: ceil(objects / PAGE), at least 1."""
    pages = 0
    for (verb, group, resource, version) in {k for k in d if k[0] == "LIST"}:
        listed = json.loads(kubectl("get", "--raw", f"/apis/{group}/{version}/{resource}?limit=1"))
        n = len(listed["items"]) + (listed["metadata"].get("remainingItemCount") or 0)
        pages += max(1, math.ceil(n / PAGE))
    return pages


def audit_log_mark():
    with open(os.path.join(STATE, "audit.log"), "rb") as f:
        return sum(1 for _ in f)


def fixer_writes(mark):
    """The fixer's writes the audit log records after line MARK: their HTTP codes, counted, and the objects
    written more than once."""
    time.sleep(1)
    codes, seen, again = {}, set(), 0
    with open(os.path.join(STATE, "audit.log"), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f):
            if n < mark or "metadata-propagation-fix" not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if (event.get("stage") == "ResponseComplete" and event.get("verb") in ("patch", "update")
                    and re.search(r"[?&]fieldManager=metadata-propagation-fix(&|$)", event.get("requestURI", ""))
                    and "dryRun=" not in event.get("requestURI", "")):
                code = (event.get("responseStatus") or {}).get("code")
                codes[code] = codes.get(code, 0) + 1
                ref = event.get("objectRef") or {}
                key = (ref.get("resource"), ref.get("namespace"), ref.get("name"))
                again += key in seen
                seen.add(key)
    return codes, again


# The kinds the fix bench writes.
FIXED_KINDS = {("cluster.x-k8s.io", "machines"), ("platform.example.org", "xdatabases")}


def measure(label, extra, size):
    """One run of the runner: its report, its measures, the API server's count of its requests."""
    cmd = [RUNNER, "audit", "--cluster", "-o", "json"] + [a for p in POLICIES for a in ("--policy-name", p)] + extra
    before = metrics()
    mark = audit_log_mark()
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out.json"), os.path.join(tmp, "err")
        run = json.loads(subprocess.run([sys.executable, "-c", WRAPPER, out, err, *cmd], capture_output=True,
                                        text=True, check=True).stdout)
        try:
            report = json.load(open(out))
        except ValueError:
            sys.exit(f"bench-live-audit: {' '.join(cmd)} exited {run['rc']} without a JSON report:\n"
                     + open(err).read()[-3000:])
    d = delta(before, metrics())
    listed = sum(p["report"]["summary"]["objects"] for p in report["policies"])
    deviating = sum(p["report"]["summary"]["deviating"] for p in report["policies"])
    listed_kinds = {(g, r) for (v, g, r, _) in d if v == "LIST"}
    if "--fix" in extra:
        # The fixed objects' kinds: the webhook server's look-ups of their parents (a Machine's MachineSet, a
        # listed kind too) are GETs of other kinds.
        listed_kinds = FIXED_KINDS
    requests = report.get("requests") or {}
    result = {"label": label, "size": size, "unpaced": "--qps" in extra and "1000" in extra, "rc": run["rc"], "wall": run["wall"], "writes": run["writes"],
              "seconds": (report.get("summary") or {}).get("seconds"),
              "maxrss_mb": run["maxrss_kb"] / 1024, "listed": listed, "deviating": deviating,
              "requests": {v: requests.get(v, 0) for v in ("list", "get", "patch", "discovery")},
              "requests_all": sum(requests.values()),
              "metrics": {v: by_verb(d, v) for v in ("LIST", "GET", "PATCH")},
              "gets_of_listed": gets_of_listed(d, listed_kinds),
              "pages": expected_pages(d), "fix": report.get("fix"),
              "unlisted": [u for u in report.get("unlisted") or [] if u.get("served", True)],
              "fixer_writes": fixer_writes(mark) if "--fix" in extra else ({}, 0)}
    log(f"{label} at {size:,}: {json.dumps({k: v for k, v in result.items() if k != 'fix'})}")
    if result["unlisted"]:
        sys.exit(f"bench-live-audit: kinds not listed: {result['unlisted']}")
    return result


def probe(kind_doc):
    return json.loads(kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(kind_doc)))


def webhooks_mutate(stored_ms, stored_network):
    """Whether each of the three policies' webhooks mutates a server-side dry-run create now."""
    m = machine(stored_ms, "bench-probe")
    xdb, mr = xdatabase("bench-probe", 0), managed_resource("bench-probe", 0, stored_network)
    return [bool(probe(m)["metadata"].get("labels", {}).get("nodepool")),
            bool(probe(xdb)["spec"].get("cloudTags")),
            len(probe(mr)["spec"]["forProvider"].get("tags", {})) > 1]


def until(what, condition, seconds=60):
    for _ in range(seconds):
        if condition():
            return
        time.sleep(1)
    sys.exit(f"bench-live-audit: {what} not within {seconds} s")


def fix_bench(api, size):
    """FIX_OBJECTS deviating objects, created with the webhooks deleted; then --fix at --qps FIX_QPS."""
    half = FIX_OBJECTS // 2
    parent = api.create_all([cluster("bench-fix", 0)])[0]
    md = api.create_all([machine_deployment("bench-fix", parent["metadata"]["name"], half)])[0]
    ms = api.create_all([machine_set(md)])[0]
    net = api.create_all([network("bench-fix-net", 0)])[0]
    log(f"the webhooks deleted; {half} Machines and {FIX_OBJECTS - half} XDatabases created without them")
    kubectl("delete", "mutatingwebhookconfiguration", *CONFIGS)
    until("the webhooks gone", lambda: not any(webhooks_mutate(ms, net)))
    started = time.monotonic()
    api.create_all([machine(ms, f"bench-fix-m{k:06d}") for k in range(half)] +
                   [xdatabase(f"bench-fix-xdb{i:06d}", i, "aws") for i in range(FIX_OBJECTS - half)])
    log(f"{FIX_OBJECTS} objects created without the webhooks in {time.monotonic() - started:.0f} s")
    # Settled before the webhooks are back, so that no controller's write is the webhook's mutation.
    settle("the fix's objects")
    kubectl("apply", "-f", os.path.join(STATE, "kubewarden", "webhooks.json"))
    until("the webhooks back", lambda: all(webhooks_mutate(ms, net)))
    return measure(f"--fix, {FIX_OBJECTS:,} deviating, --qps {FIX_QPS:g}", ["--fix", "--qps", f"{FIX_QPS:g}"],
                   size + FIX_OBJECTS + 4)


def check(runs, parents, fix, after_fix):
    """The properties the table stands for; each failure named."""
    failures = []
    for r in runs + [fix, after_fix]:
        at = f"{r['label']} at {r['size']:,}"
        if r["requests"].get("list") != r["metrics"]["LIST"]:
            failures.append(f"{at}: the runner counts {r['requests'].get('list')} lists, the API server {r['metrics']['LIST']}")
        if r["metrics"]["LIST"] != r["pages"]:
            failures.append(f"{at}: {r['metrics']['LIST']} list requests for {r['pages']} pages")
        if r["requests"].get("discovery") != DISCOVERY:
            failures.append(f"{at}: {r['requests'].get('discovery')} discovery requests, not {DISCOVERY} (aggregated discovery)")
        if r["gets_of_listed"]:
            failures.append(f"{at}: the API server served GETs of kinds the run listed (a GET per object): "
                            f"{', '.join(r['gets_of_listed'])}")
    for r in runs + [after_fix]:
        at = f"{r['label']} at {r['size']:,}"
        if r["requests"].get("get") != r["metrics"]["GET"]:
            failures.append(f"{at}: the runner counts {r['requests'].get('get')} gets, the API server {r['metrics']['GET']}")
        if r["rc"] != 0 or r["deviating"] != 0:
            failures.append(f"{at}: exit {r['rc']}, {r['deviating']} deviating")
        if r["requests"].get("patch"):
            failures.append(f"{at}: {r['requests']['patch']} patches without --fix")
        if FRESH:
            expected_gets = parents[r["size"]] + 2 * len(POLICIES)
            expected = r["pages"] + DISCOVERY + expected_gets
            if r["requests"].get("get") != expected_gets:
                failures.append(f"{at}: {r['requests'].get('get')} GETs, not the {parents[r['size']]} parents not listed "
                                f"and the {len(POLICIES)} policies and their webhook configurations ({expected_gets})")
            if r["requests_all"] != expected:
                failures.append(f"{at}: {r['requests_all']} requests, not {r['pages']} pages + {DISCOVERY} discovery + "
                                f"{expected_gets} GETs = {expected}")
    # Memory and time at the largest size.
    unpaced = [r for r in runs if r["unpaced"]]
    peaks = {r["size"]: max(x["maxrss_mb"] for x in runs if x["size"] == r["size"]) for r in runs}
    small, large = min(peaks), max(peaks)
    if peaks[large] > RSS_MAX_MB:
        failures.append(f"peak RSS at {large:,} objects: {peaks[large]:.0f} MiB, more than {RSS_MAX_MB} MiB")
    if peaks[large] > RSS_GROWTH * peaks[small]:
        failures.append(f"peak RSS at {large:,} objects: {peaks[large]:.0f} MiB, more than {RSS_GROWTH} × "
                        f"its {peaks[small]:.0f} MiB at {small:,}")
    largest = next(r for r in unpaced if r["size"] == large)
    if largest["seconds"] is None or largest["seconds"] > UNPACED_MAX_S:
        failures.append(f"unpaced audit at {large:,} objects: {largest['seconds']} s from its first request to its "
                        f"report, more than {UNPACED_MAX_S} s")
    # The fix.
    summary = (fix["fix"] or {}).get("summary") or {}
    if fix["rc"] != 0 or summary.get("deviating") != FIX_OBJECTS or summary.get("fixed") != FIX_OBJECTS:
        failures.append(f"--fix: exit {fix['rc']}, {summary}")
    codes, again = fix["fixer_writes"]
    if fix["requests"].get("patch") != FIX_OBJECTS or fix["metrics"]["PATCH"] != FIX_OBJECTS or \
            codes != {200: FIX_OBJECTS} or again:
        failures.append(f"--fix: not one PATCH per object: the runner counts {fix['requests'].get('patch')} patches, "
                        f"the API server {fix['metrics']['PATCH']}, the audit log's by HTTP code {codes} "
                        f"({again} objects written twice), for {FIX_OBJECTS} objects")
    if fix["requests"].get("get") != after_fix["requests"].get("get"):
        failures.append(f"--fix: {fix['requests'].get('get')} GETs where an audit of the same objects sends "
                        f"{after_fix['requests'].get('get')}: a GET per fixed object")
    budget = FIX_OBJECTS / FIX_QPS
    if fix["writes"] is None or fix["writes"] > FIX_SLACK * budget:
        failures.append(f"--fix: its writes took {fix['writes'] if fix['writes'] is None else round(fix['writes'], 1)} s, "
                        f"more than {FIX_SLACK} × {FIX_OBJECTS} / {FIX_QPS:g} = {FIX_SLACK * budget:.0f} s")
    if after_fix["deviating"] != 0:
        failures.append(f"after --fix, {after_fix['deviating']} objects still deviate")
    return failures


def commit():
    out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def etcd_db_mb():
    endpoint = os.environ.get("ETCD_ENDPOINT", "http://127.0.0.1:22379")
    try:
        out = subprocess.run(["curl", "-sf", "-X", "POST", f"{endpoint}/v3/maintenance/status", "-d", "{}"],
                             capture_output=True, text=True, check=True).stdout
        return int(json.loads(out)["dbSize"]) / 2 ** 20
    except (subprocess.CalledProcessError, ValueError, KeyError):
        return float("nan")


def table(runs, creation, fix, after_fix):
    lines = [f"`make bench-live-audit` on commit `{commit()}` ({time.strftime('%Y-%m-%d')}), {os.cpu_count()} CPUs, "
             f"the test bed's API server on loopback, page size {PAGE}:", "",
             "| run | objects | listed | deviating | wall s | first request to report s | runner list / get / patch / discovery | API server LIST / GET / PATCH | pages | peak RSS MiB |",
             "|---|---:|---:|---:|---:|---:|---|---|---:|---:|"]
    for r in runs + [fix, after_fix]:
        q, m = r["requests"], r["metrics"]
        lines.append(f"| {r['label']} | {r['size']:,} | {r['listed']:,} | {r['deviating']} | {r['wall']:.1f} | "
                     f"{r['seconds']} | {q.get('list')} / {q.get('get')} / {q.get('patch')} / {q.get('discovery')} | "
                     f"{m['LIST']} / {m['GET']} / {m['PATCH']} | {r['pages']} | {r['maxrss_mb']:.0f} |")
    summary = (fix["fix"] or {}).get("summary") or {}
    budget = FIX_OBJECTS / FIX_QPS
    writes = fix["writes"] if fix["writes"] is not None else float("nan")
    codes, _ = fix["fixer_writes"]
    made = "; ".join(f"{size:,} objects: {new:,} created in {s:.0f} s ({new / s:.0f} a second)"
                     for size, new, s, _ in creation)
    lines += ["",
              f"Creation (direct API calls, {CONNECTIONS} connections, through the admission webhooks): {made}; "
              f"etcd's database afterwards: {creation[-1][3]:.0f} MiB.",
              "",
              f"`--fix` of {FIX_OBJECTS:,} deviating objects ({FIX_OBJECTS // 2:,} Machines, {FIX_OBJECTS - FIX_OBJECTS // 2:,} "
              f"XDatabases on AWS, created with the webhooks deleted) at `--qps {FIX_QPS:g}` (burst 10): {fix['wall']:.1f} s in all, "
              f"{writes:.1f} s from `fix: writing` to the end, against {FIX_OBJECTS:,} / {FIX_QPS:g} = {budget:g} s "
              f"({writes / budget:.2f}×). {summary.get('fixed')} of {summary.get('deviating')} fixed; the audit log holds "
              f"{sum(codes.values())} writes of its field manager "
              f"({', '.join(f'{n} answered {c}' for c, n in sorted(codes.items()))}); "
              f"the API server's GETs also count the webhook server's look-ups of each Machine's MachineSet. "
              f"An audit afterwards: {after_fix['deviating']} deviating.",
              "",
              "objects: in the bench's namespace (1 % Clusters, 1 % AWSClusters, 4 % MachineDeployments, 4 % MachineSets, "
              "20 % Machines, 20 % AWSMachines, 2 % Networks, 40 % managed resources, 8 % XDatabases); listed: the "
              "objects the policies' rules list, the bed's own included; first request to report: the run's own "
              "`seconds`; runner: the JSON `requests` of `policy-runner audit --cluster -o json`; API server: the "
              "increase of `apiserver_request_total` over the run, the policies' groups, the XRs', Kubewarden's and "
              "the webhook configurations', no subresource; pages: ceil(objects / page size) of each kind listed, an "
              "empty kind one page; GETs: the parents no rule lists (the Clusters and Networks) and the "
              f"{len(POLICIES)} ClusterAdmissionPolicies with the webhook configuration registered for each. Peak RSS: "
              "getrusage RUSAGE_CHILDREN of a process that runs the runner alone."]
    return "\n".join(lines)


KINDS = [(CAPI, "Machine"), (INFRA, "AWSMachine"), (CAPI, "MachineSet"), (CAPI, "MachineDeployment"),
         (INFRA, "AWSCluster"), (CAPI, "Cluster"), ("platform.example.org/v1alpha1", "XDatabase"),
         ("ec2.aws.m.upbound.io/v1beta1", "VPC"), ("ec2.aws.m.upbound.io/v1beta1", "SecurityGroup"),
         ("network.example.org/v1alpha1", "Network")]


def cleanup(api=None):
    """Everything in the bench's namespace gone: each object deleted (CONNECTIONS at once: the API server
    deletes a collection with one worker, some 75 objects a second), then the finalizers of what stays
    removed (CAPI's manager keeps its finalizer on the Machines of a paused Cluster; nothing else removes
    them here), until the kind is empty."""
    api = api or Api()
    started = time.monotonic()

    def each(fn, names):
        with concurrent.futures.ThreadPoolExecutor(CONNECTIONS) as pool:
            list(pool.map(fn, names, chunksize=64))

    for api_version, kind in KINDS:
        path = api.collection(api_version, kind)
        for _ in range(10):
            left = api.names(api_version, kind)
            if not left:
                break
            each(lambda n: api.request("DELETE", f"{path}/{n}"), left)
            held = [n for n, (_, finalizers) in api.names(api_version, kind).items() if finalizers]
            each(lambda n: api.request("PATCH", f"{path}/{n}", {"metadata": {"finalizers": None}},
                                       "application/merge-patch+json"), held)
        else:
            sys.exit(f"bench-live-audit: {kind}s left in {NS} after 10 rounds of deletion")
    log(f"cleanup: the bench's objects deleted in {time.monotonic() - started:.0f} s")


def main():
    if sys.argv[1:] == ["cleanup"]:
        cleanup()
        return
    if sys.argv[1:] != ["run"]:
        sys.exit(__doc__.split("\n\n")[1])
    if not os.access(RUNNER, os.X_OK):
        sys.exit(f"bench-live-audit: no runner at {RUNNER} (make runner)")
    if sorted(COUNTS) != COUNTS or len(set(COUNTS)) != len(COUNTS):
        sys.exit(f"bench-live-audit: COUNTS must grow: {COUNTS}")
    api = Api()
    if kubectl("get", "namespace", NS, check=False).strip():
        cleanup(api)
    else:
        kubectl("create", "namespace", NS)
    runs, creation, parents = [], [], {}
    total = unlisted = 0
    for number, target in enumerate(COUNTS, 1):
        more, seconds = step(api, number, target - total)
        creation.append((target, target - total, seconds, etcd_db_mb()))
        unlisted += more
        total = target
        parents[total] = unlisted
        for label, extra in PACES:
            runs.append(measure(f"audit, {label}", extra, total))
    fix = fix_bench(api, total)
    # The fix's Cluster has no AWSCluster and its Network no child (they answer the webhooks' probes): no
    # look-up reads them.
    parents[fix["size"]] = unlisted
    after_fix = measure("audit after --fix", ["--qps", "1000", "--burst", "1000"], fix["size"])
    print(table(runs, creation, fix, after_fix))
    failures = check(runs, parents, fix, after_fix)
    for failure in failures:
        log(f"FAILED: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
