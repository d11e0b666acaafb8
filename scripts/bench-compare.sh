#!/usr/bin/env bash
# `make bench-compare BASE=<rev>`: this checkout's policy against the policy
# of an earlier revision, scenario by scenario, in one run (BENCHMARKS.md).
#
# Each revision is timed on its own scenario files (test_data/bench/
# scenarios.tsv: request, settings and what answers the look-ups), with
# this checkout's runner, on a fresh instance per evaluation as
# policy-server runs it. The look-ups are answered from a parents file
# (`*.parents.yaml`, plain objects: `--parents`) or, in a revision from
# before those, from a kwctl replay session (`*.replay.yml`:
# `--replay-host-capabilities-interactions`), whose field masks are the
# ones that revision's policy sends, so a revision can only replay its own. The two modules take turns, ROUNDS
# times per scenario, so machine noise falls on both; the table gives each
# one's median of the per-round medians and head / base.
#
# Environment: BASE (required: a commit, tag or branch), ROUNDS (default 5),
# ITERATIONS (default 400) and WARMUP (default 50) per round and module.
# ONLY="md-ms kcp-machine" limits the run to those scenarios. The last
# column says whether the two modules' replies are byte for byte the same
# (a change meant to keep behaviour must keep them).
# The base's module goes through this checkout's wasm-opt pass (the pinned
# binaryen, the Makefile's flags), as this checkout's policy.wasm does, so
# the comparison shows what the code changed, not the build.
# MEASURE=instructions counts instructions instead of timing (valgrind's
# callgrind; one round; deterministic, so a busy machine does not blur it):
# the per-evaluation count is the difference between a run of 250 and a run
# of 50 evaluations, divided by 200, so compiling the module drops out.
# INSTANCE=warm evaluates on one reused instance (`--reuse-instance`, as
# `kwctl bench` does) instead of a fresh instance per evaluation
# (policy-server, the default).
# WRITE=0 prints the report only; otherwise a run over every scenario (no
# ONLY) also writes it into BENCHMARKS.md, between the bench-compare
# markers. The base is built in a git worktree under target/bench-compare
# with its own target directory; nothing is installed.
set -euo pipefail

cd "$(dirname "$0")/.."

BASE=${BASE:?set BASE to the revision to compare against, e.g. BASE=HEAD~3}
ROUNDS=${ROUNDS:-5}
ITERATIONS=${ITERATIONS:-400}
WARMUP=${WARMUP:-50}
CARGO=${CARGO:-cargo}
RUNNER=target/host/policy-runner
OUT=target/bench-compare
WORKTREE=$OUT/base
base_rev=$(git rev-parse --short "$BASE^{commit}")

for tool in jq awk git; do
  command -v "$tool" >/dev/null || { echo "bench-compare.sh: '$tool' is required" >&2; exit 1; }
done

{
  make --no-print-directory policy.wasm "$RUNNER" annotated-policy.wasm KWCTL="$RUNNER"
  mkdir -p "$OUT"
  if [[ "$(git -C "$WORKTREE" rev-parse --short HEAD 2>/dev/null)" != "$base_rev" ]]; then
    git worktree remove --force "$WORKTREE" 2>/dev/null || rm -rf "$WORKTREE"
    git worktree add --detach "$WORKTREE" "$base_rev"
  fi
  # As the Makefile builds policy.wasm: `cargo rustc --crate-type cdylib`
  # is what applies LTO to this crate.
  (cd "$WORKTREE" && CARGO_TARGET_DIR="$PWD/../target" CARGO_BUILD_BUILD_DIR="$PWD/../target" \
    "$CARGO" rustc --target=wasm32-wasip1 --release --locked -p metadata-propagation-policy \
    --lib --crate-type cdylib)
  cp "$OUT/target/wasm32-wasip1/release/metadata_propagation_policy.wasm" "$OUT/base-policy.wasm"
  read -r -a flags <<<"-O3 $(make -s --no-print-directory print-wasm-opt-features)"
  "$(make -s --no-print-directory print-wasm-opt)" "${flags[@]}" "$OUT/base-policy.wasm" \
    -o "$OUT/base-policy.wasm"
  rm -f "$OUT/base-annotated.wasm"
  "$RUNNER" annotate -m "$WORKTREE/policy-metadata.yml" -u "$WORKTREE/README.md" \
    -o "$OUT/base-annotated.wasm" "$OUT/base-policy.wasm"
} >&2

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

MEASURE=${MEASURE:-time}
INSTANCE=${INSTANCE:-fresh}
case "$INSTANCE" in
  fresh) instance_args=() shape="Fresh instance per evaluation" ;;
  warm) instance_args=(--reuse-instance) shape="One warm instance for every evaluation" ;;
  *) echo "bench-compare.sh: INSTANCE is fresh or warm, not '$INSTANCE'" >&2; exit 1 ;;
esac
if [[ "$MEASURE" == instructions ]]; then
  command -v valgrind >/dev/null || { echo "bench-compare.sh: MEASURE=instructions needs valgrind" >&2; exit 1; }
  ROUNDS=1
fi

# shellcheck source=scripts/callgrind.bash
source scripts/callgrind.bash

# lookup_args ROOT FILE: the flag answering the look-ups from a scenario's
# fourth column: nothing for -, a kwctl session (*.yml) replayed, else
# parent objects (*.parents.yaml)
lookup_args() {
  local root=$1 file=$2
  case "$file" in
    -) ;;
    *.yml) printf '%s
' --replay-host-capabilities-interactions "$root/$file" ;;
    *) printf '%s
' --parents "$root/$file" ;;
  esac
}

