#!/usr/bin/env bats
# Objects that were there first (docs/validate-and-audit.md): a management cluster whose objects were created before the
# policies' webhooks were registered, brought into line by `policy-runner audit --cluster --fix` through the
# deployed policies (examples/capi-policy.yaml, examples/xr-policy.yaml, cluster/policies/managed-resources.yaml):
# the objects of cluster/objects/objects-there-first.yaml created with the three mutating webhook
# configurations deleted (the controllers make the MachineSet, Machines, AWSMachines and KubeadmConfigs),
# then the configurations applied again. The live audit names each deviating object; a dry run writes
# nothing; the fix brings each one into line, as the webhook makes a fresh create; a second fix writes
# nothing; a concurrent writer's change survives; a kind the fixer may not patch is named; a settings change
# is written by the next fix. What was written, and by whom, is read from the API server's audit log.
#
# Once the controllers have made the MachineDeployment's objects, its Cluster is paused (`spec.paused`), so
# that CAPI's in-place propagation does not race the fixer: every write after that is the scenario's or the
# fixer's. The live audit reads every object of the policies' kinds in the cluster, the other scenarios'
# too: setup_file brings theirs into line first (with the webhooks registered, as a user would), and
# records any that one fix could not; the exit codes below allow for those alone.

POLICY_ARGS=(--policy-name capi-metadata-propagation --policy-name xr-cloud-tags --policy-name managed-resource-tags)
CONFIGS=(clusterwide-capi-metadata-propagation clusterwide-managed-resource-tags clusterwide-xr-cloud-tags)
# The kinds of the scenario's objects, as kubectl names them without ambiguity (`cluster` and `network`
# are also GCP managed-resource kinds here).
NAMESPACED=clusters.cluster.x-k8s.io,machinedeployments.cluster.x-k8s.io,machinesets.cluster.x-k8s.io
NAMESPACED+=,machines.cluster.x-k8s.io,awsmachines.infrastructure.cluster.x-k8s.io
NAMESPACED+=,kubeadmconfigs.bootstrap.cluster.x-k8s.io,awsclusters.infrastructure.cluster.x-k8s.io
NAMESPACED+=,kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io,awsmachinetemplates.infrastructure.cluster.x-k8s.io
NAMESPACED+=,xdatabases.platform.example.org,networks.network.example.org,vpcs.ec2.aws.m.upbound.io
NAMESPACED+=,resourcegroups.azure.m.upbound.io
CLUSTER_SCOPED=xnetworks.network.example.org,buckets.storage.gcp.upbound.io
SEL=cluster.x-k8s.io/cluster-name=otf-demo
# jq: the kind, namespace ("" when cluster-scoped), name and apiVersion of a fix object's id, which is
# "Kind namespace/name (apiVersion)" as the report names objects, or "apiVersion Kind namespace/name".
REF='def ref: (.id | capture("^(?<kind>[A-Za-z0-9]+) (?<path>[^ ]+) [(](?<apiVersion>[^)]+)[)]$")
    // (split(" ") | {apiVersion: .[0], kind: .[1], path: .[2]}))
  | {kind, apiVersion, namespace: (.path | if contains("/") then split("/")[0] else "" end),
     name: (.path | split("/") | last)}; '
MD_SEL=cluster.x-k8s.io/deployment-name=otf-demo-workers

setup_file() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/objects-there-first.yaml
  # What the webhook server runs with, restored by teardown_file after the settings change.
  cp "$STATE/kubewarden/policies.yml" "$BATS_FILE_TMPDIR/policies.yml"
  remove_leftovers
  # The other scenarios' objects into line, with the webhooks registered; what one fix cannot bring into
  # line is the baseline ("Kind namespace/name" a line) the exit codes allow for.
  "$RUNNER" audit --full --cluster "${POLICY_ARGS[@]}" --fix --qps 50 --burst 50 -o json \
    >"$BATS_FILE_TMPDIR/prefix.json" 2>"$BATS_FILE_TMPDIR/prefix.stderr" || true
  "$RUNNER" audit --full --cluster "${POLICY_ARGS[@]}" --qps 50 --burst 50 -o json 2>/dev/null |
    jq -r '[.policies[].report.objects[] | select(.status == "deviates" or .status == "rejected")
      | "\(.kind) \(.namespace // "")/\(.name)"] | unique[]' >"$BATS_FILE_TMPDIR/baseline" || true
}

setup() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/objects-there-first.yaml
}

