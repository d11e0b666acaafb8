#!/usr/bin/env bash
# Runs the policy on the bundled example objects and explains each answer.
# Used by `make demo`.
#
# The examples are the rows of test_data/capi/examples/scenarios.tsv,
# test_data/capi-infra/examples/scenarios.tsv, examples/gcp/scenarios.tsv and
# test_data/xr/examples/scenarios.tsv (request file, settings file or -, what
# the scenario is); a request's parents are <request>.parents.yaml. For each
# it prints, in at most 60 lines:
#   - the scenario, the request, the settings that applied;
#   - the parents the policy looked up (from `run --record-session`): kind,
#     namespace/name, how many field masks, the label/annotation maps of the
#     pruned answer (long values cut) and, for a Cluster read for cloud tags,
#     which of its labels became tags;
#   - `policy-runner explain` (the policy core, natively): the decision, each
#     key's source and rule, the in-place fields that flow or that the child
#     sets, the skips with their reasons;
#   - one line saying that the compiled module, hosted as policy-server hosts
#     it (a fresh instance per request), answered the same (allowed, patch,
#     warnings, audit annotations); the demo fails when it did not;
#   - the JSON patch, one operation per line; a string value that holds JSON
#     (the skip record annotation) is shown as that JSON.
# Needs the runner, the module and python3 with PyYAML (it reads the
# recorded session).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
# Host the module as policy-server does: a fresh instance per request, field
# masks applied.
unset POLICY_RUNNER_REUSE_INSTANCE POLICY_RUNNER_IGNORE_FIELD_MASKS

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

TABLES=(test_data/capi/examples/scenarios.tsv test_data/capi-infra/examples/scenarios.tsv
  examples/gcp/scenarios.tsv test_data/xr/examples/scenarios.tsv)
total=0
for table in "${TABLES[@]}"; do
  total=$((total + $(grep -cv -e '^#' -e '^[[:space:]]*$' "$table")))
done

n=0
failed=()
long=()
MAX_LINES=60
for table in "${TABLES[@]}"; do
  dir=$(dirname "$table")
  while IFS=$'\t' read -r file settings description <&3; do
    case "$file" in '' | '#'*) continue ;; esac
    n=$((n + 1))
    request="$dir/$file"
    if [ ! -f "$request" ] || [ -z "$description" ]; then
      echo "demo: $table: row '$file' names no request file in $dir or has no scenario" >&2
      exit 1
    fi
    run_args=(--allow-context-aware --request-path "$request")
    explain_args=(--request-path "$request")
    settings_path=
    if [ "$settings" != - ]; then
      settings_path="$dir/$settings"
      run_args+=(--settings-path "$settings_path")
      explain_args+=(--settings-path "$settings_path")
    fi
    parents="${request%.json}.parents.yaml"
    if [ -f "$parents" ]; then
      run_args+=(--parents "$parents")
      explain_args+=(--parent "$parents")
    else
      parents=
    fi

    # The compiled module, as policy-server hosts it; the look-ups recorded.
    if ! "$KWCTL" run "${run_args[@]}" --record-session "$tmp/session.yml" "$POLICY" \
        >"$tmp/run.json" 2>"$tmp/run.err"; then
      echo "demo: $KWCTL run failed on $request:" >&2
      cat "$tmp/run.err" >&2
      exit 1
    fi
    # The same request explained by the core, natively.
    "$KWCTL" explain "${explain_args[@]}" >"$tmp/explain.txt"
    "$KWCTL" explain "${explain_args[@]}" --output json >"$tmp/explain.json"

    same=0
    python3 - "$n" "$total" "$description" "$request" "$settings_path" "$parents" \
        "$tmp/session.yml" "$tmp/run.json" "$tmp/run.err" "$tmp/explain.txt" \
        "$tmp/explain.json" "$POLICY" >"$tmp/example.txt" <<'PY' || same=$?
import base64, json, sys

import yaml

