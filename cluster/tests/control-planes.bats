#!/usr/bin/env bats
# Control planes of other providers (docs/capi.md, "Control planes of every provider"), with
# examples/capi-policy.yaml in front of the API server, and the tests check what the API server stored.
# RKE2 and k0smotron: the test bed runs the RKE2 control-plane manager (CAPRKE2 v0.21.0) and k0smotron's
# control-plane controllers (v1.10.9) (cluster/up.sh), which create the Machine, AWSMachine and BootstrapConfig
# of an RKE2ControlPlane and of a K0sControlPlane themselves. Talos: its controller does not run here
# (docs/test-bed.md), so kubectl creates a TalosControlPlane's Machine, shaped and owned as that controller
# makes it.

setup_file() {
  load helpers
  kubectl apply -f "$ROOT/cluster/objects/control-planes.yaml"
  # No CAPA controller runs: the AWSCluster is marked ready as it would, and CAPI's manager then marks the
  # Cluster's infrastructure provisioned, which the RKE2 manager waits for before it creates a Machine.
  for cluster in rke2-demo k0s-demo; do
    kubectl patch awscluster "$cluster" -n default --subresource=status --type=merge -p '{"status":{"ready":true}}'
  done
}

setup() { load helpers; }

# owner KIND NAME CONTROLLER: the ownerReference a provider writes to its control plane NAME.
owner() {
  local resource uid api_version
  resource=$(tr '[:upper:]' '[:lower:]' <<<"$1")s
  uid=$(field "$resource" "$2" .metadata.uid)
  api_version=$(field "$resource" "$2" .apiVersion)
  jq -cn --arg v "$api_version" --arg k "$1" --arg n "$2" --arg u "$uid" --argjson c "$3" \
    '{apiVersion: $v, kind: $k, name: $n, uid: $u, controller: $c, blockOwnerDeletion: true}'
}

# machine NAME OWNER LABELS ANNOTATIONS: a v1beta2 Machine of Cluster cp-demo with those metadata.
machine() {
  jq -cn --arg n "$1" --argjson o "$2" --argjson l "$3" --argjson a "$4" '
    {apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Machine",
     metadata: {name: $n, namespace: "default", labels: $l, annotations: $a, ownerReferences: [$o]},
     spec: {clusterName: "cp-demo", version: "v1.31.4",
            bootstrap: {configRef: {apiGroup: "bootstrap.cluster.x-k8s.io", kind: "RKE2Config", name: $n}},
            infrastructureRef: {apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name: $n}}}'
}

# created_machine CLUSTER: the Machine a control-plane manager created for CLUSTER, once there is one.
created_machine() {
  eventually 120 "[ \"\$(count machines cluster.x-k8s.io/cluster-name=$1)\" = 1 ]" >&2 || return 1
  kubectl get machines -n default -l "cluster.x-k8s.io/cluster-name=$1" -o json | jq -c '.items[0]'
}

@test "the RKE2 manager's Machine carries the machine template's metadata and drain timeout; RKE2's annotations stay" {
  # CAPRKE2 v0.21.0 writes the template's labels and annotations, and its drain timeout, on the Machine itself.
  # Its pre-terminate hook comes with a later reconcile (applyHookToActiveMachines), so the Machine is read
  # once the hook is there: under load a read right after the create can come first.
  created_machine rke2-demo >/dev/null
  hook='pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup'
  eventually 120 "kubectl get machines -n default -l cluster.x-k8s.io/cluster-name=rke2-demo -o json |
    jq -e --arg h '$hook' '.items[0].metadata.annotations | has(\$h)'"
  m=$(created_machine rke2-demo)
  expect "$m" '.metadata.ownerReferences[0].kind + " " + .metadata.ownerReferences[0].name' 'RKE2ControlPlane rke2-demo'
  expect "$m" '.metadata.labels."platform.example.com/team"' payments
  expect "$m" '.metadata.labels."node-role.kubernetes.io/etcd"' true
  expect "$m" '.metadata.labels."cluster.x-k8s.io/control-plane"' ''
  expect "$m" '.metadata.annotations."platform.example.com/owner"' team-payments
  expect "$m" '.metadata.annotations."controlplane.cluster.x-k8s.io/rke2-server-configuration" | fromjson | .cni' calico
  expect "$m" '.metadata.annotations | has("pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup")' true
  expect "$m" '.spec.deletion.nodeDrainTimeoutSeconds' 300
}

@test "the RKE2 manager's AWSMachine and RKE2Config are created with the template's metadata, which the policy adds" {
  # CAPRKE2 v0.21.0 creates them with CAPI's cluster-name and control-plane labels only, owned by the
  # RKE2ControlPlane without `controller`, and writes the template's metadata on them only on a later
  # reconcile (syncMachines): the audit log shows the policy's webhook mutated each create.
  m=$(created_machine rke2-demo)
  a=$(get awsmachines "$(jq -r .spec.infrastructureRef.name <<<"$m")")
  expect "$a" '.metadata.labels."cluster.x-k8s.io/cluster-name"' rke2-demo
  expect "$a" '.metadata.labels."platform.example.com/team"' payments
  expect "$a" '.metadata.labels."node-role.kubernetes.io/etcd"' true
  expect "$a" '.metadata.annotations."platform.example.com/owner"' team-payments
  webhook_mutated clusterwide-capi-metadata-propagation awsmachines "$(jq -r .metadata.name <<<"$a")"
  c=$(get rke2configs "$(jq -r .spec.bootstrap.configRef.name <<<"$m")")
  expect "$c" '.metadata.labels."cluster.x-k8s.io/cluster-name"' rke2-demo
  expect "$c" '.metadata.labels."platform.example.com/team"' payments
  expect "$c" '.metadata.labels."node-role.kubernetes.io/etcd"' true
  expect "$c" '.metadata.annotations."platform.example.com/owner"' team-payments
  webhook_mutated clusterwide-capi-metadata-propagation rke2configs "$(jq -r .metadata.name <<<"$c")"
}