# Whatever a test left behind, the next file finds the policies' webhooks registered, the webhook server
# running with the settings of the test bed, and no fixer running.
teardown_file() {
  load helpers
  if [ -f "$BATS_FILE_TMPDIR/fixer.pid" ]; then
    kill -CONT "$(cat "$BATS_FILE_TMPDIR/fixer.pid")" 2>/dev/null || true
    kill -TERM "$(cat "$BATS_FILE_TMPDIR/fixer.pid")" 2>/dev/null || true
  fi
  if ! cmp -s "$BATS_FILE_TMPDIR/policies.yml" "$STATE/kubewarden/policies.yml"; then
    cp "$BATS_FILE_TMPDIR/policies.yml" "$STATE/kubewarden/policies.yml"
    restart_webhook_server
  fi
  kubectl apply -f "$ROOT/examples/xr-policy.yaml" >/dev/null
  kubectl apply -f "$STATE/kubewarden/webhooks.json" >/dev/null
  kill -CONT "$(cat "$STATE/webhook-server.pid")" 2>/dev/null || true
  if ! pid_alive webhook-server; then start_webhook_server; fi
  wait_for "the webhook server" 60 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
  kubectl delete clusterrolebinding otf-fixer --ignore-not-found >/dev/null
  kubectl delete clusterrole otf-fixer --ignore-not-found >/dev/null
  kubectl delete serviceaccount otf-fixer -n default --ignore-not-found >/dev/null
}

# --- helpers of this file ---------------------------------------------------------------------------------

