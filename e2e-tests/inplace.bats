#!/usr/bin/env bats
#
# End-to-end tests of the CAPI in-place fields (README, "In-place fields:
# timeouts, minReadySeconds, readiness gates, taints"): node drain /
# volume-detach / deletion timeouts, minReadySeconds, readinessGates, taints,
# the deletion order and the machine naming flow from parents to children
# besides labels and annotations, on every edge, for v1beta1 and v1beta2, on
# CREATE and UPDATE. Driven through a kwctl-compatible runner, the policy's
# look-ups answered from plain objects (see capi.bats):
#
#   bats e2e-tests/inplace.bats                   # project runner + annotated-policy.wasm
#   KWCTL=kwctl bats e2e-tests/inplace.bats       # a real kwctl on the PATH
#   POLICY=path/to/module.wasm bats e2e-tests/inplace.bats
#
# Fixtures: test_data/capi/<version>/<scenario>.json, written by
# test_data/capi/gen_inplace.py with the parents it adds to
# test_data/capi/<version>/parents/ (the quick-start parents plus the fields
# CAPI manifests set: *capi-quickstart-fields*, *quick-start-fields*,
# *capi-quickstart-md-2*); the look-ups each scenario must make are its row of
# test_data/capi/<version>/lookups.tsv, checked by evaluate
# (capi_helpers.bash). Every child already carries the labels and annotations
# the contract asks for, so a patch holds field edits only. Scenarios named
# *_in_place_off run with {"capi":{"inPlaceFields":false}}: their look-ups
# ask for metadata paths only, and the runner prunes the answers by the masks
# the policy sends.
#
# The parents' values (written out here, by hand, as the expectations use them):
#   Cluster capi-quickstart-fields, topology:
#     controlPlane: nodeDeletionTimeout "0s" | deletion.nodeDeletionTimeoutSeconds 0,
#       nodeVolumeDetachTimeout "5m0s" | 300, taints [TAINT_CP_TOPOLOGY]
#     md-0: minReadySeconds 5, nodeDeletionTimeout "30s" | 30, nodeVolumeDetachTimeout "5m0s" | 300
#     mp-0: the same
#   ClusterClass quick-start-fields:
#     controlPlane: nodeDrainTimeout "10m0s" | 600, nodeVolumeDetachTimeout "2m0s" | 120
#       (loses to the topology), readinessGates [GATE_CP], taints [TAINT_CP_CLASS] (loses, whole list)
#     default-worker MD class: minReadySeconds 15 (loses), nodeDrainTimeout "10m0s" | 600,
#       deletePolicy | deletion.order Oldest, readinessGates [GATE_MD], taints [TAINT_MD]
#     default-worker MP class: nodeDrainTimeout "10m0s" | 600, taints [TAINT_MP]
#   KubeadmControlPlane capi-quickstart-fields-n5x8q, machineTemplate: drain "10m0s" | 600,
#     volume-detach "5m0s" | 300, deletion "0s" | 0, readinessGates [GATE_CP], taints [TAINT_CP_TOPOLOGY]
#   MachineDeployment capi-quickstart-md-2 and its MachineSet capi-quickstart-md-2-k4v9c:
#     minReadySeconds 30, deletePolicy | deletion.order Oldest, naming NAMING, drain "10m0s" | 600,
#     deletion "30s" | 30, no volume-detach timeout, readinessGates [GATE_MD], taints [TAINT_MD]
#   MachineDeployment capi-quickstart-md-1 (the capi.bats one): none of the fields but
#     v1beta1 minReadySeconds 0, deletePolicy Random, nodeDeletionTimeout "10s"; v1beta2 deletion.order Random

RUNNER="${KWCTL:-target/host/policy-runner}"
POLICY="${POLICY:-annotated-policy.wasm}"
DATA=test_data/capi

IN_PLACE_OFF='{"capi":{"inPlaceFields":false}}'

GATE_CP='{"conditionType":"hardening.platform.example.com/CISBenchmarkPassed","polarity":"Positive"}'
GATE_CP_NEGATIVE='{"conditionType":"hardening.platform.example.com/CISBenchmarkPassed","polarity":"Negative"}'
GATE_MD='{"conditionType":"network.platform.example.com/CNIReady","polarity":"Positive"}'
GATE_MD_NEGATIVE='{"conditionType":"network.platform.example.com/CNIReady","polarity":"Negative"}'
GATE_USER='{"conditionType":"ops.example.com/ApprovedForProduction"}'
KCP_MANDATORY_GATES='{"conditionType":"APIServerPodHealthy"},{"conditionType":"ControllerManagerPodHealthy"},{"conditionType":"SchedulerPodHealthy"},{"conditionType":"EtcdPodHealthy"},{"conditionType":"EtcdMemberHealthy"}'
TAINT_CP_TOPOLOGY='{"effect":"PreferNoSchedule","key":"platform.example.com/maintenance-window","propagation":"Always","value":"sun-0200"}'
TAINT_CP_TOPOLOGY_NONE='{"effect":"PreferNoSchedule","key":"platform.example.com/maintenance-window","propagation":"Always","value":"none"}'
TAINT_MD='{"effect":"NoSchedule","key":"workload.example.com/dedicated","propagation":"Always","value":"payments"}'
TAINT_MD_BATCH='{"effect":"NoSchedule","key":"workload.example.com/dedicated","propagation":"Always","value":"batch"}'
TAINT_MP='{"effect":"NoExecute","key":"workload.example.com/spot","propagation":"Always","value":"true"}'
TAINT_USER='{"effect":"NoSchedule","key":"ops.example.com/quarantine","propagation":"Always"}'
NAMING='{"template":"{{ .machineSet.name }}-{{ .random }}"}'
OLD_NAMING='{"template":"{{ .machineSet.name }}-old-{{ .random }}"}'

