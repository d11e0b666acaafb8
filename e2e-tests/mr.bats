#!/usr/bin/env bats
# End-to-end tests of cloud tags on Crossplane managed resources
# (docs/managed-resources.md) through the compiled module: the XR a managed
# resource names is looked up through the host, granted as a
# ClusterAdmissionPolicy grants it. The policy runs from such a definition
# (spec.module a file:// URI, spec.settings, spec.contextAwareResources),
# as kwctl runs one; a real kwctl replays the session the project's runner
# records from the parents.
#
# Run from the repository root:
#   bats e2e-tests/mr.bats
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e-tests/mr.bats

bats_require_minimum_version 1.5.0

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
# Records the sessions a real kwctl replays and applies the patches.
POLICY_RUNNER=${POLICY_RUNNER:-target/host/policy-runner}
MR=test_data/managed-resources
SETTINGS='{"cloudTags": {"propagatingLabels": ["platform/env", "team", "aws:billing", "acme:cost/center"], "managedResources": {"families": ["aws"]}}}'

setup() {
  command -v "$KWCTL" >/dev/null 2>&1 || [ -x "$KWCTL" ] || { echo "cannot run: no runner at $KWCTL (make target/host/policy-runner)" >&2; false; }
  [ -f "$POLICY" ] || { echo "cannot run: no policy module at $POLICY (make annotated-policy.wasm)" >&2; false; }
  [ -x "$POLICY_RUNNER" ] || { echo "cannot run: '$POLICY_RUNNER' records sessions and applies patches: build it (make runner)" >&2; false; }
  command -v jq >/dev/null 2>&1 || { echo "cannot run: jq is required" >&2; false; }
}

# definition FILE KIND...: writes a ClusterAdmissionPolicy running the
# module with $SETTINGS and granting the XR kinds KIND
# (apiVersion/Kind), as a team deploys it.
definition() {
  local file=$1 grant
  shift
  {
    echo "apiVersion: policies.kubewarden.io/v1"
    echo "kind: ClusterAdmissionPolicy"
    echo "metadata: {name: managed-resource-tags}"
    echo "spec:"
    echo "  module: file://$PWD/$POLICY"
    echo "  mutating: true"
    echo "  settings: $SETTINGS"
    echo "  contextAwareResources:"
    for grant in "$@"; do
      echo "  - {apiVersion: ${grant%/*}, kind: ${grant##*/}}"
    done
  } >"$file"
}

# evaluate DEFINITION REQUEST [PARENTS]: runs the request; the response is
# left in $response, the decoded patch in $patch.
evaluate() {
  local policy=$1 request=$2 answers=()
  [ -n "${3:-}" ] && answers=(--parents "$3")
  if [[ "$("$KWCTL" --version 2>/dev/null)" != policy-runner* ]]; then
    "$POLICY_RUNNER" run --request-path "$request" "${answers[@]}" \
      --record-session "$BATS_TEST_TMPDIR/session.yml" "$policy" >/dev/null
    answers=(--replay-host-capabilities-interactions "$BATS_TEST_TMPDIR/session.yml")
  fi
  run --separate-stderr "$KWCTL" run --request-path "$request" "${answers[@]}" "$policy"
  echo "$output"
  [ "$status" -eq 0 ]
  response=$(echo "$output" | tail -n 1)
  patch=$(echo "$response" | jq -r '.patch // empty' | { base64 -d 2>/dev/null || true; })
  [ -n "$patch" ] || patch='[]'
}

# patched REQUEST: the request's object with $patch applied.
patched() {
  jq '.object' "$1" >"$BATS_TEST_TMPDIR/object.json"
  echo "$patch" >"$BATS_TEST_TMPDIR/patch.json"
  "$POLICY_RUNNER" patch --object "$BATS_TEST_TMPDIR/object.json" --patch "$BATS_TEST_TMPDIR/patch.json"
}

@test "a composed VPC gets its XR's opted-in labels as tags, the user's entries kept" {
  definition "$BATS_TEST_TMPDIR/policy.yaml" platform.example.org/v1alpha1/XNetwork
  local request=$MR/examples/vpc_from_xnetwork.json
  evaluate "$BATS_TEST_TMPDIR/policy.yaml" "$request" "$MR/examples/vpc_from_xnetwork.parents.yaml"
  [ "$(echo "$response" | jq -r .allowed)" = true ]
  tags=$(patched "$request" | jq -cS '.spec.forProvider.tags')
  [ "$tags" = '{"Name":"checkout","plexsphere:acme:cost/center":"cc-4711","plexsphere:platform/env":"prod","plexsphere:team":"checkout"}' ]
  # The skip and the stale entry's removal, each a warning.
  [ "$(echo "$response" | jq '.warnings | length')" -eq 2 ]
  echo "$response" | jq -e '.warnings[0] | startswith("cloud tag skipped: label \"aws:billing\"")'
}

