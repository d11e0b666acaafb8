#!/usr/bin/env bats
# Crossplane v1 core composing managed resources itself (cluster/up.sh runs v1.20.7, built from the Go module
# proxy: cluster/components/crossplane): the XRD, Composition and XR of cluster/objects/crossplane-compose.yaml,
# the VPC Crossplane creates and composes again on every reconcile of the XR (crossplane-runtime's
# APIPatchingApplicator: a create, then a JSON merge patch of the MR rendered over the one it read), and the
# tags the API server stored, which only the policy (cluster/policies/managed-resources.yaml) writes.
# managed-resources.bats writes MRs as Crossplane writes them; here Crossplane writes them.

setup_file() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/crossplane-compose.yaml
  # A test bed reused from an earlier run: the XR and its VPCs gone (no garbage collector runs here, so
  # Crossplane's ownerReferences delete nothing), then the XRD and Composition as this file has them.
  kubectl delete xvpcs.network.example.org composed-net --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete vpcs.ec2.aws.upbound.io -l crossplane.io/composite=composed-net --ignore-not-found >/dev/null
  apply_named "$OBJECTS" xvpcs.network.example.org >/dev/null 2>&1
  apply_named "$OBJECTS" xvpcs-aws >/dev/null
  # Crossplane renders the XRD to the XR's CRD and starts the XR's controller.
  eventually 60 "kubectl wait --for=condition=Established --timeout=1s crd/xvpcs.network.example.org"
  eventually 60 "kubectl wait --for=condition=Established --timeout=1s xrd/xvpcs.network.example.org"
}

setup() {
  load helpers
  OBJECTS=$ROOT/cluster/objects/crossplane-compose.yaml
}

# vpcs: the VPCs Crossplane composed for the XR (its crossplane.io/composite label), as stored, a JSON list.
vpcs() { kubectl get vpcs.ec2.aws.upbound.io -l crossplane.io/composite=composed-net -o json | jq -c .items; }

# vpc: the one VPC, as stored.
vpc() { vpcs | jq -e 'if length == 1 then .[0] else error("\(length) VPCs") end'; }

# tags: the VPC's tags, sorted, as compact JSON.
tags() { vpc | jq -cS .spec.forProvider.tags; }

# by_crossplane VERB NAME: the API server's audit log records Crossplane (its user agent, client-go's default
# `crossplane/…`) writing VPC NAME with VERB, and the policy's webhook mutating that write.
by_crossplane() {
  jq -e -s --arg verb "$1" --arg name "$2" '
    [.[] | select(.objectRef.resource == "vpcs" and .objectRef.name == $name and .stage == "ResponseComplete"
                  and .verb == $verb and (.userAgent | startswith("crossplane/")))
     | .annotations // {} | to_entries[] | select(.key | startswith("mutation.webhook.admission.k8s.io/"))
     | .value | fromjson | select(.configuration == "clusterwide-managed-resource-tags" and .mutated)]
    | length > 0' "$STATE/audit.log" >/dev/null
}

@test "crossplane v1: the VPC Crossplane composes for an XR is stored with the XR's opted-in labels as tags" {
  apply_named "$OBJECTS" composed-net
  eventually 60 "vpc"
  v=$(vpc)
  expect "$v" '.spec.forProvider.tags | tojson' \
    '{"plexsphere:cost-center":"cc-42","plexsphere:environment":"prod","plexsphere:team":"payments"}'
  # What Crossplane composed: the Composition's base, the XR's region patched in, the XR as controller.
  expect "$v" '.spec.forProvider.region' eu-west-1
  expect "$v" '.spec.forProvider.cidrBlock' 10.20.0.0/16
  expect "$v" '.metadata.annotations."crossplane.io/composition-resource-name"' vpc
  expect "$v" '.metadata.ownerReferences[0] | "\(.apiVersion) \(.kind) \(.name) \(.controller)"' \
    "network.example.org/v1alpha1 XVPC composed-net true"
  expect "$v" '.metadata.ownerReferences[0].uid' "$(kubectl get xvpc composed-net -o jsonpath='{.metadata.uid}')"
  name=$(jq -r .metadata.name <<<"$v")
  expect "$(kubectl get xvpc composed-net -o json)" '.spec.resourceRefs[0].name' "$name"
  # Crossplane itself created it, and the policy's webhook added the tags to that create.
  by_crossplane create "$name"
}

@test "crossplane v1: composing again after a change to the XR's spec keeps the policy's tags" {
  before=$(vpc | jq -r .metadata.name)
  kubectl patch xvpc composed-net --type=merge -p '{"spec":{"region":"us-east-1"}}'
  eventually 60 '[ "$(vpc | jq -r .spec.forProvider.region)" = us-east-1 ]'
  [ "$(vpc | jq -r .metadata.name)" = "$before" ]
  [ "$(tags)" = '{"plexsphere:cost-center":"cc-42","plexsphere:environment":"prod","plexsphere:team":"payments"}' ]
}

@test "crossplane v1: an opted-in label changed on the XR reaches the VPC's tag at Crossplane's next compose" {
  kubectl label xvpc composed-net --overwrite environment=staging acme.io/team=checkout
  eventually 60 '[ "$(tags)" = '"'"'{"plexsphere:cost-center":"cc-42","plexsphere:environment":"staging","plexsphere:team":"checkout"}'"'"' ]'
  # Crossplane's merge patch of the VPC, mutated by the policy: nothing else writes VPCs here.
  by_crossplane patch "$(vpc | jq -r .metadata.name)"
}

@test "crossplane v1: an opted-in label removed from the XR drops its tag at Crossplane's next compose" {
  kubectl label xvpc composed-net cost-center-
  eventually 60 '[ "$(tags)" = '"'"'{"plexsphere:environment":"staging","plexsphere:team":"checkout"}'"'"' ]'
  # A label that is not opted in never becomes a tag.
  [ "$(kubectl get xvpc composed-net -o jsonpath='{.metadata.labels.owner}')" = platform ]
}
