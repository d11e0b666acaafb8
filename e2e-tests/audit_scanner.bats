#!/usr/bin/env bats
# The validate-mode example evaluated the way Kubewarden's audit scanner
# evaluates it (kubewarden-controller internal/audit-scanner): every existing
# object of every audited kind is posted as an AdmissionReview with operation
# CREATE, no oldObject and no userInfo, and the answer becomes the report
# result: allowed -> pass, rejected -> fail, no answer or status.code 500 ->
# error (scanner.go `auditResource`, report.go `computePolicyResult`).
#
# The objects are test_data/audit_scanner/ (see gen.py there): drifted CAPI
# objects and an XR, their compliant twins, a KubeadmConfig whose control
# plane cannot be read and a MachineSet whose MachineDeployment is gone, each
# with the kwctl session the policy's own look-ups recorded (the runner's
# `--parents` and `--record-session`); the settings are the ones
# examples/validate-mode-policy.yaml ships. A whole drifted dump
# (test_data/dumps/quickstart_v1beta2_drift.yaml) is scanned too, every
# object of the example's kinds posted the same way, with parents answered
# from the dump (e2e-tests/scanner_dump.py).
#
# Run from the repository root, after `make annotated-policy.wasm runner`:
#   bats e2e-tests/audit_scanner.bats
#   KWCTL=kwctl bats e2e-tests/audit_scanner.bats   # a real kwctl on the PATH
# The runner (RUNNER) writes the sessions gen.py --check and scanner_dump.py
# compare and replay: a real kwctl has no `--parents`.

bats_require_minimum_version 1.5.0

