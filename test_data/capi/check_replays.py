#!/usr/bin/env python3
"""Checks the CAPI e2e fixtures for internal consistency.

For every test_data/capi/<version>/<scenario>.json there must be a
replay_<scenario>.yml (kwctl replay session). Every exchange must be a
`!KubernetesGetResource` with disable_cache false and field_masks exactly the
sorted list test_data/field_masks.py gives for the scenario's child (the
object, or request.kind, of <scenario>.json) and the requested parent (with
`capi.inPlaceFields: false` for scenarios named `..._in_place_off`): the
replay runner matches the masks exactly, so a session with other masks fails
the e2e tests. Every `Success` payload must be exactly one of the readable
parent files in parents/ (same apiVersion, kind, name and namespace as
requested).

Usage: python3 test_data/capi/check_replays.py [--fix]   (needs PyYAML)
Exit status 0 when consistent; the problems are listed otherwise.
--fix first rewrites the `field_masks:` entry of every request block to the
expected masks (block style, as kwctl writes it) and every `Success` payload
to its parents/ file (compact JSON, in the file's key order), leaving every
other byte of the sessions as it is, then checks. So after editing a parent,
`--fix` carries the edit into every session that answers with it.
"""
import glob
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from field_masks import child_of, in_place_fields_setting, masks_for, yaml_lines  # noqa: E402  (test_data/field_masks.py)

TAG = "!KubernetesGetResource"


def load_parents(version_dir):
    parents = {}
    for path in sorted(glob.glob(os.path.join(version_dir, "parents", "*.yaml"))):
        with open(path) as f:
            obj = yaml.safe_load(f)
        key = (obj["apiVersion"], obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace"))
        parents[key] = (os.path.relpath(path, HERE), obj)
    return parents


def expected_masks(child, request, in_place_fields=True):
    """The masks for one look-up, or the reason there are none."""
    try:
        return masks_for(child[0], child[1], request.get("api_version"), request.get("kind"),
                         in_place_fields=in_place_fields), None
    except ValueError as e:
        return None, str(e)


def payload_line(parent):
    """The `payload:` line of a Success response: the parent as compact JSON
    in a single-quoted YAML scalar."""
    text = json.dumps(parent, separators=(",", ":"))
    return "    payload: '" + text.replace("'", "''") + "'\n"


def fix_replay(path, child, parents, in_place_fields=True):
    """Rewrites the field_masks entries of the request blocks of `path`, and
    the payloads of the parents found in parents/, in place, line by line,
    so that comments, quoting and order stay as they are."""
    with open(path) as f:
        lines = f.read().splitlines(keepends=True)
    out, request, i = [], {}, 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == TAG:
            request = {}
        elif line.startswith("    ") and not line.startswith("     ") and ": " in stripped:
            key, _, value = stripped.partition(": ")  # api_version: ..., kind: ...
            request[key] = value
        if line.startswith("    field_masks:"):
            masks, why = expected_masks(child, request, in_place_fields)
            if masks is None:
                raise SystemExit(f"{os.path.relpath(path, HERE)}: {why}")
            out.append(yaml_lines(masks))
            i += 1
            while i < len(lines) and lines[i].startswith("    - "):
                i += 1  # the previous block-style list
            continue
        if line.startswith("    payload: "):
            key = tuple(request.get(k) for k in ("api_version", "kind", "name", "namespace"))
            if key in parents:
                line = payload_line(parents[key][1])
        out.append(line)
        i += 1
    text = "".join(out)
    with open(path) as f:
        if f.read() == text:
            return False
    with open(path, "w") as f:
        f.write(text)
    return True


def check_replay(path, child, parents, problems, in_place_fields=True):
    with open(path) as f:
        entries = yaml.safe_load(f)
    name = os.path.relpath(path, HERE)
    if not isinstance(entries, list):
        problems.append(f"{name}: not a YAML list")
        return
    for i, entry in enumerate(entries):
        where = f"{name}[{i}]"
        if entry.get("type") != "Exchange":
            problems.append(f"{where}: type is not Exchange")
            continue
        text = entry.get("request", "")
        if not text.startswith(TAG + "\n"):
            problems.append(f"{where}: request is not a {TAG} block")
            continue
        request = yaml.safe_load(text[len(TAG) + 1:])
        expected_keys = ["api_version", "kind", "name", "namespace", "disable_cache", "field_masks"]
        if list(request) != expected_keys:
            problems.append(f"{where}: request keys {list(request)} != {expected_keys}")
        if request.get("disable_cache") is not False:
            problems.append(f"{where}: disable_cache must be false")
        masks, why = expected_masks(child, request, in_place_fields)
        if masks is None:
            problems.append(f"{where}: {why}")
        elif request.get("field_masks") != masks:
            problems.append(f"{where}: field_masks {request.get('field_masks')!r} != {masks!r}")
        response = entry.get("response", {})
        if response.get("type") == "Error":
            if not response.get("message"):
                problems.append(f"{where}: Error without message")
            continue
        if response.get("type") != "Success":
            problems.append(f"{where}: response type {response.get('type')!r}")
            continue
        payload = json.loads(response["payload"])
        key = (request["api_version"], request["kind"], request["name"], request["namespace"])
        got = (payload["apiVersion"], payload["kind"], payload["metadata"]["name"],
               payload["metadata"].get("namespace"))
        if got != key:
            problems.append(f"{where}: payload is {got}, request asks for {key}")
        if key not in parents:
            problems.append(f"{where}: no parents/ file for {key}")
        elif parents[key][1] != payload:
            problems.append(f"{where}: payload differs from {parents[key][0]}")


def main():
    fix = sys.argv[1:] == ["--fix"]
    if sys.argv[1:] and not fix:
        print("usage: python3 test_data/capi/check_replays.py [--fix]", file=sys.stderr)
        return 2
    problems = []
    # API-version directories only (examples/ holds links into them).
    versions = sorted(d for d in os.listdir(HERE) if d.startswith("v1") and os.path.isdir(os.path.join(HERE, d)))
    for version in versions:
        version_dir = os.path.join(HERE, version)
        parents = load_parents(version_dir)
        for request in sorted(glob.glob(os.path.join(version_dir, "*.json"))):
            scenario = os.path.splitext(os.path.basename(request))[0]
            replay = os.path.join(version_dir, f"replay_{scenario}.yml")
            if not os.path.exists(replay):
                problems.append(f"{os.path.relpath(request, HERE)}: no replay_{scenario}.yml")
        for replay in sorted(glob.glob(os.path.join(version_dir, "replay_*.yml"))):
            scenario = os.path.basename(replay)[len("replay_"):-len(".yml")]
            request_path = os.path.join(version_dir, f"{scenario}.json")
            if not os.path.exists(request_path):
                problems.append(f"{os.path.relpath(replay, HERE)}: no {scenario}.json")
                continue
            with open(request_path) as f:
                child = child_of(json.load(f))
            in_place = in_place_fields_setting(scenario)
            if fix and fix_replay(replay, child, parents, in_place):
                print(f"fixed {os.path.relpath(replay, HERE)}")
            check_replay(replay, child, parents, problems, in_place)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