# remove_leftovers: a test bed reused from an earlier run of this file: its objects gone (no garbage
# collector runs here, and CAPI's finalizers would wait for controllers of a paused Cluster). Twice: the
# first round's MachineDeployment may have made a MachineSet meanwhile.
remove_leftovers() {
  local kind name
  kubectl patch clusters.cluster.x-k8s.io otf-demo -n default --type merge -p '{"spec":{"paused":true}}' \
    >/dev/null 2>&1 || true
  for kind in ${NAMESPACED//,/ } ${CLUSTER_SCOPED//,/ } ${NAMESPACED//,/ }; do
    for name in $(kubectl get "$kind" -n default -o json | jq -r '.items[].metadata.name | select(startswith("otf-"))'); do
      # Deleted first: CAPI's controllers put a finalizer back on an object that is not being deleted.
      kubectl delete "$kind" "$name" -n default --ignore-not-found --wait=false >/dev/null
      kubectl patch "$kind" "$name" -n default --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    done
  done
  eventually 60 '[ "$(stored_mine | jq length)" = 0 ]'
}

# stored_mine: the scenario's objects as stored, one JSON array.
stored_mine() {
  { kubectl get "$NAMESPACED" -n default -o json; kubectl get "$CLUSTER_SCOPED" -o json; } |
    jq -s '[.[].items[] | select(.metadata.name | startswith("otf-"))]'
}

# versions: "Kind name resourceVersion" of each of the scenario's objects, sorted.
versions() { stored_mine | jq -r '.[] | "\(.kind) \(.metadata.name) \(.metadata.resourceVersion)"' | sort; }

# docs: every document of OBJECTS, one compact JSON a line.
docs() {
  python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print(json.dumps(d))' "$OBJECTS"
}

# doc KIND NAME: the document of OBJECTS of that kind and name, as JSON.
doc() { docs | jq -c --arg k "$1" --arg n "$2" 'select(.kind == $k and .metadata.name == $n)'; }

# resource_of API-VERSION KIND: kind.version.group, which names one resource for kubectl.
resource_of() { echo "$(tr '[:upper:]' '[:lower:]' <<<"$2").${1#*/}.${1%/*}"; }

# with_owner_uid: the document on stdin with its controller owner's uid, as Crossplane renders an MR.
with_owner_uid() {
  local d api kind name ns uid
  d=$(cat)
  read -r api kind name <<<"$(jq -r '.metadata.ownerReferences[0] | "\(.apiVersion) \(.kind) \(.name)"' <<<"$d")"
  ns=$(jq -r '.metadata.namespace // "default"' <<<"$d")
  uid=$(kubectl get "$(resource_of "$api" "$kind")" "$name" -n "$ns" -o jsonpath='{.metadata.uid}')
  jq --arg uid "$uid" '.metadata.ownerReferences[0].uid = $uid' <<<"$d"
}

# stored KIND NAME: the scenario's object as stored (by kind and name).
stored() { stored_mine | jq -c --arg k "$1" --arg n "$2" '.[] | select(.kind == $k and .metadata.name == $n)'; }

# tags KIND NAME: the policy's output on the object: cloud tags of an XR (and its skip record), the tag field of
# an MR, the additionalTags of a CAPA kind; sorted, compact.
tags() {
  stored "$1" "$2" | jq -cS '{cloudTags: .spec.cloudTags,
    skipped: .metadata.annotations."cloud-tags.plexsphere.io/skipped",
    mr: (.spec.forProvider | if . then (.tags // .labels // .resourceLabels) else null end),
    aws: .spec.additionalTags}'
}

# twin_tags DOC: the same, of DOC created afresh under the name <name>-twin: a server-side dry run through
# the webhooks, as the API server would store it.
twin_tags() {
  jq '.metadata.name += "-twin" | del(.metadata.generateName)' <<<"$1" |
    kubectl create --dry-run=server -o json -f - | jq -cS '{cloudTags: .spec.cloudTags,
      skipped: .metadata.annotations."cloud-tags.plexsphere.io/skipped",
      mr: (.spec.forProvider | if . then (.tags // .labels // .resourceLabels) else null end),
      aws: .spec.additionalTags}'
}

# as_created STORED-JSON: a stored object as a fresh create would send it: no server fields, no status.
as_created() {
  jq -c 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields,
    .metadata.generation, .metadata.finalizers, .status)' <<<"$1"
}

# mark: the audit log's length now; writes_since MARK: the writes the API server completed after it, one
# compact JSON a line: verb, resource, name, HTTP code, whether a dry run, whether the fixer's (its field
# manager), and the configurations whose webhook mutated it.
mark() { wc -l <"$STATE/audit.log"; }
writes_since() {
  sleep 1
  tail -n +"$(($1 + 1))" "$STATE/audit.log" | jq -c -R 'fromjson? | select(.stage == "ResponseComplete"
      and (.verb == "create" or .verb == "update" or .verb == "patch" or .verb == "delete"))
    | {verb, resource: .objectRef.resource, subresource: .objectRef.subresource, name: .objectRef.name,
       code: .responseStatus.code, dryRun: (.requestURI | test("[?&]dryRun=")),
       fixer: (.requestURI | test("[?&]fieldManager=metadata-propagation-fix(&|$)")),
       mutatedBy: [(.annotations // {}) | to_entries[] | select(.key | startswith("mutation.webhook.admission.k8s.io/"))
         | .value | fromjson | select(.mutated) | .configuration]}'
}

# probed_webhooks: which of CONFIGS the API server calls now: a server-side dry-run create of an object each
# policy matches, and the configurations whose webhook the audit log records on it (sorted, one line).
probed_webhooks() {
  local from name
  from=$(mark)
  name=otf-probe-$RANDOM$RANDOM
  kubectl create --dry-run=server -o name -f - >/dev/null <<YAML
apiVersion: platform.example.org/v1alpha1
kind: XDatabase
metadata: {name: $name, namespace: default, labels: {platform/env: prod}}
spec: {crossplane: {}, parameters: {provider: aws}}
---
apiVersion: ec2.aws.m.upbound.io/v1beta1
kind: VPC
metadata: {name: $name, namespace: default}
spec: {forProvider: {region: eu-west-1, cidrBlock: 10.99.0.0/16}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSCluster
metadata: {name: $name, namespace: default}
spec: {region: eu-west-1}
YAML
  sleep 1
  tail -n +"$((from + 1))" "$STATE/audit.log" | jq -R -r -s --arg name "$name" '
    [split("\n")[] | fromjson? | select(.objectRef.name == $name and .stage == "ResponseComplete")
     | .annotations // {} | to_entries[] | select(.key | startswith("mutation.webhook.admission.k8s.io/"))
     | .value | fromjson | .configuration | select(startswith("clusterwide-"))] | unique | join(" ")'
}
webhooks_registered() { [ "$(probed_webhooks)" = "${CONFIGS[*]}" ]; }
webhooks_unregistered() { [ -z "$(probed_webhooks)" ]; }

unregister() {
  kubectl delete mutatingwebhookconfiguration "${CONFIGS[@]}" --ignore-not-found
  eventually 30 webhooks_unregistered
}
register() {
  kubectl apply -f "$STATE/kubewarden/webhooks.json" >/dev/null
  eventually 30 webhooks_registered
}

# live ARGS...: `policy-runner audit --cluster` of the three policies with ARGS, -o json: the document in
# $report, the exit code in $status; its stderr and the fix's outcomes printed (a failing test's log).
live() {
  status=0
  "$RUNNER" audit --full --cluster "${POLICY_ARGS[@]}" -o json "$@" >"$BATS_TEST_TMPDIR/report.json" \
    2>"$BATS_TEST_TMPDIR/stderr" || status=$?
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  echo "policy-runner audit --cluster $*: exit $status"
  tail -n 30 "$BATS_TEST_TMPDIR/stderr" | sed 's/^/  stderr: /'
  jq -r '"  requests: \(.requests | tojson)", (.fix.objects[]? | "  \(.outcome) \(.id): \(.message) (attempts \(.attempts))")' \
    <<<"$report" 2>/dev/null || echo "  (not a JSON document)"
}

# deviating_mine: "Kind name" of each of the scenario's objects the report finds deviating, sorted.
deviating_mine() {
  jq -r '[.policies[].report.objects[] | select(.status == "deviates" and (.name | startswith("otf-")))
    | "\(.kind) \(.name)"] | unique[]' <<<"$report"
}

# outcomes_mine: "Kind name outcome" of each of the scenario's objects in the report's fix, in fix order.
outcomes_mine() {
  jq -r "$REF"'.fix.objects[] | ref as $r | select($r.name | startswith("otf-")) | "\($r.kind) \($r.name) \(.outcome)"' \
    <<<"$report"
}

# outcome_of KIND NAME: the fix's object for it, as JSON.
outcome_of() {
  jq -c --arg k "$1" --arg n "$2" "$REF"'.fix.objects[] | select(ref.kind == $k and ref.name == $n)' <<<"$report"
}

# exit_clean: the run's exit code is 0, unless objects of earlier scenarios that setup_file's fix could not
# bring into line are there (the baseline): then 1, and every object not fixed is one of them.
exit_clean() {
  if [ ! -s "$BATS_FILE_TMPDIR/baseline" ]; then
    [ "$status" -eq 0 ]
    return
  fi
  [ "$status" -le 1 ]
  diff <(jq -r "$REF"'.fix.objects[] | select(.outcome != "fixed") | ref | "\(.kind) \(.namespace)/\(.name)"' <<<"$report" |
      grep -vxFf "$BATS_FILE_TMPDIR/baseline" || true) /dev/null
}

# baseline_clean: no earlier scenario's object is out of line (the whole cluster's counts may be asserted).
baseline_clean() { [ ! -s "$BATS_FILE_TMPDIR/baseline" ]; }

# has_all CHILD-MAP PARENT-MAP: every entry of the parent's map (JSON) is in the child's.
has_all() {
  jq -e -n --argjson c "${1:-null}" --argjson p "${2:-null}" \
    '($p // {}) | to_entries | all(. as $e | ($c // {})[$e.key] == $e.value)' >/dev/null ||
    { echo "missing from $1: entries of $2" >&2; return 1; }
}

# The MachineDeployment's objects: the controllers' names.
machinesets() { kubectl get machinesets.cluster.x-k8s.io -n default -l "$MD_SEL" -o json | jq -r '.items[].metadata.name'; }
machines() { kubectl get machines.cluster.x-k8s.io -n default -l "$MD_SEL" -o json | jq -r '.items[].metadata.name'; }
awsmachines() { kubectl get awsmachines.infrastructure.cluster.x-k8s.io -n default -l "$MD_SEL" -o json | jq -r '.items[].metadata.name'; }

# expected_first: what the first live audit must find deviating, "Kind name" sorted: every object the
# policies change at create, that was created without them.
expected_first() {
  {
    printf '%s\n' "AWSCluster otf-demo" "Bucket otf-xnet-p7r2c" "ResourceGroup otf-net-8wz5d" "VPC otf-net-4kq2z" \
      "XDatabase otf-ledger-aws" "XDatabase otf-ledger-gcp"
    awsmachines | sed 's/^/AWSMachine /'
  } | sort
}

# drift REVISION: objects out of line with their parents again, the webhooks registered: writes of parents
# the policies do not act on (a Cluster's and an XR's labels), and writes CAPI does not propagate while the
# Cluster is paused: an annotation of the MachineSet's machine template (the MachineSet's own write is
# mutated, and stays in line), then one of the MachineDeployment. Out of line then: the AWSCluster, the
# MachineSet, its Machines, the MRs.
drift() {
  local ms
  kubectl label clusters.cluster.x-k8s.io otf-demo -n default --overwrite "cost-center=cc-$1" >/dev/null
  kubectl label networks.network.example.org otf-net -n default --overwrite "cost-center=cc-$1" >/dev/null
  kubectl label xnetworks.network.example.org otf-xnet --overwrite "cost-center=cc-$1" >/dev/null
  for ms in $(machinesets); do
    kubectl patch machinesets.cluster.x-k8s.io "$ms" -n default --type merge \
      -p '{"spec":{"template":{"metadata":{"annotations":{"example.com/rack":"r'"$1"'"}}}}}' >/dev/null
  done
  kubectl annotate machinedeployments.cluster.x-k8s.io otf-demo-workers -n default --overwrite \
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size=$1" >/dev/null
  past_lookup_cache
}

# past_lookup_cache: policy-server answers a look-up from what it read in the last 5 s
# (policy-evaluator's get_resource_cached): a parent changed within that time would be seen as it was.
past_lookup_cache() { sleep 6; }
expected_drift() {
  {
    printf '%s\n' "AWSCluster otf-demo" "Bucket otf-xnet-p7r2c" "ResourceGroup otf-net-8wz5d" "VPC otf-net-4kq2z"
    machinesets | sed 's/^/MachineSet /'
    machines | sed 's/^/Machine /'
  } | sort
}

# restart_webhook_server: the webhook server stopped and started again, reading policies.yml afresh.
restart_webhook_server() {
  local pid
  pid=$(cat "$STATE/webhook-server.pid")
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 30); do
    if kill -0 "$pid" 2>/dev/null; then sleep 1; else break; fi
  done
  start_webhook_server
  wait_for "the webhook server" 60 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
}

# same STORED FRESH: the two are equal (both printed when not).
same() { [ "$1" = "$2" ] || { echo "stored: $1" >&2; echo "fresh:  $2" >&2; return 1; }; }

# controlled_by_machines: how many of the MachineDeployment's AWSMachines have a Machine as controller.
controlled_by_machines() {
  kubectl get awsmachines.infrastructure.cluster.x-k8s.io -n default -l "$MD_SEL" -o json |
    jq '[.items[] | select(any((.metadata.ownerReferences // [])[]; .kind == "Machine" and .controller))] | length'
}

# The deviating objects of the scenario, fixed, match what each policy's webhook makes of a fresh create.
matches_fresh_creates() {
  local name d ms md m
  for name in otf-ledger-aws otf-ledger-gcp; do
    same "$(tags XDatabase "$name")" "$(twin_tags "$(doc XDatabase "$name")")"
  done
  same "$(tags VPC otf-net-4kq2z)" "$(twin_tags "$(doc VPC otf-net-4kq2z | with_owner_uid)")"
  same "$(tags ResourceGroup otf-net-8wz5d)" "$(twin_tags "$(doc ResourceGroup otf-net-8wz5d | with_owner_uid)")"
  same "$(tags Bucket otf-xnet-p7r2c)" "$(twin_tags "$(doc Bucket otf-xnet-p7r2c | with_owner_uid)")"
  # The AWSCluster as the Cluster controller left it (its label and ownerReference), its tags as submitted.
  d=$(as_created "$(stored AWSCluster otf-demo)" | jq -c --argjson spec "$(doc AWSCluster otf-demo | jq .spec)" '.spec = $spec')
  same "$(tags AWSCluster otf-demo)" "$(twin_tags "$d")"
  for m in $(awsmachines); do
    d=$(as_created "$(stored AWSMachine "$m")" | jq -c '.spec.additionalTags = {owner: "team-otf"}')
    same "$(tags AWSMachine "$m")" "$(twin_tags "$d")"
  done
  # The MachineSet and Machines carry what the MachineDeployment propagates.
  md=$(stored MachineDeployment otf-demo-workers)
  for name in $(machinesets); do
    ms=$(stored MachineSet "$name")
    has_all "$(jq -c .metadata.labels <<<"$ms")" "$(jq -c .spec.template.metadata.labels <<<"$md")"
    has_all "$(jq -c .spec.template.metadata.labels <<<"$ms")" "$(jq -c .spec.template.metadata.labels <<<"$md")"
    has_all "$(jq -c .spec.template.metadata.annotations <<<"$ms")" "$(jq -c .spec.template.metadata.annotations <<<"$md")"
    has_all "$(jq -c .metadata.annotations <<<"$ms")" \
      "$(jq -c '.metadata.annotations | with_entries(select(.key | test("^(kubectl.kubernetes.io/last-applied-configuration|machinedeployment.clusters.x-k8s.io/.*|cluster.x-k8s.io/conversion-data)$") | not))' <<<"$md")"
  done
  for name in $(machines); do
    m=$(stored Machine "$name")
    ms=$(stored MachineSet "$(jq -r '.metadata.ownerReferences[] | select(.controller) | .name' <<<"$m")")
    has_all "$(jq -c .metadata.labels <<<"$m")" "$(jq -c .spec.template.metadata.labels <<<"$ms")"
    has_all "$(jq -c .metadata.annotations <<<"$m")" "$(jq -c .spec.template.metadata.annotations <<<"$ms")"
  done
}

# --- the scenario ------------------------------------------------------------------------------------------

@test "created before the webhooks are registered: the controllers make the MachineDeployment's objects, nothing is mutated" {
  unregister
  from=$(mark)
  docs | jq -s '{apiVersion: "v1", kind: "List", items: [.[] | select(.metadata.ownerReferences == null)]}' |
    kubectl apply -f -
  docs | jq -c 'select(.metadata.ownerReferences != null)' | while read -r d; do
    with_owner_uid <<<"$d" | kubectl create -f -
  done
  eventually 90 '[ "$(count machinesets.cluster.x-k8s.io $MD_SEL)" = 1 ]'
  eventually 90 '[ "$(count machines.cluster.x-k8s.io $MD_SEL)" = 2 ]'
  eventually 60 '[ "$(count awsmachines.infrastructure.cluster.x-k8s.io $MD_SEL)" = 2 ]'
  eventually 60 '[ "$(count kubeadmconfigs.bootstrap.cluster.x-k8s.io $MD_SEL)" = 2 ]'
  # The Cluster controller ties the AWSCluster to its Cluster; the Machine controller makes each Machine the
  # controller of its AWSMachine.
  eventually 60 '[ "$(field awsclusters.infrastructure.cluster.x-k8s.io otf-demo ".metadata.ownerReferences[0].kind")" = Cluster ]'
  eventually 60 '[ "$(controlled_by_machines)" = 2 ]'
  # Paused, CAPI writes none of them again: every later write is the scenario's or the fixer's.
  kubectl patch clusters.cluster.x-k8s.io otf-demo -n default --type merge -p '{"spec":{"paused":true}}'
  sleep 3
  kinds="machinedeployments machinesets machines awsmachines awsclusters kubeadmconfigs"
  before=$(for kind in $kinds; do written_state $kind $SEL; done)
  sleep "${SETTLE_SECONDS:-5}"
  after=$(for kind in $kinds; do written_state $kind $SEL; done)
  diff <(echo "$before") <(echo "$after")
  # No policy's webhook mutated any of their writes.
  mutated=$(writes_since "$from" | jq -c 'select(((.name // "") | startswith("otf-")) and any(.mutatedBy[]; startswith("clusterwide-")))')
  [ -z "$mutated" ] || { echo "mutated: $mutated"; false; }
}

@test "the webhooks registered, audit --cluster names each object deviating, in text and JSON" {
  register
  live
  [ "$status" -eq 1 ]
  diff <(deviating_mine) <(expected_first)
  expect "$report" '[.policies[].name] | sort | join(" ")' "capi-metadata-propagation managed-resource-tags xr-cloud-tags"
  expect "$report" '[.unlisted[] | select(.served != false)] | length' 0
  expect "$report" .fix null
  run "$RUNNER" audit --full --cluster "${POLICY_ARGS[@]}" --qps 50 --burst 50
  [ "$status" -eq 1 ]
  [[ "$output" == *"policy capi-metadata-propagation (mode protect, from the cluster)"* ]]
  [[ "$output" == *"policy xr-cloud-tags (mode protect, from the cluster)"* ]]
  grep -q 'AWSCluster default/otf-demo.*DEVIATES' <<<"$output"
  grep -q 'XDatabase default/otf-ledger-aws.*DEVIATES' <<<"$output"
}

@test "--fix --dry-run says what admission would change and writes nothing" {
  before=$(versions)
  from=$(mark)
  live --fix --dry-run --qps 50 --burst 50
  [ "$status" -le 1 ]
  expect "$report" .fix.dryRun true
  diff <(outcomes_mine | sort) <(expected_first | sed 's/$/ would-fix/')
  expect "$report" "$REF"'[.fix.objects[] | select((ref.name | startswith("otf-")) and (.changes | length) == 0)] | length' 0
  # The tags admission would add, in the XR's changes.
  outcome_of XDatabase otf-ledger-aws | jq -e '.changes | tostring | contains("plexsphere:platform")'
  # The audit log: every write of the fixer a dry run, one per deviating object; nothing stored.
  writes=$(writes_since "$from")
  [ "$(jq -s '[.[] | select(.fixer and (.dryRun | not))] | length' <<<"$writes")" = 0 ]
  [ "$(jq -s '[.[] | select(.fixer and .dryRun and ((.name // "") | startswith("otf-")))] | length' <<<"$writes")" = \
    "$(expected_first | wc -l)" ]
  [ "$(jq -s '[.[] | select(((.name // "") | startswith("otf-")) and (.dryRun | not))] | length' <<<"$writes")" = 0 ]
  diff <(echo "$before") <(versions)
}

@test "--fix brings each object into line through the webhooks, one write each, as a fresh create makes it" {
  from=$(mark)
  live --fix --qps 50 --burst 50
  exit_clean
  diff <(outcomes_mine | sort) <(expected_first | sed 's/$/ fixed/')
  expect "$report" '.fix.dryRun' false
  # One write per object, the fixer's, stored (200), mutated by its policy's webhook.
  writes=$(writes_since "$from")
  jq -c 'select(.fixer and ((.name // "") | startswith("otf-")))' <<<"$writes"
  [ "$(jq -s '[.[] | select(.fixer and ((.name // "") | startswith("otf-")))] | length' <<<"$writes")" = "$(expected_first | wc -l)" ]
  [ "$(jq -s '[.[] | select(.fixer and ((.name // "") | startswith("otf-")))] | map(.name) | unique | length' <<<"$writes")" = \
    "$(expected_first | wc -l)" ]
  [ "$(jq -s '[.[] | select(.fixer and ((.name // "") | startswith("otf-"))
    and (.code != 200 or ([.mutatedBy[] | select(startswith("clusterwide-"))] == [])))] | length' <<<"$writes")" = 0 ]
  # In line: a second audit finds nothing deviating, and each matches a fresh create.
  live --qps 50 --burst 50
  [ -z "$(deviating_mine)" ]
  if baseline_clean; then [ "$status" -eq 0 ]; fi
  matches_fresh_creates
  # The XR on AWS: its tags beside the user's own; on GCP: the keys GCP refuses recorded as skipped.
  expect "$(stored XDatabase otf-ledger-aws)" '.spec.cloudTags | tojson' \
    '{"owner":"dba-team","plexsphere:platform/cost-center":"cc-7001","plexsphere:platform/env":"prod"}'
  x=$(stored XDatabase otf-ledger-gcp)
  expect "$x" '.spec.cloudTags | tojson' '{"team":"dba-team"}'
  expect "$x" '.metadata.annotations."cloud-tags.plexsphere.io/skipped" | fromjson | map(.provider) | unique | .[0]' gcp
  expect "$(stored VPC otf-net-4kq2z)" '.spec.forProvider.tags."plexsphere:team"' platform
  expect "$(stored AWSCluster otf-demo)" '.spec.additionalTags."plexsphere:cost-center"' cc-7001
}

