#!/usr/bin/env bats
# `policy-runner audit --cluster` against what the API server of a control plane of real size answers
# (docs/validate-and-audit.md, "Objects that were there first"): a continue token that etcd's compaction
# expired between two pages (410 Gone), requests API Priority and Fairness rejects (429) while another
# client loads the same priority level, and `--fix` writing each deviating object with one request.
# The objects (cluster/objects/live-audit-scale.yaml): a namespaced XR and the $COUNT VPCs it composes, in
# the namespace live-audit-scale, under cluster/policies/managed-resources.yaml (deployed: its webhook tags
# the VPCs). live-audit.bats counts the requests of the same mechanics on five VPCs.

POLICY=$BATS_TEST_DIRNAME/../policies/managed-resources.yaml
NS=live-audit-scale
VPCS=vpcs.ec2.aws.m.upbound.io
COUNT=48
# The VPCs' list, as the API server serves it.
VPC_LIST=/apis/ec2.aws.m.upbound.io/v1beta1/namespaces/$NS/vpcs

# cleanup: what the file creates, gone; the namespace last, finalized as the namespace controller would
# (none runs here) once everything in it is deleted. Also run first, for a test bed an earlier run left.
cleanup() {
  kubectl delete flowschemas.flowcontrol.apiserver.k8s.io las-runner las-load --ignore-not-found >/dev/null
  kubectl delete prioritylevelconfigurations.flowcontrol.apiserver.k8s.io las-one-seat --ignore-not-found >/dev/null
  kubectl delete clusterrolebinding live-audit-scale-read --ignore-not-found >/dev/null
  kubectl delete clusterrole live-audit-scale-read --ignore-not-found >/dev/null
  kubectl get namespace "$NS" >/dev/null 2>&1 || return 0
  kubectl delete serviceaccounts,configmaps --all -n "$NS" --ignore-not-found >/dev/null
  kubectl delete "$VPCS" --all -n "$NS" --ignore-not-found >/dev/null
  kubectl delete networks.network.example.org --all -n "$NS" --ignore-not-found --wait=false >/dev/null
  kubectl patch networks.network.example.org las-net -n "$NS" --type merge -p '{"metadata":{"finalizers":null}}' \
    >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" --wait=false >/dev/null
  kubectl get namespace "$NS" -o json | jq '.spec.finalizers = []' |
    kubectl replace --raw "/api/v1/namespaces/$NS/finalize" -f - >/dev/null
  for _ in $(seq 30); do
    kubectl get namespace "$NS" >/dev/null 2>&1 || return 0
    sleep 1
  done
  echo "the namespace $NS is still there" >&2
  return 1
}

setup_file() {
  load helpers
  cleanup
  local objects=$ROOT/cluster/objects/live-audit-scale.yaml uid
  apply_named "$objects" "$NS" >/dev/null
  apply_named "$objects" las-net >/dev/null
  uid=$(kubectl get networks.network.example.org las-net -n "$NS" -o jsonpath='{.metadata.uid}')
  # $COUNT copies of the VPC las-net-vpc, las-net-vpc00 on, created through the webhook in one request each.
  named "$objects" las-net-vpc | python3 -c 'import copy, json, sys, yaml
template, uid, count = yaml.safe_load(sys.stdin), sys.argv[1], int(sys.argv[2])
items = []
for i in range(count):
    vpc = copy.deepcopy(template)
    vpc["metadata"]["name"] = f"las-net-vpc{i:02d}"
    vpc["metadata"]["annotations"]["crossplane.io/composition-resource-name"] = f"vpc{i:02d}"
    vpc["metadata"]["ownerReferences"][0]["uid"] = uid
    vpc["spec"]["forProvider"]["cidrBlock"] = f"10.{100 + i}.0.0/16"
    vpc["spec"]["forProvider"]["tags"]["Name"] = f"las-net-vpc{i:02d}"
    items.append(vpc)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' "$uid" "$COUNT" | kubectl create -f - >/dev/null
  [ "$(kubectl get "$VPCS" -n "$NS" -o name | wc -l)" -eq "$COUNT" ]
}

teardown_file() {
  load helpers
  cleanup
}

setup() {
  load helpers
}

