#!/usr/bin/env bats
# `policy-runner audit --cluster`'s own mechanics against the real API server (docs/validate-and-audit.md,
# "Objects that were there first"): lists a page at a time, a parent that was not listed read once, the
# contextAwareResources check as policy-server makes it, a dry run that stores nothing, --max-objects, a
# second --fix that writes nothing, Ctrl-C and SIGTERM between two writes, a kind the runner may not list,
# an object the policy's webhook is never called for, bad input, an object deleted before its write, -n
# and a cluster-scoped kind, the pre-flight (RBAC, a policy not active), and another module's policy.
# The objects (cluster/objects/live-audit.yaml): a namespaced XR and the five VPCs it composes, in the
# namespace live-audit, under cluster/policies/managed-resources.yaml (deployed: its webhook tags the VPCs).
# objects-there-first.bats brings a whole cluster into line; this file counts requests.

POLICY=$BATS_TEST_DIRNAME/../policies/managed-resources.yaml
VPCS=vpcs.ec2.aws.m.upbound.io

setup_file() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/live-audit.yaml
  # A test bed reused from an earlier run: its objects go, the namespace stays (no namespace controller
  # runs here to finish a namespace's deletion).
  apply_named "$OBJECTS" live-audit >/dev/null
  kubectl delete "$VPCS" --all -n live-audit --ignore-not-found >/dev/null
  kubectl delete networks.network.example.org --all -n live-audit --ignore-not-found --timeout=60s >/dev/null
  kubectl delete serviceaccount reader no-patch -n live-audit --ignore-not-found >/dev/null
  apply_named "$OBJECTS" la-net >/dev/null
  local uid
  uid=$(kubectl get networks.network.example.org la-net -n live-audit -o jsonpath='{.metadata.uid}')
  for i in 1 2 3 4 5; do
    named "$OBJECTS" "la-net-vpc$i" | python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' |
      jq --arg uid "$uid" '.metadata.ownerReferences[0].uid = $uid' | kubectl create -f - >/dev/null
  done
}

teardown_file() {
  load helpers
  kubectl delete clusterrolebinding live-audit-reader live-audit-no-patch --ignore-not-found >/dev/null
  kubectl delete clusterrole live-audit-reader live-audit-no-patch --ignore-not-found >/dev/null
  kubectl delete clusteradmissionpolicies.policies.kubewarden.io la-unregistered la-safe-labels --ignore-not-found >/dev/null
  kubectl delete buckets.storage.gcp.upbound.io la-xnet-bucket --ignore-not-found --wait=false >/dev/null
  kubectl delete xnetworks.network.example.org la-xnet --ignore-not-found --wait=false >/dev/null
  kubectl patch xnetworks.network.example.org la-xnet --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  kubectl delete "$VPCS" --all -n live-audit --ignore-not-found >/dev/null
  kubectl delete "$VPCS" kw-vpc -n kubewarden --ignore-not-found >/dev/null
  kubectl delete networks.network.example.org --all -n live-audit --ignore-not-found --wait=false >/dev/null
}

setup() {
  load helpers
}

# live ARGS...: the live audit of the VPCs in live-audit under the policy file, -o json (the selector keeps
# out the cluster-scoped managed resources of other scenarios, which -n does not): the document in
# $report, the exit code in $status, stderr in $BATS_TEST_TMPDIR/stderr (printed for a failing test's log).
live() {
  status=0
  "$RUNNER" audit --full --cluster -n live-audit -l crossplane.io/composite=la-net -o json --qps 100 --burst 100 "$@" \
    >"$BATS_TEST_TMPDIR/report.json" \
    2>"$BATS_TEST_TMPDIR/stderr" || status=$?
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  echo "policy-runner audit --cluster -n live-audit $*: exit $status"
  sed 's/^/  stderr: /' "$BATS_TEST_TMPDIR/stderr"
  jq -c '.requests' <<<"$report" || true
}

