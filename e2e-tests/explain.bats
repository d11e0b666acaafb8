#!/usr/bin/env bats
# `policy-runner explain`: the policy's own core, natively, with parents read
# from plain YAML/JSON files (no replay session). Not a kwctl command, so it
# always uses the runner.

RUNNER=${RUNNER:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
bats_require_minimum_version 1.5.0

# The tests that compare explain with the compiled module need it.
need_module() {
  [ -f "$POLICY" ] || { echo "cannot run: no compiled module at $POLICY (make annotated-policy.wasm)" >&2; false; }
}

setup() {
  [ -x "$RUNNER" ] || { echo "cannot run: no runner at $RUNNER (make runner)" >&2; false; }
}

@test "explain a drifted MachineSet from its MachineDeployment file, as text" {
  run "$RUNNER" explain -r test_data/capi/v1beta2/machineset_update_drifted_from_md.json \
    -p test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = "decision: allowed" ]
  [[ "$output" == *'rule: MachineSet from MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2)'* ]]
  [[ "$output" == *'"nodepool" = "pool1": flows from MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2) spec.template.metadata.labels (corrected)'* ]]
  [[ "$output" == *'"machinedeployment.clusters.x-k8s.io/revision": not propagated: never copied along this path'* ]]
  [[ "$output" == *'"cluster.x-k8s.io/deployment-name": kept, CAPI bookkeeping (child value "capi-quickstart-md-1")'* ]]
  [[ "$output" == *'{"op":"replace","path":"/metadata/labels/nodepool","value":"pool1"}'* ]]
}

@test "explain a topology MachineDeployment with its Cluster and ClusterClass, as JSON" {
  run "$RUNNER" explain -o json -r test_data/capi/v1beta2/machinedeployment_create_topology.json \
    -p test_data/capi/v1beta2/parents/cluster_capi-quickstart.yaml \
    -p test_data/capi/v1beta2/parents/clusterclass_quick-start.yaml
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .explanation.rule.family)" = MachineDeployment ]
  [ "$(echo "$output" | jq -r '.explanation.paths[] | select(.path == "metadata.annotations") | .keys[] | select(.key == "topology.cluster.x-k8s.io/defer-upgrade") | .fate')" = not-propagated ]
  [ "$(echo "$output" | jq -r '.explanation.paths[] | select(.path == "metadata.labels") | .keys[] | select(.key == "ClusterClass.machineDeployment.label") | .change')" = added ]
  # each merged key names the object and the field it comes from
  [ "$(echo "$output" | jq -r '.explanation.paths[] | select(.path == "metadata.labels") | .keys[] | select(.key == "ClusterClass.machineDeployment.label") | .from')" = 'ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2) spec.workers.machineDeployments[class="default-worker"].metadata.labels' ]
  [ "$(echo "$output" | jq -r '.explanation.paths[] | select(.path == "metadata.labels") | .keys[] | select(.key == "Cluster.topology.machineDeployment.label") | .from')" = 'Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name="md-0"].metadata.labels' ]
}

@test "explain a topology KubeadmControlPlane: each key from the Cluster or the ClusterClass, the topology winning" {
  run "$RUNNER" explain -r test_data/capi/examples/kubeadmcontrolplane_from_topology.json \
    -p test_data/capi/examples/kubeadmcontrolplane_from_topology.parents.yaml
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'metadata.labels:
  "cost-center" = "cc-1001": flows from ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2) spec.controlPlane.metadata.labels (added)
  "environment" = "production": flows from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.controlPlane.metadata.labels (added)
  "team" = "payments": flows from Cluster default/capi-quickstart (cluster.x-k8s.io/v1beta2) spec.topology.controlPlane.metadata.labels, overriding the ClusterClass'"'"'s "platform" (added)
'* ]]
  [[ "$output" == *'  "platform.example.com/runbook" = "https://runbooks.example.com/capi/control-plane": flows from ClusterClass default/quick-start (cluster.x-k8s.io/v1beta2) spec.controlPlane.metadata.annotations (added)'* ]]
  [[ "$output" == *'  {"op":"add","path":"/metadata/labels/team","value":"payments"}'* ]]
}

