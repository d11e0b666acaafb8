#!/usr/bin/env python3
"""The live audit's cost against the test bed (`make bench-live-audit`, scripts/bench-live-audit.sh runs it).

Usage: scripts/bench_live_audit.py run      (the test bed up, KUBECONFIG and PATH set: the shell script does it)
       scripts/bench_live_audit.py cleanup  (deletes what `run` created, on a test bed that stays up)

In the namespace `bench-live-audit` of the running test bed it creates, with the policies' webhooks
registered (so every object is stored as the policies make it):
- 4 Clusters, paused (`spec.paused: true`: CAPI's controllers leave every object below them alone), each with
  its AWSCluster tied to it (the cluster-name label and the ownerReference the Cluster controller writes), and
  8 v2 XRs (Network, network.example.org), the parents of the managed resources: the look-ups the runner
  answers with a GET each, since no policy's rules list their kinds;
- per step of COUNTS (default 2,000 then 4,000 objects of the kinds the policies' rules list): 8
  MachineDeployments, each with a MachineSet and its Machines, XDatabases (XRs, AWS and GCP alike) and
  namespaced AWS VPCs (managed resources, composed by the Networks), a fifth each, the rest Machines.
After each step it runs `policy-runner audit --cluster` on the three policies the test bed deploys
(capi-metadata-propagation, xr-cloud-tags, managed-resource-tags), at the default pace (--qps 5 --burst 10)
and unpaced (--qps 1000 --burst 1000), and records the wall time, the requests the runner counts by verb
(its JSON `requests`), the same from the API server's `apiserver_request_total` (kubectl get --raw /metrics,
before and after; LIST, GET and PATCH of the policies' groups, the XRs' and Kubewarden's), and the runner's
peak memory (getrusage RUSAGE_CHILDREN of a wrapper process around it alone).

Then `--fix` of FIX_OBJECTS (default 500) deviating objects at --qps FIX_QPS (default 50): half Machines under
a new MachineSet, half XDatabases on AWS (a GCP one whose opted-in labels GCP all refuses gets no tag, and
validate mode finds it compliant without the skip record admission would add), created with the three webhooks deleted and then registered again; its
wall time, and the time from its line `fix: writing N objects` to its exit (the writes), against
FIX_OBJECTS / FIX_QPS seconds; its writes counted in the API server's audit log too.

Checked, and the table is not written when one fails: the runner's LIST count is the API server's and is the
number of pages of each kind listed (ceil(objects / 500), an empty kind one page); its GETs are the
API server's, the same at 4,000 objects as at 2,000 (the parents not listed, and the policies read), and
when the test bed is the bench's own exactly the 12 parents plus the 3 policies; the fix wrote each deviating
object once and every one ended `fixed`, and an audit afterwards finds nothing deviating.

Prints a markdown table on stdout; the shell script writes it into BENCHMARKS.md (section live-audit) when
every parameter is the default.
"""

import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = os.path.join(ROOT, "target", "cluster")
RUNNER = os.environ.get("RUNNER") or os.path.join(ROOT, "target", "host", "policy-runner")
NS = "bench-live-audit"
POLICIES = ["capi-metadata-propagation", "xr-cloud-tags", "managed-resource-tags"]
CONFIGS = ["clusterwide-" + p for p in POLICIES]
COUNTS = [int(n) for n in os.environ.get("COUNTS", "2000 4000").split()]
FIX_OBJECTS = int(os.environ.get("FIX_OBJECTS", "500"))
FIX_QPS = float(os.environ.get("FIX_QPS", "50"))
FRESH = os.environ.get("BENCH_FRESH_TESTBED") == "1"
PAGE = 500
CLUSTERS, NETWORKS, MDS_PER_STEP = 4, 8, 8
PACES = [("default (--qps 5 --burst 10)", []), ("unpaced (--qps 1000 --burst 1000)", ["--qps", "1000", "--burst", "1000"])]
GROUPS = {"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io",
          "infrastructure.cluster.x-k8s.io", "platform.example.org", "network.example.org", "policies.kubewarden.io",
          # the webhook configuration registered for each policy, whose selectors the runner reads
          "admissionregistration.k8s.io"}
CAPI = "cluster.x-k8s.io/v1beta2"
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


