#!/usr/bin/env bats
# Infrastructure tags (examples/capi-policy.yaml turns cloudTags.capiInfrastructure on): the Cluster's
# opted-in labels become CAPA's additionalTags and CAPG's additionalLabels, once the real Cluster controller
# has tied each InfraCluster to its Cluster; a GKE node pool takes them at CREATE, named by its label.

setup_file() {
  load helpers
  kubectl apply -f "$ROOT/cluster/objects/infrastructure.yaml"
}

setup() { load helpers; }

@test "an AWSCluster gets its Cluster's opted-in labels as tags beside its own" {
  eventually 60 '[ "$(field awscluster aws-demo .spec.additionalTags.\"plexsphere:environment\")" = prod ]'
  a=$(get awscluster aws-demo)
  # What the Cluster controller wrote, which made the policy find the Cluster.
  expect "$a" '.metadata.labels."cluster.x-k8s.io/cluster-name"' aws-demo
  expect "$a" '.metadata.ownerReferences[0].kind' Cluster
  expect "$a" '.spec.additionalTags."plexsphere:cost-center"' cc-4711
  expect "$a" '.spec.additionalTags."plexsphere:acme.io/team"' payments
  expect "$a" '.spec.additionalTags.owner' team-a
  expect "$a" '.spec.additionalTags | length' 4
}

@test "a GCPCluster gets them as GCP labels, under capg's prefix" {
  eventually 60 '[ "$(field gcpcluster gcp-demo .spec.additionalLabels.\"plexsphere-environment\")" = prod ]'
  g=$(get gcpcluster gcp-demo)
  expect "$g" '.spec.additionalLabels."plexsphere-cost-center"' cc-4711
  expect "$g" '.spec.additionalLabels | length' 2
}

@test "a GKE node pool (GCPManagedMachinePool) gets its Cluster's labels and its own, its own winning" {
  p=$(get gcpmanagedmachinepool gcp-demo-pool-0)
  expect "$p" '.spec.additionalLabels."plexsphere-environment"' staging
  expect "$p" '.spec.additionalLabels."plexsphere-cost-center"' cc-4711
  expect "$p" '.spec.additionalLabels.owner' team-shop
  expect "$p" '.spec.additionalLabels | length' 3
}

@test "a Cluster's label changed: a later write of its AWSCluster carries the new tag" {
  kubectl label cluster aws-demo -n default --overwrite cost-center=cc-0042
  # The policy acts on writes of the AWSCluster, not of the Cluster: touch it as a controller would.
  # policy-server answers look-ups from a cache for 5 s, so a write within 5 s of a look-up of the same
  # Cluster may still get the old tag; `policy-runner serve` reads afresh every time.
  eventually 15 'kubectl annotate awscluster aws-demo -n default --overwrite example.com/touched="$(date +%s%N)" >/dev/null &&
    [ "$(field awscluster aws-demo .spec.additionalTags.\"plexsphere:cost-center\")" = cc-0042 ]'
}
