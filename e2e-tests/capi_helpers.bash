# Shared by the CAPI suites (capi.bats, inplace.bats): the setup that skips
# without a runner, a module or the tools, and the helpers that run the policy
# on a fixture and read its answer. Loaded with `load capi_helpers`.
#
# The suites call ${KWCTL:-target/host/policy-runner}, so they run unchanged
# against a real kwctl. RUNNER, POLICY and DATA are the suite's. The project's
# runner (POLICY_RUNNER) answers the policy's look-ups from the objects in
# test_data/capi/<version>/parents/ (`run --parents`) and records them as a
# kwctl session (`--record-session`); under a real kwctl, which takes no
# objects, kwctl then replays that recorded session. Each scenario's row in
# test_data/capi/<version>/lookups.tsv says which look-ups the policy must
# make, and evaluate checks the recorded session against it. A patch is
# applied by the project's runner too (`policy-runner patch`, with the
# json-patch crate that builds it), whichever host answered.

POLICY_RUNNER="${POLICY_RUNNER:-target/host/policy-runner}"

load cases

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
  python3 -c 'import yaml' 2>/dev/null || skip "python3 with PyYAML is required (it reads the recorded sessions)"
}

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

# scenario_row VERSION SCENARIO: SCENARIO's row of DATA/VERSION/lookups.tsv
# (tab-separated: scenario, look-ups, optional session), or status 1.
scenario_row() {
  awk -F'\t' -v s="$2" '!/^#/ && $1 == s { print; found = 1; exit } END { exit !found }' \
    "$DATA/$1/lookups.tsv"
}

# The host behind $RUNNER takes --parents and --record-session: it is the
# project's runner (also behind e2e-tests/record-kwctl), not a real kwctl.
runner_takes_parents() {
  [[ "$("$RUNNER" --version 2>/dev/null)" == policy-runner* ]]
}

# A new file for a recorded session. Under `make e2e-tests` (KWCTL_RECORD
# set) it is kept beside the recorded invocations, which validate_mode.bats
# replays (a real kwctl's invocations name it); otherwise in the test's
# temporary directory.
new_session_file() {
  local dir="${BATS_TEST_TMPDIR:-${BATS_TMPDIR:-/tmp}}"
  [[ -n "${KWCTL_RECORD:-}" ]] && dir="$(dirname "$KWCTL_RECORD")/sessions"
  mkdir -p "$dir" && mktemp "$dir/$1.XXXXXX"
}

# check_lookups RECORDED EXPECTED [SESSION]
# The recorded kwctl session's look-ups, as Kind/namespace/name separated by
# spaces (`-` for none), are EXPECTED; with a hand-written SESSION, the
# recorded requests are the session's, field masks included (as sets).
check_lookups() {
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=e2e-tests python3 - "$@" <<'PY'
import sys

from kwctl_session import lookups_line, read


def requests(path):
    return [request for request, _ in read(path)]


recorded = read(sys.argv[1])
got = lookups_line(recorded)
recorded = [request for request, _ in recorded]
problems = []
if got != sys.argv[2]:
    problems.append(f"look-ups differ from lookups.tsv\n  expected: {sys.argv[2]}\n  recorded: {got}")
if len(sys.argv) > 3:
    written = requests(sys.argv[3])
    if recorded != written:
        problems.append(f"the policy's look-ups are not the requests of {sys.argv[3]}"
                        f"\n  session:  {written}\n  recorded: {recorded}")
if problems:
    sys.exit("\n".join(problems))
PY
}

# evaluate VERSION SCENARIO [runner args...]
# Runs the policy on test_data/capi/VERSION/SCENARIO.json, its look-ups
# answered from the objects in VERSION/parents/ (or from the hand-written
# session SCENARIO's row names), and checks the look-ups it made against the
# row. Sets REQUEST and response (the host's stdout).
evaluate() {
  local version=$1 scenario=$2
  shift 2
  REQUEST="$DATA/$version/$scenario.json"
  local stderr_file="$BATS_TEST_TMPDIR/runner.stderr"
  local row lookups session answers=() parent recorded
  [[ -f "$REQUEST" ]] || { echo "missing fixture $REQUEST"; return 1; }
  row=$(scenario_row "$version" "$scenario") || { echo "$scenario has no row in $DATA/$version/lookups.tsv"; return 1; }
  IFS=$'\t' read -r _ lookups session <<<"$row"
  if [[ -n "$session" ]]; then
    session="$DATA/$version/$session"
    [[ -f "$session" ]] || { echo "missing session $session"; return 1; }
    answers=(--replay-host-capabilities-interactions "$session")
  else
    for parent in "$DATA/$version"/parents/*.yaml; do
      answers+=(--parents "$parent")
    done
  fi
  recorded=$(new_session_file "${version}_$scenario") || return 1
  if runner_takes_parents; then
    if ! response=$("$RUNNER" run --allow-context-aware --request-path "$REQUEST" \
        "${answers[@]}" --record-session "$recorded" "$@" "$POLICY" 2>"$stderr_file"); then
      echo "runner failed on $REQUEST"
      cat "$stderr_file"
      return 1
    fi
  else
    # A real kwctl takes no objects: the project's runner records the
    # session, kwctl replays it (a hand-written session, kwctl replays as it is).
    if ! "$POLICY_RUNNER" run --allow-context-aware --request-path "$REQUEST" \
        "${answers[@]}" --record-session "$recorded" "$@" "$POLICY" >/dev/null 2>"$stderr_file"; then
      echo "$POLICY_RUNNER failed to record the session of $REQUEST"
      cat "$stderr_file"
      return 1
    fi
    if ! response=$("$RUNNER" run --allow-context-aware --request-path "$REQUEST" \
        --replay-host-capabilities-interactions "${session:-$recorded}" \
        "$@" "$POLICY" 2>"$stderr_file"); then
      echo "$RUNNER failed on $REQUEST"
      cat "$stderr_file"
      return 1
    fi
  fi
  echo "response = ${response}"
  if ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$response"; then
    echo "the runner did not print one JSON object; stderr:"
    cat "$stderr_file"
    return 1
  fi
  if ! check_lookups "$recorded" "$lookups" ${session:+"$session"}; then
    echo "(the policy's look-ups on $REQUEST, recorded in $recorded; stderr:)"
    cat "$stderr_file"
    return 1
  fi
  apply_response_patch
}

# evaluate_case SUITE_DIR CASE_JSON (cases.bash): a case of
# test_data/capi/<version>/cases/ runs through evaluate, its request a
# scenario of that version.
evaluate_case() {
  local version scenario
  version=$(basename "$1")
  scenario=$(jq -r '.request | sub("\\.json$"; "")' <<<"$2")
  if jq -e 'has("settings")' >/dev/null <<<"$2"; then
    evaluate "$version" "$scenario" --settings-json "$(jq -c '.settings' <<<"$2")"
  else
    evaluate "$version" "$scenario"
  fi
}
