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
    replay_<scenario>.yml    the parent look-ups, as a kwctl replay session,
                             with the field_masks the policy sends
                             (test_data/field_masks.py `masks_for`)
    scenarios.tsv            scenario, the report result the scanner writes,
                             where the object comes from

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
KWCTL (default target/host/policy-runner) and POLICY (default
annotated-policy.wasm) name the host and the module.
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
sys.path.insert(0, os.path.dirname(HERE))
from field_masks import masks_for, yaml_lines  # noqa: E402  (test_data/field_masks.py)

EXAMPLE = os.path.join(ROOT, "examples", "validate-mode-policy.yaml")

# (scenario, source request, source replay or None, result the scanner
# reports, what the object is). `compliant:<scenario>` sources are the named
# scenario's object after the mutating policy's patch.
SCENARIOS = [
    ("machineset_drifted", "test_data/capi/v1beta2/machineset_update_drifted_from_md.json",
     "test_data/capi/v1beta2/replay_machineset_update_drifted_from_md.yml", "fail",
     "a MachineSet whose labels drifted from its MachineDeployment"),
    ("machineset_compliant", "compliant:machineset_drifted", None, "pass",
     "the same MachineSet as the mutating policy leaves it"),
    ("machine_drifted", "test_data/capi/v1beta2/machine_update_fields_drifted_from_machineset.json",
     "test_data/capi/v1beta2/replay_machine_update_fields_drifted_from_machineset.yml", "fail",
     "a Machine whose in-place fields drifted from its MachineSet"),
    ("machine_compliant", "compliant:machine_drifted", None, "pass",
     "the same Machine as the mutating policy leaves it"),
    ("kubeadmcontrolplane_drifted",
     "test_data/capi/v1beta2/kubeadmcontrolplane_update_topology_fields_drifted.json",
     "test_data/capi/v1beta2/replay_kubeadmcontrolplane_update_topology_fields_drifted.yml", "fail",
     "a topology-owned control plane that drifted from its Cluster and ClusterClass"),
    ("kubeadmcontrolplane_compliant", "compliant:kubeadmcontrolplane_drifted", None, "pass",
     "the same control plane as the mutating policy leaves it"),
    ("kubeadmconfig_parent_unavailable",
     "test_data/capi/v1beta2/kubeadmconfig_create_lookup_unavailable.json",
     "test_data/capi/v1beta2/replay_kubeadmconfig_create_lookup_unavailable.yml", "error",
     "a KubeadmConfig whose KubeadmControlPlane cannot be read (503)"),
    ("machineset_parent_not_found", "test_data/capi/v1beta2/machineset_create_parent_not_found.json",
     "test_data/capi/v1beta2/replay_machineset_create_parent_not_found.yml", "pass",
     "a MachineSet whose MachineDeployment is gone (NotFound is not an error)"),
    ("xdatabase_drifted", "test_data/xr/xdatabase_converged_hetzner.json", None, "fail",
     "an XR with a cloud tag for a label the example does not opt in"),
    ("xdatabase_compliant", "compliant:xdatabase_drifted", None, "pass",
     "the same XR as the mutating policy leaves it"),
]


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


def exchanges(path):
    """A replay session's exchanges: (request fields, response)."""
    with open(os.path.join(ROOT, path)) as f:
        session = yaml.safe_load(f)
    out = []
    for entry in session:
        text = entry["request"]
        tag, _, body = text.partition("\n")
        assert tag.strip() == "!KubernetesGetResource", f"{path}: {tag}"
        out.append((yaml.safe_load(body), entry["response"]))
    return out


def session_text(scenario, child, source_replay, in_place_fields):
    """The replay session for `child`: the source session's answers, every
    request with the masks the policy sends."""
    lines = [f"# The parent look-ups of {source_replay}, with the field_masks test_data/field_masks.py gives.\n"]
    for request, response in exchanges(source_replay):
        masks = masks_for(child["apiVersion"], child["kind"], request["api_version"],
                          request["kind"], in_place_fields=in_place_fields)
        lines += [
            "- type: Exchange\n",
            "  request: |\n",
            "    !KubernetesGetResource\n",
            f"    api_version: {request['api_version']}\n",
            f"    kind: {request['kind']}\n",
            f"    name: {request['name']}\n",
        ]
        if request.get("namespace") is not None:
            lines.append(f"    namespace: {request['namespace']}\n")
        lines.append(f"    disable_cache: {str(bool(request.get('disable_cache'))).lower()}\n")
        lines += yaml_lines(masks)
        lines += ["  response:\n", f"    type: {response['type']}\n"]
        if response["type"] == "Success":
            payload = response["payload"]
            if not isinstance(payload, str):
                payload = json.dumps(payload, separators=(",", ":"))
            lines.append("    payload: '" + payload.replace("'", "''") + "'\n")
        else:
            lines.append("    message: " + json.dumps(response["message"]) + "\n")
    return "".join(lines)


def run(kwctl, policy, review_path, settings, replay_path):
    cmd = [kwctl, "run", "--request-path", review_path, "--settings-json", json.dumps(settings)]
    if replay_path:
        cmd += ["--allow-context-aware", "--replay-host-capabilities-interactions", replay_path]
    cmd.append(policy)
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


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


def generate(out_dir, kwctl, policy):
    settings = example_settings()
    mutate_settings = {k: v for k, v in settings.items() if k != "mode"}
    in_place = (settings.get("capi") or {}).get("inPlaceFields", True)
    objects, replays = {}, {}
    rows = ["# scenario\tresult\tsource (written by gen.py)\n"]
    for scenario, source, source_replay, result, what in SCENARIOS:
        if source.startswith("compliant:"):
            twin = source.partition(":")[2]
            replays[scenario] = replays[twin]
            review_path = os.path.join(out_dir, f"{twin}.json")
            replay_path = os.path.join(out_dir, f"replay_{twin}.yml") if replays[twin] else None
            answer = run(kwctl, policy, review_path, mutate_settings, replay_path)
            patch = json.loads(base64.b64decode(answer["patch"])) if answer.get("patch") else []
            if not patch:
                raise SystemExit(f"{scenario}: the mutating policy leaves {twin} as it is: not drifted")
            obj = apply_patch(objects[twin], patch)
        else:
            obj = as_stored(load_json(source)["object"])
            replays[scenario] = session_text(scenario, obj, source_replay, in_place) if source_replay else None
        objects[scenario] = obj
        with open(os.path.join(out_dir, f"{scenario}.json"), "w") as f:
            json.dump(scanner_review(obj), f, indent=2)
            f.write("\n")
        if replays[scenario]:
            with open(os.path.join(out_dir, f"replay_{scenario}.yml"), "w") as f:
                f.write(replays[scenario])
        rows.append(f"{scenario}\t{result}\t{source}: {what}\n")
    with open(os.path.join(out_dir, "scenarios.tsv"), "w") as f:
        f.writelines(rows)


def written_files(directory):
    return sorted(n for n in os.listdir(directory)
                  if n == "scenarios.tsv" or (n.endswith((".json", ".yml")) and n != "gen.py"))


def main(argv):
    kwctl = os.environ.get("KWCTL") or os.path.join(ROOT, "target", "host", "policy-runner")
    policy = os.environ.get("POLICY") or os.path.join(ROOT, "annotated-policy.wasm")
    policy = os.path.join(ROOT, policy) if not os.path.isabs(policy) else policy
    if "--check" not in argv:
        generate(HERE, kwctl, policy)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, kwctl, policy)
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