load capi_helpers

# assert_only_changed 'del(PATHS)'  -- applying the patch changes nothing
# outside PATHS (a jq del(...) of the fields the test expects to change).
assert_only_changed() {
  local before after
  before=$(jq -S ".object | $1" "$REQUEST")
  after=$(patched_object | jq -S "$1") || { echo "cannot apply the patch"; return 1; }
  if [[ "$before" != "$after" ]]; then
    echo "the patch changes more than $1:"
    diff <(echo "$before") <(echo "$after") || true
    return 1
  fi
}

assert_no_warnings() {
  if ! jq -e '(.warnings // []) | length == 0' >/dev/null <<<"$response"; then
    echo "expected no warnings, got $(jq -c '.warnings' <<<"$response")"
    return 1
  fi
}

# assert_deviations LINE...  -- rejected (validate mode), no patch, and the
# message lists exactly these deviations, in this order ("; "-separated).
assert_deviations() {
  local message deviations expected
  assert_allowed false
  assert_no_patch
  message=$(jq -r '.status.message // ""' <<<"$response")
  [[ "$message" == "the object deviates from the metadata propagation contract (validate mode): "* ]] || {
    echo "not a validate-mode rejection: '$message'"
    return 1
  }
  deviations="${message#*(validate mode): }"
  expected=$(printf '%s; ' "$@")
  expected="${expected%; }"
  if [[ "$deviations" != "$expected" ]]; then
    echo "deviations differ"
    echo "expected:"
    printf '  %s\n' "$@"
    echo "actual:"
    awk 'BEGIN { RS = "; " } { print "  " $0 }' <<<"$deviations"
    return 1
  fi
}

# ---------------------------------------------------------------------------
# topology + ClusterClass -> KubeadmControlPlane
# ---------------------------------------------------------------------------

# CREATE from a stale cache: the template's drain timeout 1s (the class says
# 10m), no deletion timeout (the topology says 0), no gates (the class has
# one), no taints (topology and class both have a list: the topology's is
# taken whole). The volume-detach timeout is "5m" on the v1beta1 child and
# "5m0s" on the Cluster: equal by value, not rewritten.
check_kcp_create_topology_fields() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_create_topology_fields
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/machineTemplate/nodeDrainTimeout",
      "add /spec/machineTemplate/nodeDeletionTimeout",
      "add /spec/machineTemplate/readinessGates",
      "add /spec/machineTemplate/taints"
    ]'
    assert_patched '.spec.machineTemplate | del(.metadata, .infrastructureRef)' "{
      \"nodeDrainTimeout\": \"10m0s\",
      \"nodeVolumeDetachTimeout\": \"5m\",
      \"nodeDeletionTimeout\": \"0s\",
      \"readinessGates\": [$GATE_CP],
      \"taints\": [$TAINT_CP_TOPOLOGY]
    }"
    assert_only_changed 'del(.spec.machineTemplate.nodeDrainTimeout, .spec.machineTemplate.nodeDeletionTimeout, .spec.machineTemplate.readinessGates, .spec.machineTemplate.taints)'
  else
    assert_patch_ops '[
      "replace /spec/machineTemplate/spec/deletion/nodeDrainTimeoutSeconds",
      "add /spec/machineTemplate/spec/deletion/nodeDeletionTimeoutSeconds",
      "add /spec/machineTemplate/spec/readinessGates",
      "add /spec/machineTemplate/spec/taints"
    ]'
    assert_patched '.spec.machineTemplate.spec | del(.infrastructureRef)' "{
      \"deletion\": {\"nodeDrainTimeoutSeconds\": 600, \"nodeVolumeDetachTimeoutSeconds\": 300, \"nodeDeletionTimeoutSeconds\": 0},
      \"readinessGates\": [$GATE_CP],
      \"taints\": [$TAINT_CP_TOPOLOGY]
    }"
    assert_only_changed 'del(.spec.machineTemplate.spec.deletion, .spec.machineTemplate.spec.readinessGates, .spec.machineTemplate.spec.taints)'
  fi
}

# kubectl edit of the KCP: deletion timeout 1m (topology: 0), the class
# gate's polarity flipped, the topology taint's value changed. The user's gate
# and quarantine taint (entries the parents do not name) stay, in place.
check_kcp_update_topology_fields_drifted() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_update_topology_fields_drifted
  assert_allowed true
  assert_no_warnings
  local base=/spec/machineTemplate jq_base=.spec.machineTemplate
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/machineTemplate/nodeDeletionTimeout",
      "replace /spec/machineTemplate/readinessGates/1/polarity",
      "replace /spec/machineTemplate/taints/0/value"
    ]'
    assert_patched '.spec.machineTemplate | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout}' '{
      "nodeDrainTimeout": "10m0s", "nodeVolumeDetachTimeout": "5m0s", "nodeDeletionTimeout": "0s"
    }'
  else
    base=/spec/machineTemplate/spec
    jq_base=.spec.machineTemplate.spec
    assert_patch_ops '[
      "replace /spec/machineTemplate/spec/deletion/nodeDeletionTimeoutSeconds",
      "replace /spec/machineTemplate/spec/readinessGates/1/polarity",
      "replace /spec/machineTemplate/spec/taints/0/value"
    ]'
    assert_patched '.spec.machineTemplate.spec.deletion' '{
      "nodeDrainTimeoutSeconds": 600, "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 0
    }'
  fi
  assert_patched "$jq_base.readinessGates" "[$GATE_USER, $GATE_CP]"
  assert_patched "$jq_base.taints" "[$TAINT_CP_TOPOLOGY, $TAINT_USER]"
}

