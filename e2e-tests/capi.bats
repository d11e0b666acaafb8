#!/usr/bin/env bats
#
# End-to-end tests of the Cluster API metadata propagation, driven through a
# kwctl-compatible runner, the policy's look-ups answered from plain objects.
#
#   bats e2e-tests/capi.bats                      # project runner + annotated-policy.wasm
#   KWCTL=kwctl bats e2e-tests/capi.bats          # a real kwctl on the PATH
#   POLICY=path/to/module.wasm bats e2e-tests/capi.bats
#
# Fixtures: test_data/capi/<version>/<scenario>.json (AdmissionRequest) and
# the parents the policy may read, test_data/capi/<version>/parents/*.yaml,
# which the project's runner serves as a cluster would (`run --parents`: the
# object asked for, pruned by the look-up's field masks, or NotFound).
# test_data/capi/<version>/lookups.tsv lists, per scenario, the look-ups the
# policy must make, in order (`-`: none); evaluate (capi_helpers.bash) checks
# the session the runner records (`--record-session`) against it. Under a
# real kwctl, kwctl replays that recorded session. A host error objects
# cannot give (403, 503) comes from a hand-written session the row names,
# whose look-ups, field masks included, the policy must make exactly. See
# test_data/capi/README.md.
#
# Every expected value below is written out by hand from the propagation
# contract; nothing is recomputed from the fixtures.

RUNNER="${KWCTL:-target/host/policy-runner}"
POLICY="${POLICY:-annotated-policy.wasm}"
DATA=test_data/capi

load capi_helpers

# Applying the patch changes nothing outside the propagated metadata.
assert_only_metadata_changed() {
  local strip='del(.metadata.labels, .metadata.annotations, .spec.template.metadata, .spec.machineTemplate.metadata)'
  local before after
  before=$(jq -S ".object | $strip" "$REQUEST")
  after=$(patched_object | jq -S "$strip") || { echo "cannot apply the patch"; return 1; }
  if [[ "$before" != "$after" ]]; then
    echo "the patch changes more than metadata labels/annotations:"
    diff <(echo "$before") <(echo "$after") || true
    return 1
  fi
}

# assert_audit KEY VALUE  -- auditAnnotations[KEY] exists and equals VALUE.
assert_audit() {
  local actual
  if ! jq -e --arg k "$1" '(.auditAnnotations // {}) | has($k)' >/dev/null <<<"$response"; then
    echo "auditAnnotations has no '$1': $(jq -c '.auditAnnotations' <<<"$response")"
    return 1
  fi
  actual=$(jq -r --arg k "$1" '.auditAnnotations[$k]' <<<"$response")
  if [[ "$actual" != "$2" ]]; then
    echo "auditAnnotations['$1']: expected '$2', got '$actual'"
    return 1
  fi
}

assert_no_warnings() {
  if ! jq -e '(.warnings // []) | length == 0' >/dev/null <<<"$response"; then
    echo "expected no warnings, got $(jq -c '.warnings' <<<"$response")"
    return 1
  fi
}

# assert_warning_mentions KEY  -- some admission warning contains KEY.
assert_warning_mentions() {
  if ! jq -e --arg k "$1" '(.warnings // []) | any(contains($k))' >/dev/null <<<"$response"; then
    echo "no warning mentions '$1': $(jq -c '.warnings' <<<"$response")"
    return 1
  fi
}

# refute_warning_mentions KEY  -- no admission warning contains KEY.
refute_warning_mentions() {
  if jq -e --arg k "$1" '(.warnings // []) | any(contains($k))' >/dev/null <<<"$response"; then
    echo "a warning mentions '$1' (synced to the Node, nothing to warn about): $(jq -c '.warnings' <<<"$response")"
    return 1
  fi
}

# assert_message_mentions TEXT  -- status.message contains TEXT (case-insensitive).
assert_message_mentions() {
  local message
  message=$(jq -r '.status.message // ""' <<<"$response")
  if ! grep -qiF -- "$1" <<<"$message"; then
    echo "status.message does not mention '$1': '$message'"
    return 1
  fi
}

# ---------------------------------------------------------------------------
# expectations shared by both API versions (written out by hand)
# ---------------------------------------------------------------------------

