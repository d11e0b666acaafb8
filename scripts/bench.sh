#!/usr/bin/env bash
# `make bench`: times the policy on every scenario of test_data/bench and
# prints a markdown table, then the module sizes (BENCHMARKS.md).
#
# Every scenario runs against the annotated policy and against the floor
# module (crates/floor: decodes the same request and accepts) in one
# `policy-runner bench` process; the ratio of the medians is what the policy
# costs beyond JSON in and out.
#
# Environment:
#   ITERATIONS (default 1000) and WARMUP (default 100) per scenario and module
#   SCENARIOS  (default test_data/bench/scenarios.tsv)
#   POLICY     the annotated module to time (default annotated-policy.wasm,
#              built here); the sizes are always those of policy.wasm
#
# Builds what it needs (the policy, the runner, the floor) and installs
# nothing. Build output goes to stderr; stdout is the report.
set -euo pipefail

cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
RUNNER=target/host/policy-runner
POLICY=${POLICY:-annotated-policy.wasm}
FLOOR_BUILD=target/wasm32-wasip1/release/floor_policy.wasm
OUT=target/bench
FLOOR=$OUT/annotated-floor.wasm
ITERATIONS=${ITERATIONS:-1000}
WARMUP=${WARMUP:-100}
SCENARIOS=${SCENARIOS:-test_data/bench/scenarios.tsv}
# Features rustc enables by default for wasm32-wasip1; older binaryen
# releases (Debian's) refuse the module unless they are named.
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-sign-ext --enable-mutable-globals
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue)

for tool in jq awk; do
  command -v "$tool" >/dev/null || { echo "bench.sh: '$tool' is required" >&2; exit 1; }
done

{
  # policy.wasm, annotated-policy.wasm and the runner, as the Makefile builds them
  make --no-print-directory policy.wasm "$RUNNER" annotated-policy.wasm KWCTL="$RUNNER"
  "$CARGO" build --locked --target wasm32-wasip1 --release -p floor-policy
  mkdir -p "$OUT"
  cp "$FLOOR_BUILD" "$OUT/floor.wasm"
  # The same metadata as the policy, so both modules carry the same sections
  rm -f "$FLOOR"
  "$RUNNER" annotate -m policy-metadata.yml -o "$FLOOR" "$OUT/floor.wasm"
} >&2

kib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }
size_of() { wc -c <"$1" | tr -d ' '; }

echo "| scenario | policy median µs | p99 | min | evals/s | floor median µs | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
answers=()
while IFS=$'\t' read -r name request settings replay; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  args=(bench --output json --iterations "$ITERATIONS" --warmup "$WARMUP"
    --request-path "$request" --settings-path "$settings" --allow-context-aware
    --floor "$FLOOR")
  if [[ "$replay" != "-" ]]; then
    args+=(--replay-host-capabilities-interactions "$replay")
  fi
  report=$("$RUNNER" "${args[@]}" "$POLICY")
  jq -r --arg name "$name" '
    def us: . * 10 | round / 10;
    "| \($name) | \(.policy.stats.median_us | us) | \(.policy.stats.p99_us | us) | \(.policy.stats.min_us | us) | \(.policy.stats.evals_per_second | round) | \(.floor.stats.median_us | us) | \(.ratio * 100 | round / 100) |"
  ' <<<"$report"
  answers+=("$(jq -r --arg name "$name" '
    .policy.answer as $a
    | "- \($name): \(if $a.accepted then "accepted" else "rejected (code \($a.code))" end)"
      + "\(if $a.mutated then ", mutated" else "" end), \($a.lookups) look-up(s), \($a.warnings) warning(s), \($a.audit_annotations) audit annotation(s); request \(.payload_bytes) B, reply \($a.reply_bytes) B"
  ' <<<"$report")")
done <"$SCENARIOS"

echo
echo "$ITERATIONS timed evaluations per scenario and module, after $WARMUP warm-up, on one instance each."
echo
echo "What the policy answered (identical on every evaluation):"
echo
printf '%s\n' "${answers[@]}"

echo
echo "Module sizes:"
echo
policy_bytes=$(size_of policy.wasm)
echo "- policy.wasm (release build): $policy_bytes bytes ($(kib "$policy_bytes") KiB)"
if ! command -v wasm-opt >/dev/null; then
  echo "- policy.wasm after \`wasm-opt -Oz\`: wasm-opt not installed (apt-get install binaryen)"
elif wasm-opt -Oz "${WASM_OPT_FEATURES[@]}" policy.wasm -o "$OUT/policy.Oz.wasm" 2>"$OUT/wasm-opt.log"; then
  oz_bytes=$(size_of "$OUT/policy.Oz.wasm")
  echo "- policy.wasm after \`wasm-opt -Oz\` ($(wasm-opt --version)): $oz_bytes bytes ($(kib "$oz_bytes") KiB)"
else
  echo "- policy.wasm after \`wasm-opt -Oz\`: wasm-opt failed, see $OUT/wasm-opt.log"
fi
annotated_bytes=$(size_of "$POLICY")
echo "- $POLICY (timed; annotated with metadata and README): $annotated_bytes bytes ($(kib "$annotated_bytes") KiB)"
floor_bytes=$(size_of "$OUT/floor.wasm")
echo "- floor.wasm (release build): $floor_bytes bytes ($(kib "$floor_bytes") KiB)"
