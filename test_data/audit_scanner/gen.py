#!/usr/bin/env python3
"""Writes (or checks) the audit-scanner fixtures: existing objects as
Kubewarden's audit scanner sends them to the policy server, with kwctl replay
sessions for their parents.

Kubewarden's audit scanner (kubewarden-controller `internal/audit-scanner`,
`scanner.go` `newAdmissionRequest`) lists every object of every GVR in an
audited policy's rules and posts one AdmissionReview per object and policy:

    uid, name, namespace     the object's
    kind, requestKind        the object's group/version/kind
    resource                 group/version and, as `resource`, the KIND (sic)
    operation                CREATE (it cannot simulate UPDATE or DELETE)
    userInfo                 empty: no user, no groups
    object                   the object as listed
    oldObject, options       null

and reads the answer as pass (allowed), fail (rejected) or error (no answer,
or `status.code` 500). Each fixture here is such a review, built from an
existing, realistic fixture (test_data/capi/v1beta2, test_data/xr), which is
copied and never edited:

    <scenario>.json          the AdmissionReview the scanner posts
    replay_<scenario>.yml    the parent look-ups, as a kwctl replay session
    scenarios.tsv            scenario, the report result the scanner writes,
                             where the object comes from

Each scenario names the cluster its object lives in: the parent objects
(test_data/capi/v1beta2/parents/, as the API server serves them), none for
a parent that is gone. The replay session is what the policy itself asks
of that cluster: the runner evaluates the review with `--parents` (each
look-up answered with the object it names, or policy-server's NotFound
text) and writes the look-ups it made, with the field_masks the policy
sent, as a kwctl session (`--record-session`). It records with
`--ignore-field-masks`, so each `Success` payload is the whole parent:
replayed by the runner as policy-server hosts, it is pruned by the masks;
replayed with `--ignore-field-masks`, or by a real kwctl, the guest gets it
whole, as a host before Kubewarden 1.33 hands it (e2e-tests/
audit_scanner.bats runs both). A parent the policy does not look up fails
the generation: the scenario's cluster is wrong.

One answer no cluster of objects gives: the API server's 503 for the
KubeadmConfig's control plane. That session is recorded against a cluster
without the KubeadmControlPlane (so the request, masks included, is the
policy's own) and its NotFound answer replaced by the hand-written 503
error of the source session
(test_data/capi/v1beta2/replay_kubeadmconfig_create_lookup_unavailable.yml).

A `..._compliant` scenario is its `..._drifted` twin after the mutating
policy's own patch (the runner in mutate mode, the patch applied here), so it
is exactly what the contract asks for and validate mode must accept it.
Objects taken from CREATE requests get what the API server sets when it
stores one (`as_stored`): a uid, a resourceVersion, a generation and a
creationTimestamp.

The policy is evaluated with the settings of examples/validate-mode-policy.yaml
(`mode: validate`); the mutations use the same settings in mutate mode.

Usage (from the repository root, after `make annotated-policy.wasm runner`):
    python3 test_data/audit_scanner/gen.py            # write the fixtures
    python3 test_data/audit_scanner/gen.py --check    # exit 1 when stale
RUNNER (default target/host/policy-runner; a real kwctl has no `--parents`)
and POLICY (default annotated-policy.wasm) name the host and the module.
"""
import base64
import copy
import json
import os
import subprocess
import sys
import tempfile
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "validate-mode-policy.yaml")

PARENTS = "test_data/capi/v1beta2/parents"
# The 503 answer no cluster of objects gives (see the top): the source
# session whose recorded error replaces the NotFound.
UNAVAILABLE_SESSION = "test_data/capi/v1beta2/replay_kubeadmconfig_create_lookup_unavailable.yml"