# The same deviations in validate mode: one line each, sorted by path, naming
# the value found, the value expected and where it comes from (the Cluster's
# topology or the ClusterClass).
check_kcp_update_topology_fields_validate() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_update_topology_fields_drifted --settings-json '{"mode":"validate"}'
  local cluster="Cluster default/capi-quickstart-fields (cluster.x-k8s.io/$version)"
  local class="ClusterClass default/quick-start-fields (cluster.x-k8s.io/$version)"
  if [[ "$version" == v1beta1 ]]; then
    assert_deviations \
      "spec.machineTemplate.nodeDeletionTimeout: is \"1m\" (expected \"0s\", from $cluster spec.topology.controlPlane.nodeDeletionTimeout)" \
      "spec.machineTemplate.readinessGates[conditionType=\"hardening.platform.example.com/CISBenchmarkPassed\"]: is $GATE_CP_NEGATIVE (expected $GATE_CP, from $class spec.controlPlane.readinessGates)" \
      "spec.machineTemplate.taints[key=\"platform.example.com/maintenance-window\",effect=\"PreferNoSchedule\"]: is $TAINT_CP_TOPOLOGY_NONE (expected $TAINT_CP_TOPOLOGY, from $cluster spec.topology.controlPlane.taints)"
  else
    assert_deviations \
      "spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds: is 60 (expected 0, from $cluster spec.topology.controlPlane.deletion.nodeDeletionTimeoutSeconds)" \
      "spec.machineTemplate.spec.readinessGates[conditionType=\"hardening.platform.example.com/CISBenchmarkPassed\"]: is $GATE_CP_NEGATIVE (expected $GATE_CP, from $class spec.controlPlane.readinessGates)" \
      "spec.machineTemplate.spec.taints[key=\"platform.example.com/maintenance-window\",effect=\"PreferNoSchedule\"]: is $TAINT_CP_TOPOLOGY_NONE (expected $TAINT_CP_TOPOLOGY, from $cluster spec.topology.controlPlane.taints)"
  fi
}

# capi.inPlaceFields: false on the stale KCP (one label missing as well): the
# label is added, no field is touched, and the look-ups ask for metadata only.
check_kcp_create_topology_in_place_off() {
  local version=$1
  evaluate "$version" kubeadmcontrolplane_create_topology_fields_in_place_off --settings-json "$IN_PLACE_OFF"
  assert_allowed true
  assert_patch_ops '["add /metadata/labels/ClusterClass.controlPlane.label"]'
  assert_only_changed 'del(.metadata.labels["ClusterClass.controlPlane.label"])'
  assert_patched '.metadata.labels["ClusterClass.controlPlane.label"]' '"ClusterClass.controlPlane.labelValue"'
}

# ---------------------------------------------------------------------------
# topology + ClusterClass -> MachineDeployment
# ---------------------------------------------------------------------------

# CREATE from a stale cache: minReadySeconds 5 (topology 5 beats class 15:
# equal, untouched), the topology's two timeouts already there (v1beta1
# volume-detach "5m" = "5m0s"); the class's drain timeout, gate, taint and
# deletion order are missing. The rollout strategy's other fields do not flow.
check_md_create_topology_fields() {
  local version=$1
  evaluate "$version" machinedeployment_create_topology_fields
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "add /spec/template/spec/nodeDrainTimeout",
      "add /spec/template/spec/readinessGates",
      "add /spec/template/spec/taints",
      "add /spec/strategy/rollingUpdate/deletePolicy"
    ]'
    assert_patched '.spec.template.spec | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout, readinessGates, taints}' "{
      \"nodeDrainTimeout\": \"10m0s\", \"nodeVolumeDetachTimeout\": \"5m\", \"nodeDeletionTimeout\": \"30s\",
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD]
    }"
    assert_patched '.spec.strategy' '{"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "20%", "maxUnavailable": 0, "deletePolicy": "Oldest"}}'
    assert_patched '.spec.minReadySeconds' '5'
    assert_only_changed 'del(.spec.template.spec.nodeDrainTimeout, .spec.template.spec.readinessGates, .spec.template.spec.taints, .spec.strategy.rollingUpdate.deletePolicy)'
  else
    assert_patch_ops '[
      "add /spec/template/spec/deletion/nodeDrainTimeoutSeconds",
      "add /spec/template/spec/readinessGates",
      "add /spec/template/spec/taints",
      "add /spec/deletion"
    ]'
    assert_patched '.spec.template.spec | {minReadySeconds, deletion, readinessGates, taints}' "{
      \"minReadySeconds\": 5,
      \"deletion\": {\"nodeDrainTimeoutSeconds\": 600, \"nodeDeletionTimeoutSeconds\": 30, \"nodeVolumeDetachTimeoutSeconds\": 300},
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD]
    }"
    assert_patched '.spec.deletion' '{"order": "Oldest"}'
    assert_only_changed 'del(.spec.template.spec.deletion.nodeDrainTimeoutSeconds, .spec.template.spec.readinessGates, .spec.template.spec.taints, .spec.deletion)'
  fi
}