# MachineSet capi-quickstart-md-1-x7k2p created for MachineDeployment
# capi-quickstart-md-1. Flows: MD annotations minus last-applied/revision/
# conversion-data; MD template labels to labels and template labels; MD
# template annotations to template annotations; MD top-level label
# environment=staging does not flow.
check_machineset_create_from_md() {
  local version=$1
  evaluate "$version" machineset_create_from_md
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/annotations/cluster.x-k8s.io~1cluster-api-autoscaler-node-group-max-size",
    "add /metadata/annotations/cluster.x-k8s.io~1cluster-api-autoscaler-node-group-min-size",
    "add /metadata/labels/node-role.kubernetes.io~1worker",
    "add /metadata/labels/nodepool",
    "add /spec/template/metadata/annotations",
    "add /spec/template/metadata/labels/node-role.kubernetes.io~1worker",
    "add /spec/template/metadata/labels/nodepool"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
    "machine-template-hash": "3214853532-x7k2p",
    "node-role.kubernetes.io/worker": "",
    "nodepool": "pool1"
  }'
  if [[ "$version" == v1beta1 ]]; then
    assert_patched '.metadata.annotations' '{
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5",
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
      "machinedeployment.clusters.x-k8s.io/desired-replicas": "2",
      "machinedeployment.clusters.x-k8s.io/max-replicas": "3",
      "machinedeployment.clusters.x-k8s.io/revision": "2"
    }'
  else
    assert_patched '.metadata.annotations' '{
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5",
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
      "cluster.x-k8s.io/disable-machine-create": "false",
      "machinedeployment.clusters.x-k8s.io/desired-replicas": "2",
      "machinedeployment.clusters.x-k8s.io/max-replicas": "3",
      "machinedeployment.clusters.x-k8s.io/revision": "2"
    }'
  fi
  assert_patched '.spec.template.metadata' '{
    "labels": {
      "cluster.x-k8s.io/cluster-name": "capi-quickstart",
      "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
      "machine-template-hash": "3214853532-x7k2p",
      "node-role.kubernetes.io/worker": "",
      "nodepool": "pool1"
    },
    "annotations": {
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"
    }
  }'
}

# Machine capi-quickstart-md-1-x7k2p-6nbqt created by MachineSet
# capi-quickstart-md-1-x7k2p: MS spec.template.metadata -> Machine metadata.
check_machine_create_from_machineset() {
  local version=$1
  evaluate "$version" machine_create_from_machineset
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/node-role.kubernetes.io~1worker",
    "add /metadata/labels/nodepool"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
    "cluster.x-k8s.io/set-name": "capi-quickstart-md-1-x7k2p",
    "machine-template-hash": "3214853532-x7k2p",
    "node-role.kubernetes.io/worker": "",
    "nodepool": "pool1"
  }'
  assert_patched '.metadata.annotations' '{
    "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"
  }'
  assert_audit node-labels "node-role.kubernetes.io/worker"
  assert_audit node-annotations ""
}

# Control plane Machine capi-quickstart-wqx5r-hb7xq created by
# KubeadmControlPlane capi-quickstart-wqx5r: KCP spec.machineTemplate.metadata
# -> Machine metadata. Keys without "/" ending in .node.cluster.x-k8s.io are
# synced to the Node by CAPI (domain = whole key).
check_machine_create_from_kcp() {
  local version=$1
  evaluate "$version" machine_create_from_kcp
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "add /metadata/labels/ControlPlaneTemplate.machineTemplate.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /metadata/labels/ClusterClass.controlPlane.label",
      "add /metadata/labels/topology.cluster.x-k8s.io~1owned",
      "add /metadata/annotations/ControlPlaneTemplate.machineTemplate.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /metadata/annotations/ClusterClass.controlPlane.annotation"
    ]'
    assert_patched '.metadata.annotations | del(.["controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration"])' '{
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue"
    }'
  else
    assert_patch_ops '[
      "add /metadata/labels/ControlPlaneTemplate.machineTemplate.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /metadata/labels/ClusterClass.controlPlane.label",
      "add /metadata/labels/topology.cluster.x-k8s.io~1owned",
      "add /metadata/annotations/ControlPlaneTemplate.machineTemplate.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /metadata/annotations/ClusterClass.controlPlane.annotation",
      "add /metadata/annotations/pre-drain.delete.hook.machine.cluster.x-k8s.io~1kcp-ready-check"
    ]'
    assert_patched '.metadata.annotations' '{
      "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup": "",
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue",
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/kcp-ready-check": "true"
    }'
  fi
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/control-plane": "",
    "cluster.x-k8s.io/control-plane-name": "capi-quickstart-wqx5r",
    "ControlPlaneTemplate.machineTemplate.label": "ControlPlaneTemplate.machineTemplate.labelValue",
    "Cluster.topology.controlPlane.label": "Cluster.topology.controlPlane.labelValue",
    "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeLabelValue",
    "ClusterClass.controlPlane.label": "ClusterClass.controlPlane.labelValue",
    "topology.cluster.x-k8s.io/owned": ""
  }'
  assert_audit node-labels "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io"
  assert_audit node-annotations "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io"
}

