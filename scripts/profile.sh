#!/usr/bin/env bash
# `make profile`: where each benchmark scenario's time goes, phase by phase
# (`policy-runner profile`: the policy's core linked natively, a timer around
# every step `validate` takes and the host's steps around it), then what a
# fresh instance of each module costs by itself. BENCHMARKS.md reads these
# next to `make bench`.
#
# Environment: ITERATIONS (default 2000), SCENARIOS (default
# test_data/bench/scenarios.tsv, whose parents answer the look-ups as in
# `make bench`). Needs what `make bench` built.
set -euo pipefail

cd "$(dirname "$0")/.."

RUNNER=target/host/policy-runner
ITERATIONS=${ITERATIONS:-2000}
SCENARIOS=${SCENARIOS:-test_data/bench/scenarios.tsv}
OUT=target/bench

for needed in "$RUNNER" annotated-policy.wasm "$OUT/annotated-accept-floor.wasm" \
  "$OUT/annotated-echo-floor.wasm" "$OUT/annotated-lookup-floor.wasm"; do
  [ -e "$needed" ] || { echo "profile.sh: $needed is missing: run 'make bench' first" >&2; exit 1; }
done

while IFS=$'\t' read -r name request settings parents; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  args=(profile --iterations "$ITERATIONS" --request-path "$request" --settings-path "$settings")
  [[ "$parents" != "-" ]] && args+=(--parents "$parents")
  echo "## $name"
  "$RUNNER" "${args[@]}"
  echo
done <"$SCENARIOS"

echo "## a fresh instance by itself"
"$RUNNER" profile --iterations "$ITERATIONS" \
  --request-path test_data/bench/unhandled-cluster.request.json \
  --module annotated-policy.wasm \
  --module "$OUT/annotated-accept-floor.wasm" \
  --module "$OUT/annotated-echo-floor.wasm" \
  --module "$OUT/annotated-lookup-floor.wasm" | grep 'fresh instance'