@test "explain a Machine's Node sync with the criterion or regex that matched" {
  run "$RUNNER" explain -o json -r test_data/capi/v1beta2/machine_create_node_labels.json \
    -p test_data/capi/v1beta2/parents/machineset_capi-quickstart-md-edge-r8w2d.yaml \
    --settings-json '{"capi":{"additionalSyncMachineLabels":["^nodepool$"]}}'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r '.explanation.nodeSync.labels[] | select(.key == "nodepool") | .syncedBy')" = 'capi.additionalSyncMachineLabels[0] "^nodepool$"' ]
  [ "$(echo "$output" | jq -r '.explanation.nodeSync.labels[] | select(.key == "node-role.kubernetes.io/worker") | .syncedBy')" = "domain node-role.kubernetes.io" ]
  [ "$(echo "$output" | jq -r '.explanation.nodeSync.labels[] | select(.key == "node.kubernetes.io/exclude-from-external-load-balancers") | has("syncedBy")')" = false ]
}

@test "explain an XR: each label's fate, skips with measurement and limit" {
  run "$RUNNER" explain -o json -r test_data/xr/examples/xdatabase_hetzner.json \
    --settings-path test_data/xr/examples/settings.json
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.profile)" = hetzner ]
  [ "$(echo "$output" | jq -r '.explanation.cloudTags.labels[] | select(.qualifiedKey == "acme:checkout/on call") | .reason')" = key-character-class ]
  [ "$(echo "$output" | jq -r '.explanation.cloudTags.labels[] | select(.qualifiedKey == "acme:checkout/on call") | .detail')" = "the tag key contains ' ' (U+0020)" ]
  [ "$(echo "$output" | jq -r '[.explanation.cloudTags.labels[] | select(.fate == "tag")] | length')" -ge 3 ]
}

@test "explain an XR under a user-defined profile: origin, why, and that no tag can ever propagate" {
  run "$RUNNER" explain -o json -r test_data/xr/xdatabase_gcp_labels_profile.json \
    --settings-path test_data/xr/settings_ready_profiles.json
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.profile)" = gcp-labels ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.origin)" = user-defined ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.why)" = 'provider "gcp" is listed in cloudTags.profiles[1].providers' ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.noTagCanPropagate)" = 'no tag can ever propagate under provider profile gcp-labels: its key characters (lowercase-letters, digits and "_-") refuse ":" of the mandated prefix "plexsphere:"' ]
  [ "$(echo "$output" | jq -r '[.explanation.cloudTags.labels[] | select(.fate == "tag")] | length')" -eq 0 ]
  run "$RUNNER" explain -r test_data/xr/xdatabase_gcp_labels_profile.json \
    --settings-path test_data/xr/settings_ready_profiles.json
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'\n  profile user-defined: provider "gcp" is listed in cloudTags.profiles[1].providers\n  no tag can ever propagate under provider profile gcp-labels: '* ]]
}

@test "explain an XR whose provider no profile lists: the fallback, and why" {
  run "$RUNNER" explain -o json -r test_data/xr/xdatabase_ibm_generic.json \
    --settings-path test_data/xr/settings_propagating.json
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.profile)" = generic ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.origin)" = fallback ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.why)" = 'provider "ibm" is listed by no profile, so the fallback generic applies' ]
  [ "$(echo "$output" | jq -r '.explanation.cloudTags | has("noTagCanPropagate")')" = false ]
  # the fallback warning comes first
  [ "$(echo "$output" | jq -r '.warnings[0]')" = 'cloud tags: provider "ibm" at spec.parameters.provider selects no tag profile, so the strict generic profile applies; list the provider in a profile of cloudTags.profiles' ]
}

@test "explain an XR on gcp: the built-in gcp profile, its default prefix plexsphere-" {
  run "$RUNNER" explain -o json -r test_data/xr/xdatabase_gcp_builtin.json \
    --settings-path test_data/xr/settings_propagating.json
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.profile)" = gcp ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.origin)" = built-in ]
  [ "$(echo "$output" | jq -r .explanation.cloudTags.why)" = 'provider "gcp" selects the built-in profile gcp' ]
  # qualified keys hold '/' or ':', which GCP label keys refuse: each skipped under plexsphere-
  [ "$(echo "$output" | jq -r '.explanation.cloudTags.labels[] | select(.qualifiedKey == "platform/env") | .detail')" = "the tag key contains '/' (U+002F)" ]
  [ "$(echo "$output" | jq -r '[.warnings[] | select(contains("did not become tag \"plexsphere-platform/env\" on provider profile gcp"))] | length')" -eq 1 ]
}

