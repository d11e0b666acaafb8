#!/usr/bin/env bats
# A host that reuses one instance (kwctl, `policy-runner --reuse-instance`)
# must not see the policy's memory grow: everything a `validate` call
# allocates is freed before it returns, and the allocator (wasi-libc's
# dlmalloc) reuses it. 100,000 evaluations on one instance, the memory
# measured after the first and after the last (policy-runner bench's
# `memory_bytes`). A leak of what one request allocates grows md-ms from
# 1.2 MB to 68 MB in 2,000 evaluations (measured on a per-request arena
# that never rewound, before the allocator was settled: BENCHMARKS.md,
# "History").

setup() {
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  RUNNER="${RUNNER:-target/host/policy-runner}"
  POLICY="${POLICY:-annotated-policy.wasm}"
  [[ -x "$RUNNER" ]] || { echo "cannot run: runner '$RUNNER' not built: make runner" >&2; false; }
  [[ -f "$POLICY" ]] || { echo "cannot run: policy module '$POLICY' not found: make annotated-policy.wasm" >&2; false; }
  command -v jq >/dev/null || { echo "cannot run: jq is required" >&2; false; }
}

# The scenario's parents (test_data/bench/<scenario>.parents.yaml) answer its
# look-ups, on every evaluation. Prints the memory and how many parents the
# first evaluation found (md-ms: its MachineDeployment).
warm_memory() {
  local scenario=$1 parents=()
  [[ -f "test_data/bench/$scenario.parents.yaml" ]] &&
    parents=(--parents "test_data/bench/$scenario.parents.yaml")
  "$RUNNER" bench --reuse-instance --iterations 100000 --warmup 0 --output json \
    --request-path "test_data/bench/$scenario.request.json" \
    --settings-path "test_data/bench/$scenario.settings.json" --allow-context-aware \
    "${parents[@]}" "$POLICY" | jq -c '.policy.memory_bytes + {lookups: .policy.answer.lookups}'
}

@test "100,000 warm evaluations of a MachineSet update: the memory does not grow" {
  run warm_memory md-ms
  [ "$status" -eq 0 ]
  echo "$output"
  [ "$(jq '.after_first == .after_last and .after_first > 0 and .lookups == 1' <<<"$output")" = true ]
}

@test "100,000 warm evaluations of an XR with 50 labels: the memory does not grow" {
  run warm_memory xr-aws-50
  [ "$status" -eq 0 ]
  echo "$output"
  [ "$(jq '.after_first == .after_last and .after_first > 0' <<<"$output")" = true ]
}
