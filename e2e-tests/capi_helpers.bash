# Shared by the CAPI suites (capi.bats, inplace.bats): the setup that skips
# without a runner, a module or the tools, and the helpers that run the policy
# on a fixture and read its answer. Loaded with `load capi_helpers`.
#
# The suites call ${KWCTL:-target/host/policy-runner}, so they run unchanged
# against a real kwctl. RUNNER, POLICY and DATA are the suite's. A patch is
# applied by the project's runner (`policy-runner patch`, with the json-patch
# crate that builds it), whichever host answered: POLICY_RUNNER names it.

POLICY_RUNNER="${POLICY_RUNNER:-target/host/policy-runner}"

setup() {
  cd "${BATS_TEST_DIRNAME}/.." || return 1
  if [[ "${BATS_TEST_DESCRIPTION}" == fixtures:* ]]; then
    return 0
  fi
  if [[ "$RUNNER" == */* ]]; then
    [[ -x "$RUNNER" ]] || skip "runner '$RUNNER' not found: build it (cargo build -p policy-runner --profile host) or set KWCTL=kwctl"
  else
    command -v "$RUNNER" >/dev/null || skip "runner '$RUNNER' is not on the PATH"
  fi
  [[ -f "$POLICY" ]] || skip "policy module '$POLICY' not found: build it (make annotated-policy.wasm) or set POLICY=..."
  [[ -x "$POLICY_RUNNER" ]] || skip "'$POLICY_RUNNER' applies the patches: build it (make runner) or set POLICY_RUNNER=..."
  command -v jq >/dev/null || skip "jq is required"
  command -v base64 >/dev/null || skip "base64 is required"
}

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

# evaluate VERSION SCENARIO [runner args...]
# Runs the policy on test_data/capi/VERSION/SCENARIO.json with the session
# replay_SCENARIO.yml. Sets REQUEST and response (the runner's stdout).
evaluate() {
  local version=$1 scenario=$2
  shift 2
  REQUEST="$DATA/$version/$scenario.json"
  local replay="$DATA/$version/replay_$scenario.yml"
  local stderr_file="${BATS_TMPDIR:-/tmp}/$(basename "$BATS_TEST_FILENAME" .bats)-bats-stderr.$$"
  [[ -f "$REQUEST" && -f "$replay" ]] || { echo "missing fixture $REQUEST or $replay"; return 1; }
  if ! response=$("$RUNNER" run --allow-context-aware \
      --request-path "$REQUEST" \
      --replay-host-capabilities-interactions "$replay" \
      "$@" "$POLICY" 2>"$stderr_file"); then
    echo "runner failed on $REQUEST"
    cat "$stderr_file"
    return 1
  fi
  echo "response = ${response}"
  if ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$response"; then
    echo "the runner did not print one JSON object; stderr:"
    cat "$stderr_file"
    return 1
  fi
  apply_response_patch
}

assert_allowed() {
  local actual
  actual=$(jq -r '.allowed' <<<"$response")
  if [[ "$actual" != "$1" ]]; then
    echo "expected allowed=$1, got allowed=$actual (status: $(jq -c '.status' <<<"$response"))"
    return 1
  fi
}

decoded_patch() {
  jq -r '.patch // empty' <<<"$response" | base64 -d
}

assert_no_patch() {
  if ! jq -e '.patch == null and .patchType == null' >/dev/null <<<"$response"; then
    echo "expected no patch, got:"
    decoded_patch | jq .
    return 1
  fi
}

# assert_patch_ops '["add /metadata/labels/x", ...]'
# The decoded JSONPatch has exactly these "op path" pairs (order ignored).
assert_patch_ops() {
  local actual expected
  jq -e '.patchType == "JSONPatch"' >/dev/null <<<"$response" || {
    echo "expected a JSONPatch, got patchType=$(jq -c '.patchType' <<<"$response")"
    return 1
  }
  actual=$(decoded_patch | jq -c '[.[] | "\(.op) \(.path)"] | sort')
  expected=$(jq -c 'sort' <<<"$1")
  if [[ "$actual" != "$expected" ]]; then
    echo "patch operations differ"
    echo "expected: $expected"
    echo "actual:   $actual"
    decoded_patch | jq .
    return 1
  fi
}

# The request's object with the response's patch applied (computed once per
# evaluation, in evaluate).
patched_object() {
  if [[ -z "${PATCHED_OBJECT:-}" ]]; then
    echo "no patched object: ${PATCH_ERROR:-the response has no patch}" >&2
    return 1
  fi
  printf '%s\n' "$PATCHED_OBJECT"
}

apply_response_patch() {
  PATCHED_OBJECT=""
  PATCH_ERROR=""
  if jq -e '.patch != null' >/dev/null <<<"$response"; then
    if ! PATCHED_OBJECT=$(decoded_patch | "$POLICY_RUNNER" patch --object <(jq '.object' "$REQUEST") --patch - 2>&1); then
      PATCH_ERROR="$PATCHED_OBJECT"
      PATCHED_OBJECT=""
    fi
  fi
}

# assert_patched JQ_PATH 'JSON'  -- the patched object at JQ_PATH equals JSON.
assert_patched() {
  local actual expected
  actual=$(patched_object | jq -S "$1") || { echo "cannot apply the patch"; return 1; }
  expected=$(jq -S . <<<"$2")
  if [[ "$actual" != "$expected" ]]; then
    echo "patched object at $1 differs"
    diff <(echo "$expected") <(echo "$actual") || true
    return 1
  fi
}