# vpcs STATUS: how many VPCs of the report have that status.
vpcs() {
  jq --arg s "$1" '[.policies[0].report.objects[] | select(.kind == "VPC" and .namespace == "live-audit" and .status == $s)]
    | length' <<<"$report"
}

# requests VERB: the requests of that verb the run sent.
requests() { jq --arg v "$1" '.requests[$v] // 0' <<<"$report"; }

# versions: each VPC's name and resourceVersion, sorted.
versions() { kubectl get "$VPCS" -n live-audit -o json | jq -c '[.items[] | [.metadata.name, .metadata.resourceVersion]] | sort'; }

# drift VALUE: the XR's cost-center label changed, which its VPCs' tags follow (the XR is not a kind the
# policy acts on: nothing else is written).
# policy-server answers a look-up from what it read in the last 5 s (policy-evaluator's
# get_resource_cached): the XR changed within that time would be seen as it was, so drift waits it out.
drift() {
  kubectl label networks.network.example.org la-net -n live-audit --overwrite "cost-center=$1" >/dev/null
  sleep 6
}

# mark: the API server's audit log's length now; fixer_patches MARK: the fixer's PATCHes (its field manager)
# the API server answered after line MARK, one "namespace/name code" a line.
mark() { wc -l <"$STATE/audit.log"; }
fixer_patches() {
  tail -n +"$(($1 + 1))" "$STATE/audit.log" | jq -r -R 'fromjson? | select(.stage == "ResponseComplete"
    and .verb == "patch" and (.requestURI | test("[?&]fieldManager=metadata-propagation-fix(&|$)")))
    | "\(.objectRef.namespace // "")/\(.objectRef.name) \(.responseStatus.code)"'
}

# fix_in_background ARGS...: the fix of the five VPCs at one request a second, in the background ($pid),
# -o json into $BATS_TEST_TMPDIR/report.json, stderr into $BATS_TEST_TMPDIR/stderr.
fix_in_background() {
  "$RUNNER" audit --full --cluster -n live-audit -l crossplane.io/composite=la-net -o json --policy-name managed-resource-tags \
    --fix --qps 1 --burst 1 "$@" >"$BATS_TEST_TMPDIR/report.json" 2>"$BATS_TEST_TMPDIR/stderr" &
  pid=$!
}

# until_stderr PATTERN: waits (up to 120 s, polling every 0.1 s) for a line of the run's stderr.
until_stderr() {
  for _ in $(seq 1200); do
    if grep -q "$1" "$BATS_TEST_TMPDIR/stderr"; then return 0; fi
    sleep 0.1
  done
  echo "no line $1 on stderr:" >&2
  cat "$BATS_TEST_TMPDIR/stderr" >&2
  return 1
}

# interrupted SIGNAL VALUE: the VPCs' tags drift to VALUE, and SIGNAL (INT, TERM) comes once the fix has
# written one VPC: the run stops after the write in flight and prints the report, exit 3; the objects
# written first are fixed and stored so, the rest not attempted. The report in $report.
interrupted() {
  drift "$2"
  fix_in_background
  until_stderr '^fix 1/5: fixed'
  kill -"$1" "$pid"
  status=0
  wait "$pid" || status=$?
  cat "$BATS_TEST_TMPDIR/stderr"
  [ "$status" -eq 3 ]
  grep -q "^interrupted (SIG$1): stopping after the request in flight" "$BATS_TEST_TMPDIR/stderr"
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  jq -e --arg s "SIG$1" '.summary.interrupted == $s and .summary.result == "run-again" and .summary.exitCode == 3' <<<"$report"
  # Fixed ones first, then only not-attempted ones, at least one of them.
  jq -e --arg s "SIG$1" '[.fix.objects[].outcome] as $o | ($o | index("not-attempted")) as $i
    | $i != null and $i >= 1 and ($o[:$i] | all(. == "fixed")) and ($o[$i:] | all(. == "not-attempted"))
    and ($o[$i:] | length) == .summary.outcomes["not-attempted"]
    and ([.fix.objects[] | select(.outcome == "not-attempted") | .message] | unique == ["interrupted (\($s)) before its write"])' \
    <<<"$report"
  for name in $(jq -r '.fix.objects[] | select(.outcome == "fixed") | .id | split("/")[1] | split(" ")[0]' <<<"$report"); do
    [ "$(tag "$name")" = "$2" ]
  done
}