# kubectl edit: minReadySeconds 0 (0 is a value on the child: replaced by 5),
# deletion order Newest, the class gate missing behind the user's gate
# (appended), the class taint's propagation changed; the drain timeout
# written "10m" (= 10m0s) stays as written.
check_md_update_topology_fields_drifted() {
  local version=$1
  evaluate "$version" machinedeployment_update_topology_fields_drifted
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/minReadySeconds",
      "replace /spec/strategy/rollingUpdate/deletePolicy",
      "add /spec/template/spec/readinessGates/1",
      "replace /spec/template/spec/taints/0/propagation"
    ]'
    assert_patched '.spec | {minReadySeconds, deletePolicy: .strategy.rollingUpdate.deletePolicy, nodeDrainTimeout: .template.spec.nodeDrainTimeout}' '{
      "minReadySeconds": 5, "deletePolicy": "Oldest", "nodeDrainTimeout": "10m"
    }'
  else
    assert_patch_ops '[
      "replace /spec/template/spec/minReadySeconds",
      "replace /spec/deletion/order",
      "add /spec/template/spec/readinessGates/1",
      "replace /spec/template/spec/taints/0/propagation"
    ]'
    assert_patched '.spec | {minReadySeconds: .template.spec.minReadySeconds, order: .deletion.order, deletion: .template.spec.deletion}' '{
      "minReadySeconds": 5, "order": "Oldest",
      "deletion": {"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 30, "nodeVolumeDetachTimeoutSeconds": 300}
    }'
  fi
  assert_patched '.spec.template.spec.readinessGates' "[$GATE_USER, $GATE_MD]"
  assert_patched '.spec.template.spec.taints' "[$TAINT_MD]"
}

# ---------------------------------------------------------------------------
# topology + ClusterClass -> MachinePool
# ---------------------------------------------------------------------------

# CREATE from a stale cache: no minReadySeconds (topology: 5), no drain
# timeout (class: 10m), no taints (class: TAINT_MP); v1beta2 carries the
# webhook's nodeDeletionTimeoutSeconds 10, which the topology's 30 replaces.
# Pools have no readiness gates and no deletion order.
check_mp_create_topology_fields() {
  local version=$1
  evaluate "$version" machinepool_create_topology_fields
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "add /spec/minReadySeconds",
      "add /spec/template/spec/nodeDrainTimeout",
      "add /spec/template/spec/taints"
    ]'
    assert_patched '.spec.minReadySeconds' '5'
    assert_patched '.spec.template.spec | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout, taints}' "{
      \"nodeDrainTimeout\": \"10m0s\", \"nodeVolumeDetachTimeout\": \"5m0s\", \"nodeDeletionTimeout\": \"30s\",
      \"taints\": [$TAINT_MP]
    }"
    assert_only_changed 'del(.spec.minReadySeconds, .spec.template.spec.nodeDrainTimeout, .spec.template.spec.taints)'
  else
    assert_patch_ops '[
      "add /spec/template/spec/minReadySeconds",
      "add /spec/template/spec/deletion/nodeDrainTimeoutSeconds",
      "replace /spec/template/spec/deletion/nodeDeletionTimeoutSeconds",
      "add /spec/template/spec/taints"
    ]'
    assert_patched '.spec.template.spec | {minReadySeconds, deletion, taints}' "{
      \"minReadySeconds\": 5,
      \"deletion\": {\"nodeDrainTimeoutSeconds\": 600, \"nodeDeletionTimeoutSeconds\": 30, \"nodeVolumeDetachTimeoutSeconds\": 300},
      \"taints\": [$TAINT_MP]
    }"
    assert_only_changed 'del(.spec.template.spec.minReadySeconds, .spec.template.spec.deletion, .spec.template.spec.taints)'
  fi
}

# minReadySeconds 0 and drain timeout 5m on the pool; the user's quarantine
# taint stays first, the class taint is appended.
check_mp_update_topology_fields_drifted() {
  local version=$1
  evaluate "$version" machinepool_update_topology_fields_drifted
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/minReadySeconds",
      "replace /spec/template/spec/nodeDrainTimeout",
      "add /spec/template/spec/taints/1"
    ]'
    assert_patched '[.spec.minReadySeconds, .spec.template.spec.nodeDrainTimeout]' '[5, "10m0s"]'
  else
    assert_patch_ops '[
      "replace /spec/template/spec/minReadySeconds",
      "replace /spec/template/spec/deletion/nodeDrainTimeoutSeconds",
      "add /spec/template/spec/taints/1"
    ]'
    assert_patched '[.spec.template.spec.minReadySeconds, .spec.template.spec.deletion.nodeDrainTimeoutSeconds]' '[5, 600]'
  fi
  assert_patched '.spec.template.spec.taints' "[$TAINT_USER, $TAINT_MP]"
}

# ---------------------------------------------------------------------------
# MachineDeployment -> MachineSet
# ---------------------------------------------------------------------------

