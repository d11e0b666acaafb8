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
userInfo. Each review is evaluated with the policy's settings and the
module's embedded contextAwareResources granted, its parent look-ups
answered from the same dump:

- the runner (RUNNER, default target/host/policy-runner) evaluates it with
  `--parents DUMP`: whatever the policy looks up is answered as
  policy-server answers, with the dump's object pruned by the look-up's
  field masks, or with policy-server's NotFound text. It writes the
  look-ups the policy made as a kwctl session (`--record-session`). Which
  parents an object has, and the masks, are the policy's own: nothing here
  predicts them.
- KWCTL, when it is not the runner (a real kwctl), evaluates the review
  again, replaying that session: its answer is the result.
- every look-up made for an object named by --unavailable is answered with
  the error policy-server reports when the API server replies 503 (the
  text of test_data/audit_scanner/replay_kubeadmconfig_parent_unavailable.yml):
  the session recorded from the dump is kept up to its first look-up,
  whose answer becomes that error (written by hand: a dump of objects
  cannot answer 503), and KWCTL replays it.

Prints one line per evaluated object, in dump order:

    RESULT <TAB> KIND NAMESPACE/NAME <TAB> MESSAGE

RESULT is the report result the scanner writes (report.go
`computePolicyResult`): `pass` (allowed), `fail` (rejected), `error`
(`status.code` 500, or no answer: the host failed). With --out, the reviews
(review-N.json) and sessions (session-N.yml, N the line's index from 0) are
kept in DIR. Exit 0 after printing; 1 when a replayed session is not
replayed whole (the policy made fewer look-ups under KWCTL than under the
runner); 2 on a usage or input error.
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.join(ROOT, "test_data", "audit_scanner"))
from gen import scanner_review  # noqa: E402  (test_data/audit_scanner/gen.py)
from dump_replay import dump_objects  # noqa: E402


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


def unavailable_session(recorded):
    """The recorded session (YAML text) cut after its first look-up, whose
    answer becomes the 503 error: the policy stops at a parent it cannot
    read. None when the policy looked nothing up."""
    entries = yaml.safe_load(recorded) or []
    if not entries:
        return None
    entry = entries[0]
    request = yaml.safe_load(entry["request"].partition("\n")[2])
    entry["response"] = {"type": "Error", "message": unavailable_message(
        request["api_version"], request["kind"], request["name"])}
    return json.dumps([entry])  # JSON is YAML


def label(obj):
    meta = obj["metadata"]
    return f"{obj['kind']} {meta.get('namespace') or ''}/{meta['name']}"


def response_result(run):
    """(result, message, replayed whole) of a `run` subprocess."""
    if run.returncode != 0:
        # No answer: the scanner reports an error.
        return "error", "host error: " + " ".join(run.stderr.split())[:300], True
    response = json.loads(run.stdout.strip().splitlines()[-1])
    status = response.get("status") or {}
    message = " ".join((status.get("message") or "").split())
    # The runner warns about exchanges left over (kwctl does not).
    whole = "have not been replayed" not in run.stderr
    if status.get("code") == 500:
        return "error", message, whole
    return ("pass" if response["allowed"] else "fail"), message, whole


def same_program(a, b):
    """Whether two commands name the same executable."""
    def resolve(command):
        return os.path.realpath(shutil.which(command, path=os.environ.get("PATH")) if "/" not in command
                                else os.path.join(ROOT, command))
    return resolve(a) == resolve(b)


def evaluate(runner, kwctl, policy, dump, settings, host_flags, obj, unavailable, scratch, index):
    review_path = os.path.join(scratch, f"review-{index}.json")
    session_path = os.path.join(scratch, f"session-{index}.yml")
    with open(review_path, "w", encoding="utf-8") as f:
        json.dump(scanner_review(obj), f)
    common = ["--allow-context-aware", "--request-path", review_path,
              "--settings-json", json.dumps(settings)]
    # The runner answers from the dump and records what the policy asked.
    recorded = subprocess.run(
        [runner, "run", *(host_flags if same_program(kwctl, runner) else []), *common,
         "--parents", dump, "--record-session", session_path, policy],
        capture_output=True, text=True, cwd=ROOT)
    if recorded.returncode != 0 or not os.path.exists(session_path):
        return response_result(recorded)
    if unavailable:
        with open(session_path, encoding="utf-8") as f:
            session = unavailable_session(f.read())
        if session is None:
            return "error", "--unavailable names an object that looks nothing up", False
        with open(session_path, "w", encoding="utf-8") as f:
            f.write(session)
    elif same_program(kwctl, runner):
        return response_result(recorded)
    replayed = subprocess.run(
        [kwctl, "run", *host_flags, *common, "--replay-host-capabilities-interactions", session_path,
         policy],
        capture_output=True, text=True, cwd=ROOT)
    return response_result(replayed)


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
    runner = os.environ.get("RUNNER") or "target/host/policy-runner"
    with open(os.path.join(ROOT, policy_yaml), encoding="utf-8") as f:
        spec = yaml.safe_load(f)["spec"]
    settings = spec.get("settings") or {}
    dump = os.path.join(ROOT, dump)
    objects = dump_objects(dump)
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
            lambda io: evaluate(runner, kwctl, policy, dump, settings, host_flags, io[1],
                                label(io[1]).replace(" ", "/", 1) in unavailable, scratch, io[0]),
            enumerate(scanned)))
    wrong = []
    for obj, (result, message, whole) in zip(scanned, results):
        print(f"{result}\t{label(obj)}\t{message}")
        if not whole:
            wrong.append(label(obj))
    if wrong:
        print("the policy made fewer look-ups replaying these sessions than when they were "
              f"recorded: {', '.join(wrong)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
