#!/usr/bin/env bash
# `make audit-bench`: how long `policy-runner audit` takes on the bundled
# scale dump (test_data/dumps/scale, 100 workload clusters, 10,000 objects,
# written by test_data/dumps/gen.py), end to end as a user runs it: read and
# parse the dump, build the tree, evaluate every object, render, write to
# /dev/null. Once per output format (text, json). Issue 13's budget is 1 s;
# BENCHMARKS.md ("Audit at scale") has the numbers. Nothing is asserted:
# speed is measured here, never in a test.
#
# Uses hyperfine when it is on the PATH (`apt-get install hyperfine`), else
# a loop timing each run with `date +%s%N`. Prints the median, min and max
# of each format.
#
# Environment:
#   RUNS    timed runs per format (default 10), after one untimed warm-up
#   DUMP    the dump to audit (default the bundled scale dump)
#   RUNNER  the runner (default target/host/policy-runner; the Makefile
#           target builds it first)
set -euo pipefail

cd "$(dirname "$0")/.."

RUNNER=${RUNNER:-target/host/policy-runner}
DUMP=${DUMP:-test_data/dumps/scale/capi_v1beta2_100_clusters.json}
RUNS=${RUNS:-10}

[[ -x "$RUNNER" ]] || { echo "audit_scale.sh: no runner at $RUNNER (make runner)" >&2; exit 1; }
[[ -f "$DUMP" ]] || { echo "audit_scale.sh: no dump at $DUMP (python3 test_data/dumps/gen.py)" >&2; exit 1; }

# The exit code is 1 when something deviates (the scale dump plants drift);
# only 2 (bad input) or a crash is an error here.
"$RUNNER" audit -f "$DUMP" -o json >/dev/null && status=0 || status=$?
[[ $status -le 1 ]] || { echo "audit_scale.sh: $RUNNER audit -f $DUMP exited $status" >&2; exit 1; }
objects=$("$RUNNER" audit -f "$DUMP" -o json | jq .summary.objects || true)

printf 'policy-runner audit -f %s (%s objects, %s MB), %s runs per format, %s:\n' \
  "$DUMP" "$objects" "$(awk -v b="$(wc -c <"$DUMP")" 'BEGIN { printf "%.1f", b / 1e6 }')" "$RUNS" \
  "$(command -v hyperfine >/dev/null && echo "hyperfine $(hyperfine --version | cut -d' ' -f2)" || echo "date +%s%N loop")"

# median, min and max of the seconds on stdin, one a line
stats() {
  sort -g | awk '{ t[NR] = $1 } END {
    m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
    printf "median %.3f s (min %.3f s, max %.3f s)\n", m, t[1], t[NR] }'
}

for format in text json; do
  cmd=("$RUNNER" audit -f "$DUMP" -o "$format")
  if command -v hyperfine >/dev/null; then
    out=$(mktemp) err=$(mktemp)
    # its only warning is the exit code 1 ignored; shown if it fails
    hyperfine --style none --shell=none --ignore-failure --warmup 1 --runs "$RUNS" \
      --export-json "$out" "${cmd[*]}" >/dev/null 2>"$err" || { cat "$err" >&2; exit 1; }
    times=$(jq -r '.results[0].times[]' "$out")
    rm -f "$out" "$err"
  else
    "${cmd[@]}" >/dev/null || true
    times=$(for _ in $(seq "$RUNS"); do
      start=$(date +%s%N)
      "${cmd[@]}" >/dev/null || true
      end=$(date +%s%N)
      awk -v ns=$((end - start)) 'BEGIN { printf "%.6f\n", ns / 1e9 }'
    done)
  fi
  printf '  -o %-4s  %s' "$format" "$(stats <<<"$times")"
  echo
done
