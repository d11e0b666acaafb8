#!/usr/bin/env bats
# A MachineDeployment through the real CAPI controllers, with examples/capi-policy.yaml in front of the API
# server: the MachineSet and Machines they create, and the AWSMachines and KubeadmConfigs they clone, carry
# what the propagation contract says; then nothing keeps writing them; then an in-place change of the
# template labels reaches them all, and validate mode finds no deviation, both the deployed
# validate-mode policy and `policy-runner audit` on the stored objects.

setup_file() {
  load helpers
  kubectl apply -f "$ROOT/cluster/objects/machinedeployment.yaml"
}

setup() { load helpers; }

SELECTOR=cluster.x-k8s.io/deployment-name=md-demo-workers

# `policy-runner audit` (validate mode, examples/capi-policy.yaml's settings) on a dump of the stored
# objects: the MachineSet and both Machines are evaluated against their parents, and nothing deviates.
audit_compliant() {
  kubectl get clusters,machinedeployments,machinesets,machines,awsmachines,kubeadmconfigs -n default -o json \
    >"$BATS_TEST_TMPDIR/dump.json"
  run "$RUNNER" audit --full -f "$BATS_TEST_TMPDIR/dump.json" --settings-json "$(settings_of "$ROOT/examples/capi-policy.yaml")"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *" 0 deviate"* ]]
  [ "$(grep -cE '^(MachineSet|Machine) default/md-demo-workers-.*: ✓ compliant$' <<<"$output")" -eq 3 ]
  grep -q 'look-up: MachineSet default/md-demo-workers-[a-z0-9]*.*: found' <<<"$output"
}

@test "the controllers create the MachineSet, two Machines, their AWSMachines and KubeadmConfigs" {
  eventually 90 '[ "$(count machinesets $SELECTOR)" = 1 ]'
  eventually 90 '[ "$(count machines $SELECTOR)" = 2 ]'
  eventually 60 '[ "$(count awsmachines $SELECTOR)" = 2 ]'
  eventually 60 '[ "$(count kubeadmconfigs $SELECTOR)" = 2 ]'
}

@test "the MachineSet carries the template metadata, the MachineDeployment's annotations and in-place fields" {
  ms=$(kubectl get machinesets -n default -l $SELECTOR -o json | jq '.items[0]')
  expect "$ms" '.metadata.labels.nodepool' pool1
  expect "$ms" '.metadata.labels."node-role.kubernetes.io/worker"' ''
  # The MachineDeployment's own label does not flow; its annotations do.
  expect "$ms" '.metadata.labels.environment' null
  expect "$ms" '.metadata.annotations."cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"' 5
  expect "$ms" '.spec.template.metadata.labels.nodepool' pool1
  expect "$ms" '.spec.template.metadata.annotations."pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes"' storage-operator
  expect "$ms" '.spec.template.spec.deletion.nodeDrainTimeoutSeconds' 300
  expect "$ms" '.spec.template.spec.minReadySeconds' 30
  expect "$ms" '.spec.template.spec.readinessGates[0].conditionType' example.com/NetworkReady
  expect "$ms" '.spec.deletion.order' Oldest
}

@test "each Machine, AWSMachine and KubeadmConfig carries the contract's metadata; AWSMachines their own tags" {
  for machine in $(kubectl get machines -n default -l $SELECTOR -o name); do
    m=$(kubectl get "$machine" -n default -o json)
    expect "$m" '.metadata.labels.nodepool' pool1
    expect "$m" '.metadata.annotations."pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes"' storage-operator
    expect "$m" '.spec.deletion.nodeDrainTimeoutSeconds' 300
    expect "$m" '.spec.minReadySeconds' 30
    expect "$m" '.spec.readinessGates[0].conditionType' example.com/NetworkReady
  done
  for infra in $(kubectl get awsmachines -n default -l $SELECTOR -o name); do
    a=$(kubectl get "$infra" -n default -o json)
    expect "$a" '.metadata.labels.nodepool' pool1
    expect "$a" '.metadata.annotations."pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes"' storage-operator
    # A machine's tags come from its own labels (CAPI's, from the template), not the Cluster's, which
    # reach it through the AWSCluster (docs/infrastructure-tags.md); the template's own tag stays.
    expect "$a" '.spec.additionalTags.owner' team-a
    expect "$a" '.spec.additionalTags."plexsphere:cost-center"' cc-pool1
    expect "$a" '.spec.additionalTags."plexsphere:environment"' null
  done
  for config in $(kubectl get kubeadmconfigs -n default -l $SELECTOR -o name); do
    c=$(kubectl get "$config" -n default -o json)
    expect "$c" '.metadata.labels.nodepool' pool1
    expect "$c" '.metadata.annotations."pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes"' storage-operator
  done
}

