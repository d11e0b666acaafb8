#!/usr/bin/env bats
# What `policy-runner run` accepts besides a whole AdmissionRequest, with the
# built module: a bare object with `--operation` (and `--old-object`), whose
# answer is the one the same request gets; a request missing several fields,
# each named at once; a reader that closes the pipe early; the notices about
# context-aware access, printed only when a look-up was denied. Not kwctl
# behaviour, so it always uses the runner.

RUNNER=${RUNNER:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
V1B2=test_data/capi/v1beta2
bats_require_minimum_version 1.5.0

setup() {
  [ -x "$RUNNER" ] || { echo "cannot run: no runner at $RUNNER (make target/host/policy-runner)" >&2; false; }
  [ -f "$POLICY" ] || { echo "cannot run: no policy module at $POLICY (make annotated-policy.wasm)" >&2; false; }
}

# Writes the request's `field` (object, oldObject) to a YAML file; prints its path.
request_field() {
  local request=$1 field=$2 out="$BATS_TEST_TMPDIR/$(basename "$1" .json).$2.yaml"
  python3 -c 'import json, sys, yaml; yaml.safe_dump(json.load(open(sys.argv[1]))[sys.argv[2]], sys.stdout)' \
    "$request" "$field" >"$out"
  echo "$out"
}

# Runs the policy with the MachineDeployment parent; `$@` says what the request is.
run_md1() {
  run "$RUNNER" run --allow-context-aware --parents "$V1B2/parents/machinedeployment_capi-quickstart-md-1.yaml" \
    "$@" "$POLICY"
}

# The response's allowed, patch and warnings: what must not depend on who built the request.
answer() {
  jq -c '{allowed, patch: (.patch // "" | @base64d), warnings}'
}

@test "a bare object with --operation CREATE gets the answer its AdmissionRequest gets" {
  request=$V1B2/machineset_create_from_md.json
  run_md1 -r "$request"
  [ "$status" -eq 0 ]
  expected=$(echo "$output" | answer)

  object=$(request_field "$request" object)
  run --separate-stderr "$RUNNER" run --allow-context-aware \
    --parents "$V1B2/parents/machinedeployment_capi-quickstart-md-1.yaml" \
    -r "$object" --operation CREATE "$POLICY"
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | answer)" = "$expected" ]
  [ "$(echo "$output" | jq -r .uid)" = 00000000-0000-0000-0000-000000000000 ]
  [[ "$stderr" == *"INFO policy-runner: $object holds a bare object: built the AdmissionRequest around it: CREATE of cluster.x-k8s.io/v1beta2/MachineSet default/capi-quickstart-md-1-x7k2p, resource machinesets, uid 00000000-0000-0000-0000-000000000000, userInfo policy-runner"* ]]
}

@test "a bare object with --operation UPDATE and --old-object gets the answer its AdmissionRequest gets" {
  request=$V1B2/machineset_update_drifted_from_md.json
  run_md1 -r "$request"
  [ "$status" -eq 0 ]
  expected=$(echo "$output" | answer)
  [ "$(echo "$output" | jq '.patch | @base64d | fromjson | length')" -eq 3 ]

  object=$(request_field "$request" object)
  old=$(request_field "$request" oldObject)
  run --separate-stderr "$RUNNER" run --allow-context-aware \
    --parents "$V1B2/parents/machinedeployment_capi-quickstart-md-1.yaml" \
    -r "$object" --operation UPDATE --old-object "$old" "$POLICY"
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | answer)" = "$expected" ]
  [[ "$stderr" == *": UPDATE of cluster.x-k8s.io/v1beta2/MachineSet default/capi-quickstart-md-1-5nmbd, resource machinesets, uid 00000000-0000-0000-0000-000000000000, userInfo policy-runner, oldObject $old"* ]]
}

@test "a bare object without --operation is refused, and the error says how to run it" {
  object=$(request_field $V1B2/machineset_create_from_md.json object)
  run_md1 -r "$object"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"this is a MachineSet object, not an AdmissionRequest"* ]]
  [[ "$output" == *'Add `--operation CREATE` (or `--operation UPDATE --old-object FILE`)'* ]]
}

@test "every missing or wrong envelope field is named in one error" {
  stripped="$BATS_TEST_TMPDIR/stripped.json"
  jq 'del(.uid, .resource, .userInfo) | .kind = "MachineSet"' $V1B2/machineset_create_from_md.json >"$stripped"
  run_md1 -r "$stripped"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "$output" = "Error: invalid request file $stripped: cannot build AdmissionRequest object from given input: \`uid\` is missing (it must be a string); \`kind\` must be an object, not a string; \`resource\` is missing (it must be an object); \`userInfo\` is missing (it must be an object)" ]
}

@test "a reader that stops early ends run and explain quietly, as coreutils do" {
  # The reader is gone before the runner writes: every write meets a closed pipe.
  for command in \
    "run --allow-context-aware -r $V1B2/machineset_create_from_md.json $POLICY" \
    "explain -r $V1B2/machineset_update_drifted_from_md.json"; do
    run bash -c '{ sleep 0.3; "$0" $1 2>"$2"; } | true; echo "${PIPESTATUS[0]}"' \
      "$RUNNER" "$command" "$BATS_TEST_TMPDIR/stderr"
    echo "$command: $output"; cat "$BATS_TEST_TMPDIR/stderr"
    [ "$output" = 141 ]
    [[ "$(cat "$BATS_TEST_TMPDIR/stderr")" != *panicked* ]]
  done
  # and `| head -c 10` gets its ten bytes, and nothing else
  run bash -c '"$0" explain -r "$1" | head -c 10' "$RUNNER" $V1B2/machineset_update_drifted_from_md.json
  [ "$status" -eq 0 ]
  [ "${#output}" -eq 10 ]
}

@test "without --allow-context-aware, only a request whose look-up was denied gets the notices" {
  notice='Policy requires access to Kubernetes resources at evaluation time'
  # a composite resource and a Kubernetes kind: nothing to look up, no notice
  for request in test_data/xr/xdatabase_ibm_generic.json test_data/xr/configmap_create_opted_in_labels.json; do
    run --separate-stderr "$RUNNER" run -r "$request" "$POLICY"
    echo "$request: $output"; echo "$stderr"
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | jq .allowed)" = true ]
    [[ "$stderr" != *"$notice"* ]]
    [[ "$stderr" != *"--allow-context-aware"* ]]
  done
  # a MachineSet: its parent look-up is denied, the host names it, then the notices
  run --separate-stderr "$RUNNER" run -r $V1B2/machineset_create_from_md.json "$POLICY"
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .allowed)" = false ]
  [[ "$stderr" == *"ERROR policy-runner: policy tried to access cluster.x-k8s.io/v1beta2/MachineDeployment, which is not in its allow-list"*"WARN policy-runner: $notice"*"with the \`--allow-context-aware\` flag."* ]]
}