# account NAME RULES: a ServiceAccount NAME in live-audit bound to a ClusterRole live-audit-NAME of RULES
# (YAML, the list under `rules:`), and a kubeconfig for it, $BATS_TEST_TMPDIR/NAME.kubeconfig.
account() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: live-audit-$1}
rules: $2
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: live-audit-$1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: live-audit-$1}
subjects: [{kind: ServiceAccount, name: $1, namespace: live-audit}]
YAML
  # No controller makes a namespace's default ServiceAccount here.
  kubectl create serviceaccount "$1" -n live-audit >/dev/null
  kubeconfig "$BATS_TEST_TMPDIR/$1.kubeconfig" "$1" --token="$(kubectl create token "$1" -n live-audit)"
}

# vpc_again NAME: the VPC created again as setup_file creates it.
vpc_again() {
  local uid
  uid=$(kubectl get networks.network.example.org la-net -n live-audit -o jsonpath='{.metadata.uid}')
  named "$ROOT/cluster/objects/live-audit.yaml" "$1" | python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' |
    jq --arg uid "$uid" '.metadata.ownerReferences[0].uid = $uid' | kubectl create -f - >/dev/null
}

# tag VPC: the VPC's cost-center tag as stored.
tag() { kubectl get "$VPCS" "$1" -n live-audit -o json | jq -r '.spec.forProvider.tags["plexsphere:cost-center"]'; }

@test "the VPCs created through the webhook keep the contract: the live audit finds each compliant" {
  live --policy "$POLICY"
  [ "$status" -eq 0 ]
  [ "$(vpcs compliant)" -eq 5 ]
  [ "$(tag la-net-vpc3)" = cc-3100 ]
  jq -e '.fix == null and (.policies | length) == 1 and .policies[0].name == "managed-resource-tags"' <<<"$report"
}

@test "lists go a page at a time: two objects a page list the five VPCs in three pages, and the same objects" {
  live --policy "$POLICY"
  one_page=$(jq -c '[.policies[0].report.objects[] | .id] | sort' <<<"$report")
  lists_one=$(requests list)
  live --policy "$POLICY" --page-size 2
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.policies[0].report.objects[] | .id] | sort' <<<"$report")" = "$one_page" ]
  # The VPCs' list took three requests instead of one; every other resource's fits in one page either way.
  [ "$(requests list)" -eq $((lists_one + 2)) ]
  # Each VPC's source names its list, whichever page held it.
  jq -e '[.policies[0].report.objects[] | select(.kind == "VPC") | .source]
    | length == 5 and all(keys == ["list"] and (.list | startswith("vpcs.ec2.aws.m.upbound.io/")))' <<<"$report"
}

@test "a parent that was not listed is read once, with the policy's field masks, however many children ask" {
  live --policy "$POLICY"
  # The XR is no kind the policy's rules match: one GET answers the five VPCs' look-ups.
  [ "$(requests get)" -eq 1 ]
  jq -e '[.policies[0].report.objects[] | select(.kind == "VPC") | .lookups[0]
    | select(.kind == "Network" and .name == "la-net" and .answer == "found" and (.fieldMasks | length) > 0)]
    | length == 5' <<<"$report"
}

