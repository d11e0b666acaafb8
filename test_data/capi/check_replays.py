#!/usr/bin/env python3
"""Checks the CAPI e2e fixtures for internal consistency.

For every test_data/capi/<version>/<scenario>.json there must be a
replay_<scenario>.yml (kwctl replay session). Every exchange must be a
`!KubernetesGetResource` with disable_cache false and field_masks null, and
every `Success` payload must be exactly one of the readable parent files in
parents/ (same apiVersion, kind, name and namespace as requested).

Usage: python3 test_data/capi/check_replays.py   (needs PyYAML)
Exit status 0 when consistent; the problems are listed otherwise.
"""
import glob
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TAG = "!KubernetesGetResource"


def load_parents(version_dir):
    parents = {}
    for path in sorted(glob.glob(os.path.join(version_dir, "parents", "*.yaml"))):
        with open(path) as f:
            obj = yaml.safe_load(f)
        key = (obj["apiVersion"], obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace"))
        parents[key] = (os.path.relpath(path, HERE), obj)
    return parents


def check_replay(path, parents, problems):
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
        if request.get("disable_cache") is not False or request.get("field_masks") is not None:
            problems.append(f"{where}: disable_cache must be false and field_masks null")
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
            if not os.path.exists(os.path.join(version_dir, f"{scenario}.json")):
                problems.append(f"{os.path.relpath(replay, HERE)}: no {scenario}.json")
            check_replay(replay, parents, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