# DockerMachine cloned by MachineSet capi-quickstart-md-1-x7k2p (ownerReference
# without controller: true): same flow as the Machine.
check_dockermachine_create_from_machineset() {
  local version=$1
  evaluate "$version" dockermachine_create_from_machineset
  assert_allowed true
  assert_patch_ops '[
    "add /metadata/annotations/pre-drain.delete.hook.machine.cluster.x-k8s.io~1wait-for-volumes",
    "add /metadata/labels/node-role.kubernetes.io~1worker",
    "add /metadata/labels/nodepool"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
    "cluster.x-k8s.io/set-name": "capi-quickstart-md-1-x7k2p",
    "machine-template-hash": "3214853532-x7k2p",
    "node-role.kubernetes.io/worker": "",
    "nodepool": "pool1"
  }'
  assert_patched '.metadata.annotations' '{
    "cluster.x-k8s.io/cloned-from-groupkind": "DockerMachineTemplate.infrastructure.cluster.x-k8s.io",
    "cluster.x-k8s.io/cloned-from-name": "capi-quickstart-md-1",
    "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"
  }'
}

# KubeadmConfig created by KubeadmControlPlane capi-quickstart-wqx5r
# (ownerReference without controller: true).
check_kubeadmconfig_create_from_kcp() {
  local version=$1
  evaluate "$version" kubeadmconfig_create_from_kcp
  assert_allowed true
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/ControlPlaneTemplate.machineTemplate.label",
    "add /metadata/labels/Cluster.topology.controlPlane.label",
    "add /metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
    "add /metadata/labels/ClusterClass.controlPlane.label",
    "add /metadata/labels/topology.cluster.x-k8s.io~1owned"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/control-plane": "",
    "cluster.x-k8s.io/control-plane-name": "capi-quickstart-wqx5r",
    "ControlPlaneTemplate.machineTemplate.label": "ControlPlaneTemplate.machineTemplate.labelValue",
    "Cluster.topology.controlPlane.label": "Cluster.topology.controlPlane.labelValue",
    "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeLabelValue",
    "ClusterClass.controlPlane.label": "ClusterClass.controlPlane.labelValue",
    "topology.cluster.x-k8s.io/owned": ""
  }'
  if [[ "$version" == v1beta1 ]]; then
    assert_patched '.metadata.annotations' '{
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue"
    }'
  else
    assert_patched '.metadata.annotations' '{
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue",
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/kcp-ready-check": "true"
    }'
  fi
}

# KubeadmControlPlane created by the topology controller; the ClusterClass
# has controlPlane.machineInfrastructure, so spec.machineTemplate.metadata
# receives the merge too. Template-derived keys (ControlPlaneTemplate.*) and
# bookkeeping keys stay.
check_kubeadmcontrolplane_create_topology() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_create_topology
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "add /metadata/labels/Cluster.topology.controlPlane.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /metadata/labels/ClusterClass.controlPlane.label",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /metadata/annotations/ClusterClass.controlPlane.annotation",
      "add /spec/machineTemplate/metadata/labels/Cluster.topology.controlPlane.label",
      "add /spec/machineTemplate/metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /spec/machineTemplate/metadata/labels/ClusterClass.controlPlane.label",
      "add /spec/machineTemplate/metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /spec/machineTemplate/metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /spec/machineTemplate/metadata/annotations/ClusterClass.controlPlane.annotation"
    ]'
    assert_patched '.metadata.annotations' '{
      "ControlPlaneTemplate.template.annotation": "ControlPlaneTemplate.template.annotationValue",
      "cluster.x-k8s.io/cloned-from-groupkind": "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io",
      "cluster.x-k8s.io/cloned-from-name": "quick-start-control-plane",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue"
    }'
    assert_patched '.spec.machineTemplate.metadata.annotations' '{
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue"
    }'
  else
    assert_patch_ops '[
      "add /metadata/labels/Cluster.topology.controlPlane.label",
      "add /metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /metadata/labels/ClusterClass.controlPlane.label",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /metadata/annotations/ClusterClass.controlPlane.annotation",
      "add /metadata/annotations/pre-drain.delete.hook.machine.cluster.x-k8s.io~1kcp-ready-check",
      "add /spec/machineTemplate/metadata/labels/Cluster.topology.controlPlane.label",
      "add /spec/machineTemplate/metadata/labels/Cluster.topology.controlPlane.label.node.cluster.x-k8s.io",
      "add /spec/machineTemplate/metadata/labels/ClusterClass.controlPlane.label",
      "add /spec/machineTemplate/metadata/annotations/Cluster.topology.controlPlane.annotation",
      "add /spec/machineTemplate/metadata/annotations/Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io",
      "add /spec/machineTemplate/metadata/annotations/ClusterClass.controlPlane.annotation",
      "add /spec/machineTemplate/metadata/annotations/pre-drain.delete.hook.machine.cluster.x-k8s.io~1kcp-ready-check"
    ]'
    assert_patched '.metadata.annotations' '{
      "ControlPlaneTemplate.template.annotation": "ControlPlaneTemplate.template.annotationValue",
      "cluster.x-k8s.io/cloned-from-groupkind": "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io",
      "cluster.x-k8s.io/cloned-from-name": "quick-start-control-plane",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue",
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/kcp-ready-check": "true"
    }'
    assert_patched '.spec.machineTemplate.metadata.annotations' '{
      "ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue",
      "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
      "Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeAnnotationValue",
      "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue",
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/kcp-ready-check": "true"
    }'
  fi
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "ControlPlaneTemplate.template.label": "ControlPlaneTemplate.template.labelValue",
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "topology.cluster.x-k8s.io/owned": "",
    "Cluster.topology.controlPlane.label": "Cluster.topology.controlPlane.labelValue",
    "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeLabelValue",
    "ClusterClass.controlPlane.label": "ClusterClass.controlPlane.labelValue"
  }'
  assert_patched '.spec.machineTemplate.metadata.labels' '{
    "ControlPlaneTemplate.machineTemplate.label": "ControlPlaneTemplate.machineTemplate.labelValue",
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "topology.cluster.x-k8s.io/owned": "",
    "Cluster.topology.controlPlane.label": "Cluster.topology.controlPlane.labelValue",
    "Cluster.topology.controlPlane.label.node.cluster.x-k8s.io": "Cluster.topology.controlPlane.nodeLabelValue",
    "ClusterClass.controlPlane.label": "ClusterClass.controlPlane.labelValue"
  }'
}