@test "a kind outside contextAwareResources is refused as policy-server refuses it, and never read" {
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "ClusterAdmissionPolicy":
        d["spec"]["contextAwareResources"] = [r for r in d["spec"]["contextAwareResources"] if r["kind"] != "Network"]
yaml.safe_dump_all(docs, sys.stdout)' "$POLICY" >"$BATS_TEST_TMPDIR/policy.yaml"
  live --policy "$BATS_TEST_TMPDIR/policy.yaml"
  # A managed resource's UPDATE whose XR cannot be read keeps its tags (never refused): what shows the
  # refusal is each look-up's answer, the host's own text, and that nothing was read.
  [ "$(requests get)" -eq 0 ]
  jq -e '[.policies[0].report.objects[] | select(.kind == "VPC") | .lookups[0]
    | select(.kind == "Network" and .answer == "failed" and (.message
      | contains("Policy has not been granted access to Kubernetes network.example.org/v1alpha1/Network resources")))]
    | length == 5' <<<"$report"
}

@test "drift: a dry run stores nothing, --max-objects bounds the writes, --fix the rest, a second --fix writes nothing" {
  drift cc-3200
  before=$(versions)
  live --policy-name managed-resource-tags
  [ "$status" -eq 1 ]
  [ "$(vpcs deviates)" -eq 5 ]

  live --policy-name managed-resource-tags --fix --dry-run
  [ "$status" -eq 0 ]
  jq -e '.fix.dryRun and ([.fix.objects[] | select(.outcome == "would-fix"
      and any(.changes[]; .path == "/spec/forProvider/tags/plexsphere:cost-center" and .value == "cc-3200"))]
    | length == 5)' <<<"$report"
  [ "$(versions)" = "$before" ]
  [ "$(tag la-net-vpc1)" = cc-3100 ]

  live --policy-name managed-resource-tags --fix --max-objects 2
  # Cut short: run again (exit 3).
  [ "$status" -eq 3 ]
  jq -e '.summary.result == "run-again" and .summary.outcomes["not-attempted"] == 3' <<<"$report"
  [ "$(requests patch)" -eq 2 ]
  jq -e '[.fix.objects[].outcome] == ["fixed", "fixed", "not-attempted", "not-attempted", "not-attempted"]' <<<"$report"

  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
  [ "$(requests patch)" -eq 3 ]
  jq -e '[.fix.objects[] | select(.outcome == "fixed" and .attempts == 1)] | length == 3' <<<"$report"
  for i in 1 2 3 4 5; do [ "$(tag "la-net-vpc$i")" = cc-3200 ]; done

  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
  [ "$(requests patch)" -eq 0 ]
  jq -e '.fix.objects == []' <<<"$report"
  grep -qx 'fix: nothing deviates; nothing to write' "$BATS_TEST_TMPDIR/stderr"
}

@test "Ctrl-C stops the fix after the write in flight; the objects left are not attempted; exit 3" {
  interrupted INT cc-3300
  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
}

@test "a kind the runner may not list is named with the missing verb, and the others are audited" {
  account reader '
  - apiGroups: [ec2.aws.m.upbound.io]
    resources: [vpcs]
    verbs: [get, list]
  - apiGroups: [network.example.org]
    resources: [networks]
    verbs: [get]'
  live --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/reader.kubeconfig"
  [ "$status" -eq 1 ]
  [ "$(vpcs compliant)" -eq 5 ]
  jq -e '.unlisted | any(.resource == "securitygroups.ec2.aws.m.upbound.io" and .verb == "list" and .served
    and (.message | startswith("forbidden: needs verb list on securitygroups.ec2.aws.m.upbound.io")))' <<<"$report"
  jq -e '.unlisted | all(.resource != "vpcs.ec2.aws.m.upbound.io")' <<<"$report"
  grep -q '^warning: not listed: securitygroups.ec2.aws.m.upbound.io: forbidden: needs verb list' "$BATS_TEST_TMPDIR/stderr"
}

