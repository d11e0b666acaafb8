#!/usr/bin/env bash
# `make fuzz-campaign`: a long fuzzing campaign, not part of `make check`.
# Each target (FUZZ_TARGETS, `target:sanitizer` as the Makefile's `fuzz`
# names them) runs for FUZZ_CAMPAIGN_SECONDS on every core: libFuzzer's
# `-jobs=N -workers=N`, N independent fuzzing processes sharing the
# target's corpus (fuzz/corpus/<target>, which `make fuzz` and earlier
# campaigns grew; fuzz/regressions/<target> seeds it too). A process that
# finds a crash (or a timeout, a leak, an out-of-memory) stops; the others
# run on to the end. Every finding is minimised (libFuzzer's
# `-minimize_crash`), checked to still fail, and kept under
# fuzz/regressions/<target>/ as `crash-<sha1>` (the original when the
# minimised input no longer fails), where every `make fuzz` replays it.
#
# Before fuzzing, each target replays its regression inputs (a failing one
# stops the campaign: the code regressed). At the end it prints, per
# target, the executions (the sum of each process's
# `stat::number_of_executed_units`, or its last `#N` status line when it
# stopped on a finding), executions per second over the wall time (all
# processes together) and the time 10 M executions take at that rate, and
# the findings kept. Exit status 1 when anything was found.
#
# With FUZZ_CAMPAIGN_RUNS, each target runs until its processes together
# have made that many executions (each process RUNS/JOBS, rounded up), or
# for FUZZ_CAMPAIGN_SECONDS (then 4 h by default), whichever comes first.
#
# Each target's result (commit, executions, seconds, findings and the
# coverage libFuzzer reached: its `cov` edges and `ft` features, the
# largest of the processes) replaces that target's row of the table in
# docs/development.md's fuzz-campaign section (scripts/fuzz_table.py), so
# the figures there are the ones a campaign printed; FUZZ_CAMPAIGN_WRITE=0
# leaves it alone.
#
# Environment:
#   FUZZ_CAMPAIGN_TABLE    the file whose table gets the results (default
#                          docs/development.md)
#   FUZZ_CAMPAIGN_RUNS     executions per target (default: none, run for
#                          the time)
#   FUZZ_CAMPAIGN_SECONDS  seconds per target (default 1800; 14400 with
#                          FUZZ_CAMPAIGN_RUNS)
#   FUZZ_CAMPAIGN_JOBS     fuzzing processes per target (default: nproc)
#   FUZZ_CAMPAIGN_TIMEOUT  seconds one input may take before it is a
#                          finding (default 10; libFuzzer's own is 1200)
#   FUZZ_TARGETS           "target:sanitizer ..." (default: the three)
#   FUZZ_CAMPAIGN_ONLY     run only these targets ("mutated_objects ...")
#   CARGO                  cargo (default cargo)
# Logs and raw findings: fuzz/artifacts/campaign-<UTC time>/<target>/.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"

CARGO=${CARGO:-cargo}
RUNS=${FUZZ_CAMPAIGN_RUNS:-}
SECONDS_PER_TARGET=${FUZZ_CAMPAIGN_SECONDS:-$([[ -n "$RUNS" ]] && echo 14400 || echo 1800)}
WRITE=${FUZZ_CAMPAIGN_WRITE:-1}
TABLE=${FUZZ_CAMPAIGN_TABLE:-$PWD/../docs/development.md}
JOBS=${FUZZ_CAMPAIGN_JOBS:-$(nproc)}
TIMEOUT=${FUZZ_CAMPAIGN_TIMEOUT:-10}
TARGETS=${FUZZ_TARGETS:-validate_bytes:address settings_bytes:address mutated_objects:none}
ONLY=${FUZZ_CAMPAIGN_ONLY:-}
# Stable toolchain: cargo-fuzz's nightly flags (the Makefile's `fuzz` says why).
export RUSTC_BOOTSTRAP=1

[[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ && "$SECONDS_PER_TARGET" -gt 0 ]] ||
  { echo "fuzz_campaign.sh: FUZZ_CAMPAIGN_SECONDS must be a positive number of seconds" >&2; exit 2; }
[[ "$JOBS" =~ ^[0-9]+$ && "$JOBS" -gt 0 ]] ||
  { echo "fuzz_campaign.sh: FUZZ_CAMPAIGN_JOBS must be a positive number" >&2; exit 2; }
[[ -z "$RUNS" || ( "$RUNS" =~ ^[0-9]+$ && "$RUNS" -gt 0 ) ]] ||
  { echo "fuzz_campaign.sh: FUZZ_CAMPAIGN_RUNS must be a positive number of executions" >&2; exit 2; }
runs_flag=()
[[ -z "$RUNS" ]] || runs_flag=(-runs=$(( (RUNS + JOBS - 1) / JOBS )))
# The commit fuzzed, marked when the core or the edge has uncommitted changes.
commit=$(git rev-parse --short=7 HEAD)
git diff --quiet HEAD -- ../crates/core ../src . || commit="$commit + uncommitted changes"

triple=$(rustc -vV | sed -n 's/^host: //p')
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_root=$PWD/artifacts/campaign-$stamp
mkdir -p "$out_root"

# The libFuzzer process group running now (job control puts each
# background job in a group of its own: the fuzzer, its workers and their
# shells), stopped with the script.
set -m
running=
stop() {
  if [[ -n "$running" ]]; then kill -TERM -- "-$running" 2>/dev/null || true; fi
  exit 130
}
trap stop INT TERM