# (scenario, source request, the parent objects of its cluster (files), or
# None for an object that looks nothing up, result the scanner reports,
# what the object is). `compliant:<scenario>` sources are the named
# scenario's object after the mutating policy's patch, in the same cluster.
SCENARIOS = [
    ("machineset_drifted", "test_data/capi/v1beta2/machineset_update_drifted_from_md.json",
     [f"{PARENTS}/machinedeployment_capi-quickstart-md-1.yaml"], "fail",
     "a MachineSet whose labels drifted from its MachineDeployment"),
    ("machineset_compliant", "compliant:machineset_drifted", None, "pass",
     "the same MachineSet as the mutating policy leaves it"),
    ("machine_drifted", "test_data/capi/v1beta2/machine_update_fields_drifted_from_machineset.json",
     [f"{PARENTS}/machineset_capi-quickstart-md-2-k4v9c.yaml"], "fail",
     "a Machine whose in-place fields drifted from its MachineSet"),
    ("machine_compliant", "compliant:machine_drifted", None, "pass",
     "the same Machine as the mutating policy leaves it"),
    ("kubeadmcontrolplane_drifted",
     "test_data/capi/v1beta2/kubeadmcontrolplane_update_topology_fields_drifted.json",
     [f"{PARENTS}/cluster_capi-quickstart-fields.yaml", f"{PARENTS}/clusterclass_quick-start-fields.yaml"],
     "fail", "a topology-owned control plane that drifted from its Cluster and ClusterClass"),
    ("kubeadmcontrolplane_compliant", "compliant:kubeadmcontrolplane_drifted", None, "pass",
     "the same control plane as the mutating policy leaves it"),
    # No KubeadmControlPlane: the look-up is recorded NotFound, then answered
    # with UNAVAILABLE_SESSION's 503 (`unavailable`).
    ("kubeadmconfig_parent_unavailable",
     "test_data/capi/v1beta2/kubeadmconfig_create_lookup_unavailable.json", [], "error",
     "a KubeadmConfig whose KubeadmControlPlane cannot be read (503)"),
    ("machineset_parent_not_found", "test_data/capi/v1beta2/machineset_create_parent_not_found.json",
     [], "pass", "a MachineSet whose MachineDeployment is gone (NotFound is not an error)"),
    ("xdatabase_drifted", "test_data/xr/xdatabase_converged_hetzner.json", None, "fail",
     "an XR with a cloud tag for a label the example does not opt in"),
    ("xdatabase_compliant", "compliant:xdatabase_drifted", None, "pass",
     "the same XR as the mutating policy leaves it"),
]
# The scenario whose recorded NotFound becomes UNAVAILABLE_SESSION's error.
UNAVAILABLE = "kubeadmconfig_parent_unavailable"