# The MachineSet the MD controller created from a stale MD: every MD field
# is asserted; the webhook's 10s deletion timeout gives way to the MD's 30s;
# the volume-detach timeout the MD does not set (2m / 120) is kept.
check_ms_create_fields_from_md() {
  local version=$1
  evaluate "$version" machineset_create_fields_from_md
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/minReadySeconds",
      "replace /spec/deletePolicy",
      "add /spec/machineNamingStrategy",
      "add /spec/template/spec/nodeDrainTimeout",
      "replace /spec/template/spec/nodeDeletionTimeout",
      "add /spec/template/spec/readinessGates",
      "add /spec/template/spec/taints"
    ]'
    assert_patched '.spec | {minReadySeconds, deletePolicy, machineNamingStrategy}' "{
      \"minReadySeconds\": 30, \"deletePolicy\": \"Oldest\", \"machineNamingStrategy\": $NAMING
    }"
    assert_patched '.spec.template.spec | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout, readinessGates, taints}' "{
      \"nodeDrainTimeout\": \"10m0s\", \"nodeVolumeDetachTimeout\": \"2m\", \"nodeDeletionTimeout\": \"30s\",
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD]
    }"
    assert_only_changed 'del(.spec.minReadySeconds, .spec.deletePolicy, .spec.machineNamingStrategy, .spec.template.spec.nodeDrainTimeout, .spec.template.spec.nodeDeletionTimeout, .spec.template.spec.readinessGates, .spec.template.spec.taints)'
  else
    assert_patch_ops '[
      "add /spec/template/spec/minReadySeconds",
      "replace /spec/deletion/order",
      "add /spec/machineNaming",
      "add /spec/template/spec/deletion/nodeDrainTimeoutSeconds",
      "add /spec/template/spec/deletion/nodeDeletionTimeoutSeconds",
      "add /spec/template/spec/readinessGates",
      "add /spec/template/spec/taints"
    ]'
    assert_patched '.spec | {order: .deletion.order, machineNaming}' "{\"order\": \"Oldest\", \"machineNaming\": $NAMING}"
    assert_patched '.spec.template.spec | {minReadySeconds, deletion, readinessGates, taints}' "{
      \"minReadySeconds\": 30,
      \"deletion\": {\"nodeDrainTimeoutSeconds\": 600, \"nodeDeletionTimeoutSeconds\": 30, \"nodeVolumeDetachTimeoutSeconds\": 120},
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD]
    }"
    assert_only_changed 'del(.spec.deletion.order, .spec.machineNaming, .spec.template.spec.minReadySeconds, .spec.template.spec.deletion, .spec.template.spec.readinessGates, .spec.template.spec.taints)'
  fi
}

# capi.inPlaceFields: false on the same stale MachineSet (nodepool label
# missing too): only the label is added.
check_ms_create_fields_in_place_off() {
  local version=$1
  evaluate "$version" machineset_create_fields_from_md_in_place_off --settings-json "$IN_PLACE_OFF"
  assert_allowed true
  assert_no_warnings
  assert_patch_ops '["add /metadata/labels/nodepool"]'
  assert_patched '.metadata.labels.nodepool' '"pool2"'
  assert_only_changed 'del(.metadata.labels.nodepool)'
}

# An older MachineSet of the MD (CAPI v1.14 updates every MachineSet of an
# MD): minReadySeconds 10, an older naming template, the MD taint's value
# changed; the drain timeout written "600s" (= 10m0s) is not rewritten.
check_ms_update_fields_drifted_from_md() {
  local version=$1
  evaluate "$version" machineset_update_fields_drifted_from_md
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/minReadySeconds",
      "replace /spec/machineNamingStrategy/template",
      "replace /spec/template/spec/taints/0/value"
    ]'
    assert_patched '.spec | {minReadySeconds, machineNamingStrategy, deletePolicy, nodeDrainTimeout: .template.spec.nodeDrainTimeout}' "{
      \"minReadySeconds\": 30, \"machineNamingStrategy\": $NAMING, \"deletePolicy\": \"Oldest\", \"nodeDrainTimeout\": \"600s\"
    }"
  else
    assert_patch_ops '[
      "replace /spec/template/spec/minReadySeconds",
      "replace /spec/machineNaming/template",
      "replace /spec/template/spec/taints/0/value"
    ]'
    assert_patched '.spec | {minReadySeconds: .template.spec.minReadySeconds, machineNaming, order: .deletion.order}' "{
      \"minReadySeconds\": 30, \"machineNaming\": $NAMING, \"order\": \"Oldest\"
    }"
  fi
  assert_patched '.spec.template.spec.taints' "[$TAINT_MD]"
  assert_patched '.spec.template.spec.readinessGates' "[$GATE_MD]"
}

check_ms_update_fields_validate() {
  local version=$1
  evaluate "$version" machineset_update_fields_drifted_from_md --settings-json '{"mode":"validate"}'
  local md="MachineDeployment default/capi-quickstart-md-2 (cluster.x-k8s.io/$version)"
  if [[ "$version" == v1beta1 ]]; then
    assert_deviations \
      "spec.machineNamingStrategy: is $OLD_NAMING (expected $NAMING, from $md spec.machineNamingStrategy)" \
      "spec.minReadySeconds: is 10 (expected 30, from $md spec.minReadySeconds)" \
      "spec.template.spec.taints[key=\"workload.example.com/dedicated\",effect=\"NoSchedule\"]: is $TAINT_MD_BATCH (expected $TAINT_MD, from $md spec.template.spec.taints)"
  else
    assert_deviations \
      "spec.machineNaming: is $OLD_NAMING (expected $NAMING, from $md spec.machineNaming)" \
      "spec.template.spec.minReadySeconds: is 10 (expected 30, from $md spec.template.spec.minReadySeconds)" \
      "spec.template.spec.taints[key=\"workload.example.com/dedicated\",effect=\"NoSchedule\"]: is $TAINT_MD_BATCH (expected $TAINT_MD, from $md spec.template.spec.taints)"
  fi
}