(n, total, description, request, settings_path, parents, session_path, run_path,
 run_err_path, explain_txt_path, explain_json_path, policy) = sys.argv[1:]


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def plural(count, word):
    return f"{count} {word}" + ("" if count == 1 else "s")


print(f"=== {n}/{total} {description}")

# The request.
with open(request, encoding="utf-8") as f:
    doc = json.load(f)
req = doc.get("request", doc)
obj = req.get("object") or req.get("oldObject") or {}
meta = obj.get("metadata") or {}
where = "/".join(x for x in (meta.get("namespace"), meta.get("name")) if x)
print(f"request:  {req.get('operation', 'UPDATE')} {obj.get('kind')} {where} ({request})")

# The settings.
if settings_path:
    with open(settings_path, encoding="utf-8") as f:
        settings = json.load(f)
    print(f"settings: {compact(settings)} ({settings_path})")
else:
    print("settings: default settings")


# The parents looked up, from the recorded session.
def read_session(path):
    """[(request dict, response dict)] from a kwctl session file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    exchanges = []
    for entry in yaml.safe_load(text) or []:
        body = entry["request"].split("\n", 1)[1]  # after the !KubernetesGetResource tag
        exchanges.append((yaml.safe_load(body), entry["response"]))
    return exchanges


def metadata_maps(node, path=()):
    """(dotted path, map) of every labels/annotations map: the object's own
    and those under spec (templates, topology)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = path + (key,)
            if key in ("labels", "annotations") and isinstance(value, dict) and path[:1] in (("spec",), ("metadata",)):
                yield ".".join(here), value
            else:
                yield from metadata_maps(value, here)
    elif isinstance(node, list):
        for item in node:
            yield from metadata_maps(item, path)


def cut(values, limit=60):
    """A map with its long values cut to `limit` characters."""
    return {k: v if len(v) <= limit else v[:limit - 1] + "…" for k, v in values.items()}


with open(explain_json_path, encoding="utf-8") as f:
    explained = json.load(f)
label_fates = ((explained.get("explanation") or {}).get("cloudTags") or {}).get("labels") or []


def tag_fates(reference):
    """What became of the labels a Cluster gave: the tags, then the skips."""
    mine = [l for l in label_fates if l["source"].startswith(reference + " ")]
    tags = [f'{l["qualifiedKey"]} → {l["tagKey"]}' for l in mine if l["fate"] == "tag"]
    skipped = [f'{l["qualifiedKey"]} ({l["reason"]})' for l in mine if l["fate"] == "skipped"]
    lines = []
    if tags:
        lines.append("became tags: " + ", ".join(tags))
    if skipped:
        lines.append("skipped: " + ", ".join(skipped))
    if mine and not lines:
        lines.append("none became a tag (none is opted in)")
    return lines


exchanges = read_session(session_path)
if not exchanges:
    print("parents:  none looked up" + ("" if parents else " (an XR's tags come from its own labels)"))
else:
    print(f"parents:  {plural(len(exchanges), 'look-up')}, answered from {parents}"
          " (the labels and annotations the answer carries)")
for look_up, answer in exchanges:
    name = "/".join(x for x in (look_up.get("namespace"), look_up.get("name")) if x)
    masks = look_up.get("field_masks") or []
    reference = f"{look_up.get('kind')} {name} ({look_up.get('api_version')})"
    head = f"  {reference}, {plural(len(masks), 'field mask')}"
    if answer.get("type") == "Success":
        print(f"{head}: found")
        payload = json.loads(answer["payload"])
        for path, values in metadata_maps(payload):
            print(f"    {path}: {compact(cut(values))}")
        for line in tag_fates(reference):
            print(f"    {line}")
    else:
        print(f"{head}: {answer.get('message', answer.get('type'))}")
# What the runner said on stderr, but for what explain says as a note below.
with open(explain_txt_path, encoding="utf-8") as f:
    lines = f.read().splitlines()
