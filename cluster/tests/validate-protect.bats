#!/usr/bin/env bats
# The module in validate mode and protect mode (cluster/policies/validate-protect.yaml) on XBuckets, which no
# mutating policy matches: a drifted object is rejected with the deviation, a compliant one is stored.

setup() { load helpers; }

@test "a compliant XBucket is admitted and stored as submitted" {
  apply_named "$ROOT/cluster/objects/xbuckets.yaml" compliant
  expect "$(get xbucket compliant)" '.spec.cloudTags."plexsphere:team"' payments
}

@test "a drifted XBucket is rejected with the deviation, and nothing is stored" {
  run apply_named "$ROOT/cluster/objects/xbuckets.yaml" drifted
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'admission webhook "clusterwide-xbucket-tags-enforced.kubewarden.admission" denied the request'* ]]
  [[ "$output" == *'spec.cloudTags'* ]]
  [[ "$output" == *'plexsphere:team'* ]]
  run kubectl get xbucket drifted -n default
  [ "$status" -ne 0 ]
}