# UPDATE (finalizer added) of the topology KubeadmControlPlane of Cluster
# capi-quickstart-xns, whose ClusterClass quick-start-without-cp-infra lives in
# namespace capi-classes and has no controlPlane.machineInfrastructure:
# metadata only, spec.machineTemplate.metadata untouched. environment is set
# by both (topology: production, class: class-default): topology wins, and
# parent wins over the stale child values.
check_kubeadmcontrolplane_update_no_machine_infrastructure() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_update_topology_no_machine_infrastructure
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/labels/Cluster.topology.controlPlane.label",
    "replace /metadata/labels/environment",
    "add /metadata/annotations/ClusterClass.controlPlane.annotation",
    "replace /metadata/annotations/Cluster.topology.controlPlane.annotation"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "ClusterClass.controlPlane.label": "ClusterClass.controlPlane.labelValue",
    "Cluster.topology.controlPlane.label": "Cluster.topology.controlPlane.labelValue",
    "ControlPlaneTemplate.template.label": "ControlPlaneTemplate.template.labelValue",
    "cluster.x-k8s.io/cluster-name": "capi-quickstart-xns",
    "environment": "production",
    "topology.cluster.x-k8s.io/owned": ""
  }'
  assert_patched '.metadata.annotations' '{
    "Cluster.topology.controlPlane.annotation": "Cluster.topology.controlPlane.annotationValue",
    "ClusterClass.controlPlane.annotation": "ClusterClass.controlPlane.annotationValue",
    "ControlPlaneTemplate.template.annotation": "ControlPlaneTemplate.template.annotationValue",
    "cluster.x-k8s.io/cloned-from-groupkind": "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io",
    "cluster.x-k8s.io/cloned-from-name": "quick-start-control-plane"
  }'
  assert_patched '.spec.machineTemplate.metadata' '{
    "labels": {"ControlPlaneTemplate.machineTemplate.label": "ControlPlaneTemplate.machineTemplate.labelValue"},
    "annotations": {"ControlPlaneTemplate.machineTemplate.annotation": "ControlPlaneTemplate.machineTemplate.annotationValue"}
  }'
}

# MachineDeployment md-0 created by the topology controller: merge of the
# Cluster topology entry md-0 and the ClusterClass class default-worker, on
# metadata and spec.template.metadata; the hold-upgrade-sequence (v1beta1
# fixture) / defer-upgrade (v1beta2 fixture) annotation is not propagated.
check_machinedeployment_create_topology() {
  local version=$1
  evaluate "$version" machinedeployment_create_topology
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/Cluster.topology.machineDeployment.label",
    "add /metadata/labels/Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io",
    "add /metadata/labels/ClusterClass.machineDeployment.label",
    "add /spec/template/metadata/annotations",
    "add /spec/template/metadata/labels/Cluster.topology.machineDeployment.label",
    "add /spec/template/metadata/labels/Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io",
    "add /spec/template/metadata/labels/ClusterClass.machineDeployment.label"
  ]'
  assert_only_metadata_changed
  local labels='{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "topology.cluster.x-k8s.io/deployment-name": "md-0",
    "topology.cluster.x-k8s.io/owned": "",
    "Cluster.topology.machineDeployment.label": "Cluster.topology.machineDeployment.labelValue",
    "Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io": "Cluster.topology.machineDeployment.nodeLabelValue",
    "ClusterClass.machineDeployment.label": "ClusterClass.machineDeployment.labelValue"
  }'
  local annotations='{
    "Cluster.topology.machineDeployment.annotation": "Cluster.topology.machineDeployment.annotationValue",
    "Cluster.topology.md.annotation.node.cluster.x-k8s.io": "Cluster.topology.machineDeployment.nodeAnnotationValue",
    "ClusterClass.machineDeployment.annotation": "ClusterClass.machineDeployment.annotationValue"
  }'
  assert_patched '.metadata.labels' "$labels"
  assert_patched '.metadata.annotations' "$annotations"
  assert_patched '.spec.template.metadata.labels' "$labels"
  assert_patched '.spec.template.metadata.annotations' "$annotations"
  assert_patched '.spec.selector.matchLabels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "topology.cluster.x-k8s.io/deployment-name": "md-0",
    "topology.cluster.x-k8s.io/owned": ""
  }'
}