@test "k0smotron's Machine carries the machine template's metadata; k0smotron's keys stay" {
  # k0smotron v1.10.9 writes the template's labels and annotations on the Machine itself (server-side apply),
  # beside its control-plane "true", worker-enabled, k0s-config and pre-terminate keys.
  m=$(created_machine k0s-demo)
  expect "$m" '.metadata.ownerReferences[0].kind + " " + .metadata.ownerReferences[0].name' 'K0sControlPlane k0s-demo'
  expect "$m" '.metadata.ownerReferences[0].controller' true
  expect "$m" '.metadata.labels."platform.example.com/team"' checkout
  expect "$m" '.metadata.labels."cluster.x-k8s.io/control-plane"' true
  expect "$m" '.metadata.labels."k0smotron.io/control-plane-worker-enabled"' true
  expect "$m" '.metadata.annotations."platform.example.com/owner"' team-checkout
  expect "$m" '.metadata.annotations."k0s.controlplane.cluster.x-k8s.io/k0s-config" | fromjson | .args[0]' --enable-worker
  expect "$m" '.metadata.annotations | has("pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup")' true
  expect "$m" '.spec.bootstrap.configRef.kind + " " + .spec.infrastructureRef.kind' 'K0sControllerConfig AWSMachine'
}

@test "k0smotron's AWSMachine and K0sControllerConfig are created with the template's metadata" {
  # k0smotron v1.10.9 creates both by server-side apply with the template's labels and annotations; the
  # K0sControllerConfig is owned by the Machine.
  m=$(created_machine k0s-demo)
  a=$(get awsmachines "$(jq -r .spec.infrastructureRef.name <<<"$m")")
  expect "$a" '.metadata.labels."cluster.x-k8s.io/cluster-name"' k0s-demo
  expect "$a" '.metadata.labels."platform.example.com/team"' checkout
  expect "$a" '.metadata.annotations."platform.example.com/owner"' team-checkout
  expect "$a" '.metadata.annotations."cluster.x-k8s.io/cloned-from-name"' k0s-demo
  eventually 60 '[ "$(field k0scontrollerconfigs "$(jq -r .spec.bootstrap.configRef.name <<<"$m")" .metadata.name)" != "" ]'
  c=$(get k0scontrollerconfigs "$(jq -r .spec.bootstrap.configRef.name <<<"$m")")
  expect "$c" '.metadata.ownerReferences[0].kind + " " + .metadata.ownerReferences[0].name' "Machine $(jq -r .metadata.name <<<"$m")"
  expect "$c" '.metadata.labels."cluster.x-k8s.io/cluster-name"' k0s-demo
  expect "$c" '.metadata.labels."platform.example.com/team"' checkout
  expect "$c" '.metadata.annotations."platform.example.com/owner"' team-checkout
  expect "$c" '.spec.version' v1.31.2+k0s.0
}

@test "the policy's webhook saw k0smotron's three creates and had nothing to add" {
  # Unlike RKE2's, k0smotron's creates already carry the template's metadata: the audit log shows the API
  # server called the policy's webhook on each, and that it mutated none.
  m=$(created_machine k0s-demo)
  for object in "machines $(jq -r .metadata.name <<<"$m")" "awsmachines $(jq -r .spec.infrastructureRef.name <<<"$m")" \
    "k0scontrollerconfigs $(jq -r .spec.bootstrap.configRef.name <<<"$m")"; do
    eventually 30 "webhook_called clusterwide-capi-metadata-propagation $object"
    run webhook_mutated clusterwide-capi-metadata-propagation $object
    [ "$status" -eq 1 ]
  done
}

@test "a TalosControlPlane's Machine, which has no machine-template metadata to follow, is stored as submitted" {
  labels='{"cluster.x-k8s.io/cluster-name":"cp-demo","cluster.x-k8s.io/control-plane":""}'
  submitted=$(machine talos-demo-m1 "$(owner TalosControlPlane talos-demo true)" "$labels" '{}')
  run --separate-stderr kubectl create -f - -o json <<<"$submitted"
  [ "$status" -eq 0 ]
  # No warning reached kubectl; the metadata is as submitted, and the API server's audit log records that
  # the policy's webhook did not mutate the create (CAPI's own defaulting webhook fills spec.deletion).
  [ -z "$stderr" ]
  expect "$output" '.metadata.labels' "$(jq . <<<"$labels")"
  expect "$output" '.metadata.annotations // {}' '{}'
  run webhook_mutated clusterwide-capi-metadata-propagation machines talos-demo-m1
  [ "$status" -eq 1 ]
  # The same check finds the RKE2 manager's AWSMachine's create mutated.
  webhook_mutated clusterwide-capi-metadata-propagation awsmachines \
    "$(kubectl get machines -n default -l cluster.x-k8s.io/cluster-name=rke2-demo -o json | jq -r '.items[0].spec.infrastructureRef.name')"
}