@test "explain accepts a bare object in YAML and refuses invalid settings" {
  tmp=$(mktemp --suffix=.yaml)
  # cluster-scoped, with the compositionUpdatePolicy its CRD defaults: a v1 composite resource
  printf 'apiVersion: platform.example.org/v1alpha1\nkind: XNetwork\nmetadata:\n  name: n\n  labels: {platform/env: prod}\nspec: {parameters: {provider: aws}, compositionUpdatePolicy: Automatic}\n' > "$tmp"
  run "$RUNNER" explain -r "$tmp" --settings-json '{"cloudTags":{"propagatingLabels":["platform/env"]}}'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'"platform/env" (metadata.labels): tag "plexsphere:platform/env"'* ]]
  run "$RUNNER" explain -r "$tmp" --settings-json '{"cloudTags":{"propagatingLabels":["platform/origin"]}}'
  rm -f "$tmp"
  [ "$status" -ne 0 ]
  [[ "$output" == *"Provided settings are not valid"* ]]
}

@test "explain an AWSCluster's cloud tags: the profile, where each label comes from, what goes" {
  run "$RUNNER" explain -r test_data/capi-infra/awscluster_update_cluster_label_changed.json \
    -p test_data/capi-infra/parents/cluster_aws-prod.yaml \
    -s '{"cloudTags":{"capiInfrastructure":true,"propagatingLabels":["environment","cost-center","acme.io/team","acme:billing/owner"]}}'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = "decision: allowed" ]
  [[ "$output" == *'cloud tags: profile capa (the labels of Cluster default/aws-prod (cluster.x-k8s.io/v1beta2), then this object'"'"'s labels under profile capa)'* ]]
  [[ "$output" == *'"environment" (Cluster default/aws-prod (cluster.x-k8s.io/v1beta2) metadata.labels): tag "plexsphere:environment"'* ]]
  [[ "$output" == *'"acme.io/team" (metadata.labels): tag "plexsphere:acme.io/team"'* ]]
  [[ "$output" == *'"plexsphere:project": removed from spec.additionalTags (stale: no opted-in label produces it)'* ]]
}

@test "explain names the operation: the request's, or the one it assumes for a bare object (--operation chooses)" {
  object="$BATS_TEST_TMPDIR/openstackmachine.yaml"
  python3 -c 'import json, sys, yaml; yaml.safe_dump(json.load(open(sys.argv[1]))["object"], sys.stdout)' \
    test_data/capi-infra/openstackmachine_create_from_machineset.json >"$object"
  args=(-p test_data/capi-infra/examples/openstackmachine_from_machineset.parents.yaml
    --settings-path test_data/capi-infra/examples/settings.json)
  run "$RUNNER" explain -r "$object" "${args[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "operation: UPDATE (assumed for a bare object; --operation CREATE explains a CREATE)" ]
  # OpenStackMachine is tagged on CREATE only: the assumption decides the answer
  [[ "$output" == *'note: OpenStackMachine is tagged on CREATE only'* ]]
  [[ "$output" != *'serverMetadata/'* ]]
  run "$RUNNER" explain -r "$object" --operation CREATE "${args[@]}"
  echo "$output"
  [ "${lines[0]}" = "operation: CREATE (--operation)" ]
  [[ "$output" == *'{"op":"add","path":"/spec/serverMetadata/1","value":{"key":"plexsphere:cost-center","value":"cc-0042"}}'* ]]
  run "$RUNNER" explain -o json -r test_data/capi-infra/openstackmachine_create_from_machineset.json "${args[@]}"
  [ "$(echo "$output" | jq -c '[.operation, .operationAssumed]')" = '["CREATE",false]' ]
  run "$RUNNER" explain -r test_data/capi-infra/openstackmachine_create_from_machineset.json --operation CREATE "${args[@]}"
  [ "$status" -eq 1 ]
  [[ "$output" == *'holds a request: leave --operation out'* ]]
}

@test "explain lists the fields that flow or that the child sets; --verbose lists the rest" {
  args=(-r test_data/capi/v1beta2/machineset_update_drifted_from_md.json
    -p test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml)
  run "$RUNNER" explain "${args[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'fields:
  spec.deletion.order = "Random": flows from MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2) spec.deletion.order (unchanged; child had "Random")
  and 7 more that neither the parent nor the child sets (--verbose lists them)