# ---------------------------------------------------------------------------
# MachineSet -> Machine
# ---------------------------------------------------------------------------

# A Machine created from a stale MachineSet: drain timeout, gate and taint
# added, the webhook's 10s deletion timeout replaced by the MS's 30s; the
# volume-detach timeout the MS does not set stays. v1beta2: minReadySeconds
# reaches the Machine (v1beta1 Machines have no such field).
check_machine_create_fields_from_machineset() {
  local version=$1
  evaluate "$version" machine_create_fields_from_machineset
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "add /spec/nodeDrainTimeout",
      "replace /spec/nodeDeletionTimeout",
      "add /spec/readinessGates",
      "add /spec/taints"
    ]'
    assert_patched '.spec | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout, readinessGates, taints, minReadySeconds}' "{
      \"nodeDrainTimeout\": \"10m0s\", \"nodeVolumeDetachTimeout\": \"2m\", \"nodeDeletionTimeout\": \"30s\",
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD], \"minReadySeconds\": null
    }"
    assert_only_changed 'del(.spec.nodeDrainTimeout, .spec.nodeDeletionTimeout, .spec.readinessGates, .spec.taints)'
  else
    assert_patch_ops '[
      "add /spec/minReadySeconds",
      "add /spec/deletion/nodeDrainTimeoutSeconds",
      "replace /spec/deletion/nodeDeletionTimeoutSeconds",
      "add /spec/readinessGates",
      "add /spec/taints"
    ]'
    assert_patched '.spec | {minReadySeconds, deletion, readinessGates, taints}' "{
      \"minReadySeconds\": 30,
      \"deletion\": {\"nodeDrainTimeoutSeconds\": 600, \"nodeDeletionTimeoutSeconds\": 30, \"nodeVolumeDetachTimeoutSeconds\": 120},
      \"readinessGates\": [$GATE_MD], \"taints\": [$TAINT_MD]
    }"
    assert_only_changed 'del(.spec.minReadySeconds, .spec.deletion, .spec.readinessGates, .spec.taints)'
  fi
}

# A running Machine: the MS gate's polarity flipped, the MS taint missing
# behind the user's quarantine taint (appended); drain timeout "10m" (=
# 10m0s) left as written; v1beta2 minReadySeconds 0 replaced (0 is a value).
check_machine_update_fields_drifted_from_machineset() {
  local version=$1
  evaluate "$version" machine_update_fields_drifted_from_machineset
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/readinessGates/0/polarity",
      "add /spec/taints/1"
    ]'
    assert_patched '.spec.nodeDrainTimeout' '"10m"'
  else
    assert_patch_ops '[
      "replace /spec/minReadySeconds",
      "replace /spec/readinessGates/0/polarity",
      "add /spec/taints/1"
    ]'
    assert_patched '.spec.minReadySeconds' '30'
  fi
  assert_patched '.spec.readinessGates' "[$GATE_MD]"
  assert_patched '.spec.taints' "[$TAINT_USER, $TAINT_MD]"
}

# ---------------------------------------------------------------------------
# KubeadmControlPlane -> Machine
# ---------------------------------------------------------------------------

# A control-plane Machine created from a stale KCP: drain 1s -> 10m, the
# webhook's 10s deletion timeout -> the KCP's 0 (0 is a value), volume-detach
# "5m" = "5m0s" untouched; the KCP's gate appended after KCP's five mandatory
# gates, which stay; the taint added; never minReadySeconds.
check_machine_create_fields_from_kcp() {
  local version=$1
  evaluate "$version" machine_create_fields_from_kcp
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/nodeDrainTimeout",
      "replace /spec/nodeDeletionTimeout",
      "add /spec/readinessGates/5",
      "add /spec/taints"
    ]'
    assert_patched '.spec | {nodeDrainTimeout, nodeVolumeDetachTimeout, nodeDeletionTimeout}' '{
      "nodeDrainTimeout": "10m0s", "nodeVolumeDetachTimeout": "5m", "nodeDeletionTimeout": "0s"
    }'
    assert_only_changed 'del(.spec.nodeDrainTimeout, .spec.nodeDeletionTimeout, .spec.readinessGates, .spec.taints)'
  else
    assert_patch_ops '[
      "replace /spec/deletion/nodeDrainTimeoutSeconds",
      "replace /spec/deletion/nodeDeletionTimeoutSeconds",
      "add /spec/readinessGates/5",
      "add /spec/taints"
    ]'
    assert_patched '.spec.deletion' '{
      "nodeDrainTimeoutSeconds": 600, "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 0
    }'
    assert_only_changed 'del(.spec.deletion, .spec.readinessGates, .spec.taints)'
  fi
  assert_patched '.spec.readinessGates' "[$KCP_MANDATORY_GATES, $GATE_CP]"
  assert_patched '.spec.taints' "[$TAINT_CP_TOPOLOGY]"
  assert_patched '.spec.minReadySeconds' 'null'
}