# live ARGS...: the live audit of the VPCs of las-net, -o json (ARGS give the pace): the document in $report,
# the exit code in $status, stderr in $BATS_TEST_TMPDIR/stderr (printed for a failing test's log).
live() {
  status=0
  "$RUNNER" audit --cluster -n "$NS" -l crossplane.io/composite=las-net -o json "$@" \
    >"$BATS_TEST_TMPDIR/report.json" 2>"$BATS_TEST_TMPDIR/stderr" || status=$?
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  echo "policy-runner audit --cluster -n $NS $*: exit $status"
  sed 's/^/  stderr: /' "$BATS_TEST_TMPDIR/stderr" | tail -n 20
  jq -c '.requests' <<<"$report" || true
}

# live_in_background ARGS...: the same, in the background ($pid); collected by `collect`.
live_in_background() {
  "$RUNNER" audit --cluster -n "$NS" -l crossplane.io/composite=las-net -o json "$@" \
    >"$BATS_TEST_TMPDIR/report.json" 2>"$BATS_TEST_TMPDIR/stderr" 3>&- &
  pid=$!
}
collect() {
  status=0
  wait "$pid" || status=$?
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  echo "policy-runner audit --cluster (in the background): exit $status"
  sed 's/^/  stderr: /' "$BATS_TEST_TMPDIR/stderr" | tail -n 20
  jq -c '.requests' <<<"$report" || true
}

# results: each VPC's result in the report, sorted by id, without where it was listed from (which page, or
# which list after a token expired): what the audit found.
results() { jq -S '[.policies[].report.objects[] | del(.source)] | sort_by(.id)' <<<"$report"; }

# requests VERB: the requests of that verb the runner counted.
requests() { jq --arg v "$1" '.requests[$v] // 0' <<<"$report"; }

# served VERB [CODE]: the API server's apiserver_request_total for VERB (LIST, GET, PATCH...) on the
# namespaced VPCs themselves (no subresource, no dry run), of every code or of CODE: whoever sent them.
served() {
  kubectl get --raw /metrics | awk -v verb="$1" -v code="${2:-}" '
    /^apiserver_request_total\{/ && index($0, "dry_run=\"\",group=\"ec2.aws.m.upbound.io\",resource=\"vpcs\",scope=") &&
      index($0, "subresource=\"\",verb=\"" verb "\"") && (code == "" || index($0, "{code=\"" code "\"")) { n += $NF }
    END { print n + 0 }'
}

# rejected FLOWSCHEMA: the requests API Priority and Fairness rejected for that FlowSchema.
rejected() {
  kubectl get --raw /metrics | awk -v fs="$1" '
    /^apiserver_flowcontrol_rejected_requests_total\{/ && index($0, "flow_schema=\"" fs "\"") { n += $NF }
    END { print n + 0 }'
}

# etcd PATH JSON: a request to etcd's HTTP/JSON gateway (the test bed's etcd listens on loopback, plain HTTP).
etcd() { curl -sSf -X POST "http://127.0.0.1:$ETCD_PORT$1" -d "$2"; }

# compact: etcd compacted at its current revision, as a kube-apiserver's compactor does it (the revision
# recorded under compact_rev_key, then the compaction): the API server watches that key, and its watch
# cache drops the list snapshots older than that revision at its next poll (every 15 s); a continue token
# of an older revision is then answered from etcd, 410 Gone. Prints the revision.
compact() {
  local rev
  rev=$(etcd /v3/kv/range '{"key":"AA=="}' | jq -r .header.revision)
  etcd /v3/kv/put "{\"key\":\"$(printf compact_rev_key | base64)\",\"value\":\"$(printf %s "$rev" | base64)\"}" >/dev/null
  etcd /v3/kv/compaction "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
  echo "$rev"
}

# mark: the API server's audit log's length now; fixer_patches MARK: the fixer's PATCHes (its field manager)
# the API server answered after line MARK, one "namespace/name code" a line.
mark() { wc -l <"$STATE/audit.log"; }
fixer_patches() {
  tail -n +"$(($1 + 1))" "$STATE/audit.log" | jq -r -R 'fromjson? | select(.stage == "ResponseComplete"
    and .verb == "patch" and (.requestURI | test("[?&]fieldManager=metadata-propagation-fix(&|$)")))
    | "\(.objectRef.namespace // "")/\(.objectRef.name) \(.responseStatus.code)"'
}

@test "a continue token etcd's compaction expired between two pages (410): the audit is complete and the same as without" {
  live --policy "$POLICY" --page-size 2 --qps 100 --burst 100
  [ "$status" -eq 0 ]
  baseline=$(results)
  [ "$(jq 'length' <<<"$baseline")" -eq "$COUNT" ]
  # A continue token of the VPCs' list issued before the compaction: the API server answers it 410 once its
  # watch cache has dropped the snapshots the compaction expired, the runner's among them.
  probe=$(kubectl get --raw "$VPC_LIST?limit=1" | jq -r .metadata.continue)
  [ -n "$probe" ]
  [ "$probe" != null ]
  lists=$(served LIST)
  expired=$(served LIST 410)
  # Two VPCs a page at one request a second: the VPCs' pages take 24 s, longer than the watch cache takes to
  # see the compaction (15 s at most).
  live_in_background --policy "$POLICY" --page-size 2 --qps 1 --burst 1
  # The runner's first page of VPCs served: the API server has answered one more LIST of them.
  for _ in $(seq 300); do
    [ "$(served LIST)" -gt "$lists" ] && break
    sleep 0.2
  done
  [ "$(served LIST)" -gt "$lists" ]
  # The revision moves past the runner's token (a write elsewhere in the namespace), and etcd is compacted.
  kubectl create configmap las-revision -n "$NS" >/dev/null
  kubectl delete configmap las-revision -n "$NS" >/dev/null
  rev=$(compact)
  echo "etcd compacted at revision $rev"
  gone=""
  for _ in $(seq 60); do
    if ! out=$(kubectl get --raw "$VPC_LIST?limit=1&continue=$probe" 2>&1); then
      gone=$out
      break
    fi
    sleep 0.5
  done
  echo "the probe's token: $gone"
  [[ "$gone" == *"The provided continue parameter is too old"* ]]
  # The runner was still paging when the cache let the token go: it got a 410 too.
  running=0
  kill -0 "$pid" 2>/dev/null || running=$?
  collect
  echo "the API server answered $(($(served LIST 410) - expired)) LISTs of the VPCs 410 (the probe's one among them)"
  [ "$running" -eq 0 ]
  [ "$(served LIST 410)" -ge $((expired + 2)) ]
  # Complete, and the same as without the compaction.
  [ "$status" -eq 0 ]
  jq -e '.unlisted == [] and .summary.notListed == 0' <<<"$report"
  # The report says the VPCs were listed again, once, from their first page.
  jq -e '.scope.relisted == ["vpcs.ec2.aws.m.upbound.io"]' <<<"$report"
  [ "$(results)" = "$baseline" ]
}

@test "429 from API Priority and Fairness while another client loads the priority level: the runner waits, counts each retry, and its report is the unloaded one" {
  # Two ServiceAccounts that may read everything: the runner's (audit) and a second client's (load); a
  # priority level of the fewest seats the API server's shares allow, no queue (a request that finds every
  # seat taken is rejected at once, 429), and a FlowSchema of each ServiceAccount to it: they share its seats,
  # and the API server counts each one's rejections apart (apiserver_flowcontrol_rejected_requests_total).
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: live-audit-scale-read}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: live-audit-scale-read}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: live-audit-scale-read}
subjects:
  - {kind: ServiceAccount, name: audit, namespace: $NS}
  - {kind: ServiceAccount, name: load, namespace: $NS}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: las-one-seat}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: las-runner}
