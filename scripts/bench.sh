#!/usr/bin/env bash
# `make bench`: what the policy costs per admission request, on every
# scenario of test_data/bench, in the two shapes a host can run it
# (BENCHMARKS.md):
#
# - fresh: a new instance of the compiled module per request, as
#   policy-server does (the headline);
# - warm: one instance for every request, as `kwctl bench` does.
#
# Each (scenario, shape) is one `policy-runner bench` process that measures
# the policy and the floors taking turns (crates/floor: each reads the
# payload with the policy's own reader; the accept floor then accepts; the
# echo floor returns the object unchanged; the look-up floor, for scenarios
# with parents, makes the policy's look-ups through the policy's own code
# and accepts; the result floor, one build per scenario, answers with the
# policy's own reply to the request, compiled in, after the look-ups where
# the scenario has parents). The result ratio, policy / result floor, is the
# headline: what computing the answer costs, over the least any policy
# giving that answer must do. The ratio is policy / echo floor when the
# policy mutates, policy / accept floor otherwise; the look-up ratio is
# policy / look-up floor.
#
# A scenario's parents (scenarios.tsv's fourth column, written by
# test_data/bench/gen.py) are plain objects, passed with `--parents`: each
# look-up gets the object it names, pruned by the look-up's field masks, as
# policy-server answers it. A scenario whose look-ups read a user's kind has
# the grant beside its request (`grants`).
#
# Prints a markdown table and the module sizes on stdout, and writes
# target/bench/results.json: one object per (scenario, instance) row,
# {"scenario","instance","mutates","median_us","p99_us",
#  "accept_floor_median_us","echo_floor_median_us","ratio",
#  "lookup_floor_median_us","lookup_ratio"}, the last two null for
# scenarios without parents (no look-ups), and "result_floor_median_us",
# "result_ratio" (null for scenarios without a result floor).
#
# Environment:
#   ITERATIONS (default 1000) and WARMUP (default 100) per scenario, shape
#              and module
#   SCENARIOS  (default test_data/bench/scenarios.tsv)
#   ONLY       "xr-aws-5 md-ms": only those scenarios
#   MEASURE=instructions  instead of timing, count with valgrind's callgrind
#              the instructions of one fresh-instance evaluation of the
#              policy and of each floor (the accept floor left out): a run
#              of LARGE (default 50) evaluations minus a run of SMALL
#              (default 10), over the difference, so compiling the module
#              drops out; deterministic, so a busy machine does not blur it.
#              Prints its own table (ratios policy / floor) and no JSON.
#              The two 10,000-gate scenarios take most of an hour each under
#              callgrind: left out unless ONLY names them.
#   RESULT_SCENARIOS  the scenarios measured against a result floor (default
#              every one; each needs a floor build of its own, with the
#              policy's reply to its request compiled in)
#   WRITE=0    print the report only; otherwise a run over every scenario
#              (no ONLY) also writes its table into BENCHMARKS.md, between
#              the bench-time or bench-instructions markers
#   POLICY     the annotated module to time (default annotated-policy.wasm,
#              built here); the sizes are always those of policy.wasm
#
# Builds what it needs (the policy, the runner, the floors) and installs
# nothing. Build output goes to stderr; stdout is the report.
set -euo pipefail

cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
RUNNER=target/host/policy-runner
POLICY=${POLICY:-annotated-policy.wasm}
FLOOR_BUILD=target/wasm32-wasip1/release/floor_policy.wasm
OUT=target/bench
ITERATIONS=${ITERATIONS:-1000}
WARMUP=${WARMUP:-100}
SCENARIOS=${SCENARIOS:-test_data/bench/scenarios.tsv}
RESULT_SCENARIOS=${RESULT_SCENARIOS:-$(awk -F'\t' '$1 !~ /^#/ { printf "%s ", $1 }' "$SCENARIOS")}
MEASURE=${MEASURE:-time}
LARGE=${LARGE:-50}
SMALL=${SMALL:-10}
RESULTS=$OUT/results.json
# Each floor that measures above its policy, one line per scenario and
# floor (scripts/report.bash fails the run on any). Two counts of one module
# differ by up to 0.1 % (215,505 and 215,719 instructions for the accept
# floor on unhandled-cluster), so a count counts past
# INSTRUCTION_FLOOR_TOLERANCE (default 0.002: 0.2 %); a time is a median on
# a machine that may be busy, so it counts past TIME_FLOOR_TOLERANCE
# (default 0.05: 5 %).
FLOORS_ABOVE=$OUT/floors-above.txt
INSTRUCTION_FLOOR_TOLERANCE=${INSTRUCTION_FLOOR_TOLERANCE:-0.002}
TIME_FLOOR_TOLERANCE=${TIME_FLOOR_TOLERANCE:-0.05}
# The Makefile's wasm-opt flags: the floors go through the same pass as
# policy.wasm, so the ratios compare like with like.
read -r -a WASM_OPT_FLAGS <<<"-O3 $(make -s --no-print-directory print-wasm-opt-features)"
# The pinned binaryen policy.wasm is built with (the Makefile's WASM_OPT);
# `make policy.wasm` below builds it when missing.
WASM_OPT=$(make -s --no-print-directory print-wasm-opt)

for tool in jq awk; do
  command -v "$tool" >/dev/null || { echo "bench.sh: '$tool' is required" >&2; exit 1; }
done

{
  # policy.wasm, annotated-policy.wasm and the runner, as the Makefile builds them
  make --no-print-directory policy.wasm "$RUNNER" annotated-policy.wasm KWCTL="$RUNNER"
  mkdir -p "$OUT"
  # The floors, annotated with the policy's metadata so all the modules
  # carry the same sections.
  for floor in accept echo lookup; do
    features=()
    [[ "$floor" != accept ]] && features=(--features "$floor")
    "$CARGO" build --locked --target wasm32-wasip1 --release -p floor-policy "${features[@]}"
    "$WASM_OPT" "${WASM_OPT_FLAGS[@]}" "$FLOOR_BUILD" -o "$OUT/$floor-floor.wasm"
    rm -f "$OUT/annotated-$floor-floor.wasm"
    "$RUNNER" annotate -m policy-metadata.yml -o "$OUT/annotated-$floor-floor.wasm" "$OUT/$floor-floor.wasm"
  done
  : >"$FLOORS_ABOVE"
} >&2