# Missing and differing entries in validate mode.
check_machine_create_fields_from_kcp_validate() {
  local version=$1
  evaluate "$version" machine_create_fields_from_kcp --settings-json '{"mode":"validate"}'
  local kcp="KubeadmControlPlane default/capi-quickstart-fields-n5x8q (controlplane.cluster.x-k8s.io/$version)"
  if [[ "$version" == v1beta1 ]]; then
    assert_deviations \
      "spec.nodeDeletionTimeout: is \"10s\" (expected \"0s\", from $kcp spec.machineTemplate.nodeDeletionTimeout)" \
      "spec.nodeDrainTimeout: is \"1s\" (expected \"10m0s\", from $kcp spec.machineTemplate.nodeDrainTimeout)" \
      "spec.readinessGates[conditionType=\"hardening.platform.example.com/CISBenchmarkPassed\"]: missing (expected $GATE_CP, from $kcp spec.machineTemplate.readinessGates)" \
      "spec.taints[key=\"platform.example.com/maintenance-window\",effect=\"PreferNoSchedule\"]: missing (expected $TAINT_CP_TOPOLOGY, from $kcp spec.machineTemplate.taints)"
  else
    assert_deviations \
      "spec.deletion.nodeDeletionTimeoutSeconds: is 10 (expected 0, from $kcp spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds)" \
      "spec.deletion.nodeDrainTimeoutSeconds: is 1 (expected 600, from $kcp spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds)" \
      "spec.readinessGates[conditionType=\"hardening.platform.example.com/CISBenchmarkPassed\"]: missing (expected $GATE_CP, from $kcp spec.machineTemplate.spec.readinessGates)" \
      "spec.taints[key=\"platform.example.com/maintenance-window\",effect=\"PreferNoSchedule\"]: missing (expected $TAINT_CP_TOPOLOGY, from $kcp spec.machineTemplate.spec.taints)"
  fi
}

# UPDATE of a control-plane Machine: drain 5m -> 10m, the KCP gate's
# polarity and the taint's value put back; the mandatory gates stay.
check_machine_update_fields_drifted_from_kcp() {
  local version=$1
  evaluate "$version" machine_update_fields_drifted_from_kcp
  assert_allowed true
  assert_no_warnings
  if [[ "$version" == v1beta1 ]]; then
    assert_patch_ops '[
      "replace /spec/nodeDrainTimeout",
      "replace /spec/readinessGates/5/polarity",
      "replace /spec/taints/0/value"
    ]'
    assert_patched '.spec.nodeDrainTimeout' '"10m0s"'
  else
    assert_patch_ops '[
      "replace /spec/deletion/nodeDrainTimeoutSeconds",
      "replace /spec/readinessGates/5/polarity",
      "replace /spec/taints/0/value"
    ]'
    assert_patched '.spec.deletion.nodeDrainTimeoutSeconds' '600'
  fi
  assert_patched '.spec.readinessGates' "[$KCP_MANDATORY_GATES, $GATE_CP]"
  assert_patched '.spec.taints' "[$TAINT_CP_TOPOLOGY]"
}

# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@test "v1beta1: topology KubeadmControlPlane CREATE gets class drain timeout, topology deletion timeout 0s, class gate, topology taints; 5m = 5m0s kept" {
  check_kcp_create_topology_fields v1beta1
}

@test "v1beta2: topology KubeadmControlPlane CREATE gets class drain timeout, topology deletion timeout 0, class gate, topology taints" {
  check_kcp_create_topology_fields v1beta2
}

@test "v1beta1: drifted topology KubeadmControlPlane UPDATE is corrected entry by entry; the user's gate and taint stay" {
  check_kcp_update_topology_fields_drifted v1beta1
}

@test "v1beta2: drifted topology KubeadmControlPlane UPDATE is corrected entry by entry; the user's gate and taint stay" {
  check_kcp_update_topology_fields_drifted v1beta2
}

@test "v1beta1: validate mode lists the topology KubeadmControlPlane's field deviations with their Cluster / ClusterClass source" {
  check_kcp_update_topology_fields_validate v1beta1
}

@test "v1beta2: validate mode lists the topology KubeadmControlPlane's field deviations with their Cluster / ClusterClass source" {
  check_kcp_update_topology_fields_validate v1beta2
}

@test "v1beta1: capi.inPlaceFields false: topology KubeadmControlPlane gets its metadata only" {
  check_kcp_create_topology_in_place_off v1beta1
}

@test "v1beta2: capi.inPlaceFields false: topology KubeadmControlPlane gets its metadata only" {
  check_kcp_create_topology_in_place_off v1beta2
}

@test "v1beta2: capi.inPlaceFields false in validate mode reports the metadata deviation only" {
  evaluate v1beta2 kubeadmcontrolplane_create_topology_fields_in_place_off \
    --settings-json '{"mode":"validate","capi":{"inPlaceFields":false}}'
  assert_deviations 'metadata.labels: missing "ClusterClass.controlPlane.label" (expected "ClusterClass.controlPlane.labelValue")'
}

@test "v1beta1: topology MachineDeployment CREATE gets the class drain timeout, gate, taint and deletePolicy; topology minReadySeconds wins" {
  check_md_create_topology_fields v1beta1
}

@test "v1beta2: topology MachineDeployment CREATE gets the class drain timeout, gate, taint and deletion order; topology minReadySeconds wins" {
  check_md_create_topology_fields v1beta2
}