spec:
  priorityLevelConfiguration: {name: las-one-seat}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
    - subjects: [{kind: ServiceAccount, serviceAccount: {name: audit, namespace: $NS}}]
      resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}]
      nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: las-load}
spec:
  priorityLevelConfiguration: {name: las-one-seat}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
    - subjects: [{kind: ServiceAccount, serviceAccount: {name: load, namespace: $NS}}]
      resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}]
      nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
YAML
  kubectl create serviceaccount audit -n "$NS" >/dev/null
  kubectl create serviceaccount load -n "$NS" >/dev/null
  kubeconfig "$BATS_TEST_TMPDIR/audit.kubeconfig" audit --token="$(kubectl create token audit -n "$NS")"
  token=$(kubectl create token load -n "$NS")
  # The API server's seats for the level (600 in all, shared by the levels' shares: 1 share gets 3 seats).
  eventually 30 'kubectl get --raw /metrics | grep -E "^apiserver_flowcontrol_nominal_limit_seats\{priority_level=\"las-one-seat\"\} [1-3]$"'
  eventually 30 'kubectl auth can-i list "$VPCS" -n "$NS" --as=system:serviceaccount:$NS:audit'
  live --kubeconfig "$BATS_TEST_TMPDIR/audit.kubeconfig" --policy "$POLICY" --page-size 2 --qps 1000 --burst 1000
  [ "$status" -eq 0 ]
  baseline=$(results)
  [ "$(jq 'length' <<<"$baseline")" -eq "$COUNT" ]
  runner_rejected=$(rejected las-runner)
  load_rejected=$(rejected las-load)
  # The second client: six loops of LISTs of the CRDs (8 MB each, as a controller starting up reads them) for
  # 12 s, which keep the level's seats taken.
  until=$(($(date +%s) + 12))
  loaders=()
  for i in 1 2 3 4 5 6; do
    (while [ "$(date +%s)" -lt "$until" ]; do
      curl -s -o /dev/null -w '%{http_code}\n' --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $token" \
        "https://127.0.0.1:$APISERVER_PORT/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    done) >"$BATS_TEST_TMPDIR/load.$i" 3>&- &
    loaders+=($!)
  done
  sleep 2
  # Two VPCs a page: some thirty requests, each of which may find the seats taken.
  live --kubeconfig "$BATS_TEST_TMPDIR/audit.kubeconfig" --policy "$POLICY" --page-size 2 --qps 1000 --burst 1000
  wait "${loaders[@]}"
  echo "the second client's answers: $(cat "$BATS_TEST_TMPDIR"/load.* | sort | uniq -c | tr '\n' ' ')"
  echo "rejected (429): the runner's $(($(rejected las-runner) - runner_rejected)), the second client's $(($(rejected las-load) - load_rejected))"
  # The API server did reject the runner's requests, and the second client's.
  [ "$(rejected las-runner)" -gt "$runner_rejected" ]
  [ "$(rejected las-load)" -gt "$load_rejected" ]
  # The runner waited them out and sent each again, counted apart: as many retries as rejections.
  [ "$(requests retried)" -eq "$(($(rejected las-runner) - runner_rejected))" ]
  # Complete, and the same report.
  [ "$status" -eq 0 ]
  jq -e '.unlisted == [] and .summary.notListed == 0' <<<"$report"
  [ "$(results)" = "$baseline" ]
  kubectl delete flowschemas.flowcontrol.apiserver.k8s.io las-runner las-load >/dev/null
  kubectl delete prioritylevelconfigurations.flowcontrol.apiserver.k8s.io las-one-seat >/dev/null
}

