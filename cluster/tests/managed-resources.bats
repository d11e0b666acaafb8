#!/usr/bin/env bats
# Managed resources (cluster/policies/managed-resources.yaml: the aws, azure and gcp families on): an XR, then
# its MRs written as Crossplane writes them (cluster/objects/managed-resources.yaml), and what the API server
# stored. v1: cluster-scoped MRs of a cluster-scoped XR, created, then composed again with a JSON merge patch
# of the whole rendered MR (crossplane-runtime's APIPatchingApplicator). v2: namespaced `.m.` MRs of a
# namespaced XR, server-side applied with the XR's field manager and force-conflicts. The provider's own
# write (upjet's Tagger adding crossplane-kind, -name and -providerconfig) is a plain update of the object as
# read. The tags are the XR's opted-in labels (environment, cost-center, acme.io/team as `team`) under the
# family's profile: `plexsphere:` on AWS and Azure, `plexsphere-` on GCP. kubectl prints the policy's
# warnings on stderr as `Warning: …`; `run` captures them with the output.

setup_file() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/managed-resources.yaml
  # A test bed reused from an earlier run: start from no MR and fresh XRs.
  for doc in $(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print(d["metadata"]["name"])' "$OBJECTS"); do
    kubectl delete -f <(named "$OBJECTS" "$doc") --ignore-not-found --wait=false >/dev/null
  done
  for xr in shop-net checkout-net edge-gw; do
    eventually 30 "! kubectl get -f <(named '$OBJECTS' $xr) >/dev/null 2>&1"
    apply_named "$OBJECTS" "$xr" >/dev/null
  done
}

setup() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/managed-resources.yaml
}

# as_json: YAML on stdin as JSON.
as_json() { python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'; }

# resource_of API-VERSION KIND: kind.version.group, which names one resource for kubectl (VPC is served by
# ec2.aws.upbound.io and ec2.aws.m.upbound.io alike).
resource_of() { echo "$(tr '[:upper:]' '[:lower:]' <<<"$2").${1#*/}.${1%/*}"; }

# rendered NAME: the MR NAME of OBJECTS as Crossplane renders it, as JSON: its controller ownerReference
# carries the uid of the XR it names (looked up in the MR's namespace), or the placeholder when there is no
# such XR.
rendered() {
  local doc owner ns uid
  doc=$(named "$OBJECTS" "$1" | as_json)
  owner=$(jq -r '.metadata.ownerReferences[0] | "\(.apiVersion) \(.kind) \(.name)"' <<<"$doc")
  ns=$(jq -r '.metadata.namespace // "default"' <<<"$doc")
  read -r api kind name <<<"$owner"
  if uid=$(kubectl get "$(resource_of "$api" "$kind")" "$name" -n "$ns" -o jsonpath='{.metadata.uid}' 2>/dev/null); then
    doc=$(jq --arg uid "$uid" '.metadata.ownerReferences[0].uid = $uid' <<<"$doc")
  fi
  echo "$doc"
}

# mr NAME: the resource and name (and namespace) kubectl names MR NAME of OBJECTS by.
mr() {
  local doc
  doc=$(named "$OBJECTS" "$1" | as_json)
  echo "$(resource_of "$(jq -r .apiVersion <<<"$doc")" "$(jq -r .kind <<<"$doc")") $1 -n $(jq -r '.metadata.namespace // "default"' <<<"$doc")"
}

# stored NAME: the MR as the API server stored it.
stored() { kubectl get $(mr "$1") -o json; }

# tags NAME: its tag field (AWS and Azure tags, GCP labels, GKE resourceLabels), sorted, as compact JSON.
tags() {
  stored "$1" | jq -cS '.spec.forProvider | .tags // .labels // .resourceLabels'
}

# field_manager NAME: Crossplane's field manager for the MRs of the XR MR NAME names: its name and GroupKind,
# hashed (crossplane internal/controller/apiextensions/composite ComposedFieldOwnerName).
field_manager() {
  local owner
  owner=$(named "$OBJECTS" "$1" | as_json | jq -r '.metadata.ownerReferences[0] | "\(.name)\(.kind).\(.apiVersion | split("/")[0])"')
  echo "apiextensions.crossplane.io/composed/$(printf %s "$owner" | sha256sum | cut -d' ' -f1)"
}

# create NAME: Crossplane v1 creating the composed resource (APIPatchingApplicator: Create when absent).
create() { rendered "$1" | kubectl create -f -; }

# compose_v1 NAME: Crossplane v1 composing again: a JSON merge patch of the whole rendered MR.
compose_v1() { kubectl patch $(mr "$1") --type merge -p "$(rendered "$1")"; }

# compose_v2 NAME: Crossplane v2 composing: server-side apply with the XR's field manager, forcing conflicts.
compose_v2() {
  rendered "$1" | kubectl apply --server-side --force-conflicts --field-manager="$(field_manager "$1")" -f -
}

# provider_update NAME: upjet's Tagger (AWS): the three crossplane-* tags added to the MR as read, written
# back with an update.
provider_update() {
  stored "$1" | jq '.spec.forProvider.tags += {
      "crossplane-kind": "\(.kind | ascii_downcase).\(.apiVersion | split("/")[0])",
      "crossplane-name": .metadata.name, "crossplane-providerconfig": .spec.providerConfigRef.name}' |
    kubectl replace --field-manager=provider -f -
}