# MachinePool mp-0 created by the topology controller (CAPI
# computeMachinePool): the same merge as a MachineDeployment, from the
# machinePools entries of the Cluster topology and the ClusterClass, onto
# metadata and spec.template.metadata; pool-name stays the child's.
check_machinepool_create_topology() {
  local version=$1
  evaluate "$version" machinepool_create_topology
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/Cluster.topology.machinePool.label",
    "add /metadata/labels/Cluster.topology.machinePool.label.node.cluster.x-k8s.io",
    "add /metadata/labels/ClusterClass.machinePool.label",
    "add /spec/template/metadata/annotations",
    "add /spec/template/metadata/labels/Cluster.topology.machinePool.label",
    "add /spec/template/metadata/labels/Cluster.topology.machinePool.label.node.cluster.x-k8s.io",
    "add /spec/template/metadata/labels/ClusterClass.machinePool.label"
  ]'
  assert_only_metadata_changed
  local labels='{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "topology.cluster.x-k8s.io/owned": "",
    "topology.cluster.x-k8s.io/pool-name": "mp-0",
    "Cluster.topology.machinePool.label": "Cluster.topology.machinePool.labelValue",
    "Cluster.topology.machinePool.label.node.cluster.x-k8s.io": "Cluster.topology.machinePool.nodeLabelValue",
    "ClusterClass.machinePool.label": "ClusterClass.machinePool.labelValue"
  }'
  local annotations='{
    "Cluster.topology.machinePool.annotation": "Cluster.topology.machinePool.annotationValue",
    "ClusterClass.machinePool.annotation": "ClusterClass.machinePool.annotationValue"
  }'
  assert_patched '.metadata.labels' "$labels"
  assert_patched '.metadata.annotations' "$annotations"
  assert_patched '.spec.template.metadata.labels' "$labels"
  assert_patched '.spec.template.metadata.annotations' "$annotations"
}

# kubectl label on the old MachineSet capi-quickstart-md-1-5nmbd, which has
# drifted from its MachineDeployment: node-role label missing from
# metadata.labels, nodepool=pool0 instead of pool1 (labels and template
# labels). The user's owner label and the MS's own revision "1" stay.
check_machineset_update_drifted_from_md() {
  local version=$1
  evaluate "$version" machineset_update_drifted_from_md
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '[
    "add /metadata/labels/node-role.kubernetes.io~1worker",
    "replace /metadata/labels/nodepool",
    "replace /spec/template/metadata/labels/nodepool"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
    "machine-template-hash": "1740562209-5nmbd",
    "node-role.kubernetes.io/worker": "",
    "nodepool": "pool1",
    "owner": "team-payments"
  }'
  if [[ "$version" == v1beta1 ]]; then
    assert_patched '.metadata.annotations' '{
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5",
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
      "machinedeployment.clusters.x-k8s.io/desired-replicas": "2",
      "machinedeployment.clusters.x-k8s.io/max-replicas": "3",
      "machinedeployment.clusters.x-k8s.io/revision": "1"
    }'
  else
    assert_patched '.metadata.annotations' '{
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5",
      "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
      "cluster.x-k8s.io/disable-machine-create": "false",
      "machinedeployment.clusters.x-k8s.io/desired-replicas": "2",
      "machinedeployment.clusters.x-k8s.io/max-replicas": "3",
      "machinedeployment.clusters.x-k8s.io/revision": "1"
    }'
  fi
  assert_patched '.spec.template.metadata' '{
    "labels": {
      "cluster.x-k8s.io/cluster-name": "capi-quickstart",
      "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-1",
      "machine-template-hash": "1740562209-5nmbd",
      "node-role.kubernetes.io/worker": "",
      "nodepool": "pool1"
    },
    "annotations": {
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"
    }
  }'
}