KWCTL=${KWCTL:-target/host/policy-runner}
RUNNER=${RUNNER:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
DIR=test_data/audit_scanner

setup() {
  if [[ "$KWCTL" == */* ]]; then
    [[ -x "$KWCTL" ]] || { echo "cannot run: '$KWCTL' not found: build it (make runner) or set KWCTL=kwctl" >&2; false; }
  else
    command -v "$KWCTL" >/dev/null || { echo "cannot run: '$KWCTL' is not on the PATH" >&2; false; }
  fi
  [[ -f "$POLICY" ]] || { echo "cannot run: '$POLICY' not found: run 'make annotated-policy.wasm'" >&2; false; }
  command -v jq >/dev/null || { echo "cannot run: jq is required" >&2; false; }
  SETTINGS=$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))["spec"]["settings"]))' \
    examples/validate-mode-policy.yaml)
}

# scan SCENARIO [HOST FLAGS...]: evaluates the scenario as the scanner does
# and prints the report result, a tab, and the message the report carries.
scan() {
  local scenario=$1
  shift
  local replay=()
  if [[ -f "$DIR/replay_$scenario.yml" ]]; then
    replay=(--replay-host-capabilities-interactions "$DIR/replay_$scenario.yml")
  fi
  local response
  response=$("$KWCTL" run "$@" --allow-context-aware "${replay[@]}" \
    --request-path "$DIR/$scenario.json" --settings-json "$SETTINGS" "$POLICY" 2>/dev/null) || {
    printf 'error\thost error\n'
    return 0
  }
  jq -r '[(if .status.code == 500 then "error" elif .allowed then "pass" else "fail" end),
          (.status.message // "")] | @tsv' <<<"$response"
}

# Every scenario gets the result scenarios.tsv names; prints the mismatches.
scan_all() {
  local scenario expected source got failed=0
  while IFS=$'\t' read -r scenario expected source; do
    [[ "$scenario" == \#* || -z "$scenario" ]] && continue
    got=$(scan "$scenario" "$@" | cut -f1)
    if [[ "$got" != "$expected" ]]; then
      echo "$scenario: expected $expected, got $got ($source)"
      failed=1
    fi
  done <"$DIR/scenarios.tsv"
  return "$failed"
}

@test "the fixtures are requests as the scanner sends them: CREATE, no oldObject, no userInfo" {
  for f in "$DIR"/*.json; do
    run jq -e '.request | .operation == "CREATE" and .oldObject == null and .userInfo == {}
               and .resource.resource == .kind.kind and .uid == .object.metadata.uid' "$f"
    [ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
  done
}

@test "hosted as policy-server hosts it: drifted objects fail, compliant ones pass, an unreadable parent is an error" {
  # A fresh instance per request, look-up answers pruned by their masks.
  unset POLICY_RUNNER_IGNORE_FIELD_MASKS POLICY_RUNNER_REUSE_INSTANCE
  run scan_all
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "a host that ignores field_masks (Kubewarden before 1.33) gives every object the same result" {
  if "$KWCTL" run --help 2>&1 | grep -q -- --ignore-field-masks; then
    run scan_all --ignore-field-masks
  else
    # kwctl's replay answers with the recorded objects whole: that is already
    # a host that ignores the masks.
    run scan_all
  fi
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "a fail result carries every deviation: the message the report shows" {
  run scan machineset_drifted
  [ "$status" -eq 0 ]
  [[ "$output" == fail$'\t'*"deviates from the metadata propagation contract"* ]]
  [[ "$output" == *'"nodepool" is "pool0" (expected "pool1")'* ]]
  [[ "$output" == *'missing "node-role.kubernetes.io/worker"'* ]]
  run scan machine_drifted
  [[ "$output" == fail$'\t'*"spec.minReadySeconds"* ]]
  # Its stale tag, not its stale skip annotation: that one is never a
  # deviation (validate mode judges what the policy writes).
  run scan xdatabase_drifted
  [[ "$output" == fail$'\t'*'spec.cloudTags: remove "plexsphere:platform/team"'* ]]
  [[ "$output" != *"cloud-tags.plexsphere.io/skipped"* ]]
}

@test "an error result names the parent that could not be read and says the request can be retried" {
  run scan kubeadmconfig_parent_unavailable
  [ "$status" -eq 0 ]
  [[ "$output" == error$'\t'"cannot read KubeadmControlPlane default/capi-quickstart-wqx5r"* ]]
  [[ "$output" == *"can be retried"* ]]
}

@test "a parent that is gone is no error: the object passes" {
  run scan machineset_parent_not_found
  [[ "$output" == pass$'\t' ]]
}

@test "the compliant fixtures are what the mutating policy makes of the drifted ones, the sessions what it looks up (gen.py --check)" {
  [[ -x "$RUNNER" ]] || { echo "cannot run: '$RUNNER' not found: build it (make runner)" >&2; false; }
  RUNNER="$RUNNER" POLICY="$POLICY" run python3 "$DIR/gen.py" --check
  echo "$output"
  [ "$status" -eq 0 ]
}

# The drifted quick-start dump (test_data/dumps/gen.py plants five deviating
# objects), listed and posted as the scanner lists and posts it, parents
# answered from the same dump (e2e-tests/scanner_dump.py).
DRIFT_DUMP=test_data/dumps/quickstart_v1beta2_drift.yaml
UNAVAILABLE=Machine/default/capi-quickstart-wqx5r-hb7xq

@test "a drifted dump as the scanner scans it: planted drift fails, compliant objects pass, an unreadable parent is an error" {
  [[ -x "$RUNNER" ]] || { echo "cannot run: '$RUNNER' not found: build it (make runner)" >&2; false; }
  RUNNER="$RUNNER" run --separate-stderr python3 e2e-tests/scanner_dump.py "$KWCTL" "$POLICY" "$DRIFT_DUMP" \
    examples/validate-mode-policy.yaml --unavailable "$UNAVAILABLE" --out "$BATS_TEST_TMPDIR/scan"
  echo "$output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]

  # Every review is what the scanner posts: CREATE, no oldObject, no userInfo.
  for f in "$BATS_TEST_TMPDIR"/scan/review-*.json; do
    jq -e '.request | .operation == "CREATE" and .oldObject == null and .userInfo == {}
           and .uid == .object.metadata.uid' "$f" >/dev/null || { echo "$f is not a scanner review"; return 1; }
  done

  # One line per object of a kind the example's rules name (no DockerMachine,
  # Cluster or ClusterClass: the scanner never lists them), in dump order.
  # The five planted deviations fail; the Machine whose KubeadmControlPlane
  # look-up gets the API server's 503 is an error although it complies;
  # every other object passes.
  diff -u - <(cut -f1,2 <<<"$output") <<'EXPECTED'
fail	MachineDeployment default/capi-quickstart-md-0-p6hg9
pass	MachineDeployment default/capi-quickstart-md-1
fail	MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn
fail	MachineSet default/capi-quickstart-md-1-x7k2p
error	Machine default/capi-quickstart-wqx5r-hb7xq
pass	Machine default/capi-quickstart-wqx5r-4mnnp
pass	Machine default/capi-quickstart-wqx5r-zq2cd
pass	Machine default/capi-quickstart-md-0-p6hg9-v7bqn-8wq2x
pass	Machine default/capi-quickstart-md-0-p6hg9-v7bqn-tt4kd
fail	Machine default/capi-quickstart-md-1-x7k2p-6nbqt
fail	Machine default/capi-quickstart-md-1-x7k2p-9ttvz
pass	MachinePool default/capi-quickstart-mp-0-x7b2k
pass	KubeadmControlPlane default/capi-quickstart-wqx5r
pass	KubeadmConfig default/capi-quickstart-wqx5r-hb7xq
pass	KubeadmConfig default/capi-quickstart-wqx5r-4mnnp
pass	KubeadmConfig default/capi-quickstart-wqx5r-zq2cd
pass	KubeadmConfig default/capi-quickstart-md-0-p6hg9-v7bqn-8wq2x
pass	KubeadmConfig default/capi-quickstart-md-0-p6hg9-v7bqn-tt4kd
pass	KubeadmConfig default/capi-quickstart-md-1-x7k2p-6nbqt
pass	KubeadmConfig default/capi-quickstart-md-1-x7k2p-9ttvz
EXPECTED

  # The messages the report carries: each deviation, and the parent that
  # could not be read.
  message() { awk -F'\t' -v o="$1" '$2 == o { print $3 }' <<<"$output"; }
  [[ "$(message 'MachineSet default/capi-quickstart-md-1-x7k2p')" == *'metadata.labels: missing "nodepool" (expected "pool1")'* ]]
  [[ "$(message 'Machine default/capi-quickstart-md-1-x7k2p-6nbqt')" == *'"nodepool" is "pool0" (expected "pool1")'* ]]
  [[ "$(message 'MachineSet default/capi-quickstart-md-0-p6hg9-v7bqn')" == *'nodeDrainTimeoutSeconds: is 300 (expected 600'* ]]
  [[ "$(message 'Machine default/capi-quickstart-md-1-x7k2p-9ttvz')" == *'ops.example.com/ApprovedForProduction'* ]]
  [[ "$(message 'MachineDeployment default/capi-quickstart-md-0-p6hg9')" == *'missing "ClusterClass.machineDeployment.annotation"'* ]]
  [[ "$(message 'Machine default/capi-quickstart-wqx5r-hb7xq')" == 'cannot read KubeadmControlPlane default/capi-quickstart-wqx5r'*'ServiceUnavailable'* ]]
  [[ "$(message 'Machine default/capi-quickstart-wqx5r-hb7xq')" == *'can be retried'* ]]
}

@test "the examples: mutating policies are not audited, the validate-mode one is; all carry severity and category" {
  run python3 - <<'EOF'
import glob, sys, yaml
problems = []
# kwctl scaffold manifest copies backgroundAudit and these two annotations
# from the module's metadata (kwctl src/scaffold/manifest.rs): the scaffolded
# policy is mutating, so it must not be audited either.
metadata = yaml.safe_load(open("policy-metadata.yml"))
if metadata["mutating"] and metadata.get("backgroundAudit", True):
    problems.append("policy-metadata.yml: the module is mutating and audited"
                    " (kwctl scaffold manifest copies backgroundAudit)")
keys = ("io.kubewarden.policy.severity", "io.kubewarden.policy.category")
scaffolded = {key: metadata["annotations"][key] for key in keys}
for path in sorted(glob.glob("examples/*.yaml")):
    for doc in yaml.safe_load_all(open(path)):
        if not doc or doc.get("kind") != "ClusterAdmissionPolicy":
            continue
        spec, meta = doc["spec"], doc["metadata"]
        audited = spec.get("backgroundAudit", True)
        if spec["mutating"] and audited:
            problems.append(f"{path}: a mutating policy is audited (backgroundAudit defaults to true)")
        annotations = meta.get("annotations") or {}
        for key in keys:
            if annotations.get(key) != scaffolded[key]:
                problems.append(f"{path}: {key} is {annotations.get(key)!r},"
                                f" not {scaffolded[key]!r} as kwctl scaffold manifest writes it")
        if not spec["mutating"]:
            if not audited:
                problems.append(f"{path}: the validate-mode policy is not audited")
            if spec.get("settings", {}).get("mode") != "validate":
                problems.append(f"{path}: an audited policy must run in validate mode")
        for key in ("failurePolicy", "timeoutSeconds"):
            if key not in spec:
                problems.append(f"{path}: {key} is not chosen")
print("\n".join(problems))
sys.exit(1 if problems else 0)
EOF
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "the scanner's ServiceAccount may list every kind the validate-mode example audits" {
  run python3 - <<'EOF'
import sys, yaml
policy = yaml.safe_load(open("examples/validate-mode-policy.yaml"))
docs = list(yaml.safe_load_all(open("examples/audit-scanner-rbac.yaml")))
roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
bindings = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
granted = set()
for b in bindings:
    if not any(s["kind"] == "ServiceAccount" and s["name"] == "audit-scanner"
               and s["namespace"] == "kubewarden" for s in b["subjects"]):
        continue
    for rule in roles[b["roleRef"]["name"]]["rules"]:
        if {"get", "list"} <= set(rule["verbs"]):
            granted |= {(g, r) for g in rule["apiGroups"] for r in rule["resources"]}
missing = [(g, r) for rule in policy["spec"]["rules"]
           for g in rule["apiGroups"] for r in rule["resources"] if (g, r) not in granted]
print("not listable by audit-scanner:", missing) if missing else None
sys.exit(1 if missing else 0)
EOF
  echo "$output"
  [ "$status" -eq 0 ]
}