@test "an object the webhook is never called for is not audited: Kubewarden's own namespace, as the registered webhook says" {
  # A VPC in the namespace kubewarden-controller keeps out of every policy's webhook (as the test bed
  # registers it): no write can reach the policy there, so the deployed policy's audit leaves it out and
  # says so; a manifest, which has no registered webhook, is judged by its own selectors, and lists it.
  named "$ROOT/cluster/objects/live-audit.yaml" la-net-vpc1 | python3 -c 'import json, sys, yaml
vpc = yaml.safe_load(sys.stdin)
vpc["metadata"].update(name="kw-vpc", namespace="kubewarden", labels={"crossplane.io/composite": "kw-net"})
del vpc["metadata"]["ownerReferences"]
print(json.dumps(vpc))' | kubectl apply -f - >/dev/null
  audit_kw() {
    status=0
    "$RUNNER" audit --full --cluster -n kubewarden -l crossplane.io/composite=kw-net -o json "$@" \
      >"$BATS_TEST_TMPDIR/kw.json" 2>"$BATS_TEST_TMPDIR/stderr" || status=$?
    sed 's/^/  stderr: /' "$BATS_TEST_TMPDIR/stderr"
    report=$(cat "$BATS_TEST_TMPDIR/kw.json")
  }
  audit_kw --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
  jq -e '.policies[0].unselected == 1 and ([.policies[0].report.objects[] | select(.kind == "VPC")] | length == 0)
    and .policies[0].selectorsFrom == "mutatingwebhookconfigurations.admissionregistration.k8s.io clusterwide-managed-resource-tags"
    and .fix.objects == [] and (.requests.patch // 0) == 0' <<<"$report"
  audit_kw --policy "$POLICY"
  jq -e '.policies[0].unselected == 0 and ([.policies[0].report.objects[] | select(.kind == "VPC")] | length == 1)' <<<"$report"
  kubectl delete "$VPCS" kw-vpc -n kubewarden >/dev/null
}

@test "bad input exits 2 and says what is wrong: a policy not in the cluster, a kubeconfig that is not there" {
  live --policy-name no-such-policy
  [ "$status" -eq 2 ]
  grep -q 'ClusterAdmissionPolicy no-such-policy is not in the cluster' "$BATS_TEST_TMPDIR/stderr"
  live --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/missing"
  [ "$status" -eq 2 ]
  grep -q "cannot read the kubeconfig $BATS_TEST_TMPDIR/missing" "$BATS_TEST_TMPDIR/stderr"
  run "$RUNNER" audit --full --cluster -f x.yaml
  [ "$status" -eq 2 ]
  # No API server where the kubeconfig points: exit 2, naming the server and what to check.
  printf '%s\n' 'apiVersion: v1' 'kind: Config' 'current-context: nowhere' \
    'clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]' \
    'users: [{name: nobody, user: {token: t}}]' \
    'contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]' >"$BATS_TEST_TMPDIR/nowhere.kubeconfig"
  run "$RUNNER" audit --full --cluster --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/nowhere.kubeconfig"
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == *"cannot reach the API server at https://127.0.0.1:1/: "*"check that the cluster is up"* ]]
  run "$RUNNER" audit --full --cluster --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/nowhere.kubeconfig" --context nope
  [ "$status" -eq 2 ]
  [ "$output" = "Error: the kubeconfig $BATS_TEST_TMPDIR/nowhere.kubeconfig has no context \"nope\"; its contexts: nowhere" ]
  # A label selector the API server refuses is the user's to correct: exit 2 at the first list, naming it.
  run "$RUNNER" audit --full --cluster --policy "$POLICY" -n live-audit -l 'a in (b'
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == *"Error: -l \"a in (b\": the API server refuses the label selector: cannot list "* ]]
}

