#!/usr/bin/env bash
# `make bench-pieces`: what each piece of performance machinery the policy
# keeps buys, in instructions per fresh-instance evaluation, and whether it
# earns its place; writes the table into BENCHMARKS.md ("What each piece
# buys", between its bench-pieces markers) and prints it.
#
# Each piece has a patch in test_data/bench/pieces/ that replaces it with
# its plain form (BENCHMARKS.md, "What each piece buys", says what each
# one's is).
# For every patch, this checkout's HEAD is checked out in a worktree under
# target/bench-pieces, the patch applied and the module built as the
# Makefile builds policy.wasm (LTO, wasm-opt -O3). Then every scenario is
# counted with callgrind on this checkout's policy and on each plain
# variant: a run of LARGE (default 50) evaluations minus a run of SMALL
# (default 10), over the difference, so compiling the module drops out.
# Deterministic: a rerun gives the same counts.
#
# The rule (BENCHMARKS.md): a piece stays only if it saves at least 3 %
# (`unsafe`: 5 %) on at least two of the scenarios that stand for real use,
# DECIDE below; the table marks them and gives each piece's verdict.
#
# Environment: ONLY="xr-aws-5 md-ms" limits the scenarios (default: every
# scenario but the two 10,000-gate ones, which take most of an hour each
# under callgrind); PIECES="writer" limits the patches; JOBS
# (default 2) counts run side by side; WRITE=0 prints without writing
# BENCHMARKS.md.
set -euo pipefail

cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
RUNNER=target/host/policy-runner
OUT=target/bench-pieces
LARGE=${LARGE:-50}
SMALL=${SMALL:-10}
# The scenarios that stand for real use: a piece must pay on two of them.
DECIDE="md-ms kcp-machine topology-kcp machine-node-sync xr-aws-5 infra-awscluster-class"
# The pieces that are `unsafe` code, held to 5 % instead of 3 % (none
# today: the last, memcmp, went by this rule).
UNSAFE=""

for tool in valgrind git awk; do
  command -v "$tool" >/dev/null || { echo "bench-pieces.sh: '$tool' is required" >&2; exit 1; }
done
# shellcheck source=scripts/callgrind.bash
source scripts/callgrind.bash
# shellcheck source=scripts/report.bash
source scripts/report.bash

pieces=()
for patch in test_data/bench/pieces/*.patch; do
  name=$(basename "$patch" .patch)
  [[ -n "${PIECES:-}" && " $PIECES " != *" $name "* ]] && continue
  pieces+=("$name")
done
((${#pieces[@]})) || { echo "bench-pieces.sh: no patch in test_data/bench/pieces matches PIECES='${PIECES:-}'" >&2; exit 1; }

{
  make --no-print-directory policy.wasm annotated-policy.wasm "$RUNNER" KWCTL="$RUNNER"
  mkdir -p "$OUT"
  # The policy as built now: a build in this checkout while the counts run
  # must not change what they count.
  cp annotated-policy.wasm "$OUT/policy-annotated.wasm"
  cp policy.wasm "$OUT/policy.wasm"
  read -r -a flags <<<"-O3 $(make -s --no-print-directory print-wasm-opt-features)"
  # The pinned binaryen policy.wasm is built with (the Makefile's WASM_OPT).
  WASM_OPT=$(make -s --no-print-directory print-wasm-opt)
  head=$(git rev-parse HEAD)
  for name in "${pieces[@]}"; do
    tree=$OUT/$name
    git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
    git worktree add --detach "$tree" "$head"
    git -C "$tree" apply "$PWD/test_data/bench/pieces/$name.patch" || {
      echo "bench-pieces.sh: test_data/bench/pieces/$name.patch no longer applies to HEAD: rewrite it" >&2
      exit 1
    }
    # One target directory for every variant: the dependencies build once.
    (cd "$tree" && CARGO_TARGET_DIR="$PWD/../target" CARGO_BUILD_BUILD_DIR="$PWD/../target" \
      "$CARGO" rustc --target=wasm32-wasip1 --release --locked -p metadata-propagation-policy \
      --lib --crate-type cdylib)
    "$WASM_OPT" "${flags[@]}" "$OUT/target/wasm32-wasip1/release/metadata_propagation_policy.wasm" -o "$OUT/$name.wasm"
    rm -f "$OUT/$name-annotated.wasm"
    "$RUNNER" annotate -m policy-metadata.yml -o "$OUT/$name-annotated.wasm" "$OUT/$name.wasm"
    git worktree remove --force "$tree"
  done
} >&2

# count MODULE REQUEST SETTINGS PARENTS: instructions per evaluation
count() {
  local module=$1 request=$2 settings=$3 parents=$4
  local args=(bench --output json --request-path "$request" --settings-path "$settings" --allow-context-aware)
  [[ "$parents" != - ]] && args+=(--parents "$parents")
  # A scenario whose look-ups read a user's kind is granted it by the
  # metadata beside its request, as scripts/bench.sh grants it (`grants`).
  local grant=${request%.request.json}.metadata.yml
  [[ -f "$grant" ]] && args+=(-m "$grant")
  local small large
  small=$(callgrind_count "$SMALL" "${args[@]}" "$module")
  large=$(callgrind_count "$LARGE" "${args[@]}" "$module")
  [[ -n "$small" && -n "$large" ]] || { echo "bench-pieces.sh: callgrind counted nothing for $module on $request" >&2; return 1; }
  echo $(((large - small) / (LARGE - SMALL)))
}
export -f count callgrind_count
export RUNNER LARGE SMALL

scenarios=()
while IFS=$'\t' read -r scenario request settings parents; do
  [[ -z "$scenario" || "$scenario" == \#* ]] && continue
  counted "$scenario" || continue
  scenarios+=("$scenario")
  for module in policy "${pieces[@]}"; do
    printf '%s\t%s\t%s\t%s\t%s\n' "$module" "$scenario" "$request" "$settings" "$parents"
  done
done <test_data/bench/scenarios.tsv >"$OUT/jobs.tsv"

# Every count on its own, JOBS at a time, each into counts/<module>.<scenario>.
rm -rf "$OUT/counts"
mkdir -p "$OUT/counts"
# shellcheck disable=SC2016
xargs -P "${JOBS:-2}" -L 1 bash -c 'count "$0-annotated.wasm" "$2" "$3" "$4" >"$5/counts/$(basename "$0").$1"' \
  < <(awk -F'\t' -v out="$OUT" '{ print out "/" $1, $2, $3, $4, $5, out }' "$OUT/jobs.tsv")

pieces_report() {
  echo "\`make bench-pieces\` on commit \`$(git rev-parse --short=7 HEAD)\` ($(date -u +%F)): instructions per fresh-instance"
  echo "evaluation, host work included (callgrind: runs of $LARGE and $SMALL evaluations, difference / $((LARGE - SMALL))),"
  echo "and what each piece saves, 1 − policy / plain. Scenarios in **bold** stand for real use and decide."
  echo
  python3 scripts/pieces_table.py "$OUT" "$DECIDE" "$UNSAFE" "${scenarios[*]}" "${pieces[*]}"
}
# The pieces' verdicts need every one of them: a run limited by PIECES
# prints its table without writing it.
[[ -z "${PIECES:-}" ]] || WRITE=0
report bench-pieces pieces_report