def as_list(items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def create(items, procs=4):
    """kubectl create of ITEMS, in PROCS kubectl processes at once."""
    if not items:
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(procs):
            chunk = items[i::procs]
            if chunk:
                paths.append(os.path.join(tmp, f"{i}.json"))
                with open(paths[-1], "w") as f:
                    f.write(as_list(chunk))
        with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
            for out in pool.map(lambda p: subprocess.run(["kubectl", "create", "-f", p, "-o", "name"],
                                                         capture_output=True, text=True), paths):
                if out.returncode != 0:
                    sys.exit(f"bench-live-audit: kubectl create: {out.stderr.strip()[:2000]}")


def uids(resource):
    items = json.loads(kubectl("get", resource, "-n", NS, "-o", "json"))["items"]
    return {o["metadata"]["name"]: o["metadata"]["uid"] for o in items}


def owner(api_version, kind, name, uid):
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True,
            "blockOwnerDeletion": True}


def cluster_name(i):
    return f"bench-{i}"


def parents():
    """The Clusters, their AWSClusters and the Networks."""
    log(f"{CLUSTERS} paused Clusters, their AWSClusters, {NETWORKS} Networks")
    create([{"apiVersion": CAPI, "kind": "Cluster",
             "metadata": {"name": cluster_name(i), "namespace": NS,
                          "labels": {"environment": "prod", "cost-center": f"cc-{1000 + i}", "acme.io/team": "bench"}},
             "spec": {"paused": True, "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                      "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSCluster",
                                            "name": cluster_name(i)}}} for i in range(CLUSTERS)] +
           [{"apiVersion": "network.example.org/v1alpha1", "kind": "Network",
             "metadata": {"name": f"bench-net-{i}", "namespace": NS,
                          "labels": {"environment": "prod", "cost-center": f"cc-{2000 + i}", "acme.io/team": "bench",
                                     "crossplane.io/composite": f"bench-net-{i}"}},
             "spec": {"crossplane": {}, "parameters": {"region": "eu-west-1"}}} for i in range(NETWORKS)])
    clusters = uids("clusters.cluster.x-k8s.io")
    create([{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSCluster",
             "metadata": {"name": cluster_name(i), "namespace": NS,
                          "labels": {"cluster.x-k8s.io/cluster-name": cluster_name(i)},
                          "ownerReferences": [owner(CAPI, "Cluster", cluster_name(i), clusters[cluster_name(i)])]},
             "spec": {"region": "eu-west-1", "additionalTags": {"owner": "bench"}}} for i in range(CLUSTERS)])
    return CLUSTERS


def machine_deployments(prefix, cluster, replicas):
    """A MachineDeployment and its MachineSet, created in turn; their names."""
    md, ms = prefix, f"{prefix}-ms"
    sel = {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": md}
    machine_spec = {"clusterName": cluster, "version": "v1.34.4", "bootstrap": {"dataSecretName": "bench"},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachineTemplate",
                                          "name": md}}
    return md, ms, {
        "md": {"apiVersion": CAPI, "kind": "MachineDeployment",
               "metadata": {"name": md, "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": cluster},
                            "annotations": {"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}},
               "spec": {"clusterName": cluster, "replicas": replicas, "selector": {"matchLabels": sel},
                        "template": {"metadata": {"labels": {**sel, "nodepool": md, "cost-center": "cc-pool"},
                                                  "annotations": {"pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"}},
                                     "spec": machine_spec}}},
        "ms": lambda md_uid: {
            "apiVersion": CAPI, "kind": "MachineSet",
            "metadata": {"name": ms, "namespace": NS, "labels": dict(sel),
                         "ownerReferences": [owner(CAPI, "MachineDeployment", md, md_uid)]},
            "spec": {"clusterName": cluster, "replicas": replicas, "selector": {"matchLabels": sel},
                     "template": {"metadata": {"labels": dict(sel)}, "spec": machine_spec}}},
        "machine": lambda ms_uid, k: {
            "apiVersion": CAPI, "kind": "Machine",
            "metadata": {"name": f"{ms}-{k:04d}", "namespace": NS,
                         "labels": {**sel, "cluster.x-k8s.io/set-name": ms},
                         "ownerReferences": [owner(CAPI, "MachineSet", ms, ms_uid)]},
            "spec": {"clusterName": cluster, "version": "v1.34.4", "bootstrap": {"dataSecretName": "bench"},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachine",
                                           "name": f"{ms}-{k:04d}"}}},
    }


def xdatabase(name, i, provider=None):
    return {"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"platform/env": "prod", "platform/cost-center": f"cc-{3000 + i % 50}"}},
            "spec": {"crossplane": {}, "parameters": {"provider": provider or ("aws" if i % 2 == 0 else "gcp"),
                                                     "size": "small"}}}