# Executions of one process's log: its final stats, else its last status
# line (`#123456	NEW …`, `#123456	DONE …`).
executions_of() {
  local log=$1 n
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [[ -z "$n" ]]; then
    n=$(grep -aoE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
  fi
  echo "${n:-0}"
}

# The coverage of one process's log: its last status line's `cov: N ft: M`.
coverage_of() {
  grep -aoE 'cov: [0-9]+ ft: [0-9]+' "$1" | tail -n 1 | awk '{ print $2, $4 }'
}

# 1234567 as 1,234,567.
group() {
  sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"
}

# Keeps a finding: minimised when the minimised input still fails.
keep() {
  local bin=$1 target=$2 finding=$3 dir=$4 kept
  local minimised=$dir/minimised-$(basename "$finding")
  case "$(basename "$finding")" in
    crash-*)
      "$bin" -minimize_crash=1 -runs=10000 -max_total_time=300 -timeout="$TIMEOUT" \
        -exact_artifact_path="$minimised" "$finding" >"$minimised.log" 2>&1 || true
      ;;
  esac
  kept=$finding
  if [[ -s "$minimised" ]] && ! "$bin" -timeout="$TIMEOUT" "$minimised" >/dev/null 2>&1; then
    kept=$minimised
  fi
  local name kind
  kind=$(basename "$finding"); kind=${kind%%-*}
  name=$kind-$(sha1sum "$kept" | cut -d' ' -f1)
  mkdir -p "regressions/$target"
  cp "$kept" "regressions/$target/$name"
  echo "fuzz/regressions/$target/$name"
}

summary=()
found=0
for entry in $TARGETS; do
  target=${entry%%:*}
  sanitizer=${entry##*:}
  if [[ -n "$ONLY" && " $ONLY " != *" $target "* ]]; then continue; fi
  echo "== $target (sanitizer $sanitizer): build"
  "$CARGO" fuzz build -O -s "$sanitizer" "$target"
  bin=${CARGO_TARGET_DIR:-$PWD/target}/$triple/release/$target
  [[ -x "$bin" ]] || { echo "fuzz_campaign.sh: no fuzz binary at $bin" >&2; exit 1; }
  dir=$out_root/$target
  mkdir -p "$dir" "corpus/$target"
  seeds=()
  if compgen -G "regressions/$target/*" >/dev/null; then
    echo "== $target: replay fuzz/regressions/$target"
    "$bin" -timeout="$TIMEOUT" regressions/"$target"/* >"$dir/regressions.log" 2>&1 ||
      { tail -n 30 "$dir/regressions.log" >&2; echo "fuzz_campaign.sh: a regression input of $target fails ($dir/regressions.log)" >&2; exit 1; }
    seeds=("regressions/$target")
  fi
  echo "== $target: $SECONDS_PER_TARGET s on $JOBS processes (logs in ${dir#"$PWD"/})"
  start=$(date +%s)
  # The workers write fuzz-<n>.log in the working directory.
  (
    cd "$dir"
    exec "$bin" -jobs="$JOBS" -workers="$JOBS" -max_total_time="$SECONDS_PER_TARGET" "${runs_flag[@]}" \
      -timeout="$TIMEOUT" -print_final_stats=1 -artifact_prefix="$dir/" \
      "$OLDPWD/corpus/$target" "${seeds[@]/#/$OLDPWD/}"
  ) >"$dir/libfuzzer.log" 2>&1 &
  running=$!
  wait "$running" || true
  running=
  wall=$(( $(date +%s) - start ))
  executions=0 cov=0 ft=0
  for log in "$dir"/fuzz-*.log; do
    [[ -f "$log" ]] || continue
    executions=$(( executions + $(executions_of "$log") ))
    read -r c f < <(coverage_of "$log"; echo)
    (( ${c:-0} > cov )) && cov=$c
    (( ${f:-0} > ft )) && ft=$f
  done
  rate=$(( executions / (wall > 0 ? wall : 1) ))
  kept=()
  for finding in "$dir"/crash-* "$dir"/timeout-* "$dir"/leak-* "$dir"/oom-*; do
    [[ -f "$finding" ]] || continue
    kept+=("$(keep "$bin" "$target" "$finding" "$dir")")
  done
  if (( ${#kept[@]} )); then
    found=1
    # What failed: the panic and its message, or the sanitizer's report.
    { grep -ah -A1 'panicked at' "$dir"/fuzz-*.log || grep -ah 'ERROR: ' "$dir"/fuzz-*.log; } |
      grep -v '^--$' | sed 's/ ([0-9]*) panicked/ panicked/' | sort -u | head -n 6 >&2 || true
  fi
  hours_to_10m=$(awk -v r="$rate" 'BEGIN { if (r > 0) printf "%.1f h", 1e7 / r / 3600; else print "-" }')
  summary+=("$(printf '%-16s %8s s %14s %10s %14s %14s  %s' "$target" "$wall" \
    "$(group "$executions")" "$(group "$rate")" "$hours_to_10m" "$cov / $ft" \
    "${kept[*]:-none}")")
  if [[ "$WRITE" != 0 ]]; then
    python3 ../scripts/fuzz_table.py "$TABLE" "$target" "$sanitizer" "$commit" \
      "$executions" "$wall" "$rate" "${kept[*]:-none}" "$cov" "$ft" "$JOBS"
  fi
done

echo
printf '%-16s %10s %14s %10s %14s %14s  %s\n' target time executions exec/s "10 M takes" "cov / ft" findings
for line in "${summary[@]}"; do echo "$line"; done
echo "logs: fuzz/artifacts/campaign-$stamp/"
exit "$found"