# time_one ROOT MODULE REQUEST SETTINGS LOOKUPS: one round's fresh median in
# µs, or with MEASURE=instructions the instructions per evaluation; LOOKUPS
# is the scenario's parents file or replay session (or -)
time_one() {
  local root=$1 module=$2 request=$3 settings=$4 lookups=$5
  local args=(bench --output json --request-path "$root/$request" --settings-path "$root/$settings"
    --allow-context-aware "${instance_args[@]}")
  local extra
  mapfile -t extra < <(lookup_args "$root" "$lookups")
  args+=("${extra[@]}")
  if [[ "$MEASURE" == instructions ]]; then
    local small large
    small=$(callgrind_count 50 "${args[@]}" "$module")
    large=$(callgrind_count 250 "${args[@]}" "$module")
    echo $(((large - small) / 200))
  else
    "$RUNNER" "${args[@]}" --iterations "$ITERATIONS" --warmup "$WARMUP" "$module" | jq '.policy.stats.median_us'
  fi
}

# reply ROOT MODULE REQUEST SETTINGS LOOKUPS OUT: the module's reply to the
# scenario, saved to OUT (one evaluation)
reply() {
  local root=$1 module=$2 request=$3 settings=$4 lookups=$5 out=$6
  local args=(bench --output json --iterations 1 --warmup 0 --request-path "$root/$request"
    --settings-path "$root/$settings" --allow-context-aware --save-reply "$out")
  local extra
  mapfile -t extra < <(lookup_args "$root" "$lookups")
  "$RUNNER" "${args[@]}" "${extra[@]}" "$module" >/dev/null
}

# same_file BASE_FILE HEAD_FILE: true when both are - or hold the same bytes
same_file() {
  [[ "$1" == - && "$2" == - ]] || { [[ "$1" != - && "$2" != - ]] && cmp -s "$WORKTREE/$1" "$2"; }
}

# same_reply NAME BASE_REQUEST BASE_SETTINGS BASE_LOOKUPS HEAD_REQUEST
# HEAD_SETTINGS HEAD_LOOKUPS: "identical" when both revisions answer the
# scenario with the same bytes, "differs" when not, "–" when the scenario's
# files changed between them (request, settings, look-up answers), so the
# replies answer different questions. A module that fails to answer stops
# the run (in a command substitution `set -e` does not).
same_reply() {
  local name=$1 base_reply="$OUT/$1.base-reply.json" head_reply="$OUT/$1.head-reply.json"
  if ! same_file "$2" "$5" || ! same_file "$3" "$6" || ! same_file "$4" "$7"; then
    echo "–"
    return
  fi
  rm -f "$base_reply" "$head_reply"
  reply "$WORKTREE" "$OUT/base-annotated.wasm" "$2" "$3" "$4" "$base_reply" || return 1
  reply . annotated-policy.wasm "$5" "$6" "$7" "$head_reply" || return 1
  if cmp -s "$base_reply" "$head_reply"; then
    echo identical
  else
    echo differs
  fi
}

# shellcheck source=scripts/report.bash
source scripts/report.bash

compare_report() {
echo "\`MEASURE=$MEASURE BASE=$BASE make bench-compare\` on commit \`$(git rev-parse --short=7 HEAD)\` ($(date -u +%F)):"
echo
unit=$([[ "$MEASURE" == instructions ]] && echo "instructions / evaluation" || echo "median µs")
echo "| scenario | base $base_rev $unit | head $unit | head / base | reply |"
echo "|---|---:|---:|---:|---|"
while IFS=$'\t' read -r name request settings lookups; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [[ "$MEASURE" == instructions ]]; then
    counted "$name" || continue
  elif [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]]; then
    continue
  fi
  head_row=$(awk -F'\t' -v n="$name" '$1 == n' test_data/bench/scenarios.tsv)
  [[ -z "$head_row" ]] && continue
  IFS=$'\t' read -r _ head_request head_settings head_lookups <<<"$head_row"
  base_times=() head_times=()
  for _ in $(seq "$ROUNDS"); do
    base_times+=("$(time_one "$WORKTREE" "$OUT/base-annotated.wasm" "$request" "$settings" "$lookups")")
    head_times+=("$(time_one . annotated-policy.wasm "$head_request" "$head_settings" "$head_lookups")")
  done
  base_median=$(printf '%s\n' "${base_times[@]}" | median)
  head_median=$(printf '%s\n' "${head_times[@]}" | median)
  same=$(same_reply "$name" "$request" "$settings" "$lookups" "$head_request" "$head_settings" "$head_lookups") ||
    { echo "bench-compare.sh: $name: a module failed to answer (see above)" >&2; exit 1; }
  awk -v n="$name" -v b="$base_median" -v h="$head_median" -v s="$same" \
    'BEGIN { printf "| %s | %.1f | %.1f | %.3f | %s |\n", n, b, h, h / b, s }'
done <"$WORKTREE/test_data/bench/scenarios.tsv"
echo
if [[ "$MEASURE" == instructions ]]; then
  echo "$shape; instructions per evaluation counted by callgrind (runs of 250"
  echo "and 50 evaluations, difference / 200), host work included."
else
  echo "$shape; $ROUNDS rounds of $ITERATIONS timed evaluations (after $WARMUP"
  echo "warm-up) per scenario and module, the two modules taking turns; medians of the round medians."
fi
echo "reply: whether the two modules answer the scenario with the same bytes (– where its files"
echo "changed between the revisions)."
echo "Sizes: base policy.wasm $(wc -c <"$OUT/base-policy.wasm") bytes, head policy.wasm $(wc -c <policy.wasm) bytes."
}

report bench-compare compare_report