@test "a MachineSet written by hand under the MachineDeployment gets its metadata from the policy (dry run)" {
  # CAPI's controllers take no part in a dry run: what the response holds is the policy's doing.
  uid=$(get machinedeployment md-demo-workers | jq -r .metadata.uid)
  run kubectl create --dry-run=server -o json -f - <<YAML
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata:
  name: md-demo-workers-by-hand
  namespace: default
  labels: {cluster.x-k8s.io/cluster-name: md-demo, cluster.x-k8s.io/deployment-name: md-demo-workers}
  ownerReferences:
    - {apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, name: md-demo-workers, uid: $uid, controller: true}
spec:
  clusterName: md-demo
  selector:
    matchLabels: {cluster.x-k8s.io/cluster-name: md-demo, cluster.x-k8s.io/deployment-name: md-demo-workers}
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: md-demo, cluster.x-k8s.io/deployment-name: md-demo-workers}
    spec:
      clusterName: md-demo
      bootstrap: {dataSecretName: by-hand}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: AWSMachineTemplate, name: md-demo-workers}
YAML
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  ms=$output
  expect "$ms" '.metadata.labels.nodepool' pool1
  expect "$ms" '.metadata.annotations."cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"' 5
  expect "$ms" '.spec.template.metadata.labels."cost-center"' cc-pool1
  expect "$ms" '.spec.template.spec.deletion.nodeDrainTimeoutSeconds' 300
  expect "$ms" '.spec.template.spec.minReadySeconds' 30
  expect "$ms" '.spec.deletion.order' Oldest
}

@test "after a settle time no object's metadata or spec changes again (no write loop with CAPI)" {
  kinds="machinedeployments machinesets machines awsmachines kubeadmconfigs"
  before=$(for kind in $kinds; do written_state $kind $SELECTOR; done)
  sleep "${SETTLE_SECONDS:-20}"
  after=$(for kind in $kinds; do written_state $kind $SELECTOR; done)
  diff <(echo "$before") <(echo "$after")
}

@test "validate mode finds no deviation on the stored objects" {
  audit_compliant
}

@test "a change of the template labels: CAPI propagates it in place and validate mode finds no deviation" {
  log=$STATE/webhook-server.log
  from=$(wc -l <"$log")
  kubectl patch machinedeployment md-demo-workers -n default --type=merge \
    -p '{"spec":{"template":{"metadata":{"labels":{"tier":"gold"}}}}}'
  for kind in machinesets machines awsmachines kubeadmconfigs; do
    eventually 60 '[ "$(kubectl get $kind -n default -l $SELECTOR,tier=gold -o name | wc -l)" = "$(count $kind $SELECTOR)" ]'
  done
  # In place: the same MachineSet and Machines, no rollout.
  [ "$(count machinesets $SELECTOR)" = 1 ]
  audit_compliant
  # The deployed validate-mode policy (examples/validate-mode-policy.yaml, monitor mode) saw the
  # controllers' writes of the MachineSet, Machines and KubeadmConfigs, and would have rejected none:
  # its verdicts, from the webhook server's log (the API server never sees them).
  seen=$(monitor_verdicts clusterwide-metadata-propagation-audit "$log" "$from")
  echo "$seen"
  [ "$(grep -c '^allowed=true$' <<<"$seen")" -ge 4 ]
  [[ "$seen" != *allowed=false* ]]
}
