#!/usr/bin/env bats
#
# End-to-end smoke tests of the CAPI in-place fields (docs/capi.md, "In-place
# fields: timeouts, minReadySeconds, readiness gates, taints"): node drain /
# volume-detach / deletion timeouts, minReadySeconds, readinessGates, taints,
# the deletion order and the machine naming flow from parents to children
# besides labels and annotations. One case per flow family, v1beta2; every
# case, both API versions, CREATE and UPDATE, runs in capi.bats ("every ...
# case"):
#
#   bats e2e-tests/inplace.bats                   # project runner + annotated-policy.wasm
#   KWCTL=kwctl bats e2e-tests/inplace.bats       # a real kwctl on the PATH
#   POLICY=path/to/module.wasm bats e2e-tests/inplace.bats
#
# The cases are test_data/capi/<version>/cases/*fields*.yaml and
# *_in_place_off*.yaml; their requests and the parents they read are written
# by test_data/capi/gen_inplace.py, and test_data/capi/README.md ("In-place
# fields") lists the parents' values the expectations use.

RUNNER="${KWCTL:-target/host/policy-runner}"
POLICY="${POLICY:-annotated-policy.wasm}"
DATA=test_data/capi

load capi_helpers

@test "topology + ClusterClass -> KubeadmControlPlane: class drain timeout, topology deletion timeout, class gate, topology taints" {
  run_case "$DATA/v1beta2/cases/kubeadmcontrolplane_create_topology_fields.yaml"
}

@test "topology + ClusterClass -> MachineDeployment: drain timeout, gate, taint and deletion order; topology minReadySeconds wins" {
  run_case "$DATA/v1beta2/cases/machinedeployment_create_topology_fields.yaml"
}

@test "topology + ClusterClass -> MachinePool: minReadySeconds, drain timeout and taint" {
  run_case "$DATA/v1beta2/cases/machinepool_create_topology_fields.yaml"
}

@test "MachineDeployment -> MachineSet: every field; the volume-detach timeout the MD does not set is kept" {
  run_case "$DATA/v1beta2/cases/machineset_create_fields_from_md.yaml"
}

@test "MachineSet -> Machine UPDATE: drifted gate corrected, taint appended after the user's" {
  run_case "$DATA/v1beta2/cases/machine_update_fields_drifted_from_machineset.yaml"
}

@test "KubeadmControlPlane -> Machine: timeouts, gate appended after the mandatory gates, taint" {
  run_case "$DATA/v1beta2/cases/machine_create_fields_from_kcp.yaml"
}

@test "validate mode lists the MachineSet's field deviations, sorted by path" {
  run_case "$DATA/v1beta2/cases/machineset_update_fields_drifted_from_md.validate.yaml"
}

@test "capi.inPlaceFields false: the MachineSet gets its labels only" {
  run_case "$DATA/v1beta2/cases/machineset_create_fields_from_md_in_place_off.yaml"
}
