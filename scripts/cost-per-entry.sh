#!/usr/bin/env bash
# What one evaluation costs per entry as a request grows (BENCHMARKS.md,
# "Cost per entry, 1,000 to 10,000"): every dimension of
# test_data/bench/gen.py's SCALING (a parent's keyed list, a child's, both,
# labels, annotations, ownerReferences, a topology's MachineDeployments,
# node sync, the label-set annotation, opted-in labels) at each size,
# written by `gen.py --scaling` to target/scaling.
#
# Instructions, not time: callgrind counts one fresh-instance evaluation
# (runner, host work and guest together, as `make bench-compare
# MEASURE=instructions` does) as a run of 2 evaluations minus a run of 1,
# so compiling the module drops out. Deterministic, so a busy machine does
# not blur it; slow (minutes per 10,000-entry scenario, about an hour for
# all of them at 1,000 and 10,000).
#
# Usage: scripts/cost-per-entry.sh [SIZE...]   (default: 1000 10000)
# Environment: ONLY="parent-gates labels" limits the dimensions; POLICY
# (default annotated-policy.wasm, built here). Prints a markdown table: the
# instructions at each size and per entry, and the last size's cost per
# entry over the first's.
set -euo pipefail

cd "$(dirname "$0")/.."

RUNNER=target/host/policy-runner
POLICY=${POLICY:-annotated-policy.wasm}
OUT=target/scaling
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 10000)

command -v valgrind >/dev/null || { echo "cost-per-entry.sh: valgrind is required" >&2; exit 1; }
{
  make --no-print-directory "$RUNNER" annotated-policy.wasm KWCTL="$RUNNER"
  rm -rf "$OUT"
  python3 test_data/bench/gen.py --scaling "$OUT" "${sizes[@]}"
} >&2

# shellcheck source=scripts/callgrind.bash
source scripts/callgrind.bash

# per_evaluation NAME: the instructions of one evaluation of scenario NAME
per_evaluation() {
  local request settings parents
  IFS=$'\t' read -r _ request settings parents < <(awk -F'\t' -v n="$1" '$1 == n' "$OUT/scenarios.tsv")
  local args=(bench --output json --request-path "$request" --settings-path "$settings"
    --allow-context-aware)
  [[ "$parents" == - ]] || args+=(--parents "$parents")
  local one two
  one=$(callgrind_count 1 "${args[@]}" "$POLICY")
  two=$(callgrind_count 2 "${args[@]}" "$POLICY")
  echo $((two - one))
}

# 1234567 -> 1,234,567
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

header="| dimension |"
rule="|---|"
for n in "${sizes[@]}"; do
  header+=" $n entries | per entry |"
  rule+="---:|---:|"
done
echo "$header per entry, ${sizes[-1]} / ${sizes[0]} |"
echo "$rule---:|"
dimensions=$(awk -F'\t' '!/^#/ { sub(/-[0-9]+$/, "", $1); print $1 }' "$OUT/scenarios.tsv" | uniq)
for dimension in $dimensions; do
  [[ -z "${ONLY:-}" || " $ONLY " == *" $dimension "* ]] || continue
  row="| $dimension |"
  first="" last=""
  for n in "${sizes[@]}"; do
    count=$(per_evaluation "$dimension-$n")
    each=$((count / n))
    row+=" $(commas "$count") | $(commas "$each") |"
    first=${first:-$each}
    last=$each
  done
  echo "$row $(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.2f", b / a }') |"
done