patch:'* ]]
  [[ "$output" != *'the parent does not set it'* ]]
  run "$RUNNER" explain --verbose "${args[@]}"
  [ "$(grep -c 'the parent does not set it' <<<"$output")" -eq 7 ]
  # a field the child sets and the parent does not is listed: the child's value stays
  run "$RUNNER" explain -r test_data/capi/examples/kubeadmcontrolplane_from_topology.json \
    -p test_data/capi/examples/kubeadmcontrolplane_from_topology.parents.yaml
  [[ "$output" == *'spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds: the parent does not set it ('*'); child value 1 kept'* ]]
  [[ "$output" == *'  and 2 more that neither the parent nor the child sets (--verbose lists them)'* ]]
}

@test "explain warns of a parent given in another namespace, as run --parents does" {
  sed 's/namespace: default/namespace: team-a/' \
    test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml >"$BATS_TEST_TMPDIR/md-1.yaml"
  warning="WARN policy-runner: Cannot find cluster.x-k8s.io/v1beta2/MachineDeployment named 'capi-quickstart-md-1' inside of namespace 'Some(\"default\")'; --parents holds cluster.x-k8s.io/v1beta2/MachineDeployment team-a/capi-quickstart-md-1 ($BATS_TEST_TMPDIR/md-1.yaml document 1), which the runner cannot convert to the apiVersion or move to the namespace asked for"
  run --separate-stderr "$RUNNER" explain -r test_data/capi/v1beta2/machineset_update_drifted_from_md.json \
    -p "$BATS_TEST_TMPDIR/md-1.yaml"
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [[ "$output" == *'(parent of this MachineSet) not found: allowed unchanged'* ]]
  [ "$stderr" = "$warning" ]
  need_module
  run --separate-stderr "$RUNNER" run --allow-context-aware -r test_data/capi/v1beta2/machineset_update_drifted_from_md.json \
    --parents "$BATS_TEST_TMPDIR/md-1.yaml" "$POLICY"
  [[ "$stderr" == *"$warning"* ]]
}

@test "explain an infrastructure object: the Cluster read for its tags is named, and no note contradicts it" {
  run "$RUNNER" explain -r examples/gcp/gcpcluster_shop.json -p examples/gcp/gcpcluster_shop.parents.yaml \
    --settings-path examples/gcp/settings_team.json
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'note: no propagation rule gives this GCPCluster its labels and annotations: they are left as they are; Cluster default/shop-gcp (cluster.x-k8s.io/v1beta2) is read for the cloud tags only'* ]]
  [[ "$output" != *'no parent looked up'* ]]
  # without a Cluster to read (no cluster-name label, no owner), the core's note stands
  jq '.object.metadata.labels = {}' examples/gcp/gcpcluster_shop.json >"$BATS_TEST_TMPDIR/handmade.json"
  run "$RUNNER" explain -r "$BATS_TEST_TMPDIR/handmade.json" --settings-path examples/gcp/settings_team.json
  [[ "$output" == *'no parent looked up for its metadata'* ]]
}

@test "the demo's GCP examples: a label propagates under plexsphere-, a qualified key is skipped, tagKeys names it" {
  explain() {
    "$RUNNER" explain -o json -r examples/gcp/gcpcluster_shop.json -p examples/gcp/gcpcluster_shop.parents.yaml \
      --settings-path "examples/gcp/$1"
  }
  run explain settings_team.json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c .patch)" = '[{"op":"add","path":"/spec/additionalLabels","value":{"plexsphere-team":"shop"}}]' ]
  run explain settings_cost_center.json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r '.explanation.cloudTags.labels[] | select(.qualifiedKey == "team.example.com/cost-center") | .reason')" = key-character-class ]
  [ "$(echo "$output" | jq -r '.warnings | length')" -eq 1 ]
  run explain settings_tag_keys.json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c .patch)" = '[{"op":"add","path":"/spec/additionalLabels","value":{"plexsphere-cost-center":"cc-4711","plexsphere-team":"shop"}}]' ]
  [ "$(echo "$output" | jq -r '.warnings | length')" -eq 0 ]
}

