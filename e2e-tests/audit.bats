#!/usr/bin/env bats
# `policy-runner audit`: a whole management cluster from one
# `kubectl get … -A -o yaml` dump (test_data/dumps, written by
# test_data/dumps/gen.py), evaluated by the policy's own core in validate
# mode, with look-ups answered from the dump. Not a kwctl command, so it
# always uses the runner. The agreement test also needs the compiled module
# (POLICY, as the Makefile passes it).

RUNNER=${RUNNER:-target/host/policy-runner}
DUMPS=test_data/dumps
XR_SETTINGS=test_data/xr/settings_propagating.json
INFRA_SETTINGS=$DUMPS/capi_infra.settings.json

setup() {
  [ -x "$RUNNER" ] || { echo "cannot run: no runner at $RUNNER (make target/host/policy-runner)" >&2; false; }
  TMP=$(mktemp -d)
}

teardown() {
  rm -rf "$TMP"
}

# A one-object dump file holding $1 (YAML), written to $TMP/$2.
object_file() {
  printf '%s\n' "$1" > "$TMP/$2"
}

@test "v1beta2 quick-start, planted drift: the tree marks the five deviating objects, exit 1" {
  run "$RUNNER" audit --full -f "$DUMPS/quickstart_v1beta2_drift.yaml"
  echo "$output"
  [ "$status" -eq 1 ]
  diff <(printf '%s\n' "$output" | sed -n '1,29p') - <<'TREE'
ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2): not evaluated
└── Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2): not evaluated
    ├── KubeadmControlPlane default/capi-quickstart-wqx5r (controlplane.cluster.x-k8s.io/v1beta2): ✓ compliant
    │   ├── Machine default/capi-quickstart-wqx5r-4mnnp (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: Cluster.topology.controlPlane.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io
    │   │   ├── DockerMachine default/capi-quickstart-wqx5r-4mnnp (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │   │   └── KubeadmConfig default/capi-quickstart-wqx5r-4mnnp (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    │   ├── Machine default/capi-quickstart-wqx5r-hb7xq (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: Cluster.topology.controlPlane.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io
    │   │   ├── DockerMachine default/capi-quickstart-wqx5r-hb7xq (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │   │   └── KubeadmConfig default/capi-quickstart-wqx5r-hb7xq (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    │   └── Machine default/capi-quickstart-wqx5r-zq2cd (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: Cluster.topology.controlPlane.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io
    │       ├── DockerMachine default/capi-quickstart-wqx5r-zq2cd (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │       └── KubeadmConfig default/capi-quickstart-wqx5r-zq2cd (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    ├── MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
    │   └── MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
    │       ├── Machine default/capi-quickstart-md-0-p6hg9-v7bqn-8wq2x (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.md.annotation.node.cluster.x-k8s.io
    │       │   ├── DockerMachine default/capi-quickstart-md-0-p6hg9-v7bqn-8wq2x (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │       │   └── KubeadmConfig default/capi-quickstart-md-0-p6hg9-v7bqn-8wq2x (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    │       └── Machine default/capi-quickstart-md-0-p6hg9-v7bqn-tt4kd (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: Cluster.topology.machineDeployment.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.md.annotation.node.cluster.x-k8s.io
    │           ├── DockerMachine default/capi-quickstart-md-0-p6hg9-v7bqn-tt4kd (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │           └── KubeadmConfig default/capi-quickstart-md-0-p6hg9-v7bqn-tt4kd (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    ├── MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2): ✓ compliant
    │   └── MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
    │       ├── Machine default/capi-quickstart-md-1-x7k2p-6nbqt (cluster.x-k8s.io/v1beta2): ✗ DEVIATES; Node labels: node-role.kubernetes.io/worker; Node annotations: none
    │       │   ├── DockerMachine default/capi-quickstart-md-1-x7k2p-6nbqt (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │       │   └── KubeadmConfig default/capi-quickstart-md-1-x7k2p-6nbqt (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    │       └── Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta2): ✗ DEVIATES; Node labels: node-role.kubernetes.io/worker; Node annotations: none
    │           ├── DockerMachine default/capi-quickstart-md-1-x7k2p-9ttvz (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
    │           └── KubeadmConfig default/capi-quickstart-md-1-x7k2p-9ttvz (bootstrap.cluster.x-k8s.io/v1beta2): ✓ compliant
    └── MachinePool default/capi-quickstart-mp-0-x7b2k (cluster.x-k8s.io/v1beta2): ✓ compliant
TREE
  [ "$(printf '%s\n' "$output" | grep -c '✗ DEVIATES')" -eq 10 ]  # a tree line and a details header each
  [[ "$output" == *'
MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/quickstart_v1beta2_drift.yaml document 1 item 6
  deviation: metadata.labels: missing "nodepool" (expected "pool1")
  look-up: MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2): found
  rule: MachineSet from MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2)'* ]]
  [[ "$output" == *'    "nodepool" = "pool1": flows from MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2) spec.template.metadata.labels (added)'* ]]
  [[ "$output" == *'  patch (what mutate mode would apply):
    {"op":"add","path":"/metadata/labels/nodepool","value":"pool1"}'* ]]
  [[ "$output" == *'  deviation: metadata.labels: "nodepool" is "pool0" (expected "pool1")'* ]]
  [[ "$output" == *'    {"op":"replace","path":"/metadata/labels/nodepool","value":"pool1"}'* ]]
  [[ "$output" == *'  deviation: spec.template.metadata.annotations: missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue")'* ]]
  [[ "$output" == *'  look-up: ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2): found'* ]]
  # in-place fields: a MachineDeployment's minReadySeconds against the topology (beside its metadata drift)
  [[ "$output" == *'
MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/quickstart_v1beta2_drift.yaml document 1 item 3
  deviation: spec.template.metadata.annotations: missing "ClusterClass.machineDeployment.annotation" (expected "ClusterClass.machineDeployment.annotationValue")
  deviation: spec.template.spec.minReadySeconds: is 30 (expected 5, from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds)
  look-up: Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2): found
  look-up: ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2): found'* ]]
  [[ "$output" == *'    spec.template.spec.minReadySeconds = 5: flows from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name="md-0"].minReadySeconds (corrected; child had 30)'* ]]
  # its merged metadata: each key from the object and field that sets it
  [[ "$output" == *'    "ClusterClass.machineDeployment.annotation" = "ClusterClass.machineDeployment.annotationValue": flows from ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2) spec.workers.machineDeployments[class="default-worker"].metadata.annotations (added)'* ]]
  [[ "$output" == *'    "Cluster.topology.machineDeployment.label" = "Cluster.topology.machineDeployment.labelValue": flows from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name="md-0"].metadata.labels (unchanged)'* ]]
  [[ "$output" == *'    spec.template.spec.deletion.nodeDrainTimeoutSeconds = 600: flows from ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2) spec.workers.machineDeployments[class="default-worker"].deletion.nodeDrainTimeoutSeconds (unchanged; child had 600)'* ]]
  [[ "$output" == *'  patch (what mutate mode would apply):
    {"op":"add","path":"/spec/template/metadata/annotations/ClusterClass.machineDeployment.annotation","value":"ClusterClass.machineDeployment.annotationValue"}
    {"op":"replace","path":"/spec/template/spec/minReadySeconds","value":5}'* ]]
  # a MachineSet's nodeDrainTimeoutSeconds against its MachineDeployment's
  [[ "$output" == *'
MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/quickstart_v1beta2_drift.yaml document 1 item 5
  deviation: spec.template.spec.deletion.nodeDrainTimeoutSeconds: is 300 (expected 600, from MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2) spec.template.spec.deletion.nodeDrainTimeoutSeconds)
  look-up: MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2): found'* ]]
  [[ "$output" == *'    spec.template.spec.deletion.nodeDrainTimeoutSeconds = 600: flows from MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta2) spec.template.spec.deletion.nodeDrainTimeoutSeconds (corrected; child had 300)'* ]]
  [[ "$output" == *'  patch (what mutate mode would apply):
    {"op":"replace","path":"/spec/template/spec/deletion/nodeDrainTimeoutSeconds","value":600}'* ]]
  # a Machine lacking a readiness gate its MachineSet sets (the Machine webhook's nodeDeletionTimeoutSeconds 10, set by no parent, is no deviation)
  [[ "$output" == *'
Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/quickstart_v1beta2_drift.yaml document 1 item 13
  deviation: spec.readinessGates[conditionType="ops.example.com/ApprovedForProduction"]: missing (expected {"conditionType":"ops.example.com/ApprovedForProduction"}, from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2) spec.template.spec.readinessGates)
  look-up: MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2): found'* ]]
  [[ "$output" == *'    spec.readinessGates[conditionType="ops.example.com/ApprovedForProduction"] = {"conditionType":"ops.example.com/ApprovedForProduction"}: flows from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2) spec.template.spec.readinessGates (added; child had absent)'* ]]
  [[ "$output" == *'  patch (what mutate mode would apply):
    {"op":"add","path":"/spec/readinessGates","value":[{"conditionType":"ops.example.com/ApprovedForProduction"}]}'* ]]
  [ "${lines[-1]}" = "27 objects audited, 5 deviate (2 more not evaluated: the policy does not act on their kind)" ]
}

@test "v1beta2 and v1beta1 quick-start, clean: every object complies, exit 0" {
  for version in v1beta1 v1beta2; do
    run "$RUNNER" audit --full -f "$DUMPS/quickstart_${version}_clean.yaml"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "ClusterClass default/quick-start (cluster.x-k8s.io/$version): not evaluated" ]
    [ "${lines[1]}" = "└── Cluster default/capi-quickstart (cluster.x-k8s.io/$version): not evaluated" ]
    [[ "$output" != *"✗"* ]]
    [ "$(printf '%s\n' "$output" | grep -c '^[│ ├└─]*Machine default/.*: ✓ compliant; Node labels: ')" -eq 7 ]
    [[ "$output" == *"── Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/$version): ✓ compliant; Node labels: node-role.kubernetes.io/worker; Node annotations: none"* ]]
    [[ "$output" == *"── Machine default/capi-quickstart-wqx5r-hb7xq (cluster.x-k8s.io/$version): ✓ compliant; Node labels: Cluster.topology.controlPlane.label.node.cluster.x-k8s.io; Node annotations: Cluster.topology.controlPlane.annotation.node.cluster.x-k8s.io"* ]]
    [ "${lines[-1]}" = "27 objects audited, 0 deviate (2 more not evaluated: the policy does not act on their kind)" ]
  done
}

@test "the default report is compact: the objects that fail in their tree, the others counted; --full lists each" {
  run "$RUNNER" audit -f "$DUMPS/quickstart_v1beta2_drift.yaml"
  echo "$output"
  [ "$status" -eq 1 ]
  compact=$output
  full=$("$RUNNER" audit --full -f "$DUMPS/quickstart_v1beta2_drift.yaml" || true)
  # The tree: the five that deviate, under the parents that place them, and nothing else.
  [ "$(printf '%s\n' "$compact" | sed '/^$/q' | grep -c ' (cluster.x-k8s.io/v1beta2): ')" -eq 8 ]
  [[ "$compact" == *"    └── MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2): ✓ compliant
        └── MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2): ✗ DEVIATES"* ]]
  [[ "$compact" != *"KubeadmControlPlane default/capi-quickstart-wqx5r"* ]]
  # Each one that fails has the detail the full report gives it, word for word.
  machine='Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/quickstart_v1beta2_drift.yaml document 1 item 13'
  [[ "$compact" == *"$machine"* && "$full" == *"$machine"* ]]
  [ "${lines[-2]}" = "compliant: 7 DockerMachine, 7 KubeadmConfig, 1 KubeadmControlPlane, 5 Machine, 1 MachineDeployment, 1 MachinePool; not evaluated: 1 Cluster, 1 ClusterClass (--full lists each)" ]
  [ "${lines[-1]}" = "27 objects audited, 5 deviate (2 more not evaluated: the policy does not act on their kind)" ]
  [ "$(printf '%s\n' "$compact" | wc -l)" -lt "$(printf '%s\n' "$full" | wc -l)" ]
  # JSON: every object with its identity, parent and status; the detail for the five only.
  run "$RUNNER" audit -o json -f "$DUMPS/quickstart_v1beta2_drift.yaml"
  [ "$status" -eq 1 ]
  echo "$output" | jq -e 'keys == ["objects", "summary"] and (.objects | length) == 29'
  echo "$output" | jq -e '[.objects[] | select(.status != "deviates") | keys] | unique == [["apiVersion", "id", "kind", "name", "namespace", "parent", "status"]]'
  echo "$output" | jq -e '[.objects[] | select(.status == "deviates") | .patch | length > 0] == [true, true, true, true, true]'
  full_json=$("$RUNNER" audit --full -o json -f "$DUMPS/quickstart_v1beta2_drift.yaml" || true)
  [ "$(jq -c '.summary' <<<"$output")" = "$(jq -c '.summary' <<<"$full_json")" ]
  [ "$(jq -c '[.objects[] | select(.status == "deviates")]' <<<"$output")" = "$(jq -c '[.objects[] | select(.status == "deviates")]' <<<"$full_json")" ]
  [ "$(jq -c '[.objects[] | [.id, .parent, .status]]' <<<"$output")" = "$(jq -c '[.objects[] | [.id, .parent, .status]]' <<<"$full_json")" ]
}

@test "v1beta1 quick-start, planted drift, as JSON: summary, tree and per-object details" {
  run "$RUNNER" audit --full -o json -f "$DUMPS/quickstart_v1beta1_drift.yaml"
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '.summary == {"objects": 29, "audited": 27, "compliant": 22, "deviating": 5, "rejected": 0, "notEvaluated": 2}'
  echo "$output" | jq -e '[.objects[] | select(.status == "deviates") | .id] == [
    "MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta1)",
    "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta1)",
    "MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta1)",
    "Machine default/capi-quickstart-md-1-x7k2p-6nbqt (cluster.x-k8s.io/v1beta1)",
    "Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta1)"]'
  echo "$output" | jq -e '.tree | length == 1 and .[0].id == "ClusterClass default/quick-start (cluster.x-k8s.io/v1beta1)"'
  echo "$output" | jq -e '[.tree[0].children[0].children[].id] == [
    "KubeadmControlPlane default/capi-quickstart-wqx5r (controlplane.cluster.x-k8s.io/v1beta1)",
    "MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta1)",
    "MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta1)",
    "MachinePool default/capi-quickstart-mp-0-x7b2k (cluster.x-k8s.io/v1beta1)"]'
  machine='.objects[] | select(.id == "Machine default/capi-quickstart-md-1-x7k2p-6nbqt (cluster.x-k8s.io/v1beta1)")'
  echo "$output" | jq -e "$machine"' | .parent == "MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta1)" and .depth == 4'
  echo "$output" | jq -e "$machine"' | .allowed == false and .code == 400'
  echo "$output" | jq -e "$machine"' | .message == "the object deviates from the metadata propagation contract (validate mode): metadata.labels: \"nodepool\" is \"pool0\" (expected \"pool1\")"'
  echo "$output" | jq -e "$machine"' | .deviations == ["metadata.labels: \"nodepool\" is \"pool0\" (expected \"pool1\")"]'
  echo "$output" | jq -e "$machine"' | .patch == [{"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool1"}]'
  echo "$output" | jq -e "$machine"' | .nodeKeys == {"labels": ["node-role.kubernetes.io/worker"], "annotations": []}'
  echo "$output" | jq -e "$machine"' | .auditAnnotations == {"node-labels": "node-role.kubernetes.io/worker", "node-annotations": ""}'
  echo "$output" | jq -e "$machine"' | .lookups == [{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "namespace": "default",
    "name": "capi-quickstart-md-1-x7k2p", "answer": "found",
    "fieldMasks": ["spec.template.metadata.annotations", "spec.template.metadata.labels",
      "spec.template.spec.nodeDeletionTimeout", "spec.template.spec.nodeDrainTimeout",
      "spec.template.spec.nodeVolumeDetachTimeout", "spec.template.spec.readinessGates", "spec.template.spec.taints"]}]'
  echo "$output" | jq -e "$machine"' | .explanation.paths[] | select(.path == "metadata.labels") | .keys[] | select(.key == "nodepool") | .change == "corrected"'
  echo "$output" | jq -e "$machine"' | .source == {"file": "test_data/dumps/quickstart_v1beta1_drift.yaml", "document": 1, "items": [12]}'
  echo "$output" | jq -e '.objects[] | select(.kind == "Cluster") | .status == "not-evaluated" and (has("allowed") | not)'
  # in-place fields, v1beta1: durations as Go writes them, minReadySeconds at spec
  md='.objects[] | select(.id == "MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta1)")'
  echo "$output" | jq -e "$md"' | .deviations == [
    "spec.minReadySeconds: is 30 (expected 5, from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta1) spec.topology.workers.machineDeployments[name=\"md-0\"].minReadySeconds)",
    "spec.template.metadata.annotations: missing \"ClusterClass.machineDeployment.annotation\" (expected \"ClusterClass.machineDeployment.annotationValue\")"]'
  echo "$output" | jq -e "$md"' | .patch == [{"op": "replace", "path": "/spec/minReadySeconds", "value": 5},
    {"op": "add", "path": "/spec/template/metadata/annotations/ClusterClass.machineDeployment.annotation", "value": "ClusterClass.machineDeployment.annotationValue"}]'
  ms='.objects[] | select(.id == "MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn (cluster.x-k8s.io/v1beta1)")'
  echo "$output" | jq -e "$ms"' | .deviations == [
    "spec.template.spec.nodeDrainTimeout: is \"5m0s\" (expected \"10m0s\", from MachineDeployment default/capi-quickstart-md-0-p6hg9 (cluster.x-k8s.io/v1beta1) spec.template.spec.nodeDrainTimeout)"]'
  echo "$output" | jq -e "$ms"' | .patch == [{"op": "replace", "path": "/spec/template/spec/nodeDrainTimeout", "value": "10m0s"}]'
  gate='.objects[] | select(.id == "Machine default/capi-quickstart-md-1-x7k2p-9ttvz (cluster.x-k8s.io/v1beta1)")'
  echo "$output" | jq -e "$gate"' | .deviations == [
    "spec.readinessGates[conditionType=\"ops.example.com/ApprovedForProduction\"]: missing (expected {\"conditionType\":\"ops.example.com/ApprovedForProduction\"}, from MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta1) spec.template.spec.readinessGates)"]'
  echo "$output" | jq -e "$gate"' | .patch == [{"op": "add", "path": "/spec/readinessGates", "value": [{"conditionType": "ops.example.com/ApprovedForProduction"}]}]'
  # not drift: nodeVolumeDetachTimeout "5m" on the KCP (against the topology's "5m0s", and for its
  # Machines' "5m0s") and on a Machine (against its MachineSet's "5m0s") is the same duration
  echo "$output" | jq -e '[.objects[] | select((.kind == "KubeadmControlPlane" or .kind == "Machine")
    and (.name | test("^capi-quickstart-(wqx5r|md-0-p6hg9-v7bqn-tt4kd)")))
    | [.name, .status, .patch, (.explanation.fields[] | select(.field == "nodeVolumeDetachTimeout") | [.found, .value, .change])]] == [
    ["capi-quickstart-wqx5r", "compliant", [], ["5m", "5m0s", "unchanged"]],
    ["capi-quickstart-wqx5r-4mnnp", "compliant", [], ["5m0s", "5m0s", "unchanged"]],
    ["capi-quickstart-wqx5r-hb7xq", "compliant", [], ["5m0s", "5m0s", "unchanged"]],
    ["capi-quickstart-wqx5r-zq2cd", "compliant", [], ["5m0s", "5m0s", "unchanged"]],
    ["capi-quickstart-md-0-p6hg9-v7bqn-tt4kd", "compliant", [], ["5m", "5m0s", "unchanged"]]]'
  # a compliant object has no patch; a topology one read its Cluster and ClusterClass
  echo "$output" | jq -e '.objects[] | select(.kind == "MachinePool") | .status == "compliant" and .patch == [] and ([.lookups[].kind] == ["Cluster", "ClusterClass"])'
}

@test "an XR on each provider: every label's tag fate, the deviating ones marked, exit 1" {
  run "$RUNNER" audit --full -f "$DUMPS/xr_providers.yaml" --settings-path "$XR_SETTINGS"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${lines[0]}" = "XNetwork payments-network-7xk2p (platform.example.org/v1alpha1): ✓ compliant" ]
  [ "${lines[1]}" = "XDatabase team-data/analytics-db (platform.example.org/v1alpha1): ✗ DEVIATES" ]
  [ "${lines[2]}" = "XDatabase team-orders/orders-db (platform.example.org/v1alpha1): ✗ DEVIATES" ]
  [ "${lines[3]}" = "XDatabase team-payments/payments-db (platform.example.org/v1alpha1): ✓ compliant" ]
  [[ "$output" == *'  cloud tags: profile aws (spec.parameters.provider = "aws")
    profile built-in: provider "aws" selects the built-in profile aws
    "acme:checkout/owner" (annotation cloud-tags.plexsphere.io/labels): tag "plexsphere:acme:checkout/owner"
    "crossplane.io/claim-name" (metadata.labels): not opted in'* ]]
  [[ "$output" == *'    "acme:checkout/on call" (annotation cloud-tags.plexsphere.io/labels): skipped, key-character-class: the tag key contains '"' '"' (U+0020)'* ]]
  [[ "$output" == *'    "plexsphere:platform/cost-center": removed from spec.cloudTags (stale: no opted-in label produces it)'* ]]
  [[ "$output" == *'  deviation: spec.cloudTags: missing "plexsphere:acme:checkout/on call" (expected "orders-sre"), missing "plexsphere:acme:checkout/region" (expected "東京"), missing "plexsphere:platform/env" (expected "staging"), missing "plexsphere:platform/team" (expected "orders")'* ]]
  [ "${lines[-1]}" = "4 objects audited, 2 deviate" ]

  run "$RUNNER" audit --full -o json -f "$DUMPS/xr_providers.yaml" --settings-path "$XR_SETTINGS"
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '[.objects[] | [.explanation.cloudTags.profile, .status]] == [
    ["aws", "compliant"], ["generic", "deviates"], ["openstack", "deviates"], ["hetzner", "compliant"]]'
  echo "$output" | jq -e '[.objects[] | select(.name == "analytics-db") | .explanation.cloudTags.labels[] | select(.fate == "skipped") | .reason] == ["key-character-class", "key-character-class"]'
  echo "$output" | jq -e '.objects[] | select(.name == "orders-db") | .patch == [{"op": "add", "path": "/spec/cloudTags", "value": {
    "plexsphere:acme:checkout/on call": "orders-sre", "plexsphere:acme:checkout/region": "東京",
    "plexsphere:platform/env": "staging", "plexsphere:platform/team": "orders"}}]'
  echo "$output" | jq -e '[.tree[] | .children | length] == [0, 0, 0, 0]'
}

@test "cloud tags on CAPI infrastructure, clean: every tag as the policy writes it, infra objects under their Cluster or Machine, exit 0" {
  run "$RUNNER" audit --full -f "$DUMPS/capi_infra_clean.yaml" --settings-path "$INFRA_SETTINGS"
  echo "$output"
  [ "$status" -eq 0 ]
  diff <(printf '%s\n' "$output" | sed -n '1,15p') - <<'TREE'
Cluster default/aws-prod (cluster.x-k8s.io/v1beta2): not evaluated
├── MachineDeployment default/aws-prod-md-0 (cluster.x-k8s.io/v1beta2): ✓ compliant
│   └── MachineSet default/aws-prod-md-0-7xk2p (cluster.x-k8s.io/v1beta2): ✓ compliant
│       ├── Machine default/aws-prod-md-0-7xk2p-b6j3q (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: none; Node annotations: none
│       │   └── AWSMachine default/aws-prod-md-0-7xk2p-b6j3q (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
│       └── Machine default/aws-prod-md-0-7xk2p-h2k8d (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: none; Node annotations: none
│           └── AWSMachine default/aws-prod-md-0-7xk2p-h2k8d (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
└── AWSCluster default/aws-prod (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
Cluster default/azure-dev (cluster.x-k8s.io/v1beta2): not evaluated
└── AzureCluster default/azure-dev (infrastructure.cluster.x-k8s.io/v1beta1): ✓ compliant
Cluster default/openstack-lab (cluster.x-k8s.io/v1beta2): not evaluated
└── MachineDeployment default/openstack-lab-md-0 (cluster.x-k8s.io/v1beta2): ✓ compliant
    └── MachineSet default/openstack-lab-md-0-q8m4z (cluster.x-k8s.io/v1beta2): ✓ compliant
        └── Machine default/openstack-lab-md-0-q8m4z-f5d9c (cluster.x-k8s.io/v1beta2): ✓ compliant; Node labels: none; Node annotations: none
            └── OpenStackMachine default/openstack-lab-md-0-q8m4z-f5d9c (infrastructure.cluster.x-k8s.io/v1beta1): ✓ compliant
TREE
  # the InfraCluster's tags come from its Cluster, looked up in the dump
  [[ "$output" == *'
AWSCluster default/aws-prod (infrastructure.cluster.x-k8s.io/v1beta2): ✓ compliant
  read from test_data/dumps/capi_infra_clean.yaml document 1 item 11
  look-up: Cluster default/aws-prod (cluster.x-k8s.io/v1beta2): found'* ]]
  [[ "$output" == *'    "acme.io/team" (Cluster default/aws-prod (cluster.x-k8s.io/v1beta2) metadata.labels): tag "plexsphere:acme.io/team"'* ]]
  [ "${lines[-1]}" = "12 objects audited, 0 deviate (3 more not evaluated: the policy does not act on their kind)" ]

  # the same dump with the feature at its default: the tag fields are not the policy's
  run "$RUNNER" audit --full -o json -f "$DUMPS/capi_infra_clean.yaml"
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '[.objects[] | select(.apiVersion | startswith("infrastructure.")) | .lookups | length] == [0, 0, 0, 0, 0]'
}

@test "cloud tags on CAPI infrastructure, planted drift: exactly the three tag deviations, exit 1" {
  run "$RUNNER" audit --full -f "$DUMPS/capi_infra_drift.yaml" --settings-path "$INFRA_SETTINGS"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | grep -c '── .*: ✗ DEVIATES')" -eq 3 ]
  [[ "$output" == *'
│       │   └── AWSMachine default/aws-prod-md-0-7xk2p-b6j3q (infrastructure.cluster.x-k8s.io/v1beta2): ✗ DEVIATES'* ]]
  [[ "$output" == *'
└── AWSCluster default/aws-prod (infrastructure.cluster.x-k8s.io/v1beta2): ✗ DEVIATES'* ]]
  [[ "$output" == *'
└── AzureCluster default/azure-dev (infrastructure.cluster.x-k8s.io/v1beta1): ✗ DEVIATES'* ]]
  # a Cluster label changed: the AWSCluster's tag is stale
  [[ "$output" == *'
AWSCluster default/aws-prod (infrastructure.cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/capi_infra_drift.yaml document 1 item 11
  deviation: spec.additionalTags: "plexsphere:acme.io/team" is "payments" (expected "payments-core")
  look-up: Cluster default/aws-prod (cluster.x-k8s.io/v1beta2): found'* ]]
  [[ "$output" == *'  patch (what mutate mode would apply):
    {"op":"replace","path":"/spec/additionalTags/plexsphere:acme.io~1team","value":"payments-core"}'* ]]
  # a machine's tag lost
  [[ "$output" == *'
AWSMachine default/aws-prod-md-0-7xk2p-b6j3q (infrastructure.cluster.x-k8s.io/v1beta2): ✗ DEVIATES
  read from test_data/dumps/capi_infra_drift.yaml document 1 item 13
  deviation: spec.additionalTags: missing "plexsphere:cost-center" (expected "cc-pool-a")'* ]]
  [[ "$output" == *'    {"op":"add","path":"/spec/additionalTags/plexsphere:cost-center","value":"cc-pool-a"}'* ]]
  # a stale tag, beside a user's own
  [[ "$output" == *'
AzureCluster default/azure-dev (infrastructure.cluster.x-k8s.io/v1beta1): ✗ DEVIATES
  read from test_data/dumps/capi_infra_drift.yaml document 1 item 14
  deviation: spec.additionalTags: remove "plexsphere:project" (stale: no opted-in label produces it)'* ]]
  [[ "$output" == *'    {"op":"remove","path":"/spec/additionalTags/plexsphere:project"}'* ]]
  [ "${lines[-1]}" = "12 objects audited, 3 deviate (3 more not evaluated: the policy does not act on their kind)" ]

  run "$RUNNER" audit --full -o json -f "$DUMPS/capi_infra_drift.yaml" --settings-path "$INFRA_SETTINGS"
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '.summary == {"objects": 15, "audited": 12, "compliant": 9, "deviating": 3, "rejected": 0, "notEvaluated": 3}'
  echo "$output" | jq -e '[.objects[] | select(.status == "deviates") | [.id, .deviations]] == [
    ["AWSMachine default/aws-prod-md-0-7xk2p-b6j3q (infrastructure.cluster.x-k8s.io/v1beta2)", ["spec.additionalTags: missing \"plexsphere:cost-center\" (expected \"cc-pool-a\")"]],
    ["AWSCluster default/aws-prod (infrastructure.cluster.x-k8s.io/v1beta2)", ["spec.additionalTags: \"plexsphere:acme.io/team\" is \"payments\" (expected \"payments-core\")"]],
    ["AzureCluster default/azure-dev (infrastructure.cluster.x-k8s.io/v1beta1)", ["spec.additionalTags: remove \"plexsphere:project\" (stale: no opted-in label produces it)"]]]'
  # the OpenStackMachine lacks a tag too, but CAPO's serverMetadata is stamped on CREATE only:
  # an UPDATE, which the audit evaluates, leaves it as it is
  echo "$output" | jq -e '.objects[] | select(.kind == "OpenStackMachine") | .status == "compliant" and .lookups == []
    and (.explanation.notes | any(. == "OpenStackMachine is tagged on CREATE only (capo makes spec.serverMetadata immutable): its tags are left as they are"))'
  echo "$output" | jq -e '.objects[] | select(.kind == "AWSCluster") | .parent == "Cluster default/aws-prod (cluster.x-k8s.io/v1beta2)" and .depth == 1'
}

@test "JSON input and several files: the same verdicts as the YAML dumps" {
  python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
    "$DUMPS/quickstart_v1beta2_drift.yaml" "$TMP/dump.json"
  run "$RUNNER" audit --full -o json -f "$TMP/dump.json" -f "$DUMPS/xr_providers.yaml" --settings-path "$XR_SETTINGS"
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '.summary == {"objects": 33, "audited": 31, "compliant": 24, "deviating": 7, "rejected": 0, "notEvaluated": 2}'
  echo "$output" | jq -e '[.objects[] | select(.name == "capi-quickstart-md-1-x7k2p") | .source] == [{"file": "'"$TMP"'/dump.json", "document": 1, "items": [6]}]'
  echo "$output" | jq -e '[.objects[] | select(.name == "orders-db") | .source] == [{"file": "test_data/dumps/xr_providers.yaml", "document": 3, "items": []}]'
}

@test "the scale dump, 100 workload clusters: 10,000 objects, the 100 planted deviations, exit 1" {
  # test_data/dumps/gen.py ("scale"): 25 namespaces x 4 Clusters at v1beta2,
  # every object with CAPI's in-place fields, one deviating object planted in
  # each Cluster (a metadata or a field drift). Its speed is measured by
  # `make audit-bench`, never asserted here.
  # (to files: `run` would split 37 MB of JSON into lines)
  SCALE="$DUMPS/scale/capi_v1beta2_100_clusters.json"
  status=0
  "$RUNNER" audit --full -o json -f "$SCALE" > "$TMP/scale.json" || status=$?
  [ "$status" -eq 1 ]
  # the parts asserted on, read once
  jq '{summary, tree: [.tree[] | {id, children: [.children[] | {id}]}],
    objects: [.objects[] | select(.status == "deviates") | {kind, namespace, name, status, deviations}]}' \
    "$TMP/scale.json" > "$TMP/scale.small.json"
  mv "$TMP/scale.small.json" "$TMP/scale.json"
  jq -e '.summary == {"objects": 10000, "audited": 9875, "compliant": 9775, "deviating": 100, "rejected": 0, "notEvaluated": 125}' "$TMP/scale.json"
  # every ClusterClass a root, every Cluster under its namespace's
  jq -e '[.tree[].id] | length == 25 and all(test("^ClusterClass team-[0-9]{2}/quick-start "))' "$TMP/scale.json"
  jq -e '[.tree[].children | length] | unique == [4]' "$TMP/scale.json"
  # what gen.py planted: one object per Cluster, by the Cluster's index i % 10 (0-4 metadata, 5-9 in-place fields)
  jq -e '[.objects[] | select(.status == "deviates") | .kind] | group_by(.) | map({(.[0]): length}) | add
    == {"KubeadmControlPlane": 10, "Machine": 40, "MachineDeployment": 20, "MachinePool": 10, "MachineSet": 20}' "$TMP/scale.json"
  jq -e '[.objects[] | select(.status == "deviates") | .name | capture("^(?<c>team-[0-9]{2}-(dev|prod-1|prod-2|staging))-").c]
    | unique | length == 100' "$TMP/scale.json"
  jq -e '[.objects[] | select(.status == "deviates" and .namespace == "team-01") | [.kind, .deviations]] == [
    ["MachineSet", ["metadata.labels: missing \"nodepool\" (expected \"md-0\")"]],
    ["Machine", ["metadata.labels: \"nodepool\" is \"pool-hand-edited\" (expected \"md-1\")"]],
    ["MachineDeployment", ["spec.template.metadata.annotations: missing \"ClusterClass.machineDeployment.annotation\" (expected \"ClusterClass.machineDeployment.annotationValue\")"]],
    ["Machine", ["metadata.annotations: missing \"ClusterClass.controlPlane.annotation\" (expected \"ClusterClass.controlPlane.annotationValue\")"]]]' "$TMP/scale.json"
  # kinds 4-9 (indices 4-9: team-02's four Clusters and team-03's first two)
  jq -e '[.objects[] | select(.status == "deviates" and (.namespace == "team-02" or (.name | test("^team-03-(dev|prod-1)-")))) | [.kind, .name, .deviations]] == [
    ["MachinePool", "team-02-dev-mp-0-p95k4", ["metadata.labels: missing \"Cluster.topology.machinePool.label\" (expected \"Cluster.topology.machinePool.labelValue\")"]],
    ["MachineSet", "team-02-prod-1-md-2-tswql-mvflq", ["spec.template.spec.deletion.nodeDrainTimeoutSeconds: is 300 (expected 600, from MachineDeployment team-02/team-02-prod-1-md-2-tswql (cluster.x-k8s.io/v1beta2) spec.template.spec.deletion.nodeDrainTimeoutSeconds)"]],
    ["Machine", "team-02-prod-2-md-0-cs4n9-p5bcj-gmf25", ["spec.readinessGates[conditionType=\"network.platform.example.com/CNIReady\"]: missing (expected {\"conditionType\":\"network.platform.example.com/CNIReady\"}, from MachineSet team-02/team-02-prod-2-md-0-cs4n9-p5bcj (cluster.x-k8s.io/v1beta2) spec.template.spec.readinessGates)"]],
    ["MachineDeployment", "team-02-staging-md-1-rf7xq", ["spec.template.spec.minReadySeconds: is 30 (expected 5, from Cluster team-02/team-02-staging (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name=\"md-1\"].minReadySeconds)"]],
    ["Machine", "team-03-dev-7xc42-d7g6t", ["spec.deletion.nodeDeletionTimeoutSeconds: is 10 (expected 30, from KubeadmControlPlane team-03/team-03-dev-7xc42 (controlplane.cluster.x-k8s.io/v1beta2) spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds)"]],
    ["KubeadmControlPlane", "team-03-prod-1-pzlmb", ["spec.machineTemplate.spec.readinessGates[conditionType=\"hardening.platform.example.com/CISBenchmarkPassed\"]: missing (expected {\"conditionType\":\"hardening.platform.example.com/CISBenchmarkPassed\"}, from ClusterClass team-03/quick-start (cluster.x-k8s.io/v1beta2) spec.controlPlane.readinessGates)"]]]' "$TMP/scale.json"
  jq -e '[.objects[] | select(.status == "deviates" and .kind == "MachinePool") | .name][0:2] == ["team-02-dev-mp-0-p95k4", "team-04-prod-2-mp-0-vvr6g"]' "$TMP/scale.json"

  status=0
  "$RUNNER" audit --full -f "$SCALE" > "$TMP/scale.txt" || status=$?
  [ "$status" -eq 1 ]
  [ "$(grep -c '── .*: ✗ DEVIATES' "$TMP/scale.txt")" -eq 100 ]  # tree lines
  [ "$(grep -c '^[A-Z].*: ✗ DEVIATES$' "$TMP/scale.txt")" -eq 100 ]  # details headers
  [ "$(tail -n 1 "$TMP/scale.txt")" = "9875 objects audited, 100 deviate (125 more not evaluated: the policy does not act on their kind)" ]
}

@test "bad input exits 2, naming the file and the document" {
  run "$RUNNER" audit --full -f "$TMP/missing.yaml"
  [ "$status" -eq 2 ]
  [[ "$output" == "Error: cannot read $TMP/missing.yaml: "* ]]
  # The I/O error once, not repeated by the message and its source.
  [ "$(grep -o 'os error 2' <<<"$output" | wc -l)" -eq 1 ]

  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n' > "$TMP/syntax.yaml"
  run "$RUNNER" audit --full -f "$TMP/syntax.yaml"
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == "Error: $TMP/syntax.yaml document 2: not valid YAML or JSON: "* ]]

  printf '{"apiVersion": "v1", "kind": "List", "items": [\n{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},\n{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}]}\n' > "$TMP/list.json"
  run "$RUNNER" audit --full -f "$TMP/list.json"
  echo "$output"
  [ "$status" -eq 2 ]
  [ "$output" = "Error: $TMP/list.json document 1 item 2: not a Kubernetes object: \`metadata.name\` is missing" ]

  printf -- '---\n- just\n- strings\n' > "$TMP/strings.yaml"
  run "$RUNNER" audit --full -f "$TMP/strings.yaml"
  [ "$status" -eq 2 ]
  [ "$output" = "Error: $TMP/strings.yaml document 1 item 1: not a Kubernetes object: expected an object, found a string" ]

  run "$RUNNER" audit --full -f "$DUMPS/xr_providers.yaml" -f "$DUMPS/xr_providers.yaml"
  [ "$status" -eq 2 ]
  [ "$output" = "Error: test_data/dumps/xr_providers.yaml document 1: XNetwork payments-network-7xk2p (platform.example.org/v1alpha1) is also at test_data/dumps/xr_providers.yaml document 1; a dump must list each object once" ]

  run "$RUNNER" audit --full -f "$DUMPS/xr_providers.yaml" --settings-json '{"cloudTags":{"propagatingLabels":["platform/origin"]}}'
  [ "$status" -eq 2 ]
  [[ "$output" == "Error: Provided settings are not valid: cloudTags.propagatingLabels[0]: "* ]]

  # A file with no document is an output that went missing, not an empty
  # cluster (an empty List is that: 0 objects, exit 0).
  printf '# nothing here\n' > "$TMP/empty.yaml"
  run "$RUNNER" audit --full -f "$TMP/empty.yaml"
  [ "$status" -eq 2 ]
  [ "$output" = "Error: $TMP/empty.yaml holds no YAML or JSON document (an empty file, or only comments): write it with \`kubectl get <kinds> -A -o yaml > $TMP/empty.yaml\`" ]
  printf 'apiVersion: v1\nitems: []\nkind: List\n' > "$TMP/none.yaml"
  run "$RUNNER" audit --full -f "$TMP/none.yaml"
  [ "$status" -eq 0 ]

  # A policy is the live audit's source of settings and rules; beside a
  # dump it would be ignored, so it is refused.
  run "$RUNNER" audit --full -f "$DUMPS/xr_providers.yaml" --policy examples/capi-policy.yaml
  [ "$status" -eq 2 ]
  [[ "$output" == *"cannot be used with"* ]]

  run "$RUNNER" audit --full
  [ "$status" -eq 2 ]
}

@test "a typed list, as the API server serves it (kubectl get --raw), is read as its items" {
  python3 - "$DUMPS/quickstart_v1beta2_drift.yaml" > "$TMP/typed.json" <<'PY'
import json, sys, yaml
objects = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
items = []
for d in objects:
    items.extend(d["items"] if d.get("kind") == "List" else [d])
machines = [o for o in items if o["kind"] == "Machine"]
rest = [o for o in items if o["kind"] != "Machine"]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": rest}))
print(json.dumps({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineList",
                  "metadata": {"resourceVersion": "4242"}, "items": machines}))
PY
  "$RUNNER" audit --full -f "$DUMPS/quickstart_v1beta2_drift.yaml" > "$TMP/as-list.txt" || true
  run "$RUNNER" audit --full -f "$TMP/typed.json"
  [ "$status" -eq 1 ]
  [ "$(tail -n 1 <<<"$output")" = "$(tail -n 1 "$TMP/as-list.txt")" ]
  [ "$(grep -c 'Machine default/' <<<"$output")" -eq "$(grep -c 'Machine default/' "$TMP/as-list.txt")" ]
}

@test "a malformed object is rejected, not a bad dump: exit 1" {
  object_file 'apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: m
  namespace: default
  ownerReferences:
  - {apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineSet, uid: u, controller: true}' machine.yaml
  run "$RUNNER" audit --full -f "$TMP/machine.yaml"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${lines[0]}" = "Machine default/m (cluster.x-k8s.io/v1beta2): ✗ REJECTED" ]
  [[ "$output" == *"  rejected: cannot propagate Cluster API metadata: metadata.ownerReferences[0].name: required, and missing or empty"* ]]
  [ "${lines[-1]}" = "1 object audited, 0 deviate, 1 rejected" ]
}

@test "a parent the dump lists at another version: not found, and the report says where it is" {
  python3 - "$DUMPS/quickstart_v1beta2_clean.yaml" "$TMP/mixed.yaml" <<'PY'
import sys, yaml
dump = yaml.safe_load(open(sys.argv[1]))
ms = next(o for o in dump["items"] if o["metadata"]["name"] == "capi-quickstart-md-1-x7k2p")
md = next(o for o in dump["items"] if o["metadata"]["name"] == "capi-quickstart-md-1")
del ms["metadata"]["labels"]["nodepool"]
ms["metadata"]["ownerReferences"][0]["apiVersion"] = "cluster.x-k8s.io/v1beta1"
yaml.safe_dump_all([md, ms], open(sys.argv[2], "w"))
PY
  run "$RUNNER" audit --full -f "$TMP/mixed.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = "└── MachineSet default/capi-quickstart-md-1-x7k2p (cluster.x-k8s.io/v1beta2): ✓ compliant" ]
  [[ "$output" == *"  look-up: MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta1): not in the dump at this version; the dump lists it at cluster.x-k8s.io/v1beta2, which an API server would convert and the audit cannot"* ]]
  [[ "$output" == *"  note: MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta1) (parent of this MachineSet) not found: allowed unchanged"* ]]
}

@test "every bundled dump: the compiled module, request by request, answers what the audit says" {
  [ -f "${POLICY:-}" ] || { echo "cannot run: no compiled module (POLICY=annotated-policy.wasm)" >&2; false; }
  for dump in "$DUMPS"/quickstart_*.yaml; do
    run python3 e2e-tests/audit_agreement.py "$RUNNER" "$POLICY" "$dump"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "27 objects of $dump sent to the module one by one: 27 agree with the audit" ]]
  done
  for dump in "$DUMPS"/capi_infra_*.yaml; do
    run python3 e2e-tests/audit_agreement.py "$RUNNER" "$POLICY" "$dump" "$INFRA_SETTINGS"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "12 objects of $dump sent to the module one by one: 12 agree with the audit" ]]
  done
  run python3 e2e-tests/audit_agreement.py "$RUNNER" "$POLICY" "$DUMPS/xr_providers.yaml" "$XR_SETTINGS"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "4 objects of $DUMPS/xr_providers.yaml sent to the module one by one: 4 agree with the audit" ]
}