def load_json(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def example_settings():
    with open(EXAMPLE) as f:
        policy = yaml.safe_load(f)
    return policy["spec"].get("settings") or {}


def as_stored(obj):
    """`obj` as the API server lists it. An object taken from a CREATE request
    lacks what the server sets when it stores it; the copy gets a uid (a
    UUIDv5 of its coordinates, so regenerating gives the same bytes), a
    resourceVersion, a generation and a creationTimestamp."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    coordinates = f"{obj['apiVersion']}/{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}"
    stored = {
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, coordinates)),
        "resourceVersion": "52001",
        "generation": 1,
        "creationTimestamp": "2025-06-03T08:00:00Z",
    }
    for key, value in stored.items():
        meta.setdefault(key, value)
    return obj


def scanner_review(obj):
    """The AdmissionReview the audit scanner posts for `obj`."""
    group, _, version = obj["apiVersion"].rpartition("/")
    gvk = {"group": group, "version": version, "kind": obj["kind"]}
    meta = obj["metadata"]
    request = {
        "uid": meta["uid"],
        "kind": gvk,
        "resource": {"group": group, "version": version, "resource": obj["kind"]},
        "requestKind": dict(gvk),
        "name": meta["name"],
    }
    if meta.get("namespace"):
        request["namespace"] = meta["namespace"]
    request.update({"operation": "CREATE", "userInfo": {}, "object": obj,
                    "oldObject": None, "options": None})
    return {"request": request}


def parents_args(parents, scratch):
    """`--parents` arguments for a cluster holding `parents` (files); an
    empty List for a cluster without any (every look-up NotFound)."""
    if parents:
        return [arg for path in parents for arg in ("--parents", os.path.join(ROOT, path))]
    empty = os.path.join(scratch, "no-parents.json")
    with open(empty, "w") as f:
        f.write('{"apiVersion": "v1", "kind": "List", "items": []}\n')
    return ["--parents", empty]


def run(runner, policy, review_path, settings, parents=None, scratch=None, record=None):
    """`policy-runner run` of the review; with `parents` (files, possibly none), its
    look-ups answered from them, and with `record`, written there as a kwctl
    session of whole objects (`--ignore-field-masks`). A parent no look-up
    asked for is an error: the scenario's cluster is wrong."""
    cmd = [runner, "run", "--request-path", review_path, "--settings-json", json.dumps(settings)]
    if parents is not None:
        cmd += ["--allow-context-aware", *parents_args(parents, scratch)]
    if record:
        cmd += ["--ignore-field-masks", "--record-session", record]
    cmd.append(policy)
    done = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    unasked = [line for line in done.stderr.splitlines() if "was not looked up" in line]
    if unasked:
        raise SystemExit(f"{review_path}: the policy does not look up every parent the scenario names:\n"
                         + "\n".join(unasked))
    return json.loads(done.stdout.strip().splitlines()[-1])


def unavailable(session_text):
    """The recorded session with its one NotFound answer replaced by the
    503 error UNAVAILABLE_SESSION records (hand-written there: no cluster of
    objects answers 503). The request the policy made is kept as recorded."""
    with open(os.path.join(ROOT, UNAVAILABLE_SESSION)) as f:
        (source,) = yaml.safe_load(f)
    session = yaml.safe_load(session_text)
    assert len(session) == 1 and session[0]["response"]["type"] == "Error", session
    assert session[0]["response"]["message"].startswith("Cannot find "), session
    assert session[0]["request"] == source["request"], (
        f"the policy's look-up is not the one {UNAVAILABLE_SESSION} records:\n"
        f"{session[0]['request']}\n{source['request']}")
    assert source["response"]["type"] == "Error", source
    head, _, _ = session_text.partition("  response:\n")
    # a double-quoted YAML scalar (the message is ASCII)
    return (head + "  response:\n    type: Error\n    message: "
            + json.dumps(source["response"]["message"]) + "\n")


def record_session(runner, policy, review_path, settings, parents, scratch, scenario):
    """The kwctl session of the look-ups the policy makes for the review in
    the cluster of `parents` (see the top), with a header saying so."""
    out = os.path.join(scratch, f"recorded_{scenario}.yml")
    run(runner, policy, review_path, settings, parents, scratch, record=out)
    with open(out) as f:
        text = f.read()
    cluster = ", ".join(parents) if parents else "no parents"
    header = (f"# Written by gen.py: the look-ups the policy makes in a cluster holding {cluster},\n"
              "# recorded by `policy-runner run --parents ... --ignore-field-masks --record-session`.\n")
    if scenario == UNAVAILABLE:
        header += (f"# The NotFound answer is replaced by the 503 error of {UNAVAILABLE_SESSION}\n"
                   "# (hand-written: a cluster of objects cannot answer 503).\n")
        text = unavailable(text)
    return header + text


def pointer_parts(pointer):
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def apply_patch(doc, patch):
    """RFC 6902 add / replace / remove, the operations the host's diff writes."""
    doc = copy.deepcopy(doc)
    for op in patch:
        *parents, last = pointer_parts(op["path"])
        node = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            index = len(node) if last == "-" else int(last)
            if op["op"] == "add":
                node.insert(index, op["value"])
            elif op["op"] == "replace":
                node[index] = op["value"]
            elif op["op"] == "remove":
                del node[index]
            else:
                raise ValueError(f"unexpected patch operation {op}")
        elif op["op"] in ("add", "replace"):
            node[last] = op["value"]
        elif op["op"] == "remove":
            del node[last]
        else:
            raise ValueError(f"unexpected patch operation {op}")
    return doc


def generate(out_dir, runner, policy):
    settings = example_settings()
    mutate_settings = {k: v for k, v in settings.items() if k != "mode"}
    objects, clusters = {}, {}
    rows = ["# scenario\tresult\tsource (written by gen.py)\n"]
    with tempfile.TemporaryDirectory() as scratch:
        for scenario, source, parents, result, what in SCENARIOS:
            if source.startswith("compliant:"):
                twin = source.partition(":")[2]
                parents = clusters[twin]
                review_path = os.path.join(out_dir, f"{twin}.json")
                answer = run(runner, policy, review_path, mutate_settings, parents, scratch)
                patch = json.loads(base64.b64decode(answer["patch"])) if answer.get("patch") else []
                if not patch:
                    raise SystemExit(f"{scenario}: the mutating policy leaves {twin} as it is: not drifted")
                obj = apply_patch(objects[twin], patch)
            else:
                obj = as_stored(load_json(source)["object"])
            objects[scenario], clusters[scenario] = obj, parents
            review_path = os.path.join(out_dir, f"{scenario}.json")
            with open(review_path, "w") as f:
                json.dump(scanner_review(obj), f, indent=2)
                f.write("\n")
            if parents is not None:
                session = record_session(runner, policy, review_path, settings, parents, scratch, scenario)
                with open(os.path.join(out_dir, f"replay_{scenario}.yml"), "w") as f:
                    f.write(session)
            rows.append(f"{scenario}\t{result}\t{source}: {what}\n")
    with open(os.path.join(out_dir, "scenarios.tsv"), "w") as f:
        f.writelines(rows)


def written_files(directory):
    return sorted(n for n in os.listdir(directory)
                  if n == "scenarios.tsv" or (n.endswith((".json", ".yml")) and n != "gen.py"))


def main(argv):
    runner = os.environ.get("RUNNER") or os.path.join(ROOT, "target", "host", "policy-runner")
    runner = os.path.join(ROOT, runner) if not os.path.isabs(runner) else runner
    policy = os.environ.get("POLICY") or os.path.join(ROOT, "annotated-policy.wasm")
    policy = os.path.join(ROOT, policy) if not os.path.isabs(policy) else policy
    if "--check" not in argv:
        generate(HERE, runner, policy)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, runner, policy)
        stale = [n for n in sorted(set(written_files(tmp)) | set(written_files(HERE)))
                 if not os.path.exists(os.path.join(HERE, n)) or not os.path.exists(os.path.join(tmp, n))
                 or open(os.path.join(HERE, n)).read() != open(os.path.join(tmp, n)).read()]
    if stale:
        print("stale audit-scanner fixtures (run python3 test_data/audit_scanner/gen.py): "
              + ", ".join(stale), file=sys.stderr)
        return 1
    print("audit-scanner fixtures are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
