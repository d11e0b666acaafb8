#!/usr/bin/env bash
# Runs the policy on the bundled example objects (test_data/*/examples) and
# prints, for each, the decision, the warnings, the audit annotations and the
# JSON patch decoded. Used by `make demo`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}

show() {
  local title=$1; shift
  echo "=== $title"
  local out
  out=$("$KWCTL" run "$@" "$POLICY")
  python3 - "$out" <<'PY'
import base64, json, sys
r = json.loads(sys.argv[1])
print("allowed:", r["allowed"])
if r.get("status"):
    print("message:", r["status"].get("message"))
for w in r.get("warnings") or []:
    print("warning:", w)
for k, v in sorted((r.get("auditAnnotations") or {}).items()):
    print(f"audit annotation {k}: {v!r}")
if r.get("patch"):
    print("patch:")
    for op in json.loads(base64.b64decode(r["patch"])):
        print("  ", json.dumps(op, ensure_ascii=False))
else:
    print("patch: none (object unchanged)")
PY
  echo
}

for dir in test_data/xr/examples test_data/capi/examples; do
  [ -d "$dir" ] || continue
  settings="$dir/settings.json"
  for request in "$dir"/*.json; do
    case "$request" in */settings*.json) continue ;; esac
    # The annotated module declares contextAwareResources; grant them as a
    # ClusterAdmissionPolicy would. The parents (<request>.parents.yaml,
    # plain objects) answer the look-ups as a cluster would. XRs make no
    # look-ups.
    args=(--allow-context-aware --request-path "$request")
    [ -f "$settings" ] && args+=(--settings-path "$settings")
    parents="${request%.json}.parents.yaml"
    [ -f "$parents" ] && args+=(--parents "$parents")
    show "$request" "${args[@]}"
  done
done