def vpc(name, i, networks):
    net = f"bench-net-{i % NETWORKS}"
    return {"apiVersion": "ec2.aws.m.upbound.io/v1beta1", "kind": "VPC",
            "metadata": {"name": name, "namespace": NS, "labels": {"crossplane.io/composite": net},
                         "annotations": {"crossplane.io/composition-resource-name": f"vpc-{i}"},
                         "ownerReferences": [owner("network.example.org/v1alpha1", "Network", net, networks[net])]},
            "spec": {"forProvider": {"region": "eu-west-1", "cidrBlock": f"10.{i // 256 % 256}.{i % 256}.0/24",
                                     "tags": {"Name": net}}}}


def step(number, new):
    """NEW objects of the listed kinds: 8 MachineDeployments, their MachineSets and Machines, XDatabases and VPCs."""
    xdbs = vpcs = new // 5
    machines = new - 2 * MDS_PER_STEP - xdbs - vpcs
    log(f"step {number}: {MDS_PER_STEP} MachineDeployments and MachineSets, {machines} Machines, {xdbs} XDatabases, {vpcs} VPCs")
    sets = []
    for j in range(MDS_PER_STEP):
        replicas = machines // MDS_PER_STEP + (1 if j < machines % MDS_PER_STEP else 0)
        sets.append((machine_deployments(f"bench-s{number}-md{j}", cluster_name(j % CLUSTERS), replicas), replicas))
    create([s["md"] for (_, _, s), _ in sets])
    mds = uids("machinedeployments.cluster.x-k8s.io")
    create([s["ms"](mds[md]) for (md, _, s), _ in sets])
    mss = uids("machinesets.cluster.x-k8s.io")
    networks = uids("networks.network.example.org")
    create([s["machine"](mss[ms], k) for (_, ms, s), n in sets for k in range(n)] +
           [xdatabase(f"bench-s{number}-xdb{i:04d}", i) for i in range(xdbs)] +
           [vpc(f"bench-s{number}-vpc{i:04d}", i, networks) for i in range(vpcs)])


def metrics():
    """apiserver_request_total by (verb, group, resource, version), the groups the runner reads."""
    counts = {}
    for line in kubectl("get", "--raw", "/metrics").splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, value = line.rsplit(" ", 1)
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels_text))
        group, resource = labels.get("group", ""), labels.get("resource", "")
        if not resource or labels.get("subresource") or not (group in GROUPS or group.endswith(".upbound.io")):
            continue
        key = (labels.get("verb"), group, resource, labels.get("version", ""))
        counts[key] = counts.get(key, 0) + float(value)
    return counts


def delta(before, after):
    return {k: int(v - before.get(k, 0)) for k, v in after.items() if v - before.get(k, 0) > 0}


def by_verb(d, verb):
    return sum(v for (vb, _, _, _), v in d.items() if vb == verb)


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
    """The fixer's writes the audit log records after line MARK: their HTTP codes, counted."""
    time.sleep(1)
    codes = {}
    with open(os.path.join(STATE, "audit.log"), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f):
            if n < mark:
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
    return codes


def measure(label, extra):
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
    result = {"label": label, "rc": run["rc"], "wall": run["wall"], "writes": run["writes"],
              "maxrss_mb": run["maxrss_kb"] / 1024, "listed": listed, "deviating": deviating,
              "requests": {v: (report.get("requests") or {}).get(v, 0) for v in ("list", "get", "patch", "discovery")}, "metrics": {v: by_verb(d, v) for v in ("LIST", "GET", "PATCH")},
              "pages": expected_pages(d), "fix": report.get("fix"), "unlisted": [u for u in report.get("unlisted") or [] if u.get("served", True)],
              "fixer_writes": fixer_writes(mark) if "--fix" in extra else {}}
    log(f"{label}: {json.dumps({k: v for k, v in result.items() if k != 'fix'})}")
    if result["unlisted"]:
        sys.exit(f"bench-live-audit: kinds not listed: {result['unlisted']}")
    return result


def probe(kind_doc):
    return json.loads(kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(kind_doc)))