# floors_above NAME POLICY [FLOOR_NAME COUNT]...: appends to FLOORS_ABOVE
# each floor whose instruction count exceeds the policy's by more than
# INSTRUCTION_FLOOR_TOLERANCE (– : not measured)
floors_above() {
  local name=$1 policy=$2
  shift 2
  while (($# >= 2)); do
    if [[ "$2" != - ]] && awk -v f="$2" -v p="$policy" -v t="$INSTRUCTION_FLOOR_TOLERANCE" 'BEGIN { exit !(f > p * (1 + t)) }'; then
      echo "$name: the $1 floor counts $2 instructions, the policy $policy ($(awk -v p="$policy" -v f="$2" 'BEGIN { printf "%.3f", p / f }') of it)" >>"$FLOORS_ABOVE"
    fi
    shift 2
  done
}

# grants REQUEST: the runner's `-m FILE` when a metadata file beside the
# scenario's request (<name>.metadata.yml, written by gen.py) grants its
# look-ups, as a ClusterAdmissionPolicy's contextAwareResources grant a
# user's kinds (mr-aws-vpc's XR); nothing otherwise
grants() {
  local file=${1%.request.json}.metadata.yml
  if [[ -f "$file" ]]; then
    echo "-m" "$file"
  fi
}

# result_floor NAME REQUEST SETTINGS PARENTS: builds the result floor for a
# scenario (the policy's reply to its request, saved by running the policy
# once, compiled in; with the look-ups where it has parents) and prints its
# annotated module's path
result_floor() {
  local name=$1 request=$2 settings=$3 parents=$4
  local reply="$PWD/$OUT/$name.reply.json" features=result
  local args=(bench --output json --iterations 1 --warmup 0 --request-path "$request"
    --settings-path "$settings" --allow-context-aware --save-reply "$reply")
  # shellcheck disable=SC2207
  args+=($(grants "$request"))
  if [[ "$parents" != "-" ]]; then
    args+=(--parents "$parents")
    features=lookup,result
  fi
  {
    "$RUNNER" "${args[@]}" "$POLICY" >/dev/null
    RESULT_FLOOR_REPLY="$reply" "$CARGO" build --locked --target wasm32-wasip1 --release \
      -p floor-policy --features "$features"
    "$WASM_OPT" "${WASM_OPT_FLAGS[@]}" "$FLOOR_BUILD" -o "$OUT/result-floor-$name.wasm"
    rm -f "$OUT/annotated-result-floor-$name.wasm"
    "$RUNNER" annotate -m policy-metadata.yml -o "$OUT/annotated-result-floor-$name.wasm" \
      "$OUT/result-floor-$name.wasm"
  } >&2
  echo "$OUT/annotated-result-floor-$name.wasm"
}

# shellcheck source=scripts/callgrind.bash
source scripts/callgrind.bash

# instructions MODULE ARGS...: instructions per evaluation of MODULE, as
# MEASURE=instructions describes (the runner compiles on one thread, so
# idle compile threads are not counted)
instructions() {
  local module=$1
  shift
  local n counts=()
  for n in "$SMALL" "$LARGE"; do
    counts+=("$(callgrind_count "$n" "$@" "$module")")
  done
  echo $(((counts[1] - counts[0]) / (LARGE - SMALL)))
}

# count_scenario NAME REQUEST SETTINGS PARENTS: MEASURE=instructions' row
count_scenario() {
  local name=$1 request=$2 settings=$3 parents=$4
  local args=(bench --output json --request-path "$request" --settings-path "$settings"
    --allow-context-aware)
  # shellcheck disable=SC2207
  args+=($(grants "$request"))
  [[ "$parents" != "-" ]] && args+=(--parents "$parents")
  local policy answer_floor lookup_floor=- result_floor=- mutates
  # The least any policy giving this kind of answer costs: the echo floor
  # where the policy mutates (it returns the object), the accept floor
  # where it accepts or rejects without one.
  mutates=$("$RUNNER" "${args[@]}" --iterations 1 --warmup 0 "$POLICY" | jq -r .mutates)
  local answer_module=$OUT/annotated-accept-floor.wasm
  [[ "$mutates" == true ]] && answer_module=$OUT/annotated-echo-floor.wasm
  policy=$(instructions "$POLICY" "${args[@]}")
  answer_floor=$(instructions "$answer_module" "${args[@]}")
  if [[ "$parents" != "-" ]]; then
    lookup_floor=$(instructions "$OUT/annotated-lookup-floor.wasm" "${args[@]}")
  fi
  if [[ " $RESULT_SCENARIOS " == *" $name "* ]]; then
    result_floor=$(instructions "$(result_floor "$name" "$request" "$settings" "$parents")" "${args[@]}")
  fi
  local which=accept
  [[ "$mutates" == true ]] && which=echo
  floors_above "$name" "$policy" result "$result_floor" look-up "$lookup_floor" "$which" "$answer_floor"
  awk -v n="$name" -v p="$policy" -v e="$answer_floor" -v w="$which" -v l="$lookup_floor" -v r="$result_floor" '
    function num(f,   t, out) {
      if (f == "-") return "–"
      for (t = sprintf("%d", f); length(t) > 3; t = substr(t, 1, length(t) - 3))
        out = "," substr(t, length(t) - 2) out
      return t out
    }
    function ratio(f) { return f == "-" ? "–" : sprintf("%.3f", p / f) }
    BEGIN { printf "| %s | %s | %s | %s | %s | %s | %s %s | %s |\n", n, num(p), num(r), ratio(r), num(l), ratio(l), num(e), w, ratio(e) }'
}

kib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }
size_of() { wc -c <"$1" | tr -d ' '; }

# shellcheck source=scripts/report.bash
source scripts/report.bash

instructions_report() {
  {
    echo "\`MEASURE=instructions make bench\` on commit \`$(git rev-parse --short=7 HEAD)\` ($(date -u +%F)): instructions per"
    echo "fresh-instance evaluation (callgrind over the runner, host work included; runs of $LARGE and $SMALL"
    echo "evaluations, difference / $((LARGE - SMALL))), every scenario but the two 10,000-gate ones. The last"
    echo "floor is the echo floor where the policy mutates, the accept floor where it answers without an object."
    echo
    echo "| scenario | policy | result floor | policy / result | look-up floor | policy / look-up | echo or accept floor | policy / it |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    while IFS=$'\t' read -r name request settings parents; do
      [[ -z "$name" || "$name" == \#* ]] && continue
      counted "$name" || continue
      count_scenario "$name" "$request" "$settings" "$parents"
    done <"$SCENARIOS"
  }
}

if [[ "$MEASURE" == instructions ]]; then
  command -v valgrind >/dev/null || { echo "bench.sh: MEASURE=instructions needs valgrind" >&2; exit 1; }
  report bench-instructions instructions_report
  exit 0
fi

time_report() {
echo "\`make bench\` on commit \`$(git rev-parse --short=7 HEAD)\` ($(date -u +%F)), $(nproc) CPUs:"
echo
echo "| scenario | mutates | fresh median µs | fresh p99 µs | accept floor µs | echo floor µs | ratio | lookup floor µs | lookup ratio | result floor µs | result ratio | warm median µs | warm ratio |"
echo "|---|:-:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
answers=()
rows=()
while IFS=$'\t' read -r name request settings parents; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]] && continue
  args=(bench --output json --iterations "$ITERATIONS" --warmup "$WARMUP"
    --request-path "$request" --settings-path "$settings" --allow-context-aware
    --accept-floor "$OUT/annotated-accept-floor.wasm" --echo-floor "$OUT/annotated-echo-floor.wasm")
  # shellcheck disable=SC2207
  args+=($(grants "$request"))
  if [[ "$parents" != "-" ]]; then
    args+=(--parents "$parents" --lookup-floor "$OUT/annotated-lookup-floor.wasm")
  fi
  if [[ " $RESULT_SCENARIOS " == *" $name "* ]]; then
    args+=(--result-floor "$(result_floor "$name" "$request" "$settings" "$parents")")
  fi
  fresh=$("$RUNNER" "${args[@]}" "$POLICY")
  warm=$("$RUNNER" "${args[@]}" --reuse-instance "$POLICY")
  # Parents answer whatever is asked (a missing one is a NotFound, not an
  # error), so check here what a replay session enforced: the policy looked
  # up every parent and found it, and the look-up floor made as many
  # look-ups.
  if [[ "$parents" != "-" ]]; then
    for report in "$fresh" "$warm"; do
      problem=$(jq -r '
        if .policy.answer.lookups == 0 or .policy.answer.unreplayed > 0 then
          "the policy found \(.policy.answer.lookups) of the parents, \(.policy.answer.unreplayed) were not looked up"
        elif .lookup_floor.answer.lookups != .policy.answer.lookups then
          "the look-up floor made \(.lookup_floor.answer.lookups) look-ups, the policy \(.policy.answer.lookups)"
        else empty end' <<<"$report")
      [[ -z "$problem" ]] || { echo "bench.sh: $name ($parents): $problem" >&2; exit 1; }
    done
  fi
  # The floors this answer is held to: on fresh instances (policy-server's
  # shape, the headline) the result floor, the look-up floor and the echo
  # floor where the policy mutates, the accept floor where not; on a warm
  # instance the last one, which the warm ratio reports. Warm, an
  # unhandled kind's evaluation takes about 8 µs, and a result floor's
  # compiled-in reply costs about as much again, so the result and look-up
  # floors are floors of the fresh shape only.
  for report in "$fresh" "$warm"; do
    jq -r --arg name "$name" --argjson tolerance "$TIME_FLOOR_TOLERANCE" '
      . as $r | $r.policy.stats.median_us as $p
      | [(if $r.instance == "fresh" then ["result", $r.result_floor], ["look-up", $r.lookup_floor] else empty end),
         (if $r.mutates then ["echo", $r.echo_floor] else ["accept", $r.accept_floor] end)][]
      | select(.[1] != null and .[1].stats.median_us > $p * (1 + $tolerance))
      | "\($name) (\($r.instance)): the \(.[0]) floor median is \(.[1].stats.median_us) µs, the policy \($p) µs: above it by more than \($tolerance * 100) %"
    ' <<<"$report" >>"$FLOORS_ABOVE"
  done
  for report in "$fresh" "$warm"; do
    rows+=("$(jq -c --arg name "$name" '{
      scenario: $name, instance, mutates,
      median_us: .policy.stats.median_us, p99_us: .policy.stats.p99_us,
      accept_floor_median_us: .accept_floor.stats.median_us,
      echo_floor_median_us: .echo_floor.stats.median_us,
      ratio,
      lookup_floor_median_us: .lookup_floor.stats.median_us,
      lookup_ratio,
      result_floor_median_us: .result_floor.stats.median_us,
      result_ratio}' <<<"$report")")
  done
  jq -r -n --arg name "$name" --argjson f "$fresh" --argjson w "$warm" '
    def us: . * 10 | round / 10;
    def r: . * 100 | round / 100;
    def or_dash(f): if . == null then "–" else f end;
    "| \($name) | \(if $f.mutates then "yes" else "no" end) | \($f.policy.stats.median_us | us) | \($f.policy.stats.p99_us | us) | \($f.accept_floor.stats.median_us | us) | \($f.echo_floor.stats.median_us | us) | \($f.ratio | r) | \($f.lookup_floor.stats.median_us | or_dash(us)) | \($f.lookup_ratio | or_dash(r)) | \($f.result_floor.stats.median_us | or_dash(us)) | \($f.result_ratio | or_dash(r)) | \($w.policy.stats.median_us | us) | \($w.ratio | r) |"
  '
  answers+=("$(jq -r --arg name "$name" '
    .policy.answer as $a
    | "- \($name): \(if $a.accepted then "accepted" else "rejected (code \($a.code))" end)"
      + "\(if $a.mutated then ", mutated (\($a.patch_operations) patch operations)" else "" end), \($a.lookups) look-up(s), \($a.warnings) warning(s), \($a.audit_annotations) audit annotation(s); request \(.payload_bytes) B, reply \($a.reply_bytes) B"
  ' <<<"$fresh")")
done <"$SCENARIOS"
printf '%s\n' "${rows[@]}" | jq -s . >"$RESULTS"

echo
echo "$ITERATIONS timed evaluations per scenario, shape and module, after $WARMUP warm-up."
echo "fresh: a new instance per evaluation (policy-server); warm: one instance (kwctl bench)."
echo "result ratio, the headline: policy / result floor, which reads the payload as the policy"
echo "does, makes its look-ups and answers with its reply (compiled in); ratio: policy / echo floor"
echo "where the policy mutates, policy / accept floor otherwise; lookup ratio: policy / look-up"
echo "floor, which makes the same look-ups and accepts (– without look-ups); all measured in the"
echo "same run and shape. Rows as JSON: $RESULTS"
echo
echo "What the policy answered (identical on every evaluation):"
echo
printf '%s\n' "${answers[@]}"

echo
echo "Module sizes:"
echo
module=$(make -s --no-print-directory print-module)
module_bytes=$(size_of "$module")
echo "- rustc's module, before wasm-opt: $module_bytes bytes ($(kib "$module_bytes") KiB)"
policy_bytes=$(size_of policy.wasm)
echo "- policy.wasm (after \`wasm-opt ${WASM_OPT_FLAGS[0]}\`, $("$WASM_OPT" --version)): $policy_bytes bytes ($(kib "$policy_bytes") KiB)"
annotated_bytes=$(size_of "$POLICY")
echo "- $POLICY (timed; annotated with metadata and README): $annotated_bytes bytes ($(kib "$annotated_bytes") KiB)"
for floor in accept echo lookup; do
  floor_bytes=$(size_of "$OUT/$floor-floor.wasm")
  echo "- $floor-floor.wasm (release build, after wasm-opt): $floor_bytes bytes ($(kib "$floor_bytes") KiB)"
done
}

report bench-time time_report