@test "an XR kind the definition does not grant: allowed, the stored entries put back, one warning" {
  # Only XNetwork is granted; the v2 VPC's XR is a Network.
  definition "$BATS_TEST_TMPDIR/policy.yaml" platform.example.org/v1alpha1/XNetwork
  local request=$MR/requests/vpc_v2_update.json
  evaluate "$BATS_TEST_TMPDIR/policy.yaml" "$request" "$MR/requests/network_v2.parents.yaml"
  [ "$(echo "$response" | jq -r .allowed)" = true ]
  [ "$(patched "$request" | jq -cS '.spec.forProvider.tags')" = "$(jq -cS '.oldObject.spec.forProvider.tags' "$request")" ]
  [ "$(echo "$response" | jq '.warnings | length')" -eq 1 ]
  echo "$response" | jq -e '.warnings[0] | contains("network.example.org/v1alpha1 Network") and contains("spec.contextAwareResources")'
}

@test "granted, the same UPDATE is recomputed from the Network's labels" {
  definition "$BATS_TEST_TMPDIR/policy.yaml" network.example.org/v1alpha1/Network
  local request=$MR/requests/vpc_v2_update.json
  evaluate "$BATS_TEST_TMPDIR/policy.yaml" "$request" "$MR/requests/network_v2.parents.yaml"
  tags=$(patched "$request" | jq -cS '.spec.forProvider.tags')
  [ "$(echo "$tags" | jq -r '."plexsphere:platform/env"')" = prod ]
  [ "$(echo "$tags" | jq -r '."plexsphere:team"')" = checkout ]
  [ "$(echo "$tags" | jq -r '."crossplane-kind"')" = vpc.ec2.aws.m.upbound.io ]
}

@test "an XR that is not found leaves the VPC as submitted, with one warning naming it" {
  definition "$BATS_TEST_TMPDIR/policy.yaml" platform.example.org/v1alpha1/XNetwork
  # The parents hold only another XR: the look-up finds nothing.
  evaluate "$BATS_TEST_TMPDIR/policy.yaml" "$MR/examples/vpc_from_xnetwork.json" \
    "$MR/requests/network_v2.parents.yaml"
  [ "$(echo "$response" | jq -r .allowed)" = true ]
  [ "$patch" = '[]' ]
  echo "$response" | jq -e '.warnings == ["cloud tags: composite resource XNetwork checkout-net (platform.example.org/v1alpha1) that composed this managed resource was not found, so its tags are left as submitted"]'
}

@test "an XR whose label set is malformed refuses the CREATE retryably (code 500), naming the XR" {
  definition "$BATS_TEST_TMPDIR/policy.yaml" platform.example.org/v1alpha1/XNetwork
  # The same XR, its label-set annotation a JSON array: Crossplane composes
  # again once the XR is corrected, so the refusal is not the MR's fault.
  sed 's|^\(    cloud-tags.plexsphere.io/labels:\).*|\1 '"'"'["not", "an object"]'"'"'|' \
    "$MR/examples/vpc_from_xnetwork.parents.yaml" >"$BATS_TEST_TMPDIR/parents.yaml"
  grep -q 'labels: .\["not"' "$BATS_TEST_TMPDIR/parents.yaml"
  evaluate "$BATS_TEST_TMPDIR/policy.yaml" "$MR/examples/vpc_from_xnetwork.json" "$BATS_TEST_TMPDIR/parents.yaml"
  [ "$(echo "$response" | jq -r .allowed)" = false ]
  [ "$(echo "$response" | jq -r .status.code)" = 500 ]
  echo "$response" | jq -e '.status.message | startswith("cannot use XNetwork checkout-net (platform.example.org/v1alpha1), whose labels become this object'"'"'s cloud tags: metadata.annotations[\"cloud-tags.plexsphere.io/labels\"]: expected a JSON object") and endswith("the request can be retried once that object is corrected")'
}

@test "without managedResources a managed resource keeps the not-a-composite warning" {
  run --separate-stderr "$KWCTL" run --request-path "$MR/examples/vpc_from_xnetwork.json" "$POLICY"
  [ "$status" -eq 0 ]
  response=$(echo "$output" | tail -n 1)
  [ "$(echo "$response" | jq -r '.patch // empty')" = "" ]
  echo "$response" | jq -e '.warnings[0] | startswith("VPC (ec2.aws.upbound.io/v1beta1) is not a Crossplane composite resource")'
}
