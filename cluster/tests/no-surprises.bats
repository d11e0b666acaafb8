#!/usr/bin/env bats
# No surprises (docs/cloud-tags.md): only composite resources are tagged, told by their shape as the real
# API server stores them; the built-in gcp profile; the fallback and every removal said out loud, in the
# warnings kubectl prints. Through examples/xr-policy.yaml and cluster/policies/subnet-claims.yaml.

setup() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/no-surprises.yaml
}

@test "a v1 XR is recognised by the compositionUpdatePolicy the API server defaults, and tagged at CREATE" {
  apply_named "$OBJECTS" edge
  x=$(kubectl get xsubnet edge -o json)
  expect "$x" '.spec.compositionUpdatePolicy' Automatic
  expect "$x" '.spec.cloudTags."plexsphere:platform/env"' prod
  expect "$x" '.spec.parameters.cidr' 10.0.1.0/24
}

@test "a claim bound by a broad rule is stored as submitted, and kubectl prints why" {
  run apply_named "$OBJECTS" edge-claim
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Warning: Subnet (platform.example.org/v1alpha1) is not a Crossplane composite resource"* ]]
  c=$(get subnet edge-claim)
  expect "$c" '.spec.cloudTags' null
  expect "$c" '.spec.compositionUpdatePolicy' Automatic
}

@test "a v2 XR without spec.crossplane is not tagged at CREATE, and is once Crossplane writes spec.crossplane" {
  run apply_named "$OBJECTS" late
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"is not a Crossplane composite resource"* ]]
  expect "$(get xdatabase late)" '.spec.cloudTags' null
  # What Crossplane's XR reconciler writes before it composes.
  kubectl patch xdatabase late -n default --type merge \
    -p '{"spec":{"crossplane":{"compositionRef":{"name":"xdatabases-aws"}}}}'
  x=$(get xdatabase late)
  expect "$x" '.spec.crossplane.compositionUpdatePolicy' Automatic
  expect "$x" '.spec.cloudTags."plexsphere:platform/env"' prod
}

@test "an XR on GCP gets GCP labels under the built-in gcp profile, and a key GCP refuses is skipped" {
  run apply_named "$OBJECTS" analytics
  echo "$output"
  [ "$status" -eq 0 ]
  # platform/cost-center and platform/env hold '/', which GCP label keys refuse.
  [[ "$output" == *'label "platform/env" did not become tag "plexsphere-platform/env" on provider profile gcp: key-character-class'* ]]
  x=$(get xdatabase analytics)
  expect "$x" '.spec.cloudTags' null
  expect "$x" '.metadata.annotations."cloud-tags.plexsphere.io/skipped" | fromjson | map(.provider) | unique | .[0]' gcp
}

@test "an XR whose provider no profile lists gets the generic profile, and a warning saying so" {
  run apply_named "$OBJECTS" mainframe
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'Warning: cloud tags: provider "ibm" at spec.parameters.provider selects no tag profile, so the strict generic profile applies'* ]]
  expect "$(get xdatabase mainframe)" '.spec.cloudTags."plexsphere:platform/env"' prod
}

@test "a tag someone else wrote under the policy's prefix is removed with a warning naming it" {
  run apply_named "$OBJECTS" billing
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'Warning: cloud tag removed from spec.cloudTags: "plexsphere:billing-account" (the policy owns keys under prefix "plexsphere:"'* ]]
  x=$(get xdatabase billing)
  expect "$x" '.spec.cloudTags."plexsphere:billing-account"' null
  expect "$x" '.spec.cloudTags.owner' dba-team
  expect "$x" '.spec.cloudTags."plexsphere:platform/env"' prod
}