@test "v1beta1: drifted topology MachineDeployment UPDATE: minReadySeconds, deletePolicy, a missing gate appended, a taint corrected; 10m kept" {
  check_md_update_topology_fields_drifted v1beta1
}

@test "v1beta2: drifted topology MachineDeployment UPDATE: minReadySeconds, deletion order, a missing gate appended, a taint corrected" {
  check_md_update_topology_fields_drifted v1beta2
}

@test "v1beta1: topology MachinePool CREATE gets minReadySeconds, the class drain timeout and taint" {
  check_mp_create_topology_fields v1beta1
}

@test "v1beta2: topology MachinePool CREATE gets minReadySeconds, the class drain timeout and taint; topology's 30 replaces the webhook's 10" {
  check_mp_create_topology_fields v1beta2
}

@test "v1beta1: drifted topology MachinePool UPDATE: minReadySeconds and drain timeout corrected, class taint appended after the user's" {
  check_mp_update_topology_fields_drifted v1beta1
}

@test "v1beta2: drifted topology MachinePool UPDATE: minReadySeconds and drain timeout corrected, class taint appended after the user's" {
  check_mp_update_topology_fields_drifted v1beta2
}

@test "v1beta1: MachineSet CREATE gets every MachineDeployment field; the volume-detach timeout the MD does not set is kept" {
  check_ms_create_fields_from_md v1beta1
}

@test "v1beta2: MachineSet CREATE gets every MachineDeployment field; the volume-detach timeout the MD does not set is kept" {
  check_ms_create_fields_from_md v1beta2
}

@test "v1beta1: capi.inPlaceFields false: MachineSet gets its labels only" {
  check_ms_create_fields_in_place_off v1beta1
}

@test "v1beta2: capi.inPlaceFields false: MachineSet gets its labels only" {
  check_ms_create_fields_in_place_off v1beta2
}

@test "v1beta1: drifted older MachineSet UPDATE: minReadySeconds, naming and taint corrected; 600s = 10m0s kept" {
  check_ms_update_fields_drifted_from_md v1beta1
}

@test "v1beta2: drifted older MachineSet UPDATE: minReadySeconds, naming and taint corrected" {
  check_ms_update_fields_drifted_from_md v1beta2
}

@test "v1beta1: validate mode lists the MachineSet's field deviations, sorted by path" {
  check_ms_update_fields_validate v1beta1
}

@test "v1beta2: validate mode lists the MachineSet's field deviations, sorted by path" {
  check_ms_update_fields_validate v1beta2
}

@test "v1beta1: MachineDeployment that sets none of the fields: the MachineSet's own values stay, 0 never written" {
  evaluate v1beta1 machineset_update_fields_parent_unset
  assert_allowed true
  assert_no_patch
}

@test "v1beta2: MachineDeployment that sets none of the fields: the MachineSet's own values stay" {
  evaluate v1beta2 machineset_update_fields_parent_unset
  assert_allowed true
  assert_no_patch
}

@test "v1beta2: validate mode accepts a MachineSet whose parent sets none of its fields" {
  evaluate v1beta2 machineset_update_fields_parent_unset --settings-json '{"mode":"validate"}'
  assert_allowed true
  assert_no_patch
}

@test "v1beta1: Machine CREATE gets the MachineSet's timeouts, gate and taint; no minReadySeconds on a v1beta1 Machine" {
  check_machine_create_fields_from_machineset v1beta1
}

@test "v1beta2: Machine CREATE gets the MachineSet's minReadySeconds, timeouts, gate and taint" {
  check_machine_create_fields_from_machineset v1beta2
}

@test "v1beta1: drifted Machine UPDATE: gate corrected, taint appended after the user's; 10m kept" {
  check_machine_update_fields_drifted_from_machineset v1beta1
}

@test "v1beta2: drifted Machine UPDATE: minReadySeconds 0 replaced, gate corrected, taint appended after the user's" {
  check_machine_update_fields_drifted_from_machineset v1beta2
}

@test "v1beta1: DockerMachine of the MachineSet: no field flows, nothing to change" {
  evaluate v1beta1 dockermachine_create_fields_from_machineset
  assert_allowed true
  assert_no_patch
}

@test "v1beta2: DockerMachine of the MachineSet: no field flows, nothing to change" {
  evaluate v1beta2 dockermachine_create_fields_from_machineset
  assert_allowed true
  assert_no_patch
}

@test "v1beta1: control-plane Machine CREATE: KCP timeouts (deletion 0s), gate appended after the mandatory gates, taint" {
  check_machine_create_fields_from_kcp v1beta1
}

@test "v1beta2: control-plane Machine CREATE: KCP timeouts (deletion 0), gate appended after the mandatory gates, taint; no minReadySeconds" {
  check_machine_create_fields_from_kcp v1beta2
}

@test "v1beta1: validate mode reports the control-plane Machine's differing and missing fields" {
  check_machine_create_fields_from_kcp_validate v1beta1
}

@test "v1beta2: validate mode reports the control-plane Machine's differing and missing fields" {
  check_machine_create_fields_from_kcp_validate v1beta2
}

@test "v1beta1: drifted control-plane Machine UPDATE: drain timeout, gate and taint corrected; mandatory gates stay" {
  check_machine_update_fields_drifted_from_kcp v1beta1
}

@test "v1beta2: drifted control-plane Machine UPDATE: drain timeout, gate and taint corrected; mandatory gates stay" {
  check_machine_update_fields_drifted_from_kcp v1beta2
}