def webhooks_mutate(ms_uid, networks):
    """Whether each of the three policies' webhooks mutates a server-side dry-run create now."""
    _, ms, s = machine_deployments("bench-fix", cluster_name(0), FIX_OBJECTS // 2)
    machine = s["machine"](ms_uid, 9999)
    machine["metadata"]["name"] = "bench-probe"
    xdb, v = xdatabase("bench-probe", 0), vpc("bench-probe", 0, networks)
    return [bool(probe(machine)["metadata"].get("labels", {}).get("nodepool")),
            bool(probe(xdb)["spec"].get("cloudTags")),
            len(probe(v)["spec"]["forProvider"].get("tags", {})) > 1]


def until(what, condition, seconds=60):
    for _ in range(seconds):
        if condition():
            return
        time.sleep(1)
    sys.exit(f"bench-live-audit: {what} not within {seconds} s")


def fix_bench():
    """FIX_OBJECTS deviating objects, created with the webhooks deleted; then --fix at --qps FIX_QPS."""
    half = FIX_OBJECTS // 2
    md, ms, s = machine_deployments("bench-fix", cluster_name(0), half)
    create([s["md"]])
    create([s["ms"](uids("machinedeployments.cluster.x-k8s.io")[md])])
    ms_uid, networks = uids("machinesets.cluster.x-k8s.io")[ms], uids("networks.network.example.org")
    log(f"the webhooks deleted; {half} Machines and {FIX_OBJECTS - half} XDatabases created without them")
    kubectl("delete", "mutatingwebhookconfiguration", *CONFIGS)
    until("the webhooks gone", lambda: not any(webhooks_mutate(ms_uid, networks)))
    create([s["machine"](ms_uid, k) for k in range(half)] +
           [xdatabase(f"bench-fix-xdb{i:04d}", i, "aws") for i in range(FIX_OBJECTS - half)])
    kubectl("apply", "-f", os.path.join(STATE, "kubewarden", "webhooks.json"))
    until("the webhooks back", lambda: all(webhooks_mutate(ms_uid, networks)))
    return measure(f"--fix, {FIX_OBJECTS} deviating, --qps {FIX_QPS:g}", ["--fix", "--qps", f"{FIX_QPS:g}"])


def check(runs, fix, after_fix):
    """The properties the table stands for; each failure named."""
    failures = []
    for r in runs + [fix]:
        if r["requests"].get("list") != r["metrics"]["LIST"]:
            failures.append(f"{r['label']} at {r['listed']}: the runner counts {r['requests'].get('list')} lists, "
                            f"the API server {r['metrics']['LIST']}")
        if r["metrics"]["LIST"] != r["pages"]:
            failures.append(f"{r['label']} at {r['listed']}: {r['metrics']['LIST']} list requests for {r['pages']} pages")
    for r in runs:
        if r["requests"].get("get") != r["metrics"]["GET"]:
            failures.append(f"{r['label']} at {r['listed']}: the runner counts {r['requests'].get('get')} gets, "
                            f"the API server {r['metrics']['GET']}")
        if r["rc"] != 0 or r["deviating"] != 0:
            failures.append(f"{r['label']} at {r['listed']}: exit {r['rc']}, {r['deviating']} deviating")
        if r["requests"].get("patch"):
            failures.append(f"{r['label']} at {r['listed']}: {r['requests']['patch']} patches without --fix")
    gets = {r["requests"].get("get") for r in runs}
    if len(gets) != 1:
        failures.append(f"the GETs grow with the objects: {sorted(g for g in gets if g is not None)}")
    elif FRESH and gets != {CLUSTERS + NETWORKS + 2 * len(POLICIES)}:
        failures.append(f"{gets.pop()} GETs, not the {CLUSTERS + NETWORKS} parents not listed, the "
                        f"{len(POLICIES)} policies and their webhook configurations")
    summary = (fix["fix"] or {}).get("summary") or {}
    if fix["rc"] != 0 or summary.get("deviating") != FIX_OBJECTS or summary.get("fixed") != FIX_OBJECTS:
        failures.append(f"--fix: exit {fix['rc']}, {summary}")
    if fix["requests"].get("patch") != FIX_OBJECTS or fix["fixer_writes"] != {200: FIX_OBJECTS}:
        failures.append(f"--fix: {fix['requests'].get('patch')} patches counted, the audit log's "
                        f"by HTTP code {fix['fixer_writes']}, for {FIX_OBJECTS} objects")
    if after_fix["deviating"] != 0:
        failures.append(f"after --fix, {after_fix['deviating']} objects still deviate")
    return failures


def commit():
    out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def table(runs, fix, after_fix):
    lines = [f"`make bench-live-audit` on commit `{commit()}` ({time.strftime('%Y-%m-%d')}), {os.cpu_count()} CPUs, "
             f"the test bed's API server on loopback, page size {PAGE}:", "",
             "| run | objects listed | deviating | wall s | runner list / get / patch | API server LIST / GET / PATCH | pages | peak RSS MB |",
             "|---|---:|---:|---:|---|---|---:|---:|"]
    for r in runs + [fix]:
        q, m = r["requests"], r["metrics"]
        lines.append(f"| {r['label']} | {r['listed']:,} | {r['deviating']} | {r['wall']:.2f} | "
                     f"{q.get('list')} / {q.get('get')} / {q.get('patch')} | {m['LIST']} / {m['GET']} / {m['PATCH']} | "
                     f"{r['pages']} | {r['maxrss_mb']:.0f} |")
    summary = (fix["fix"] or {}).get("summary") or {}
    budget = FIX_OBJECTS / FIX_QPS
    writes = fix["writes"] if fix["writes"] is not None else float("nan")
    lines += ["",
              f"`--fix` of {FIX_OBJECTS} deviating objects ({FIX_OBJECTS // 2} Machines, {FIX_OBJECTS - FIX_OBJECTS // 2} "
              f"XDatabases on AWS, created with the webhooks deleted) at `--qps {FIX_QPS:g}` (burst 10): {fix['wall']:.1f} s in all, "
              f"{writes:.1f} s from `fix: writing` to the end, against {FIX_OBJECTS} / {FIX_QPS:g} = {budget:g} s "
              f"({writes / budget:.2f}×): each object is a paced PATCH and a paced GET (the re-read). "
              f"{summary.get('fixed')} of {summary.get('deviating')} fixed; the audit log holds "
              f"{sum(fix['fixer_writes'].values())} writes of its field manager "
              f"({', '.join(f'{n} answered {c}' for c, n in sorted(fix['fixer_writes'].items()))}); "
              f"the API server's GETs also count the webhook server's look-ups of each Machine's MachineSet (the "
              f"mutating policy's and the monitor-mode validating one's). "
              f"An audit afterwards: {after_fix['deviating']} deviating.",
              "",
              "runner: the JSON `requests` of `policy-runner audit --cluster -o json`; API server: the increase of "
              "`apiserver_request_total` (kubectl get --raw /metrics) over the run, the policies' groups, the XRs', "
              "Kubewarden's and the webhook configurations', no subresource; pages: ceil(objects / page size) of each kind listed, an empty kind one "
              f"page; besides, each run makes {runs[0]['requests']['discovery']} discovery requests, paced too (the "
              f"default pace's wall time is mostly the pace); GETs: the parents no rule lists ({CLUSTERS} Clusters, {NETWORKS} Networks) and the "
              f"{len(POLICIES)} ClusterAdmissionPolicies with the webhook configuration registered for each, whatever "
              "the number of objects. Peak RSS: getrusage "
              "RUSAGE_CHILDREN of a process that runs the runner alone."]
    return "\n".join(lines)


def cleanup():
    """Everything in the bench's namespace gone (finalizers first: no controller removes them here)."""
    kinds = ["machines.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io", "machinedeployments.cluster.x-k8s.io",
             "awsclusters.infrastructure.cluster.x-k8s.io", "clusters.cluster.x-k8s.io",
             "xdatabases.platform.example.org", "vpcs.ec2.aws.m.upbound.io", "networks.network.example.org"]
    for kind in kinds:
        kubectl("delete", kind, "--all", "-n", NS, "--wait=false", check=False)
    for kind in kinds:
        items = json.loads(kubectl("get", kind, "-n", NS, "-o", "json", check=False) or '{"items": []}')["items"]
        for o in items:
            if o["metadata"].get("finalizers"):
                kubectl("patch", kind, o["metadata"]["name"], "-n", NS, "--type", "merge",
                        "-p", '{"metadata":{"finalizers":null}}', check=False)


def main():
    if sys.argv[1:] == ["cleanup"]:
        cleanup()
        return
    if sys.argv[1:] != ["run"]:
        sys.exit(__doc__.split("\n\n")[1])
    if not os.access(RUNNER, os.X_OK):
        sys.exit(f"bench-live-audit: no runner at {RUNNER} (make runner)")
    if kubectl("get", "namespace", NS, check=False).strip():
        cleanup()
    else:
        kubectl("create", "namespace", NS)
    listed = parents()
    runs = []
    for number, target in enumerate(COUNTS, 1):
        step(number, target - listed)
        listed = target
        for label, extra in PACES:
            runs.append(measure(f"audit, {label}", extra))
    fix = fix_bench()
    after_fix = measure("audit after --fix", ["--qps", "1000", "--burst", "1000"])
    print(table(runs, fix, after_fix))
    failures = check(runs, fix, after_fix)
    for failure in failures:
        log(f"FAILED: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
