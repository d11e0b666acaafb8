#!/usr/bin/env bats
# `policy-runner audit --cluster`'s own mechanics against the real API server (docs/validate-and-audit.md,
# "Objects that were there first"): lists a page at a time, a parent that was not listed read once, the
# contextAwareResources check as policy-server makes it, a dry run that stores nothing, --max-objects, a
# second --fix that writes nothing, Ctrl-C between two writes, a kind the runner may not list, an object
# the policy's webhook is never called for, and bad input.
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
  kubectl delete serviceaccount reader -n live-audit --ignore-not-found >/dev/null
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
  kubectl delete clusterrolebinding live-audit-reader --ignore-not-found >/dev/null
  kubectl delete clusterrole live-audit-reader --ignore-not-found >/dev/null
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
  "$RUNNER" audit --cluster -n live-audit -l crossplane.io/composite=la-net -o json --qps 100 --burst 100 "$@" \
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
  jq -e '[.policies[0].report.objects[] | select(.kind == "VPC") | .source | [.document, .items[0]]] | sort
    == [[1,1],[1,2],[2,1],[2,2],[3,1]]' <<<"$report"
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
  [ "$status" -eq 1 ]
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

@test "Ctrl-C stops the fix after the write in flight; the objects left are not attempted" {
  drift cc-3300
  "$RUNNER" audit --cluster -n live-audit -l crossplane.io/composite=la-net -o json --policy-name managed-resource-tags \
    --fix --qps 1 --burst 1 \
    >"$BATS_TEST_TMPDIR/report.json" 2>"$BATS_TEST_TMPDIR/stderr" &
  pid=$!
  eventually 120 "grep -q '^fix 1/5: fixed' '$BATS_TEST_TMPDIR/stderr'"
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  cat "$BATS_TEST_TMPDIR/stderr"
  [ "$status" -eq 1 ]
  grep -q '^interrupted: stopping after the request in flight' "$BATS_TEST_TMPDIR/stderr"
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  # Fixed ones first, then only not-attempted ones, at least one of them; each fixed one is stored so.
  jq -e '[.fix.objects[].outcome] as $o | ($o | index("not-attempted")) as $i
    | $i != null and $i >= 1 and ($o[:$i] | all(. == "fixed")) and ($o[$i:] | all(. == "not-attempted"))' <<<"$report"
  for name in $(jq -r '.fix.objects[] | select(.outcome == "fixed") | .id | split("/")[1] | split(" ")[0]' <<<"$report"); do
    [ "$(tag "$name")" = cc-3300 ]
  done
  live --policy-name managed-resource-tags --fix
  [ "$status" -eq 0 ]
}

@test "a kind the runner may not list is named with the missing verb, and the others are audited" {
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: live-audit-reader}
rules:
  - apiGroups: [ec2.aws.m.upbound.io]
    resources: [vpcs]
    verbs: [get, list]
  - apiGroups: [network.example.org]
    resources: [networks]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: live-audit-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: live-audit-reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: live-audit}]
YAML
  # No controller makes a namespace's default ServiceAccount here.
  kubectl create serviceaccount reader -n live-audit >/dev/null
  kubeconfig "$BATS_TEST_TMPDIR/kubeconfig" reader --token="$(kubectl create token reader -n live-audit)"
  live --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/kubeconfig"
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
    "$RUNNER" audit --cluster -n kubewarden -l crossplane.io/composite=kw-net -o json "$@" \
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
  run "$RUNNER" audit --cluster -f x.yaml
  [ "$status" -eq 2 ]
  # No API server where the kubeconfig points: exit 2, naming the server and what to check.
  printf '%s\n' 'apiVersion: v1' 'kind: Config' 'current-context: nowhere' \
    'clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]' \
    'users: [{name: nobody, user: {token: t}}]' \
    'contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]' >"$BATS_TEST_TMPDIR/nowhere.kubeconfig"
  run "$RUNNER" audit --cluster --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/nowhere.kubeconfig"
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == *"cannot reach the API server at https://127.0.0.1:1/: "*"check that the cluster is up"* ]]
  run "$RUNNER" audit --cluster --policy "$POLICY" --kubeconfig "$BATS_TEST_TMPDIR/nowhere.kubeconfig" --context nope
  [ "$status" -eq 2 ]
  [ "$output" = "Error: the kubeconfig $BATS_TEST_TMPDIR/nowhere.kubeconfig has no context \"nope\"; its contexts: nowhere" ]
  # A label selector the API server refuses is the user's to correct: exit 2 at the first list, naming it.
  run "$RUNNER" audit --cluster --policy "$POLICY" -n live-audit -l 'a in (b'
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == *"Error: -l \"a in (b\": the API server refuses the label selector: cannot list "* ]]
}
