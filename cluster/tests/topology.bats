#!/usr/bin/env bats
# A Cluster with a topology and its ClusterClass, through the real topology controller with
# examples/capi-policy.yaml in front: the KubeadmControlPlane and AWSCluster it creates carry what the
# contract says, and so does its MachineDeployment; a bare one, dry-run on the server, shows the policy's part,
# and a KairosControlPlane, dry-run, that the policy writes nothing its CRD lacks.

setup_file() {
  load helpers
  kubectl apply -f "$ROOT/cluster/objects/topology.yaml"
}

setup() { load helpers; }

kcp() { kubectl get kubeadmcontrolplanes -n default -l cluster.x-k8s.io/cluster-name=topo-demo -o json | jq '.items[0]'; }
md() { kubectl get machinedeployments -n default -l topology.cluster.x-k8s.io/deployment-name=md-0 -o json | jq '.items[0]'; }

@test "the topology controller creates the KubeadmControlPlane with the topology's and the class's metadata" {
  eventually 90 '[ -n "$(kcp | jq -r ".metadata.name // empty")" ]'
  k=$(kcp)
  expect "$k" '.metadata.labels."cp-tier"' gold
  expect "$k" '.metadata.labels."class-tier"' standard
  expect "$k" '.metadata.annotations."owner.example.com/team"' platform
  expect "$k" '.metadata.annotations."class.example.com/owner"' platform
  expect "$k" '.spec.machineTemplate.metadata.labels."cp-tier"' gold
  expect "$k" '.spec.machineTemplate.metadata.labels."class-tier"' standard
  expect "$k" '.spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds' 120
}

@test "the AWSCluster the topology controller creates carries its Cluster's tags" {
  eventually 90 '[ "$(kubectl get awsclusters -n default -l cluster.x-k8s.io/cluster-name=topo-demo -o json |
    jq -r ".items[0].spec.additionalTags.\"plexsphere:cost-center\" // empty")" = cc-7000 ]'
}

@test "the topology controller's MachineDeployment carries the class's and the topology's metadata and fields" {
  eventually 90 '[ -n "$(md | jq -r ".metadata.name // empty")" ]'
  m=$(md)
  expect "$m" '.metadata.labels.nodepool' topo-pool
  expect "$m" '.metadata.labels."class-pool"' default
  expect "$m" '.spec.template.metadata.labels.nodepool' topo-pool
  expect "$m" '.spec.template.spec.minReadySeconds' 15
}

@test "after a settle time the topology's objects are not written again" {
  # The MachineDeployment controller's first pass (its MachineSet, the revision annotation) is CAPI's own
  # bookkeeping, not a loop: measure once it is done.
  eventually 90 '[ -n "$(md | jq -r ".metadata.annotations[\"machinedeployment.clusters.x-k8s.io/revision\"] // empty")" ]'
  state() { for kind in kubeadmcontrolplanes awsclusters machinedeployments; do written_state $kind cluster.x-k8s.io/cluster-name=topo-demo; done; }
  before=$(state)
  sleep "${SETTLE_SECONDS:-20}"
  after=$(state)
  diff <(echo "$before") <(echo "$after")
}

@test "a topology MachineDeployment, dry-run on the server, gets its class's and topology's metadata and fields" {
  run kubectl create --dry-run=server -o json -f "$ROOT/cluster/objects/topology-machinedeployment.yaml"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  md=$output
  expect "$md" '.metadata.labels.nodepool' topo-pool
  expect "$md" '.metadata.labels."class-pool"' default
  expect "$md" '.spec.template.metadata.labels.nodepool' topo-pool
  expect "$md" '.spec.template.spec.minReadySeconds' 15
  # A dry run stores nothing.
  run kubectl get machinedeployment topo-demo-md-0-dry-run -n default
  [ "$status" -ne 0 ]
}

@test "a topology KairosControlPlane, dry-run on the server, is not mutated: nothing the topology sets is missing that its CRD holds" {
  # Before the policy followed each kind's CRD it wrote the topology's drain timeout under
  # spec.machineTemplate.spec, which the API server dropped: the audit log showed the create mutated.
  run kubectl create --dry-run=server -o json -f "$ROOT/cluster/objects/topology-kairoscontrolplane.yaml"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  expect "$output" '.spec.machineTemplate.metadata.labels."cp-tier"' gold
  expect "$output" '.spec.machineTemplate.spec // "absent"' absent
  eventually 30 "webhook_called clusterwide-capi-metadata-propagation kairoscontrolplanes topo-demo-kairos-dry-run"
  run webhook_mutated clusterwide-capi-metadata-propagation kairoscontrolplanes topo-demo-kairos-dry-run
  [ "$status" -eq 1 ]
}
