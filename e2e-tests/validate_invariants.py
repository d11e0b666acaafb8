#!/usr/bin/env python3
"""Checks the validate-mode and output invariants on recorded e2e invocations.

For every distinct `run` invocation the mutate suites made (one JSON array of
arguments per line in the file given as argv[1]) whose settings are valid and
whose request mutate mode allows:
  1. validate(x) is rejected exactly when mutate(x) returns a patch that
     changes more than the skip annotation (which reports, and is never a
     deviation), and never returns a patch itself;
  2. validate(mutate(x)) is accepted without a patch;
  3. mutate(x), the request object with the patch applied, validates strictly
     against its CRD (or XRD) whenever x did (scripts/check_schemas.py, the
     checker `make check-schemas` runs on the fixtures);
  4. validate(x) warns as mutate(x) does, less the warnings for the entries
     mutate mode removes from a tag field (validate mode removes nothing: its
     rejection names them instead).
Runs everything through $KWCTL (a real kwctl or the project's runner), with
the look-up answers the invocation had: a replay session
(--replay-host-capabilities-interactions) or the project's runner's
--parents objects (repeatable, kept in order). --record-session is dropped:
these runs record nothing.
Prints a summary; exits 1 listing every violation.
"""
import base64
import copy
import json
import os
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_schemas  # noqa: E402  (scripts/check_schemas.py)

PREFIX = "the object deviates from the metadata propagation contract (validate mode): "
VALUE_FLAGS = {"--request-path", "-r", "--settings-json", "-s", "--settings-path",
               "--record-session"}
# What answers the look-ups: passed on as the invocation had them, in order.
ANSWER_FLAGS = {"--replay-host-capabilities-interactions", "--parents"}


def parse(args):
    """(options dict, flags list, look-up answer arguments, policy path) of a
    recorded `run` invocation."""
    options, flags, answers, positional = {}, [], [], []
    i = 1  # args[0] == "run"
    while i < len(args):
        arg = args[i]
        if arg in VALUE_FLAGS:
            options[arg] = args[i + 1]
            i += 2
        elif arg in ANSWER_FLAGS:
            answers += [arg, args[i + 1]]
            i += 2
        elif arg.startswith("-"):
            flags.append(arg)
            i += 1
        else:
            positional.append(arg)
            i += 1
    return options, flags, answers, positional[-1]


def settings_of(options):
    if "--settings-json" in options or "-s" in options:
        return yaml.safe_load(options.get("--settings-json", options.get("-s"))) or {}
    if "--settings-path" in options:
        with open(options["--settings-path"]) as f:
            return yaml.safe_load(f) or {}
    return {}


def evaluate(kwctl, request_path, settings, answers, flags, policy):
    argv = [kwctl, "run", *flags, "--request-path", request_path,
            "--settings-json", json.dumps(settings), *answers, policy]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def apply_patch(document, ops):
    for op in ops:
        tokens = [unescape(t) for t in op["path"].split("/")[1:]]
        parent = document
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if op["op"] in ("add", "replace"):
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), op["value"])
            else:
                parent[last] = op["value"]
        elif op["op"] == "remove":
            del parent[int(last) if isinstance(parent, list) else last]
        else:
            raise ValueError(f"unsupported op {op['op']}")
    return document


def load_request(path):
    """(the request file's document, the AdmissionRequest in it)."""
    with open(path) as f:
        document = json.load(f)
    return document, document["request"] if "request" in document else document


def mutated(request, response):
    """The request object with the response's JSONPatch applied."""
    ops = json.loads(base64.b64decode(response["patch"]))
    return apply_patch(copy.deepcopy(request["object"]), ops)


SKIPPED = "cloud-tags.plexsphere.io/skipped"
# How the warning for an entry mutate mode removes from a tag field starts.
REMOVED = "cloud tag removed from "


def without_skips(obj):
    """The object without the skip annotation: what validate mode judges."""
    obj = copy.deepcopy(obj)
    annotations = (obj.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(SKIPPED, None)
    return obj


def schema_violations(checker, label, before, after):
    """Invariant 3, or None when it does not apply: the input's kind has no
    CRD here, or the input itself is one no API server would store."""
    failures, no_crd = checker.errors(before)
    if no_crd or failures:
        return None
    failures, _ = checker.errors(after)
    return [f"{label}: mutate(x) is refused by its CRD: {failure}" for failure in failures]


def main():
    kwctl = os.environ.get("KWCTL", "target/host/policy-runner")
    checker = check_schemas.Checker.load()
    seen, checked, changed, schema_checked, violations = set(), 0, 0, 0, []
    with open(sys.argv[1]) as log:
        invocations = [json.loads(line) for line in log if line.strip()]
    for args in invocations:
        # The same run, whatever file it recorded its session to.
        key = json.dumps([a for i, a in enumerate(args)
                          if a != "--record-session" and (i == 0 or args[i - 1] != "--record-session")])
        if key in seen:
            continue
        seen.add(key)
        options, flags, answers, policy = parse(args)
        request_path = options.get("--request-path", options.get("-r"))
        try:
            settings = settings_of(options)
        except (yaml.YAMLError, OSError):
            continue
        mutate = evaluate(kwctl, request_path, settings, answers, flags, policy)
        if mutate is None or not mutate["allowed"]:
            continue  # invalid settings or a rejected object: not a mutate case
        checked += 1
        label = " ".join(args[1:])
        patched = "patch" in mutate and mutate["patch"]
        if patched:
            document, request = load_request(request_path)
            after = mutated(request, mutate)
            found = schema_violations(checker, label, request["object"], after)
            if found is not None:
                schema_checked += 1
                violations += found
            # A patch of the skip annotation alone is no deviation.
            patched = without_skips(after) != without_skips(request["object"])
        validate_settings = dict(settings, mode="validate")
        validated = evaluate(kwctl, request_path, validate_settings, answers, flags, policy)
        if validated is None:
            violations.append(f"{label}: validate mode failed to run")
            continue
        if validated.get("patch"):
            violations.append(f"{label}: validate mode returned a patch")
        expected_warnings = [w for w in mutate.get("warnings") or [] if not w.startswith(REMOVED)]
        if (validated.get("warnings") or []) != expected_warnings:
            violations.append(
                f"{label}: validate mode warned {validated.get('warnings')}, mutate mode less its "
                f"removals {expected_warnings}")
        if validated["allowed"] == bool(patched):
            violations.append(
                f"{label}: mutate {'changed' if patched else 'did not change'} the object "
                f"but validate {'accepted' if validated['allowed'] else 'rejected'} it: "
                f"{(validated.get('status') or {}).get('message')}")
            continue
        if not patched:
            continue
        changed += 1
        message = (validated.get("status") or {}).get("message", "")
        if not message.startswith(PREFIX):
            violations.append(f"{label}: unexpected validate message: {message}")
        request["object"] = after
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
            json.dump(document, tmp)
        try:
            again = evaluate(kwctl, tmp.name, validate_settings, answers, flags, policy)
        finally:
            os.unlink(tmp.name)
        if again is None or not again["allowed"] or again.get("patch"):
            violations.append(
                f"{label}: validate(mutate(x)) not accepted: "
                f"{again and (again.get('status') or {}).get('message')}")
    print(f"{checked} mutate requests checked ({changed} changed by mutate, "
          f"{schema_checked} outputs validated against their CRD), {len(violations)} violations")
    for violation in violations:
        print("VIOLATION", violation)
    return 1 if violations or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