@test "SIGTERM stops the fix after the write in flight and prints the report, exit 3; no write is cut short" {
  # A Job's pod gets SIGTERM at its deadline, on an eviction or a drain.
  from=$(mark)
  interrupted TERM cc-3400
  # The API server's audit log: every PATCH the fixer sent was answered 200 (none cut short), one per fixed
  # object.
  patches=$(fixer_patches "$from")
  echo "$patches"
  [ -n "$patches" ]
  [ -z "$(grep -v ' 200$' <<<"$patches" || true)" ]
  [ "$(wc -l <<<"$patches")" -eq "$(jq '[.fix.objects[] | select(.outcome == "fixed")] | length' <<<"$report")" ]
  # A second signal while the first is honoured ends the run at once, without the report.
  drift cc-3450
  fix_in_background
  until_stderr '^fix 1/5: '
  kill -TERM "$pid"
  sleep 0.3
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  cat "$BATS_TEST_TMPDIR/stderr"
  [ "$status" -eq 3 ]
  grep -q '^interrupted again (SIGTERM): stopping at once' "$BATS_TEST_TMPDIR/stderr"
  [ ! -s "$BATS_TEST_TMPDIR/report.json" ]
  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
}

@test "an object deleted before its write ends gone, and the run exits 0: nothing is left to do" {
  drift cc-3600
  # The VPC the fixer writes last, as a dry run orders them.
  live --policy-name managed-resource-tags --fix --dry-run
  last=$(jq -r '.fix.objects[-1].id | split("/")[1] | split(" ")[0]' <<<"$report")
  echo "written last: $last"
  fix_in_background
  until_stderr '^fix: writing 5 objects'
  # One request a second: the last one is deleted before its turn.
  kubectl delete "$VPCS" "$last" -n live-audit >/dev/null
  status=0
  wait "$pid" || status=$?
  cat "$BATS_TEST_TMPDIR/stderr"
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  vpc_again "$last"
  [ "$status" -eq 0 ]
  jq -e --arg last "$last" '[.fix.objects[] | select(.outcome == "gone") | .id] | length == 1 and (.[0] | contains($last))' <<<"$report"
  jq -e '.summary.result == "in-line" and .summary.outcomes.gone == 1 and .summary.outcomes.fixed == 4' <<<"$report"
}