notes = {line[len("note: "):] for line in lines if line.startswith("note: ")}
with open(run_err_path, encoding="utf-8") as f:
    for line in f.read().splitlines():
        if line.split("policy-runner: ", 1)[-1] not in notes:
            print(f"runner:   {line}")

# The explanation (its own patch section is left out: the patch comes last).
print("explain:  policy-runner explain (the policy core, natively)")
for line in lines:
    if line.startswith("patch:"):
        break
    if not line.startswith("operation: "):  # the request line says it
        print(f"  {line}")

# The module's answer against the explanation's.
with open(run_path, encoding="utf-8") as f:
    response = json.load(f)
module_patch = json.loads(base64.b64decode(response["patch"])) if response.get("patch") else []
explained_patch = explained.get("patch") or []
module = {
    "allowed": response.get("allowed"),
    "patch": module_patch,
    "warnings": response.get("warnings") or [],
    "audit annotations": response.get("auditAnnotations") or {},
    "message": (response.get("status") or {}).get("message"),
}
expected = {
    "allowed": explained.get("allowed"),
    "patch": explained_patch,
    "warnings": explained.get("warnings") or [],
    "audit annotations": explained.get("auditAnnotations") or {},
    "message": explained.get("message"),
}
if module["allowed"]:
    verdict = f"allowed, {plural(len(module_patch), 'patch operation')}"
else:
    code = (response.get("status") or {}).get("code")
    verdict = f"rejected ({code}): {module['message']}"
if module["warnings"]:
    verdict += f", {plural(len(module['warnings']), 'warning')}"
host = f"{policy}, fresh instance as policy-server"
differ = [k for k in module if module[k] != expected[k]]
if differ:
    print(f"module:   {host}: {verdict} — NOT what explain says:")
    for k in differ:
        print(f"  {k}: the module answered {compact(module[k])}")
        print(f"  {' ' * len(k)}  explain says         {compact(expected[k])}")
else:
    print(f"module:   {host}: {verdict} — the same as explained")


# The patch, last.
def decode_pointer(segment):
    return segment.replace("~1", "/").replace("~0", "~")


def holds_json(value):
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return True, json.loads(value)
        except ValueError:
            pass
    return False, None


if not module_patch:
    print("patch:    none (the object is left as it is)")
else:
    print(f"patch:    {plural(len(module_patch), 'operation')} (JSON Patch; # the map key a path's last segment decodes to)")
    for op in module_patch:
        segment = op.get("path", "").rsplit("/", 1)[-1]
        note = f'key "{decode_pointer(segment)}"' if "~" in segment else ""
        is_json, decoded = holds_json(op.get("value"))
        shown = dict(op)
        if is_json:
            shown["value"] = "…"
            note = (note + "; " if note else "") + "the value is a string holding this JSON:"
        print(f"  {compact(shown)}" + (f"  # {note}" if note else ""))
        if is_json:
            items = decoded if isinstance(decoded, list) else [decoded]
            opening, closing = ("[", "]") if isinstance(decoded, list) else ("", "")
            for i, item in enumerate(items):
                lead = opening if i == 0 else " " * len(opening)
                tail = closing if i == len(items) - 1 else ","
                print(f"      {lead}{compact(item)}{tail}")
print()
sys.exit(1 if differ else 0)
PY
    cat "$tmp/example.txt"
    [ "$same" -eq 0 ] || failed+=("$request")
    # one screen each: the demo teaches, it does not list everything
    if [ "$(wc -l <"$tmp/example.txt")" -gt $((MAX_LINES + 1)) ]; then
      long+=("$request ($(($(wc -l <"$tmp/example.txt") - 1)) lines)")
    fi
  done 3<"$table"
done

if [ "${#long[@]}" -gt 0 ]; then
  echo "demo: FAILED: longer than $MAX_LINES lines: ${long[*]}" >&2
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "demo: FAILED: the compiled module ($POLICY) did not answer as explained for: ${failed[*]}" >&2
  exit 1
fi
echo "demo: $n examples; on each, $POLICY answered as explained."