@test "--fix of $COUNT deviating objects: one PATCH each, and no GET of them" {
  live --policy-name managed-resource-tags --qps 100 --burst 100
  [ "$status" -eq 0 ]
  # The audit's GETs: the policy, its webhook configuration, and the XR no rule lists.
  audit_gets=$(requests get)
  # The XR's cost-center label changes, which its VPCs' tags follow; policy-server answers a look-up from
  # what it read in the last 5 s, so the fix waits that out.
  kubectl label networks.network.example.org las-net -n "$NS" --overwrite cost-center=cc-5200 >/dev/null
  sleep 6
  gets=$(served GET)
  patches=$(served PATCH)
  from=$(mark)
  live --policy-name managed-resource-tags --fix --qps 100 --burst 100
  [ "$status" -eq 0 ]
  jq -e --argjson n "$COUNT" '.summary.outcomes.fixed == $n and .fix.summary.deviating == $n' <<<"$report"
  sleep 1
  written=$(fixer_patches "$from")
  echo "the API server: $(($(served PATCH) - patches)) PATCHes and $(($(served GET) - gets)) GETs of the VPCs;" \
    "the audit log: $(wc -l <<<"$written") writes of the fixer; the runner: $(requests patch) patches," \
    "$(requests get) gets (the audit alone: $audit_gets)"
  # One write per object, each answered 200, no object twice.
  [ "$(wc -l <<<"$written")" -eq "$COUNT" ]
  [ "$(cut -d' ' -f1 <<<"$written" | sort -u | wc -l)" -eq "$COUNT" ]
  [ -z "$(grep -v ' 200$' <<<"$written" || true)" ]
  [ "$(($(served PATCH) - patches))" -eq "$COUNT" ]
  [ "$(requests patch)" -eq "$COUNT" ]
  # No GET of a fixed object: the API server served none of the VPCs, and the runner read no more than its
  # audit did.
  [ "$(($(served GET) - gets))" -eq 0 ]
  [ "$(requests get)" -eq "$audit_gets" ]
  # Fixed as the policy makes them: every VPC carries the new tag, and an audit finds them in line.
  [ "$(kubectl get "$VPCS" -n "$NS" -o json | jq '[.items[] | select(.spec.forProvider.tags["plexsphere:cost-center"] == "cc-5200")] | length')" -eq "$COUNT" ]
  live --policy-name managed-resource-tags --qps 100 --burst 100
  [ "$status" -eq 0 ]
  jq -e '.summary.deviating == 0' <<<"$report"
}