# no_warning: the captured output holds no admission warning.
no_warning() { [[ "$output" != *"Warning:"* ]] || { echo "unexpected warning: $output" >&2; return 1; }; }

# --- v1: cluster-scoped MRs, merge patches -----------------------------------------------------------------

@test "v1: an AWS VPC composed by a cluster-scoped XR is stored with its XR's labels as tags, beside the Composition's" {
  run create shop-net-7xk2p
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags shop-net-7xk2p)" tojson \
    '{"Name":"shop-net","plexsphere:cost-center":"cc-4711","plexsphere:environment":"prod","plexsphere:team":"payments"}'
  # The MR's metadata as Crossplane rendered it.
  v=$(stored shop-net-7xk2p)
  expect "$v" '.metadata.labels."crossplane.io/composite"' shop-net
  expect "$v" '.metadata.ownerReferences[0].uid' "$(kubectl get xnetworks.network.example.org shop-net -o jsonpath='{.metadata.uid}')"
}

@test "v1: the provider's crossplane-* tags, added by a plain update, are kept beside the policy's" {
  run provider_update shop-net-7xk2p
  echo "$output"
  [ "$status" -eq 0 ]
  t=$(tags shop-net-7xk2p)
  expect "$t" '."crossplane-kind"' vpc.ec2.aws.upbound.io
  expect "$t" '."crossplane-name"' shop-net-7xk2p
  expect "$t" '."crossplane-providerconfig"' default
  expect "$t" '."plexsphere:environment"' prod
  expect "$t" '."plexsphere:team"' payments
  expect "$t" length 7
}

@test "v1: Crossplane's next compose, a merge patch of the whole rendered MR, keeps every tag and changes nothing" {
  before=$(stored shop-net-7xk2p | jq -r .metadata.resourceVersion)
  run compose_v1 shop-net-7xk2p
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags shop-net-7xk2p)" length 7
  expect "$(tags shop-net-7xk2p)" '."plexsphere:cost-center"' cc-4711
  # A write that changes nothing after admission is a no-op: no new resourceVersion.
  expect "$(stored shop-net-7xk2p)" .metadata.resourceVersion "$before"
}

@test "v1: an Azure ResourceGroup is stored with the tags (root group azure.upbound.io)" {
  run create shop-net-q9w4m
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags shop-net-q9w4m)" tojson \
    '{"plexsphere:cost-center":"cc-4711","plexsphere:environment":"prod","plexsphere:team":"payments"}'
}

@test "v1: a GCP Bucket is stored with GCP labels under plexsphere-, beside its own" {
  run create shop-net-b4nz8
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags shop-net-b4nz8)" tojson \
    '{"plexsphere-cost-center":"cc-4711","plexsphere-environment":"prod","plexsphere-team":"payments","purpose":"assets"}'
}

@test "v1: a GKE Cluster is stored with the labels in spec.forProvider.resourceLabels" {
  run create shop-net-g2kfr
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  c=$(stored shop-net-g2kfr)
  expect "$c" '.spec.forProvider.resourceLabels | tojson' \
    '{"plexsphere-cost-center":"cc-4711","plexsphere-environment":"prod","plexsphere-team":"payments"}'
  expect "$c" '.spec.forProvider.labels' null
}

@test "an MR kind of an enabled family without a tag field (GCP compute Network) is stored as submitted, no warning" {
  run create shop-net-n6vcx
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(stored shop-net-n6vcx)" '.spec.forProvider | tojson' '{"autoCreateSubnetworks":false}'
}

@test "an MR of an enabled family without a controller owner is stored as submitted, no warning" {
  run create hand-made-sg
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  # Its own environment and cost-center labels are no source of tags.
  expect "$(tags hand-made-sg)" tojson '{"Name":"hand-made"}'
}

@test "an MR whose XR does not exist is allowed as submitted, with a warning naming the XR" {
  run create gone-net-m3q8t
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Warning:"*"was not found"* ]]
  [[ "$output" == *"Warning:"*"gone-net"* ]]
  expect "$(tags gone-net-m3q8t)" tojson '{"Name":"gone-net"}'
}