@test "a second --fix finds nothing to do and writes nothing" {
  before=$(versions)
  from=$(mark)
  live --fix --qps 50 --burst 50
  exit_clean
  [ -z "$(outcomes_mine)" ]
  writes=$(writes_since "$from")
  if baseline_clean; then
    expect "$report" .fix.summary.deviating 0
    expect "$report" '.requests.patch // 0' 0
    [ "$(jq -s '[.[] | select(.fixer)] | length' <<<"$writes")" = 0 ]
  fi
  [ "$(jq -s '[.[] | select(.fixer and ((.name // "") | startswith("otf-")))] | length' <<<"$writes")" = 0 ]
  diff <(echo "$before") <(versions)
}

@test "a concurrent writer's change between the audit and the fix survives, and the object is still fixed" {
  drift 7002
  live --fix --dry-run --qps 50 --burst 50
  diff <(outcomes_mine | cut -d' ' -f1,2 | sort) <(expected_drift)
  # The object the fixer writes last.
  read -r kind name _ <<<"$(outcomes_mine | tail -n 1)"
  id=$(outcome_of "$kind" "$name" | jq -r .id)
  resource=$(resource_of "$(outcome_of "$kind" "$name" | jq -r "$REF"'ref.apiVersion')" "$kind")
  echo "written last: $id"
  from=$(mark)
  "$RUNNER" audit --full --cluster "${POLICY_ARGS[@]}" -o json --fix --qps 1 --burst 1 \
    >"$BATS_TEST_TMPDIR/report.json" 2>"$BATS_TEST_TMPDIR/stderr" 3>&- &
  pid=$!
  echo "$pid" >"$BATS_FILE_TMPDIR/fixer.pid"
  for _ in $(seq 1800); do
    if grep -q '^fix: writing' "$BATS_TEST_TMPDIR/stderr"; then break; fi
    sleep 0.1
  done
  kill -STOP "$pid"
  grep '^fix: writing' "$BATS_TEST_TMPDIR/stderr"
  # Someone else writes it meanwhile, past the webhooks (down for a moment: failurePolicy Ignore), so that
  # their write leaves it deviating: the fixer's precondition fails, it reads it again and writes again.
  unregister
  kubectl label "$resource" "$name" -n default touched-by=someone
  register
  kill -CONT "$pid"
  status=0
  wait "$pid" || status=$?
  rm -f "$BATS_FILE_TMPDIR/fixer.pid"
  report=$(cat "$BATS_TEST_TMPDIR/report.json")
  cat "$BATS_TEST_TMPDIR/stderr"
  jq -r '.fix.objects[] | "\(.outcome) \(.id): \(.message) (attempts \(.attempts))"' <<<"$report"
  exit_clean
  diff <(outcomes_mine | sort) <(expected_drift | sed 's/$/ fixed/')
  o=$(outcome_of "$kind" "$name")
  [ "$(jq .attempts <<<"$o")" -ge 2 ]
  [[ "$(jq -r .message <<<"$o")" != *"another writer's change"* ]]
  # The change survives, and the object is in line.
  expect "$(stored "$kind" "$name")" '.metadata.labels."touched-by"' someone
  live --qps 50 --burst 50
  [ -z "$(deviating_mine)" ]
  # The MachineSet fixed before its Machines, which the fix judged against it as written.
  for ms in $(machinesets); do
    expect "$(stored MachineSet "$ms")" '.metadata.annotations."cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"' 7002
  done
  for m in $(machines); do
    expect "$(stored Machine "$m")" '.metadata.annotations."example.com/rack"' r7002
  done
  # The audit log: the fixer's first write refused on the precondition (409), the second stored.
  codes=$(writes_since "$from" | jq -r --arg n "$name" 'select(.fixer and .name == $n) | .code' | tr '\n' ' ')
  [ "$codes" = "409 200 " ]
}

