#!/usr/bin/env python3
"""A `kubectl get -o yaml` dump evaluated the way Kubewarden's audit scanner
evaluates a policy on a cluster holding those objects.

Usage: scanner_dump.py KWCTL POLICY.wasm DUMP POLICY.yaml
           [--unavailable KIND/NAMESPACE/NAME]... [--out DIR] [-- HOST FLAGS...]

POLICY.yaml is the ClusterAdmissionPolicy the scanner audits (its rules and
settings are used; examples/validate-mode-policy.yaml). Like the scanner
(kubewarden-controller internal/audit-scanner), this lists every object of
the dump whose (group, version, resource) one of the policy's rules names,
and posts each one, as test_data/audit_scanner/gen.py `scanner_review`
builds it: operation CREATE, the object as listed, no oldObject, an empty
userInfo. Each review is evaluated with `KWCTL run` (a real kwctl or the
project's runner), with the policy's settings, the module's embedded
contextAwareResources granted, and a replay session answering the parent
look-ups from the same dump:

- the parent is the object's ownerReference that the policy follows
  (a MachineSet's MachineDeployment, a Machine's MachineSet or control
  plane), or, for a topology-owned MachineDeployment, MachinePool or control
  plane, its Cluster and then the Cluster's ClusterClass;
- each request carries the field_masks the policy sends
  (test_data/field_masks.py), and is answered with the dump's object, or
  with policy-server's NotFound text when the dump has none;
- every look-up made for an object named by --unavailable is answered with
  the error policy-server reports when the API server replies 503 (the
  text of test_data/audit_scanner/replay_kubeadmconfig_parent_unavailable.yml).

A look-up the policy makes that the session does not predict fails the
replay, and the object's result with it (`error`, the replay error in the
message). Prints one line per evaluated object, in dump order:

    RESULT <TAB> KIND NAMESPACE/NAME <TAB> MESSAGE

RESULT is the report result the scanner writes (report.go
`computePolicyResult`): `pass` (allowed), `fail` (rejected), `error`
(`status.code` 500, or no answer: the host failed). With --out, the reviews
(review-N.json) and sessions (session-N.yml, N the line's index from 0) are
kept in DIR. Exit 0 after printing; 1 when the runner reports that the policy
made fewer look-ups than a session predicts (the prediction is wrong); 2 on
a usage or input error.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.join(ROOT, "test_data"))
sys.path.insert(0, os.path.join(ROOT, "test_data", "audit_scanner"))
from field_masks import masks_for  # noqa: E402  (test_data/field_masks.py)
from gen import scanner_review  # noqa: E402  (test_data/audit_scanner/gen.py)
from dump_replay import dump_objects, exchange, found, key, not_found  # noqa: E402

CORE = "cluster.x-k8s.io"
TOPOLOGY_OWNED = "topology.cluster.x-k8s.io/owned"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
# The kinds the policy resolves from the Cluster topology when they carry
# TOPOLOGY_OWNED (control planes: any kind of the group).
TOPOLOGY_KINDS = {(CORE, "MachineDeployment"), (CORE, "MachinePool")}
CONTROL_PLANE = "controlplane.cluster.x-k8s.io"


def split(api_version):
    group, _, version = api_version.rpartition("/")
    return group, version


def resource_of(kind):
    """The plural resource of the CAPI kinds a dump holds (`kubectl
    api-resources`: the lower-case kind plus `s` for every one of them)."""
    return kind.lower() + "s"


def audited(obj, rules):
    """Whether the scanner lists `obj` for a policy with `rules`: one rule
    names its group, version and resource, with CREATE among its operations
    (the scanner skips a policy without CREATE)."""
    group, version = split(obj["apiVersion"])
    resource = resource_of(obj["kind"])
    return any(group in r["apiGroups"] and version in r["apiVersions"]
               and resource in r["resources"] and "CREATE" in r["operations"] for r in rules)


def lookups(obj, by_key):
    """The parent look-ups the policy makes for `obj`, in order:
    (apiVersion, kind, namespace, name)."""
    meta = obj["metadata"]
    namespace = meta.get("namespace")
    for ref in meta.get("ownerReferences") or []:
        if split(ref["apiVersion"])[0] == CORE and ref["kind"] in ("Cluster", "ClusterClass"):
            continue
        try:
            masks_for(obj["apiVersion"], obj["kind"], ref["apiVersion"], ref["kind"])
        except ValueError:
            continue  # not a parent the policy follows (a Machine for its InfraMachine)
        return [(ref["apiVersion"], ref["kind"], namespace, ref["name"])]
    group, version = split(obj["apiVersion"])
    labels = meta.get("labels") or {}
    topology = (group, obj["kind"]) in TOPOLOGY_KINDS or group == CONTROL_PLANE
    if not topology or TOPOLOGY_OWNED not in labels or CLUSTER_NAME not in labels:
        return []
    cluster_version = f"{CORE}/{version}"
    cluster = (cluster_version, "Cluster", namespace, labels[CLUSTER_NAME])
    out = [cluster]
    found = by_key.get(key(*cluster))
    if found:
        topo = found.get("spec", {}).get("topology") or {}
        class_ref = topo.get("classRef") or {}
        name = class_ref.get("name") or topo.get("class")
        if name:
            out.append((cluster_version, "ClusterClass",
                        class_ref.get("namespace") or topo.get("classNamespace") or namespace, name))
    return out


def unavailable_message(api_version, kind, name):
    """What policy-server hands the policy when the API server answers 503
    for a get (observed on policy-server 1.35; the shape of
    test_data/audit_scanner/replay_kubeadmconfig_parent_unavailable.yml)."""
    group, _ = split(api_version)
    resource = resource_of(kind)
    what = f"get {resource}.{group}" if group else f"get {resource}"
    reason = f"the server is currently unable to handle the request ({what})"
    return (f"ApiError: {reason}: ServiceUnavailable (Status {{ status: Some(Failure), code: 503, "
            f"message: \"{reason}\", metadata: Some(ListMeta {{ continue_: None, remaining_item_count: None, "
            f"resource_version: None, self_link: None }}), reason: \"ServiceUnavailable\", "
            f"details: Some(StatusDetails {{ name: \"{name}\", group: \"{group}\", kind: \"{resource}\", "
            f"uid: \"\", causes: [], retry_after_seconds: 0 }}) }})\n\nCaused by:\n    {reason}: ServiceUnavailable")


def session(obj, by_key, unavailable, in_place_fields):
    """The kwctl replay session (JSON is YAML) answering `obj`'s look-ups."""
    entries = []
    for parent in lookups(obj, by_key):
        api_version, kind, namespace, name = parent
        masks = masks_for(obj["apiVersion"], obj["kind"], api_version, kind,
                          in_place_fields=in_place_fields)
        held = by_key.get(key(*parent))
        if unavailable:
            response = {"type": "Error", "message": unavailable_message(api_version, kind, name)}
        elif held is not None:
            response = found(held, compact=True)
        else:
            response = not_found(*parent)
        entries.append(exchange(*parent, masks, response))
    return entries


