#!/usr/bin/env bats
# Validate mode end to end. The invariant test replays every request the
# mutate suites (capi.bats, infra.bats, inplace.bats, xr.bats) sent, as recorded by
# record-kwctl (`make e2e-tests` sets that up), in validate mode through the
# module, with the look-up answers each invocation had (--parents objects, or
# a replay session: under a real kwctl, the one the suite recorded).

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
# The project's runner: it answers look-ups from --parents objects, and
# records the session a real kwctl replays.
POLICY_RUNNER=${POLICY_RUNNER:-target/host/policy-runner}

setup() {
  command -v "$KWCTL" >/dev/null 2>&1 || [ -x "$KWCTL" ] || { echo "cannot run: no runner at $KWCTL (make target/host/policy-runner)" >&2; false; }
  [ -f "$POLICY" ] || { echo "cannot run: no policy module at $POLICY (make annotated-policy.wasm)" >&2; false; }
}

@test "validate(x) rejects exactly when mutate(x) changes x, validate(mutate(x)) accepts, and mutate(x) is an object its CRD accepts, for every e2e request" {
  [ -n "${INVOCATIONS:-}" ] || { echo "cannot run: no recorded invocations: run through make e2e-tests" >&2; false; }
  [ -s "$INVOCATIONS" ]
  run python3 e2e-tests/validate_invariants.py "$INVOCATIONS"
  echo "$output"
  [ "$status" -eq 0 ]
  # Both suites contribute: at least the CAPI and XR requests that mutate.
  checked=$(echo "$output" | sed -n 's/^\([0-9]*\) mutate requests checked (\([0-9]*\) changed.*/\1 \2/p')
  [ "${checked% *}" -ge 40 ]
  [ "${checked#* }" -ge 20 ]
  # Most patched outputs have a CRD (or XRD) to be checked against
  # (scripts/check_schemas.py); the XNetwork XRs have none.
  validated=$(echo "$output" | sed -n 's/.* changed by mutate, \([0-9]*\) outputs validated.*/\1/p')
  [ "$validated" -ge 30 ]
}

@test "validate mode rejects a drifted MachineSet with the full list of deviations and no patch" {
  local request=test_data/capi/v1beta2/machineset_update_drifted_from_md.json
  local answers=(--parents test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml)
  if [[ "$("$KWCTL" --version 2>/dev/null)" != policy-runner* ]]; then
    # A real kwctl takes no objects: the project's runner records the
    # session of the look-up, kwctl replays it.
    [ -x "$POLICY_RUNNER" ] || { echo "cannot run: '$POLICY_RUNNER' records the session a real kwctl replays: build it (make runner)" >&2; false; }
    "$POLICY_RUNNER" run --allow-context-aware --request-path "$request" "${answers[@]}" \
      --record-session "$BATS_TEST_TMPDIR/session.yml" --settings-json '{"mode":"validate"}' "$POLICY" >/dev/null
    answers=(--replay-host-capabilities-interactions "$BATS_TEST_TMPDIR/session.yml")
  fi
  run "$KWCTL" run --allow-context-aware --request-path "$request" "${answers[@]}" \
    --settings-json '{"mode":"validate"}' "$POLICY"
  echo "$output"
  [ "$status" -eq 0 ]
  response=$(echo "$output" | tail -n 1)
  [ "$(echo "$response" | jq -r .allowed)" = false ]
  [ "$(echo "$response" | jq -r 'has("patch")')" = false ]
  [ "$(echo "$response" | jq -r .status.message)" = 'the object deviates from the metadata propagation contract (validate mode): metadata.labels: missing "node-role.kubernetes.io/worker" (expected ""), "nodepool" is "pool0" (expected "pool1"); spec.template.metadata.labels: "nodepool" is "pool0" (expected "pool1")' ]
}

@test "validate mode keeps skip warnings on a compliant XR" {
  settings=$(jq -c '. + {mode: "validate"}' test_data/xr/settings_propagating.json)
  run "$KWCTL" run --request-path test_data/xr/xdatabase_converged_hetzner.json \
    --settings-json "$settings" "$POLICY"
  echo "$output"
  [ "$status" -eq 0 ]
  response=$(echo "$output" | tail -n 1)
  [ "$(echo "$response" | jq -r .allowed)" = true ]
  [ "$(echo "$response" | jq -r '.warnings | length')" -ge 1 ]
}

@test "an unknown mode is refused, listing the valid ones" {
  run "$KWCTL" run --request-path test_data/xr/xnetwork_v1_aws.json --settings-json '{"mode":"audit"}' "$POLICY"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"Provided settings are not valid"* ]]
  [[ "$output" == *'mode: unknown variant `audit`, expected `mutate` or `validate`'* ]]
}