@test "a kind without a composite resource's shape (a Certificate): allowed unchanged, one warning naming it" {
  local settings='{"cloudTags":{"propagatingLabels":["platform/team"]}}'
  local warning="Certificate (cert-manager.io/v1) is not a Crossplane composite resource (no spec.crossplane, nor a cluster-scoped spec.compositionUpdatePolicy), so this policy leaves it unchanged; a v2 XR is tagged once Crossplane writes spec.crossplane, any other kind: remove it from the policy's rules"
  run "$RUNNER" explain -o json -r test_data/xr/certificate_opted_in_labels.yaml -s "$settings"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c .warnings)" = "$(jq -cn --arg w "$warning" '[$w]')" ]
  [ "$(echo "$output" | jq -c .patch)" = '[]' ]
  [ "$(echo "$output" | jq -r '.explanation | has("cloudTags")')" = false ]
  need_module
  run --separate-stderr "$RUNNER" run --operation CREATE --request-path test_data/xr/certificate_opted_in_labels.yaml \
    --settings-json "$settings" "$POLICY"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c '[.allowed, .patch, .warnings]')" = "$(jq -cn --arg w "$warning" '[true, null, [$w]]')" ]
  [[ "$stderr" != *'was treated as a Crossplane composite resource'* ]]
}

@test "explain prints a warning once: as a warning, never again as a note" {
  local settings='{"cloudTags":{"propagatingLabels":["platform/team"]}}'
  run "$RUNNER" explain -r test_data/xr/certificate_opted_in_labels.yaml -s "$settings"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(grep -c 'is not a Crossplane composite resource' <<<"$output")" -eq 1 ]
  [ "$(grep -c '^warning: Certificate (cert-manager.io/v1) is not a Crossplane composite resource' <<<"$output")" -eq 1 ]
  run ! grep -q '^note: ' <<<"$output"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default, labels: {platform/team: a}}\n' \
    >"$BATS_TEST_TMPDIR/configmap.yaml"
  run "$RUNNER" explain -r "$BATS_TEST_TMPDIR/configmap.yaml" --operation CREATE -s "$settings"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(grep -c 'is a Kubernetes kind' <<<"$output")" -eq 1 ]
  run "$RUNNER" explain -o json -r "$BATS_TEST_TMPDIR/configmap.yaml" --operation CREATE -s "$settings"
  [ "$(echo "$output" | jq -c '[(.warnings | length), .explanation.notes]')" = '[1,[]]' ]
}

# A Machine owned by a control plane kind the shipped contextAwareResources do
# not list (cluster-api-k3s's KThreesControlPlane), with that control plane
# given as a parent: the module is refused the look-up and rejects (500).
k3s_machine() {
  jq '.object.metadata.ownerReferences[0] |= (.kind = "KThreesControlPlane" | .name = "k3s-cp")' \
    test_data/capi/v1beta2/machine_create_from_kcp.json >"$BATS_TEST_TMPDIR/machine.json"
  sed -e 's/^kind: KubeadmControlPlane$/kind: KThreesControlPlane/' -e 's/^  name: capi-quickstart-wqx5r$/  name: k3s-cp/' \
    test_data/capi/v1beta2/parents/kubeadmcontrolplane_capi-quickstart-wqx5r.yaml >"$BATS_TEST_TMPDIR/k3s.yaml"
  grep -qx 'kind: KThreesControlPlane' "$BATS_TEST_TMPDIR/k3s.yaml"
}

