#!/usr/bin/env python3
"""Checks the two validate-mode invariants on recorded e2e invocations.

For every distinct `run` invocation the mutate suites made (one JSON array of
arguments per line in the file given as argv[1]) whose settings are valid and
whose request mutate mode allows:
  1. validate(x) is rejected exactly when mutate(x) returns a patch, and never
     returns a patch itself;
  2. validate(mutate(x)) is accepted without a patch.
Runs everything through $KWCTL (a real kwctl or the project's runner).
Prints a summary; exits 1 listing every violation.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

import yaml

PREFIX = "the object deviates from the metadata propagation contract (validate mode): "
VALUE_FLAGS = {"--request-path", "-r", "--settings-json", "-s", "--settings-path",
               "--replay-host-capabilities-interactions"}


def parse(args):
    """(options dict, flags list, policy path) of a recorded `run` invocation."""
    options, flags, positional = {}, [], []
    i = 1  # args[0] == "run"
    while i < len(args):
        arg = args[i]
        if arg in VALUE_FLAGS:
            options[arg] = args[i + 1]
            i += 2
        elif arg.startswith("-"):
            flags.append(arg)
            i += 1
        else:
            positional.append(arg)
            i += 1
    return options, flags, positional[-1]


def settings_of(options):
    if "--settings-json" in options or "-s" in options:
        return yaml.safe_load(options.get("--settings-json", options.get("-s"))) or {}
    if "--settings-path" in options:
        with open(options["--settings-path"]) as f:
            return yaml.safe_load(f) or {}
    return {}


def evaluate(kwctl, request_path, settings, options, flags, policy):
    argv = [kwctl, "run", *flags, "--request-path", request_path,
            "--settings-json", json.dumps(settings)]
    replay = options.get("--replay-host-capabilities-interactions")
    if replay:
        argv += ["--replay-host-capabilities-interactions", replay]
    argv.append(policy)
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


def main():
    kwctl = os.environ.get("KWCTL", "target/host/policy-runner")
    seen, checked, changed, violations = set(), 0, 0, []
    with open(sys.argv[1]) as log:
        invocations = [json.loads(line) for line in log if line.strip()]
    for args in invocations:
        key = json.dumps(args)
        if key in seen:
            continue
        seen.add(key)
        options, flags, policy = parse(args)
        request_path = options.get("--request-path", options.get("-r"))
        try:
            settings = settings_of(options)
        except (yaml.YAMLError, OSError):
            continue
        mutate = evaluate(kwctl, request_path, settings, options, flags, policy)
        if mutate is None or not mutate["allowed"]:
            continue  # invalid settings or a rejected object: not a mutate case
        checked += 1
        label = " ".join(args[1:])
        validate_settings = dict(settings, mode="validate")
        validated = evaluate(kwctl, request_path, validate_settings, options, flags, policy)
        if validated is None:
            violations.append(f"{label}: validate mode failed to run")
            continue
        if validated.get("patch"):
            violations.append(f"{label}: validate mode returned a patch")
        patched = "patch" in mutate and mutate["patch"]
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
        with open(request_path) as f:
            document = json.load(f)
        request = document["request"] if "request" in document else document
        apply_patch(request["object"], json.loads(base64.b64decode(mutate["patch"])))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
            json.dump(document, tmp)
        try:
            again = evaluate(kwctl, tmp.name, validate_settings, options, flags, policy)
        finally:
            os.unlink(tmp.name)
        if again is None or not again["allowed"] or again.get("patch"):
            violations.append(
                f"{label}: validate(mutate(x)) not accepted: "
                f"{again and (again.get('status') or {}).get('message')}")
    print(f"{checked} mutate requests checked ({changed} changed by mutate), "
          f"{len(violations)} violations")
    for violation in violations:
        print("VIOLATION", violation)
    return 1 if violations or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