# Machine of the edge pool (MachineSet capi-quickstart-md-edge-r8w2d).
# Synced to the Node: node-role.kubernetes.io/*, (*.)node-restriction.kubernetes.io/*,
# (*.)node.cluster.x-k8s.io/* labels and (*.)node.cluster.x-k8s.io/* annotations.
# node.kubernetes.io/exclude-from-external-load-balancers is not synced: warning.
check_machine_create_node_labels() {
  local version=$1
  evaluate "$version" machine_create_node_labels
  assert_allowed true
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/node-restriction.kubernetes.io~1zone",
    "add /metadata/labels/nodepool",
    "add /metadata/labels/team.node.cluster.x-k8s.io~1owner"
  ]'
  assert_only_metadata_changed
  assert_patched '.metadata.labels' '{
    "cluster.x-k8s.io/cluster-name": "capi-quickstart",
    "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-edge",
    "cluster.x-k8s.io/set-name": "capi-quickstart-md-edge-r8w2d",
    "machine-template-hash": "2907338157-r8w2d",
    "node-role.kubernetes.io/worker": "",
    "node.kubernetes.io/exclude-from-external-load-balancers": "true",
    "node-restriction.kubernetes.io/zone": "edge-a",
    "nodepool": "edge",
    "team.node.cluster.x-k8s.io/owner": "payments"
  }'
  assert_patched '.metadata.annotations' '{
    "edge.example.com/site": "fra-02",
    "team.node.cluster.x-k8s.io/contact": "payments-oncall"
  }'
  assert_audit node-labels "node-restriction.kubernetes.io/zone,node-role.kubernetes.io/worker,team.node.cluster.x-k8s.io/owner"
  assert_audit node-annotations "team.node.cluster.x-k8s.io/contact"
  assert_warning_mentions "node.kubernetes.io/exclude-from-external-load-balancers"
  refute_warning_mentions "node-role.kubernetes.io/worker"
  refute_warning_mentions "node-restriction.kubernetes.io/zone"
}

# Same Machine with additionalSyncMachineLabels/Annotations: the regexes add
# nodepool and edge.example.com/site to what CAPI syncs.
check_machine_create_node_labels_with_settings() {
  local version=$1
  evaluate "$version" machine_create_node_labels \
    --settings-json '{"capi":{"additionalSyncMachineLabels":["^nodepool$"],"additionalSyncMachineAnnotations":["^edge\\.example\\.com/"]}}'
  assert_allowed true
  assert_patch_ops '[
    "add /metadata/annotations",
    "add /metadata/labels/node-restriction.kubernetes.io~1zone",
    "add /metadata/labels/nodepool",
    "add /metadata/labels/team.node.cluster.x-k8s.io~1owner"
  ]'
  assert_audit node-labels "node-restriction.kubernetes.io/zone,node-role.kubernetes.io/worker,nodepool,team.node.cluster.x-k8s.io/owner"
  assert_audit node-annotations "edge.example.com/site,team.node.cluster.x-k8s.io/contact"
}

# kubectl apply of the edge MachineDeployment: not topology-owned and no
# owner, so no look-up and no patch; its template carries a kubernetes.io
# label CAPI will not sync to the Node.
check_machinedeployment_create_exclude_lb_label() {
  local version=$1
  evaluate "$version" machinedeployment_create_exclude_lb_label
  assert_allowed true
  assert_no_patch
  assert_warning_mentions "node.kubernetes.io/exclude-from-external-load-balancers"
  refute_warning_mentions "node-role.kubernetes.io/worker"
  refute_warning_mentions "node-restriction.kubernetes.io/zone"
}

check_allowed_unchanged() {
  evaluate "$1" "$2"
  assert_allowed true
  assert_no_patch
}

# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@test "fixtures: every scenario in lookups.tsv has a request, every request a row, every session a file" {
  local version problems=0 scenario lookups session extra request
  local lookup='[A-Za-z]+/[a-z0-9.-]*/[a-z0-9.-]+'
  local lookups_re="^(-|$lookup( $lookup)*)$"
  for version in v1beta1 v1beta2; do
    [ -f "$DATA/$version/lookups.tsv" ] || { echo "$DATA/$version/lookups.tsv is missing"; problems=$((problems + 1)); continue; }
    while IFS=$'\t' read -r scenario lookups session extra; do
      [[ -z "$scenario" || "$scenario" == \#* ]] && continue
      [ -f "$DATA/$version/$scenario.json" ] || { echo "$version/lookups.tsv: $scenario has no request $scenario.json"; problems=$((problems + 1)); }
      [[ "$lookups" =~ $lookups_re ]] ||
        { echo "$version/lookups.tsv: $scenario: look-ups '$lookups' are not '-' or Kind/namespace/name separated by spaces"; problems=$((problems + 1)); }
      [ -z "$session" ] || [ -f "$DATA/$version/$session" ] || { echo "$version/lookups.tsv: $scenario: no session $session"; problems=$((problems + 1)); }
      [ -z "$extra" ] || { echo "$version/lookups.tsv: $scenario: more than three columns"; problems=$((problems + 1)); }
    done < "$DATA/$version/lookups.tsv"
    for request in "$DATA/$version"/*.json; do
      scenario=$(basename "$request" .json)
      [ "$(awk -F'\t' -v s="$scenario" '!/^#/ && $1 == s' "$DATA/$version/lookups.tsv" | wc -l)" -eq 1 ] ||
        { echo "$request: not exactly one row in $version/lookups.tsv"; problems=$((problems + 1)); }
    done
    for session in "$DATA/$version"/*.yml; do
      [ -e "$session" ] || continue
      awk -F'\t' -v s="$(basename "$session")" '!/^#/ && $3 == s { found = 1 } END { exit !found }' "$DATA/$version/lookups.tsv" ||
        { echo "$session: no row of $version/lookups.tsv names it"; problems=$((problems + 1)); }
    done
  done
  echo "$problems problems"
  [ "$problems" -eq 0 ]
}

@test "round trip: a session recorded from parents/ replays to the byte-identical response (under KWCTL, kwctl replays it)" {
  # Two look-ups (Cluster, ClusterClass) and a patch. The recording is the
  # project's runner's; the replay is $RUNNER's (a real kwctl when KWCTL is one).
  local request="$DATA/v1beta2/machinedeployment_create_topology.json" parents=() parent recorded
  for parent in "$DATA"/v1beta2/parents/*.yaml; do
    parents+=(--parents "$parent")
  done
  recorded=$(new_session_file v1beta2_round_trip)
  local stderr_file="$BATS_TEST_TMPDIR/stderr" from_parents replayed
  from_parents=$("$POLICY_RUNNER" run --allow-context-aware --request-path "$request" "${parents[@]}" \
    --record-session "$recorded" "$POLICY" 2>"$stderr_file") || { cat "$stderr_file"; false; }
  echo "from parents: $from_parents"
  cat "$recorded"
  check_lookups "$recorded" "Cluster/default/capi-quickstart ClusterClass/default/quick-start"
  [ "$(grep -c '^    type: Success$' "$recorded")" -eq 2 ]
  replayed=$("$RUNNER" run --allow-context-aware --request-path "$request" \
    --replay-host-capabilities-interactions "$recorded" "$POLICY" 2>"$stderr_file") || { cat "$stderr_file"; false; }
  echo "replayed:     $replayed"
  [ "$(jq -r .patchType <<<"$from_parents")" = JSONPatch ]
  [ "$replayed" = "$from_parents" ]
}

@test "v1beta1: MachineSet created from its MachineDeployment gets the MD's metadata" {
  check_machineset_create_from_md v1beta1
}

@test "v1beta2: MachineSet created from its MachineDeployment gets the MD's metadata" {
  check_machineset_create_from_md v1beta2
}

@test "v1beta1: Machine created by a MachineSet gets the MS template metadata and node audit annotations" {
  check_machine_create_from_machineset v1beta1
}

@test "v1beta2: Machine created by a MachineSet gets the MS template metadata and node audit annotations" {
  check_machine_create_from_machineset v1beta2
}

@test "v1beta1: control plane Machine gets the KubeadmControlPlane machineTemplate metadata" {
  check_machine_create_from_kcp v1beta1
}

@test "v1beta2: control plane Machine gets the KubeadmControlPlane machineTemplate metadata" {
  check_machine_create_from_kcp v1beta2
}

@test "v1beta1: DockerMachine (non-controller MachineSet owner) gets the MS template metadata" {
  check_dockermachine_create_from_machineset v1beta1
}

@test "v1beta2: DockerMachine (non-controller MachineSet owner) gets the MS template metadata" {
  check_dockermachine_create_from_machineset v1beta2
}

@test "v1beta1: KubeadmConfig (non-controller KCP owner) gets the KCP machineTemplate metadata" {
  check_kubeadmconfig_create_from_kcp v1beta1
}

@test "v1beta2: KubeadmConfig (non-controller KCP owner) gets the KCP machineTemplate metadata" {
  check_kubeadmconfig_create_from_kcp v1beta2
}

@test "v1beta1: topology KubeadmControlPlane gets topology+class metadata, also on machineTemplate" {
  check_kubeadmcontrolplane_create_topology v1beta1
}

@test "v1beta2: topology KubeadmControlPlane gets topology+class metadata, also on machineTemplate" {
  check_kubeadmcontrolplane_create_topology v1beta2
}

@test "v1beta1: topology KubeadmControlPlane, class in another namespace without machineInfrastructure: metadata only, topology wins" {
  check_kubeadmcontrolplane_update_no_machine_infrastructure v1beta1
}

@test "v1beta2: topology KubeadmControlPlane, class in another namespace without machineInfrastructure: metadata only, topology wins" {
  check_kubeadmcontrolplane_update_no_machine_infrastructure v1beta2
}

@test "v1beta1: topology MachineDeployment gets topology+class metadata, hold-upgrade-sequence dropped" {
  check_machinedeployment_create_topology v1beta1
}

@test "v1beta2: topology MachineDeployment gets topology+class metadata, defer-upgrade dropped" {
  check_machinedeployment_create_topology v1beta2
}

@test "v1beta1: topology MachinePool gets topology+class metadata from the machinePools entries" {
  check_machinepool_create_topology v1beta1
}

@test "v1beta2: topology MachinePool gets topology+class metadata from the machinePools entries" {
  check_machinepool_create_topology v1beta2
}

@test "v1beta1: UPDATE of a drifted MachineSet restores the MD's values and keeps the user's label" {
  check_machineset_update_drifted_from_md v1beta1
}

@test "v1beta2: UPDATE of a drifted MachineSet restores the MD's values and keeps the user's label" {
  check_machineset_update_drifted_from_md v1beta2
}

@test "v1beta1: Machine with node-relevant labels: node-labels/node-annotations and a warning" {
  check_machine_create_node_labels v1beta1
}

@test "v1beta2: Machine with node-relevant labels: node-labels/node-annotations and a warning" {
  check_machine_create_node_labels v1beta2
}

@test "v1beta1: additionalSyncMachineLabels/Annotations extend node-labels/node-annotations" {
  check_machine_create_node_labels_with_settings v1beta1
}

@test "v1beta2: additionalSyncMachineLabels/Annotations extend node-labels/node-annotations" {
  check_machine_create_node_labels_with_settings v1beta2
}

@test "v1beta1: MachineDeployment template with node.kubernetes.io/exclude-from-external-load-balancers: warning, no patch" {
  check_machinedeployment_create_exclude_lb_label v1beta1
}

@test "v1beta2: MachineDeployment template with node.kubernetes.io/exclude-from-external-load-balancers: warning, no patch" {
  check_machinedeployment_create_exclude_lb_label v1beta2
}

@test "v1beta1: parent MachineDeployment not found: allowed unchanged" {
  check_allowed_unchanged v1beta1 machineset_create_parent_not_found
}

@test "v1beta2: parent MachineDeployment not found: allowed unchanged" {
  check_allowed_unchanged v1beta2 machineset_create_parent_not_found
}

@test "v1beta1: topology KubeadmControlPlane whose Cluster is gone: allowed unchanged, ClusterClass not read" {
  check_allowed_unchanged v1beta1 kubeadmcontrolplane_create_topology_cluster_not_found
}

@test "v1beta2: topology KubeadmControlPlane whose Cluster is gone: allowed unchanged, ClusterClass not read" {
  check_allowed_unchanged v1beta2 kubeadmcontrolplane_create_topology_cluster_not_found
}

@test "v1beta1: MachineSet look-up forbidden (403): rejected, names the parent, can be retried" {
  evaluate v1beta1 machine_create_lookup_forbidden
  assert_allowed false
  assert_no_patch
  assert_message_mentions "MachineSet"
  assert_message_mentions "capi-quickstart-md-1-x7k2p"
  assert_message_mentions "retried"
}

@test "v1beta2: KubeadmControlPlane look-up unavailable (503): rejected, names the parent, can be retried" {
  evaluate v1beta2 kubeadmconfig_create_lookup_unavailable
  assert_allowed false
  assert_no_patch
  assert_message_mentions "KubeadmControlPlane"
  assert_message_mentions "capi-quickstart-wqx5r"
  assert_message_mentions "retried"
}

@test "v1beta2: a look-up failure quotes kube-rs's first line and status, not its debug dump or cause chain" {
  # The replay carries kube-rs's whole 503 error as policy-server 1.35 passes it.
  evaluate v1beta2 kubeadmconfig_create_lookup_unavailable
  local message
  message=$(jq -r '.status.message' <<<"$response")
  echo "message = $message"
  [ "$message" = "cannot read KubeadmControlPlane default/capi-quickstart-wqx5r (controlplane.cluster.x-k8s.io/v1beta2), the parent of this BootstrapConfig: ApiError: the server is currently unable to handle the request (get kubeadmcontrolplanes.controlplane.cluster.x-k8s.io): ServiceUnavailable (HTTP 503); the request can be retried once the policy can read it" ]
  [ "$(jq -r '.status.code' <<<"$response")" = 500 ]
}

@test "v1beta1: topology MachineDeployment missing from the Cluster topology: allowed unchanged" {
  check_allowed_unchanged v1beta1 machinedeployment_update_topology_not_in_cluster
}

@test "v1beta2: topology MachineDeployment missing from the Cluster topology: allowed unchanged" {
  check_allowed_unchanged v1beta2 machinedeployment_update_topology_not_in_cluster
}

@test "v1beta1: MachineSet without ownerReferences: no look-up, allowed unchanged" {
  check_allowed_unchanged v1beta1 machineset_create_without_owner
  assert_no_warnings
}

@test "v1beta2: MachineSet without ownerReferences: no look-up, allowed unchanged" {
  check_allowed_unchanged v1beta2 machineset_create_without_owner
  assert_no_warnings
}

@test "v1beta1: DELETE of a Machine: no look-up, allowed unchanged" {
  check_allowed_unchanged v1beta1 machine_delete
}

@test "v1beta2: DELETE of a Machine: no look-up, allowed unchanged" {
  check_allowed_unchanged v1beta2 machine_delete
}
