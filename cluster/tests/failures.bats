#!/usr/bin/env bats
# What the contract says for failures, with the real API server between the user and the policy:
# a look-up the RBAC does not grant is a rejection the user can retry (failurePolicy does not turn a
# rejection into an admission); a webhook server that is down, or hangs, costs at most the webhook's
# timeout, and failurePolicy: Ignore admits the object unchanged.

setup() {
  load helpers
  FILE=$ROOT/cluster/objects/failure-probes.yaml
}

# Whatever a test left behind, the next file finds the RBAC of the example and a running webhook server.
teardown_file() {
  load helpers
  kubectl apply -f "$ROOT/examples/capi-rbac.yaml" >/dev/null
  kill -CONT "$(cat "$STATE/webhook-server.pid")" 2>/dev/null || true
  if ! pid_alive webhook-server; then start_webhook_server; fi
  wait_for "the webhook server" 60 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
}

@test "a look-up the RBAC does not grant: rejected, naming the parent, retryable" {
  # Take `get` on MachineDeployments away from the policy-server's ServiceAccount.
  kubectl get clusterrole kubewarden-capi-metadata-propagation -o json |
    jq '.rules[0].resources -= ["machinedeployments"]' | kubectl replace -f -
  eventually 30 '! kubectl auth can-i get machinedeployments.cluster.x-k8s.io \
    --as=system:serviceaccount:kubewarden:policy-server -n default'
  run apply_named "$FILE" probe-ms --dry-run=server
  kubectl apply -f "$ROOT/examples/capi-rbac.yaml"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'cannot read MachineDeployment default/probe-md (cluster.x-k8s.io/v1beta2), the parent of this MachineSet'* ]]
  [[ "$output" == *'forbidden'* ]]
  [[ "$output" == *'the request can be retried'* ]]
}

@test "with the RBAC of examples/capi-rbac.yaml the same look-up is answered (NotFound: admitted unchanged)" {
  eventually 30 'kubectl auth can-i get machinedeployments.cluster.x-k8s.io \
    --as=system:serviceaccount:kubewarden:policy-server -n default'
  run apply_named "$FILE" probe-ms --dry-run=server
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "the webhook server stopped: failurePolicy Ignore admits the XR unchanged, at once" {
  kill -TERM "$(cat "$STATE/webhook-server.pid")"
  eventually 10 '! curl -s "http://127.0.0.1:$READINESS_PORT/readiness"'
  start=$(date +%s)
  run kubectl create -o json -f <(named "$FILE" probe)
  elapsed=$(($(date +%s) - start))
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # Stored as submitted: no tags, its label untouched.
  stored=$(get xdatabases.platform.example.org probe)
  kubectl delete xdatabases.platform.example.org probe -n default --wait=true
  expect "$stored" '.spec.cloudTags' null
  expect "$stored" '.metadata.labels."platform/env"' prod
  # Connection refused: no wait for the 5 s timeout of examples/xr-policy.yaml.
  [ "$elapsed" -lt 5 ]
}

@test "the webhook server hung: the API server gives up after the webhook's timeout and admits the XR unchanged" {
  start_webhook_server
  wait_for "the webhook server" 60 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
  kill -STOP "$(cat "$STATE/webhook-server.pid")"
  start=$(date +%s)
  run kubectl create --dry-run=server -o json -f <(named "$FILE" probe)
  elapsed=$(($(date +%s) - start))
  kill -CONT "$(cat "$STATE/webhook-server.pid")"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  expect "$output" '.spec.cloudTags' null
  # timeoutSeconds: 5 in examples/xr-policy.yaml; nothing waits much past it.
  [ "$elapsed" -ge 5 ] && [ "$elapsed" -lt 15 ]
}

@test "the webhook server back: the same XR is tagged again" {
  wait_for "the webhook server" 30 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
  run kubectl create --dry-run=server -o json -f <(named "$FILE" probe)
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  expect "$output" '.spec.cloudTags."plexsphere:platform/env"' prod
}
