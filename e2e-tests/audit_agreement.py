#!/usr/bin/env python3
"""The audit agrees with the compiled policy module, request by request.

Usage: audit_agreement.py RUNNER POLICY.wasm DUMP [SETTINGS.json]

Runs `RUNNER audit -o json -f DUMP` (with the settings), then sends every
object the audit evaluated to the module on its own, as policy-server would:
`RUNNER run` on the object's UPDATE AdmissionRequest, with the settings in
validate mode, the module's embedded context-aware resources granted, and
its look-ups answered from the same dump (`--parents DUMP`: the object each
names, pruned by the look-up's field masks as policy-server prunes it, or
policy-server's NotFound text). The look-ups the module made are recorded
(`--record-session`).

Checks, for every object, that the module's `allowed`, `status.message` and
`status.code` are the audit's, and that the module made the look-ups the
audit reports, in order: the same apiVersion, kind, namespace, name and
field masks, found or not found alike. Prints one line per disagreement;
exit 1 if there is any, 2 on a usage or tool error.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
from dump_replay import dump_objects, key  # noqa: E402
from kwctl_session import exchanges  # noqa: E402


def request_for(obj):
    api_version = obj["apiVersion"]
    group, _, version = api_version.rpartition("/")
    kind = {"group": group, "version": version, "kind": obj["kind"]}
    return {
        "uid": "audit-agreement",
        "kind": kind,
        "resource": {"group": group, "version": version, "resource": obj["kind"].lower() + "s"},
        "requestKind": kind,
        "name": obj["metadata"]["name"],
        "namespace": obj["metadata"].get("namespace", ""),
        "operation": "UPDATE",
        "userInfo": {"username": "audit-agreement"},
        "object": obj,
        "oldObject": obj,
        "dryRun": False,
    }


def module_lookups(session_text):
    """The look-ups a recorded kwctl session holds, in the audit's terms:
    apiVersion, kind, namespace, name, fieldMasks and answer."""
    out = []
    for request, response in exchanges(session_text):
        if response["type"] == "Success":
            answer = "found"
        elif response["message"].startswith("Cannot find "):
            answer = "not-found"
        else:
            answer = "failed"
        out.append({"apiVersion": request["api_version"], "kind": request["kind"],
                    "namespace": request.get("namespace"), "name": request["name"],
                    "fieldMasks": request.get("field_masks") or [], "answer": answer})
    return out


def audit_lookups(entry):
    """The look-ups the audit reports for `entry`, in the same terms."""
    return [{"apiVersion": l["apiVersion"], "kind": l["kind"], "namespace": l["namespace"],
             "name": l["name"], "fieldMasks": sorted(l["fieldMasks"]), "answer": l["answer"]}
            for l in entry["lookups"]]


def check(runner, policy, settings, dump, entry, obj, scratch, index):
    request_path = os.path.join(scratch, f"request-{index}.json")
    session_path = os.path.join(scratch, f"session-{index}.yml")
    with open(request_path, "w", encoding="utf-8") as f:
        json.dump(request_for(obj), f)
    run = subprocess.run(
        [runner, "run", "--allow-context-aware", "--settings-json", json.dumps(settings),
         "--parents", dump, "--record-session", session_path, "-r", request_path, policy],
        capture_output=True, text=True)
    if run.returncode != 0:
        return f"{entry['id']}: the runner failed: {run.stderr.strip()}"
    response = json.loads(run.stdout)
    status = response.get("status") or {}
    module = (response["allowed"], status.get("message"), status.get("code"))
    audit = (entry["allowed"], entry["message"], entry["code"])
    if module != audit:
        return f"{entry['id']}: the module answers {module}, the audit {audit}"
    with open(session_path, encoding="utf-8") as f:
        made = module_lookups(f.read())
    if made != audit_lookups(entry):
        return f"{entry['id']}: the module looks up {made}, the audit reports {audit_lookups(entry)}"
    return None


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    runner, policy, dump = argv[1:4]
    settings = {}
    audit_args = [runner, "audit", "--full", "-o", "json", "-f", dump]
    if len(argv) == 5:
        with open(argv[4], encoding="utf-8") as f:
            settings = json.load(f)
        audit_args += ["--settings-path", argv[4]]
    settings["mode"] = "validate"
    audit = subprocess.run(audit_args, capture_output=True, text=True)
    if audit.returncode not in (0, 1):
        print(f"audit failed: {audit.stderr.strip()}", file=sys.stderr)
        return 2
    report = json.loads(audit.stdout)
    objects = dump_objects(dump)
    by_key = {key(o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
              for o in objects}
    evaluated = [e for e in report["objects"] if e["status"] != "not-evaluated"]
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = pool.map(
            lambda ie: check(runner, policy, settings, dump, ie[1],
                             by_key[key(ie[1]["apiVersion"], ie[1]["kind"], ie[1]["namespace"], ie[1]["name"])],
                             scratch, ie[0]),
            enumerate(evaluated))
        problems = [p for p in problems if p]
    for problem in problems:
        print(problem)
    print(f"{len(evaluated)} objects of {dump} sent to the module one by one: "
          f"{len(evaluated) - len(problems)} agree with the audit")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