@test "-n bounds the writes: a cluster-scoped kind is left out and named, and written only with --cluster-scoped" {
  # A cluster-scoped XR and the cluster-scoped Bucket it composes, whose tags drift from the XR's labels.
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: network.example.org/v1alpha1
kind: XNetwork
metadata:
  name: la-xnet
  labels: {cost-center: cc-4100, crossplane.io/composite: la-xnet}
spec:
  parameters: {region: europe-west3}
YAML
  uid=$(kubectl get xnetworks.network.example.org la-xnet -o jsonpath='{.metadata.uid}')
  kubectl apply -f - >/dev/null <<YAML
apiVersion: storage.gcp.upbound.io/v1beta1
kind: Bucket
metadata:
  name: la-xnet-bucket
  labels: {crossplane.io/composite: la-xnet}
  annotations: {crossplane.io/composition-resource-name: bucket}
  ownerReferences:
    - {apiVersion: network.example.org/v1alpha1, kind: XNetwork, name: la-xnet, uid: $uid, controller: true,
       blockOwnerDeletion: true}
spec:
  forProvider: {location: EU}
YAML
  kubectl label xnetworks.network.example.org la-xnet --overwrite cost-center=cc-4200 >/dev/null
  sleep 6
  bucket() { kubectl get buckets.storage.gcp.upbound.io la-xnet-bucket -o json; }
  before=$(bucket | jq -r .metadata.resourceVersion)
  from=$(mark)
  scoped() {
    status=0
    "$RUNNER" audit --full --cluster -n live-audit -l crossplane.io/composite=la-xnet --policy-name managed-resource-tags \
      --fix --qps 100 --burst 100 "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/stderr" || status=$?
    cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/stderr"
  }
  scoped -o json
  [ "$status" -eq 0 ]
  report=$(cat "$BATS_TEST_TMPDIR/out")
  jq -e '.scope.namespace == "live-audit" and (.scope.leftOut | index("buckets.storage.gcp.upbound.io") != null)
    and (.requests.patch // 0) == 0 and .summary.leftOut == (.scope.leftOut | length)' <<<"$report"
  [ "$(bucket | jq -r .metadata.resourceVersion)" = "$before" ]
  [ -z "$(fixer_patches "$from")" ]
  scoped
  [ "$status" -eq 0 ]
  grep -q '^left out by -n live-audit: .*buckets.storage.gcp.upbound.io.* (cluster-scoped: in no namespace; --cluster-scoped audits and fixes them too)$' "$BATS_TEST_TMPDIR/out"
  # Asked for, the Bucket is listed and written, once.
  scoped -o json --cluster-scoped
  [ "$status" -eq 0 ]
  report=$(cat "$BATS_TEST_TMPDIR/out")
  jq -e '.scope.leftOut == [] and .requests.patch == 1
    and ([.fix.objects[] | select(.outcome == "fixed" and (.id | contains("la-xnet-bucket")))] | length == 1)' <<<"$report"
  bucket | jq -e '.spec.forProvider.labels | to_entries | any(.value == "cc-4200")'
  [ "$(fixer_patches "$from" | wc -l)" -eq 1 ]
  kubectl delete buckets.storage.gcp.upbound.io la-xnet-bucket --wait=false >/dev/null
  kubectl delete xnetworks.network.example.org la-xnet --wait=false >/dev/null
  kubectl patch xnetworks.network.example.org la-xnet --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
}

@test "pre-flight: a kind the runner may not patch ends forbidden with no write sent, and a policy that is not active writes nothing, dry run or not" {
  drift cc-3700
  account no-patch '
  - apiGroups: [ec2.aws.m.upbound.io, azure.m.upbound.io, network.azure.m.upbound.io]
    resources: ["*"]
    verbs: [get, list]
  - apiGroups: [network.example.org]
    resources: [networks]
    verbs: [get]
  - apiGroups: [policies.kubewarden.io]
    resources: [clusteradmissionpolicies]
    verbs: [get]
  - apiGroups: [admissionregistration.k8s.io]
    resources: [mutatingwebhookconfigurations]
    verbs: [get]'
  eventually 30 'kubectl auth can-i list vpcs.ec2.aws.m.upbound.io -n live-audit --as=system:serviceaccount:live-audit:no-patch'
  for dry in "" --dry-run; do
    from=$(mark)
    live --policy-name managed-resource-tags --fix $dry --kubeconfig "$BATS_TEST_TMPDIR/no-patch.kubeconfig"
    [ "$status" -eq 1 ]
    jq -e '[.fix.objects[] | select(.outcome == "forbidden" and .attempts == 0
        and (.message | startswith("forbidden: needs verb patch on vpcs.ec2.aws.m.upbound.io"))
        and (.message | endswith("no write was sent")))] | length == 5' <<<"$report"
    jq -e '(.requests.patch // 0) == 0 and .requests["access-review"] >= 1 and .summary.result == "needs-a-person"' <<<"$report"
    [ -z "$(fixer_patches "$from")" ]
  done
  # A policy whose webhook is not registered: the manifest of the deployed one under another name.
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
policy = next(d for d in docs if d["kind"] == "ClusterAdmissionPolicy")
policy["metadata"]["name"] = "la-unregistered"
yaml.safe_dump(policy, sys.stdout)' "$POLICY" >"$BATS_TEST_TMPDIR/unregistered.yaml"
  for dry in "" --dry-run; do
    from=$(mark)
    live --policy "$BATS_TEST_TMPDIR/unregistered.yaml" --fix $dry
    [ "$status" -eq 1 ]
    jq -e '.fix.objects == [] and .fix.summary.deviating == 5 and (.requests.patch // 0) == 0
      and (.fix.refused[0] | contains("clusterwide-la-unregistered is not registered"))' <<<"$report"
    grep -q '^fix: nothing written: the webhook of ClusterAdmissionPolicy la-unregistered: ' "$BATS_TEST_TMPDIR/stderr"
    [ -z "$(fixer_patches "$from")" ]
  done
  # A policy kubewarden-controller has not made active (its status, as the controller sets it).
  kubectl apply -f "$BATS_TEST_TMPDIR/unregistered.yaml" >/dev/null
  kubectl patch clusteradmissionpolicies.policies.kubewarden.io la-unregistered --subresource=status --type=merge \
    -p '{"status":{"policyStatus":"pending"}}' >/dev/null
  live --policy-name la-unregistered --fix --dry-run
  kubectl delete clusteradmissionpolicies.policies.kubewarden.io la-unregistered >/dev/null
  [ "$status" -eq 1 ]
  jq -e '.fix.refused == ["ClusterAdmissionPolicy la-unregistered is pending, not active (`kubectl get clusteradmissionpolicy la-unregistered`): its policy server does not serve it yet"]' <<<"$report"
  # The text report says it too, under the audit, and ends with the summary line.
  status=0
  "$RUNNER" audit --full --cluster -n live-audit -l crossplane.io/composite=la-net --policy "$BATS_TEST_TMPDIR/unregistered.yaml" \
    --fix --qps 100 --burst 100 >"$BATS_TEST_TMPDIR/out" 2>/dev/null || status=$?
  cat "$BATS_TEST_TMPDIR/out"
  [ "$status" -eq 1 ]
  grep -qx 'fix: nothing written; before the first write:' "$BATS_TEST_TMPDIR/out"
  tail -n 1 "$BATS_TEST_TMPDIR/out" | sed 's/^summary: //' | jq -e '.result == "needs-a-person" and .fixRefused and .deviating == 5'
  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
}

