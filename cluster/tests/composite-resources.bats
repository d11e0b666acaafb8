#!/usr/bin/env bats
# Composite resources with examples/xr-policy.yaml (and the same settings for XQueues) in front, through the CRDs Crossplane generates from
# their XRDs (cluster/render.py): the API server stores the policy's tags when the XRD declares
# spec.cloudTags, and prunes them silently when it does not.

setup() { load helpers; }

@test "an XR whose XRD declares spec.cloudTags is stored with its tags beside the user's own" {
  apply_named "$ROOT/cluster/objects/xrs.yaml" ledger
  x=$(get xdatabase ledger)
  expect "$x" '.spec.cloudTags."plexsphere:platform/env"' prod
  expect "$x" '.spec.cloudTags."plexsphere:platform/cost-center"' cc-1001
  expect "$x" '.spec.cloudTags.owner' dba-team
  expect "$x" '.spec.cloudTags | length' 3
  expect "$x" '.spec.parameters.size' small
}

@test "an XR whose XRD lacks spec.cloudTags is admitted, and the API server prunes the tags the policy added" {
  # The policy did add the tags (the API server recorded the mutation); pruning happens after the mutating
  # webhooks, without a warning: what the user sees is an XR without tags.
  run apply_named "$ROOT/cluster/objects/xrs.yaml" orders
  echo "$output"
  [ "$status" -eq 0 ]
  n=$(get xqueue orders)
  expect "$n" '.spec.cloudTags' null
  expect "$n" '.metadata.labels."platform/env"' prod
  # The API server's audit log: the policy's webhook mutated the create.
  webhook_mutated clusterwide-xqueue-cloud-tags xqueues orders
}

@test "an unchanged XR is written again with the same tags (the policy recomputes them on UPDATE)" {
  kubectl label xdatabase ledger -n default --overwrite platform/env=staging
  x=$(get xdatabase ledger)
  expect "$x" '.spec.cloudTags."plexsphere:platform/env"' staging
  expect "$x" '.spec.cloudTags.owner' dba-team
}
