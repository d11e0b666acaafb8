#!/usr/bin/env bats
#
# End-to-end tests of the Cluster API metadata propagation, driven through a
# kwctl-compatible runner, the policy's look-ups answered from plain objects.
#
#   bats e2e-tests/capi.bats                      # project runner + annotated-policy.wasm
#   KWCTL=kwctl bats e2e-tests/capi.bats          # a real kwctl on the PATH
#   POLICY=path/to/module.wasm bats e2e-tests/capi.bats
#   CASES='test_data/capi/v1beta2/cases/machineset_*' bats e2e-tests/capi.bats   # some cases only
#
# The expectations are data: test_data/capi/<version>/cases/*.yaml, each a
# request of that directory, its settings and what the policy must answer
# (e2e-tests/cases.bash lists the keys), written by hand from the
# propagation contract. Both the metadata cases and the in-place field cases
# (inplace.bats) live there; the two `every ... case` tests below run all of
# them. The tests named after a route run one case each: one per route and
# flow family, so a broken route shows by name. Fixtures: the requests
# test_data/capi/<version>/<scenario>.json and the parents the policy may
# read, test_data/capi/<version>/parents/*.yaml, which the project's runner
# serves as a cluster would (`run --parents`: the object asked for, pruned by
# the look-up's field masks, or NotFound). test_data/capi/<version>/lookups.tsv
# lists, per scenario, the look-ups the policy must make, in order (`-`:
# none); evaluate (capi_helpers.bash) checks the session the runner records
# (`--record-session`) against it. Under a real kwctl, kwctl replays that
# recorded session. A host error objects cannot give (403, 503) comes from a
# hand-written session the row names, whose look-ups, field masks included,
# the policy must make exactly. See test_data/capi/README.md.

RUNNER="${KWCTL:-target/host/policy-runner}"
POLICY="${POLICY:-annotated-policy.wasm}"
DATA=test_data/capi

load capi_helpers

# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------

@test "fixtures: every scenario in lookups.tsv has a request, every request a row and a case, every session a file" {
  local version problems=0 scenario lookups session extra request case_file
  # A Kind may hold digits (RKE2ControlPlane, K0sControlPlane, MicroK8sControlPlane).
  local lookup='[A-Z][A-Za-z0-9]*/[a-z0-9.-]*/[a-z0-9.-]+'
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
    for request in "$DATA/$version"/*.json; do
      scenario=$(basename "$request" .json)
      grep -qxF "request: $scenario.json" "$DATA/$version"/cases/*.yaml ||
        { echo "$request: no case in $version/cases/ runs it"; problems=$((problems + 1)); }
    done
    for case_file in "$DATA/$version"/cases/*.yaml; do
      request=$(awk '/^request: / { print $2 }' "$case_file")
      [ -f "$DATA/$version/$request" ] || { echo "$case_file: no request '$request'"; problems=$((problems + 1)); }
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

# ---------------------------------------------------------------------------
# every case
# ---------------------------------------------------------------------------

@test "every v1beta1 case (test_data/capi/v1beta1/cases)" {
  every_case "$DATA/v1beta1"
}

@test "every v1beta2 case (test_data/capi/v1beta2/cases)" {
  every_case "$DATA/v1beta2"
}

# ---------------------------------------------------------------------------
# one case per route (v1beta2): MachineDeployment -> MachineSet -> Machine,
# InfraMachine and BootstrapConfig; KubeadmControlPlane -> Machine; the other
# providers' control planes (RKE2, k0smotron, Kairos, Talos) -> Machine,
# InfraMachine and BootstrapConfig; Cluster topology / ClusterClass -> control
# plane, MachineDeployment, MachinePool; Machine -> Node; a parent that cannot
# be read
# ---------------------------------------------------------------------------

@test "route MachineDeployment -> MachineSet: labels and annotations flow, controller keys stay" {
  run_case "$DATA/v1beta2/cases/machineset_create_from_md.yaml"
}

@test "route MachineSet -> Machine: template metadata and the node audit annotations" {
  run_case "$DATA/v1beta2/cases/machine_create_from_machineset.yaml"
}

@test "route MachineSet -> InfraMachine (DockerMachine): template metadata" {
  run_case "$DATA/v1beta2/cases/dockermachine_create_from_machineset.yaml"
}

@test "route KubeadmControlPlane -> BootstrapConfig (KubeadmConfig): machineTemplate metadata" {
  run_case "$DATA/v1beta2/cases/kubeadmconfig_create_from_kcp.yaml"
}

@test "route KubeadmControlPlane -> Machine: machineTemplate metadata" {
  run_case "$DATA/v1beta2/cases/machine_create_from_kcp.yaml"
}

@test "route RKE2ControlPlane -> Machine: machineTemplate metadata and drain timeout, bookkeeping kept" {
  run_case "$DATA/v1beta2/cases/machine_create_from_rke2controlplane.yaml"
}

@test "route RKE2ControlPlane -> BootstrapConfig (RKE2Config), non-controller owner: machineTemplate metadata" {
  run_case "$DATA/v1beta2/cases/rke2config_create_from_rke2controlplane.yaml"
}

@test "route KairosControlPlane -> InfraMachine (DockerMachine), controller owner: machineTemplate metadata" {
  run_case "$DATA/v1beta2/cases/dockermachine_create_from_kairoscontrolplane.yaml"
}

@test "route K0sControlPlane UPDATE: a drifted Machine is restored, and rejected in validate mode" {
  run_cases "$DATA/v1beta2/cases/machine_update_from_k0scontrolplane_drifted.yaml" \
    "$DATA/v1beta2/cases/machine_update_from_k0scontrolplane_drifted.validate.yaml"
}

@test "route TalosControlPlane -> Machine: no machine template, allowed unchanged without a warning" {
  run_case "$DATA/v1beta2/cases/machine_create_from_taloscontrolplane.yaml"
}

@test "route Cluster topology + ClusterClass -> KubeadmControlPlane, also on machineTemplate" {
  run_case "$DATA/v1beta2/cases/kubeadmcontrolplane_create_topology.yaml"
}

@test "route Cluster topology + ClusterClass -> MachineDeployment" {
  run_case "$DATA/v1beta2/cases/machinedeployment_create_topology.yaml"
}

@test "route Cluster topology + ClusterClass -> MachinePool" {
  run_case "$DATA/v1beta2/cases/machinepool_create_topology.yaml"
}

@test "route Machine -> Node: node-labels/node-annotations and the warning" {
  run_case "$DATA/v1beta2/cases/machine_create_node_labels.yaml"
}

@test "route UPDATE: a drifted MachineSet is restored, the user's label kept" {
  run_case "$DATA/v1beta2/cases/machineset_update_drifted_from_md.yaml"
}

@test "route parent unreadable (503): rejected, names the parent, can be retried" {
  run_case "$DATA/v1beta2/cases/kubeadmconfig_create_lookup_unavailable.yaml"
}