@test "another module's policy is refused before anything is judged by it, naming its module; --module names a mirror" {
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
policy = next(d for d in docs if d["kind"] == "ClusterAdmissionPolicy")
policy["metadata"]["name"] = "la-safe-labels"
policy["spec"]["module"] = "registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0"
policy["spec"]["settings"] = {"denied_labels": ["cost-center"]}
yaml.safe_dump(policy, sys.stdout)' "$POLICY" >"$BATS_TEST_TMPDIR/safe-labels.yaml"
  from=$(mark)
  live --policy "$BATS_TEST_TMPDIR/safe-labels.yaml" --fix
  [ "$status" -eq 2 ]
  grep -q "ClusterAdmissionPolicy la-safe-labels runs the module registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0, not this policy (ghcr.io/plexsphere/policies/metadata-propagation)" "$BATS_TEST_TMPDIR/stderr"
  grep -q -- '--module REPOSITORY' "$BATS_TEST_TMPDIR/stderr"
  # Deployed, by name: the same.
  kubectl apply -f "$BATS_TEST_TMPDIR/safe-labels.yaml" >/dev/null
  live --policy-name la-safe-labels --fix
  kubectl delete clusteradmissionpolicies.policies.kubewarden.io la-safe-labels >/dev/null
  [ "$status" -eq 2 ]
  grep -q "ClusterAdmissionPolicy la-safe-labels runs the module registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0" "$BATS_TEST_TMPDIR/stderr"
  [ -z "$(fixer_patches "$from")" ]
  # This policy from a mirror: refused until --module names the mirror's repository.
  sed 's|registry://ghcr.io/plexsphere/policies/metadata-propagation:|registry://mirror.example.com:5000/platform/metadata-propagation:|' \
    "$POLICY" >"$BATS_TEST_TMPDIR/mirror.yaml"
  grep -q 'mirror.example.com:5000' "$BATS_TEST_TMPDIR/mirror.yaml"
  live --policy "$BATS_TEST_TMPDIR/mirror.yaml"
  [ "$status" -eq 2 ]
  live --policy "$BATS_TEST_TMPDIR/mirror.yaml" --module mirror.example.com:5000/platform/metadata-propagation
  [ "$status" -eq 0 ]
  jq -e '.policies[0].module == "registry://mirror.example.com:5000/platform/metadata-propagation:v0.1.0"' <<<"$report"
}
