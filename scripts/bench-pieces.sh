#!/usr/bin/env bash
# `make bench-pieces`: what each piece of performance machinery the policy
# keeps buys, in instructions per fresh-instance evaluation, on every
# `make bench` scenario (BENCHMARKS.md, "What each piece buys").
#
# Each piece has a patch in test_data/bench/pieces/ that replaces it with
# the plain form (the default memcmp, a BTreeMap, the SDK's helpers, …).
# For every patch, this checkout's HEAD is checked out in a worktree under
# target/bench-pieces, the patch applied and the module built as the
# Makefile builds policy.wasm (LTO, wasm-opt -O3). Then every scenario is
# counted with callgrind on this checkout's policy and on each plain
# variant: a run of LARGE (default 50) evaluations minus a run of SMALL
# (default 10), over the difference, so compiling the module drops out.
# Deterministic: a rerun gives the same counts.
#
# Environment: ONLY="xr-aws-5 md-ms" limits the scenarios (default: every
# scenario but the two 10,000-gate ones, which take most of an hour each
# under callgrind); PIECES="memcmp sorted-map" limits the patches.
# stdout is the report: per scenario, the policy's count, each variant's,
# and what the piece saves (1 - policy / variant).
set -euo pipefail

cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
RUNNER=target/host/policy-runner
OUT=target/bench-pieces
LARGE=${LARGE:-50}
SMALL=${SMALL:-10}
SKIP=" topology-kcp-10k-parent-gates topology-kcp-10k-child-gates "

for tool in valgrind git awk; do
  command -v "$tool" >/dev/null || { echo "bench-pieces.sh: '$tool' is required" >&2; exit 1; }
done
# shellcheck source=scripts/callgrind.bash
source scripts/callgrind.bash

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
  local small large
  small=$(callgrind_count "$SMALL" "${args[@]}" "$module")
  large=$(callgrind_count "$LARGE" "${args[@]}" "$module")
  echo $(((large - small) / (LARGE - SMALL)))
}

header="| scenario | policy |"
rule="|---|---:|"
for name in "${pieces[@]}"; do
  header+=" plain $name | $name saves |"
  rule+="---:|---:|"
done
echo "$header"
echo "$rule"
while IFS=$'\t' read -r scenario request settings parents; do
  [[ -z "$scenario" || "$scenario" == \#* ]] && continue
  if [[ -n "${ONLY:-}" ]]; then
    [[ " $ONLY " != *" $scenario "* ]] && continue
  elif [[ "$SKIP" == *" $scenario "* ]]; then
    continue
  fi
  policy=$(count "$OUT/policy-annotated.wasm" "$request" "$settings" "$parents")
  row="| $scenario | $policy |"
  for name in "${pieces[@]}"; do
    plain=$(count "$OUT/$name-annotated.wasm" "$request" "$settings" "$parents")
    row+=$(awk -v p="$policy" -v v="$plain" 'BEGIN { printf " %d | %.1f %% |", v, 100 * (1 - p / v) }')
  done
  echo "$row"
done <test_data/bench/scenarios.tsv
echo
echo "Instructions per fresh-instance evaluation, host work included (callgrind: runs of $LARGE and"
echo "$SMALL evaluations, difference / $((LARGE - SMALL))). Sizes: policy.wasm $(wc -c <"$OUT/policy.wasm") bytes$(
  for name in "${pieces[@]}"; do printf ', plain %s %s' "$name" "$(wc -c <"$OUT/$name.wasm")"; done
) bytes."