@test "v1: a label removed from the XR removes its tag at the MR's next write, with a warning" {
  kubectl label xnetworks.network.example.org shop-net cost-center-
  # policy-server answers look-ups from a 5-second cache; `policy-runner serve` reads afresh.
  all=""
  for _ in $(seq 15); do
    out=$(compose_v1 shop-net-7xk2p 2>&1)
    all+="$out"$'\n'
    [ "$(tags shop-net-7xk2p | jq -r '."plexsphere:cost-center"')" = null ] && break
    sleep 1
  done
  echo "$all"
  [[ "$all" == *"Warning:"*"plexsphere:cost-center"* ]]
  t=$(tags shop-net-7xk2p)
  expect "$t" '."plexsphere:cost-center"' null
  expect "$t" '."plexsphere:environment"' prod
  expect "$t" '."crossplane-name"' shop-net-7xk2p
  expect "$t" .Name shop-net
  expect "$t" length 6
}

# --- v2: namespaced MRs, server-side apply ------------------------------------------------------------------

@test "v2: a namespaced AWS VPC applied by its XR's field manager is stored with the tags, owned by no manager" {
  run compose_v2 checkout-net-5dz7q
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags checkout-net-5dz7q)" tojson \
    '{"Name":"checkout-net","plexsphere:cost-center":"cc-0042","plexsphere:environment":"staging","plexsphere:team":"checkout"}'
  # The apiserver computes managedFields before mutating admission: Crossplane's manager owns only what it
  # applied (Name), so its next apply cannot prune the policy's entries.
  owned=$(kubectl get $(mr checkout-net-5dz7q) -o json --show-managed-fields |
    jq -c --arg m "$(field_manager checkout-net-5dz7q)" \
      '[.metadata.managedFields[] | select(.manager == $m) | .fieldsV1."f:spec"."f:forProvider"."f:tags" | keys[]]')
  expect "$owned" tojson '["f:Name"]'
}

@test "v2: the provider's crossplane-* tags are kept, and a second apply by the same field manager removes none" {
  run provider_update checkout-net-5dz7q
  echo "$output"
  [ "$status" -eq 0 ]
  expect "$(tags checkout-net-5dz7q)" '."crossplane-kind"' vpc.ec2.aws.m.upbound.io
  expect "$(tags checkout-net-5dz7q)" length 7
  run compose_v2 checkout-net-5dz7q
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  t=$(tags checkout-net-5dz7q)
  expect "$t" '."plexsphere:environment"' staging
  expect "$t" '."plexsphere:cost-center"' cc-0042
  expect "$t" '."plexsphere:team"' checkout
  expect "$t" '."crossplane-providerconfig"' default
  expect "$t" length 7
}

@test "v2: a namespaced Azure ResourceGroup and VirtualNetwork are stored with the tags, the VirtualNetwork's own kept" {
  run compose_v2 checkout-net-r8p2w
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags checkout-net-r8p2w)" tojson \
    '{"plexsphere:cost-center":"cc-0042","plexsphere:environment":"staging","plexsphere:team":"checkout"}'
  run compose_v2 checkout-net-v5j7h
  echo "$output"
  [ "$status" -eq 0 ]
  no_warning
  expect "$(tags checkout-net-v5j7h)" tojson \
    '{"plexsphere:cost-center":"cc-0042","plexsphere:environment":"staging","plexsphere:team":"checkout","tier":"network"}'
}

@test "v2: a label removed from the XR removes its tag at the next apply, with a warning" {
  kubectl label networks.network.example.org checkout-net -n default environment-
  all=""
  for _ in $(seq 15); do
    out=$(compose_v2 checkout-net-5dz7q 2>&1)
    all+="$out"$'\n'
    [ "$(tags checkout-net-5dz7q | jq -r '."plexsphere:environment"')" = null ] && break
    sleep 1
  done
  echo "$all"
  [[ "$all" == *"Warning:"*"plexsphere:environment"* ]]
  t=$(tags checkout-net-5dz7q)
  expect "$t" '."plexsphere:environment"' null
  expect "$t" '."plexsphere:cost-center"' cc-0042
  expect "$t" '."crossplane-kind"' vpc.ec2.aws.m.upbound.io
  expect "$t" length 6
}

@test "v2: an MR whose XR kind is not in contextAwareResources is allowed, its tags as submitted, with a warning" {
  run compose_v2 edge-gw-k4d9s
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Warning:"*"contextAwareResources"* ]]
  # Not recomputed from the Gateway's labels (environment=prod): the Composition's entry stays.
  expect "$(tags edge-gw-k4d9s)" tojson '{"Name":"edge-gw","plexsphere:environment":"test"}'
}

@test "v2: on UPDATE a denied look-up leaves the policy's entries as stored, with the warning again" {
  run provider_update edge-gw-k4d9s
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Warning:"*"contextAwareResources"* ]]
  t=$(tags edge-gw-k4d9s)
  expect "$t" '."plexsphere:environment"' test
  expect "$t" '."crossplane-name"' edge-gw-k4d9s
  expect "$t" length 5
}
