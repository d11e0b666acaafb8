#!/usr/bin/env bats
# The bad-input catalogue (test_data/bad/cases.tsv) through the built
# module: every case yields an AdmissionResponse with its documented outcome
# (or, for settings, kwctl's refusal); nothing traps the wasm instance. A
# case with a parent has it answer the policy's look-up as a cluster would
# (the project's runner, `run --parents`), and the look-up the policy made
# is the case's (its session recorded with `--record-session`; a real kwctl
# replays that recorded session).

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
# The project's runner: it answers look-ups from --parents objects and
# records the sessions.
POLICY_RUNNER=${POLICY_RUNNER:-target/host/policy-runner}

setup() {
  command -v "$KWCTL" >/dev/null 2>&1 || [ -x "$KWCTL" ] || { echo "cannot run: no runner at $KWCTL (make target/host/policy-runner)" >&2; false; }
  [ -f "$POLICY" ] || { echo "cannot run: no policy module at $POLICY (make annotated-policy.wasm)" >&2; false; }
}

# The look-ups of a session the project's runner recorded, as
# Kind/namespace/name separated by spaces (`-` for none).
recorded_lookups() {
  PYTHONDONTWRITEBYTECODE=1 python3 e2e-tests/kwctl_session.py lookups "$1"
}

# Runs one case; prints a line naming the case on failure.
check_case() {
  local name=$1 request=$2 settings=$3 parent=$4 lookup=$5 outcome=$6 message=$7
  local args=(run --allow-context-aware --request-path "$request")
  [ "$settings" = - ] || args+=(--settings-json "$settings")
  local out status session=
  if [ "$parent" != - ]; then
    session="$BATS_TEST_TMPDIR/$name.session.yml"
    if [[ "$("$KWCTL" --version 2>/dev/null)" == policy-runner* ]]; then
      args+=(--parents "$parent" --record-session "$session")
    else
      # A real kwctl takes no objects: the project's runner records the
      # session, kwctl replays it.
      "$POLICY_RUNNER" "${args[@]}" --parents "$parent" --record-session "$session" "$POLICY" >/dev/null 2>&1 ||
        { echo "$name: $POLICY_RUNNER failed to record the session"; return 1; }
      args+=(--replay-host-capabilities-interactions "$session")
    fi
  fi
  out=$("$KWCTL" "${args[@]}" "$POLICY" 2>&1) && status=0 || status=$?
  if [ -n "$session" ] && [ "$(recorded_lookups "$session")" != "$lookup" ]; then
    echo "$name: the policy looked up $(recorded_lookups "$session"), not $lookup"
    return 1
  fi
  case "$outcome" in
    settings-refused)
      [ "$status" -ne 0 ] || { echo "$name: settings were accepted"; return 1; }
      [[ "$out" == *"Provided settings are not valid"*"$message"* ]] || { echo "$name: $out"; return 1; }
      return 0 ;;
    undecodable)
      # kwctl and the runner refuse a request file that is not JSON before
      # calling the policy (the policy's own answer is unit-tested).
      [ "$status" -ne 0 ] || { echo "$name: a non-JSON request file was evaluated"; return 1; }
      [[ "$out" == *"not valid JSON"* || "$out" == *"expected"* ]] || { echo "$name: $out"; return 1; }
      return 0 ;;
  esac
  [ "$status" -eq 0 ] || { echo "$name: exit $status: $out"; return 1; }
  local response
  response=$(echo "$out" | tail -n 1)
  echo "$response" | jq -e 'has("uid") and has("allowed")' >/dev/null || { echo "$name: no AdmissionResponse: $out"; return 1; }
  local allowed has_patch text
  allowed=$(echo "$response" | jq -r .allowed)
  has_patch=$(echo "$response" | jq -r 'has("patch")')
  text=$(echo "$response" | jq -r '[.status.message // empty, (.warnings // [])[]] | join("\n")')
  case "$outcome" in
    rejected) [ "$allowed" = false ] && [ "$has_patch" = false ] ;;
    allowed-unchanged) [ "$allowed" = true ] && [ "$has_patch" = false ] ;;
    allowed-mutated) [ "$allowed" = true ] && [ "$has_patch" = true ] ;;
    *) false ;;
  esac || { echo "$name: expected $outcome, got $response"; return 1; }
  if [ "$message" != - ] && [[ "$text" != *"$message"* ]]; then
    echo "$name: message lacks '$message': $text"
    return 1
  fi
}

@test "every catalogued bad input yields its documented outcome through the module, none traps" {
  local failures=0 count=0
  while IFS=$'\t' read -r name request settings parent lookup outcome message; do
    [[ "$name" == \#* || -z "$name" ]] && continue
    count=$((count + 1))
    check_case "$name" "$request" "$settings" "$parent" "$lookup" "$outcome" "$message" || failures=$((failures + 1))
  done < test_data/bad/cases.tsv
  echo "$count cases, $failures failures"
  [ "$count" -ge 20 ]
  [ "$failures" -eq 0 ]
}

@test "a guest that receives a payload that is not JSON answers with a rejection, not a trap" {
  # An AdmissionReview whose request is not an object: the runner passes it
  # on, the policy must answer.
  tmp=$(mktemp)
  echo '{"uid":"u-1","kind":{"group":"","version":"v1","kind":"X"},"resource":{"group":"","version":"v1","resource":"x"},"operation":"CREATE","userInfo":{},"object":{"metadata":{"labels":"oops"}},"namespace":7}' > "$tmp"
  run "$KWCTL" run --request-path "$tmp" "$POLICY"
  rm -f "$tmp"
  echo "$output"
  [ "$status" -eq 0 ]
  response=$(echo "$output" | tail -n 1)
  [ "$(echo "$response" | jq -r .allowed)" = false ]
  [[ "$(echo "$response" | jq -r .status.message)" == *"cannot decode the admission request"* ]]
}