def label(obj):
    meta = obj["metadata"]
    return f"{obj['kind']} {meta.get('namespace') or ''}/{meta['name']}"


def evaluate(kwctl, policy, settings, host_flags, obj, entries, scratch, index):
    review_path = os.path.join(scratch, f"review-{index}.json")
    session_path = os.path.join(scratch, f"session-{index}.yml")
    with open(review_path, "w", encoding="utf-8") as f:
        json.dump(scanner_review(obj), f)
    with open(session_path, "w", encoding="utf-8") as f:
        json.dump(entries, f)
    run = subprocess.run(
        [kwctl, "run", *host_flags, "--allow-context-aware",
         "--replay-host-capabilities-interactions", session_path,
         "--request-path", review_path, "--settings-json", json.dumps(settings), policy],
        capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        # No answer: the scanner reports an error.
        return "error", "host error: " + " ".join(run.stderr.split())[:300], False
    response = json.loads(run.stdout.strip().splitlines()[-1])
    status = response.get("status") or {}
    message = " ".join((status.get("message") or "").split())
    # The runner warns about exchanges left over (kwctl does not).
    unused = "have not been replayed" in run.stderr
    if status.get("code") == 500:
        return "error", message, unused
    return ("pass" if response["allowed"] else "fail"), message, unused


def main(argv):
    host_flags = []
    if "--" in argv:
        host_flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    unavailable = set()
    out_dir = None
    positional = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "--unavailable":
            unavailable.add(next(args, ""))
        elif arg == "--out":
            out_dir = next(args, None)
        else:
            positional.append(arg)
    if len(positional) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    kwctl, policy, dump, policy_yaml = positional
    with open(os.path.join(ROOT, policy_yaml), encoding="utf-8") as f:
        spec = yaml.safe_load(f)["spec"]
    settings = spec.get("settings") or {}
    in_place_fields = (settings.get("capi") or {}).get("inPlaceFields", True)
    objects = dump_objects(os.path.join(ROOT, dump))
    by_key = {key(o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
              for o in objects}
    scanned = [o for o in objects if audited(o, spec["rules"])]
    missing = unavailable - {label(o).replace(" ", "/", 1) for o in scanned}
    if missing:
        print(f"--unavailable names no audited object of {dump}: {sorted(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        scratch = out_dir or tmp
        os.makedirs(scratch, exist_ok=True)
        results = list(pool.map(
            lambda io: evaluate(kwctl, policy, settings, host_flags, io[1],
                                session(io[1], by_key, label(io[1]).replace(" ", "/", 1) in unavailable,
                                        in_place_fields),
                                scratch, io[0]),
            enumerate(scanned)))
    wrong = []
    for obj, (result, message, unused) in zip(scanned, results):
        print(f"{result}\t{label(obj)}\t{message}")
        if unused:
            wrong.append(label(obj))
    if wrong:
        print("the policy made fewer look-ups than these sessions predict (scanner_dump.py "
              f"`lookups` is wrong): {', '.join(wrong)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