@test "a kind the fixer may not patch is named with the verb and resource, and the others are fixed" {
  drift 7003
  # The ClusterRole of examples/fixer-rbac.yaml without `patch` on AWSClusters, plus what the test bed's
  # managed-resource policy needs (its rule matches every resource of the provider groups).
  python3 - "$ROOT/examples/fixer-rbac.yaml" "$ROOT/cluster/policies/managed-resources.yaml" <<'PY' | kubectl apply -f -
import json, sys, yaml
role = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole")
mr = next(d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d["kind"] == "ClusterAdmissionPolicy")
rules = []
for rule in role["rules"]:
    if "awsclusters" in rule.get("resources", []) and "patch" in rule.get("verbs", []):
        rules.append(dict(rule, resources=[r for r in rule["resources"] if r != "awsclusters"]))
        rules.append(dict(rule, resources=["awsclusters"], verbs=[v for v in rule["verbs"] if v != "patch"]))
    else:
        rules.append(rule)
groups = sorted({g for r in mr["spec"]["rules"] for g in r["apiGroups"]})
rules.append({"apiGroups": groups, "resources": ["*"], "verbs": ["get", "list", "patch"]})
rules.append({"apiGroups": ["network.example.org"], "resources": ["xnetworks", "networks", "xvpcs"], "verbs": ["get"]})
items = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "otf-fixer", "namespace": "default"}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "otf-fixer"}, "rules": rules},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "otf-fixer"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "otf-fixer"},
     "subjects": [{"kind": "ServiceAccount", "name": "otf-fixer", "namespace": "default"}]},
]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
  as=system:serviceaccount:default:otf-fixer
  eventually 30 'kubectl auth can-i patch machinesets.cluster.x-k8s.io -n default --as=$as'
  run kubectl auth can-i patch awsclusters.infrastructure.cluster.x-k8s.io -n default --as=$as
  [ "$status" -ne 0 ]
  kubeconfig "$BATS_TEST_TMPDIR/fixer.kubeconfig" otf-fixer \
    --token="$(kubectl create token otf-fixer -n default --duration=1h)"
  live --fix --kubeconfig "$BATS_TEST_TMPDIR/fixer.kubeconfig" --qps 50 --burst 50
  [ "$status" -eq 1 ]
  expect "$report" '[.unlisted[] | select(.served != false)] | length' 0
  diff <(outcomes_mine | sort) <(expected_drift | sed 's/$/ fixed/; s/^\(AWSCluster otf-demo\) fixed$/\1 forbidden/')
  message=$(outcome_of AWSCluster otf-demo | jq -r .message)
  [[ "$message" == *patch* ]]
  [[ "$message" == *awsclusters.infrastructure.cluster.x-k8s.io* ]]
  # With the admin's rights, it is fixed too.
  live --fix --qps 50 --burst 50
  exit_clean
  diff <(outcomes_mine) <(echo "AWSCluster otf-demo fixed")
  expect "$(stored AWSCluster otf-demo)" '.spec.additionalTags."plexsphere:cost-center"' cc-7003
}