@test "a look-up the shipped contextAwareResources do not grant: explain rejects (500) as the module does, and names it" {
  need_module
  k3s_machine
  args=(-r "$BATS_TEST_TMPDIR/machine.json")
  run --separate-stderr "$RUNNER" run --allow-context-aware "${args[@]}" --parents "$BATS_TEST_TMPDIR/k3s.yaml" "$POLICY"
  echo "$output"
  [ "$status" -eq 0 ]
  module=$output
  [ "$(jq -c '[.allowed, .status.code]' <<<"$module")" = '[false,500]' ]
  message=$(jq -r .status.message <<<"$module")
  [[ "$message" == 'cannot read KThreesControlPlane default/k3s-cp (controlplane.cluster.x-k8s.io/v1beta2), the parent of this Machine: Policy has not been granted access to Kubernetes controlplane.cluster.x-k8s.io/v1beta2/KThreesControlPlane resources.'* ]]

  run "$RUNNER" explain -o json "${args[@]}" -p "$BATS_TEST_TMPDIR/k3s.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.allowed, .code, .patch]' <<<"$output")" = '[false,500,[]]' ]
  [ "$(jq -r .message <<<"$output")" = "$message" ]
  [ "$(jq -c '.refusedLookups | map([.apiVersion, .kind, .namespace, .name])' <<<"$output")" = \
    '[["controlplane.cluster.x-k8s.io/v1beta2","KThreesControlPlane","default","k3s-cp"]]' ]

  run "$RUNNER" explain "${args[@]}" -p "$BATS_TEST_TMPDIR/k3s.yaml"
  echo "$output"
  [ "${lines[1]}" = "decision: rejected (500): $message" ]
  [[ "$output" == *$'\nrefused look-up: KThreesControlPlane default/k3s-cp (controlplane.cluster.x-k8s.io/v1beta2): controlplane.cluster.x-k8s.io/v1beta2/KThreesControlPlane is not in the contextAwareResources of policy-metadata.yml: '*'(docs/deploying.md#adding-a-control-plane-kind)'$'\n'* ]]
  [[ "$output" == *$'\npatch: none' ]]
}

@test "granted by the metadata (explain -m, the module annotated with it): explain and the module allow with the same patch" {
  unannotated=${UNANNOTATED:-policy.wasm}
  [ -f "$unannotated" ] || { echo "no module to annotate at $unannotated (make policy.wasm)" >&2; false; }
  k3s_machine
  python3 - "$BATS_TEST_TMPDIR/metadata.yml" <<'PY'
import sys, yaml
metadata = yaml.safe_load(open("policy-metadata.yml"))
metadata["contextAwareResources"].append({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KThreesControlPlane"})
yaml.safe_dump(metadata, open(sys.argv[1], "w"))
PY
  "$RUNNER" annotate -m "$BATS_TEST_TMPDIR/metadata.yml" -o "$BATS_TEST_TMPDIR/granted.wasm" "$unannotated"
  run --separate-stderr "$RUNNER" run --allow-context-aware -r "$BATS_TEST_TMPDIR/machine.json" \
    --parents "$BATS_TEST_TMPDIR/k3s.yaml" "$BATS_TEST_TMPDIR/granted.wasm"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq .allowed <<<"$output")" = true ]
  module_patch=$(jq -c '.patch | @base64d | fromjson' <<<"$output")
  [ "$module_patch" != '[]' ]
  run "$RUNNER" explain -o json -m "$BATS_TEST_TMPDIR/metadata.yml" -r "$BATS_TEST_TMPDIR/machine.json" \
    -p "$BATS_TEST_TMPDIR/k3s.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.allowed, .refusedLookups]' <<<"$output")" = '[true,[]]' ]
  [ "$(jq -c .patch <<<"$output")" = "$module_patch" ]
}

# README's Deploying and docs/deploying.md's Failure behaviour say that a
# policy-server outage never blocks the controllers (failurePolicy: Ignore);
# a failed look-up is no outage: the module answers, and rejects.
@test "the docs say what the module does on a failed look-up: it rejects the write (500), retryable" {
  need_module
  # No --allow-context-aware: the look-up of the MachineDeployment is refused.
  run --separate-stderr "$RUNNER" run -r test_data/capi/v1beta2/machineset_update_drifted_from_md.json \
    --parents test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml "$POLICY"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.allowed, .status.code]' <<<"$output")" = '[false,500]' ]
  message=$(jq -r .status.message <<<"$output")
  [[ "$message" == 'cannot read MachineDeployment default/capi-quickstart-md-1 (cluster.x-k8s.io/v1beta2), the parent of this MachineSet: '* ]]
  retry=${message##*; }
  [ "$retry" = "the request can be retried once the policy can read it" ]
  section() { sed -n "/^## $2\$/,/^## /p" "$1" | tr '\n' ' ' | tr -s ' '; }
  for doc in "README.md Deploying" "docs/deploying.md Failure behaviour"; do
    text=$(section ${doc%% *} "${doc#* }")
    echo "$doc: $text" | head -c 300; echo
    [[ "$text" == *"outage never blocks"* || "$text" == *"cannot get an answer from the policy-server"* ]]
    [[ "$text" == *"A failed look-up "*"block"* ]]
    [[ "$text" == *"code 500"* ]]
    [[ "$text" == *"cannot read <"*"; $retry"* ]]
  done
}