@test "a label newly opted in to the ClusterAdmissionPolicy's settings: --fix writes the tags" {
  # The deployed policy with `tier` opted in: the ClusterAdmissionPolicy the runner reads and the webhook
  # server's policies.yml, rendered from it as for cluster-up (no Kubewarden controller runs here).
  python3 - "$ROOT/examples/xr-policy.yaml" >"$BATS_FILE_TMPDIR/xr-policy.yaml" <<'PY'
import sys, yaml
policy = yaml.safe_load(open(sys.argv[1]))
policy["spec"]["settings"]["cloudTags"]["propagatingLabels"].append("tier")
yaml.safe_dump(policy, sys.stdout, sort_keys=False)
PY
  kubectl apply -f "$BATS_FILE_TMPDIR/xr-policy.yaml"
  python3 "$ROOT/cluster/render.py" kubewarden "$STATE/pki/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT" \
    "file://$ROOT/annotated-policy.wasm" "$STATE/kubewarden/policies.yml" "$BATS_FILE_TMPDIR/webhooks.json" \
    ${POLICIES//examples\/xr-policy.yaml/$BATS_FILE_TMPDIR/xr-policy.yaml}
  restart_webhook_server
  live --qps 50 --burst 50
  [ "$status" -eq 1 ]
  diff <(deviating_mine) <(printf '%s\n' "XDatabase otf-ledger-aws" "XDatabase otf-ledger-gcp")
  live --fix --qps 50 --burst 50
  exit_clean
  diff <(outcomes_mine | sort) <(printf '%s\n' "XDatabase otf-ledger-aws fixed" "XDatabase otf-ledger-gcp fixed")
  expect "$(stored XDatabase otf-ledger-aws)" '.spec.cloudTags."plexsphere:tier"' gold
  expect "$(stored XDatabase otf-ledger-gcp)" '.spec.cloudTags."plexsphere-tier"' silver
  for name in otf-ledger-aws otf-ledger-gcp; do
    same "$(tags XDatabase "$name")" "$(twin_tags "$(doc XDatabase "$name")")"
  done
  # The test bed's settings again: the next fix removes the tags (the policy owns its prefix's entries).
  cp "$BATS_FILE_TMPDIR/policies.yml" "$STATE/kubewarden/policies.yml"
  restart_webhook_server
  kubectl apply -f "$ROOT/examples/xr-policy.yaml"
  live --fix --qps 50 --burst 50
  exit_clean
  diff <(outcomes_mine | sort) <(printf '%s\n' "XDatabase otf-ledger-aws fixed" "XDatabase otf-ledger-gcp fixed")
  expect "$(stored XDatabase otf-ledger-aws)" '.spec.cloudTags."plexsphere:tier"' null
  expect "$(stored XDatabase otf-ledger-gcp)" '.spec.cloudTags."plexsphere-tier"' null
}

@test "a MachineDeployment's template changed while CAPI is paused: one --fix brings its MachineSet, then the Machines into line" {
  # Only the MachineSet deviates at first: its Machines are in line with it as it is stored. Written, the
  # MachineSet carries the new label in its template, and the Machines deviate from it: the same run writes
  # them after it (tree order), and a second run finds nothing.
  kubectl patch machinedeployments.cluster.x-k8s.io otf-demo-workers -n default --type merge \
    -p '{"spec":{"template":{"metadata":{"labels":{"zone":"z1"}}}}}'
  past_lookup_cache
  live --qps 50 --burst 50
  diff <(deviating_mine) <(machinesets | sed 's/^/MachineSet /')
  live --fix --qps 50 --burst 50
  exit_clean
  diff <(outcomes_mine | cut -d' ' -f1,3) <({ machinesets | sed 's/.*/MachineSet fixed/'; machines | sed 's/.*/Machine fixed/'; })
  for m in $(machines); do
    expect "$(stored Machine "$m")" '.metadata.labels.zone' z1
  done
  live --fix --qps 50 --burst 50
  exit_clean
  [ -z "$(outcomes_mine)" ]
}
