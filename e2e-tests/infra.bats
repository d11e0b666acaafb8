#!/usr/bin/env bats
#
# End-to-end tests of the cloud tags on CAPI infrastructure
# (`cloudTags.capiInfrastructure`), driven through a kwctl-compatible runner,
# the policy's look-ups (the CAPI parent, then the Cluster) answered from
# plain objects.
#
#   bats e2e-tests/infra.bats                     # project runner + annotated-policy.wasm
#   KWCTL=kwctl bats e2e-tests/infra.bats         # a real kwctl on the PATH
#   CASES='test_data/capi-infra/cases/aws*' bats e2e-tests/infra.bats   # some cases only
#
# The expectations are data: test_data/capi-infra/cases/*.yaml, each a request
# of test_data/capi-infra, its settings and what the policy must answer
# (e2e-tests/cases.bash lists the keys), written by hand from the contract
# (docs/infrastructure-tags.md). The parents the policy may
# read are test_data/capi-infra/parents/*.yaml; lookups.tsv lists, per
# scenario, the look-ups the policy must make, in order, and evaluate
# (capi_helpers.bash) checks the session the runner records against it. See
# test_data/capi-infra/README.md.

RUNNER="${KWCTL:-target/host/policy-runner}"
POLICY="${POLICY:-annotated-policy.wasm}"
DATA=test_data
SUITE=capi-infra

load capi_helpers

@test "fixtures: every scenario in lookups.tsv has a request, every request a row and a case, every session a file" {
  local dir="$DATA/$SUITE" problems=0 scenario lookups session extra request case_file
  local lookup='[A-Za-z]+/[a-z0-9.-]*/[a-z0-9.-]+'
  local lookups_re="^(-|$lookup( $lookup)*)$"
  while IFS=$'\t' read -r scenario lookups session extra; do
    [[ -z "$scenario" || "$scenario" == \#* ]] && continue
    [ -f "$dir/$scenario.json" ] || { echo "lookups.tsv: $scenario has no request"; problems=$((problems + 1)); }
    [[ "$lookups" =~ $lookups_re ]] || { echo "lookups.tsv: $scenario: bad look-ups '$lookups'"; problems=$((problems + 1)); }
    [ -z "$session" ] || [ -f "$dir/$session" ] || { echo "lookups.tsv: $scenario: no session $session"; problems=$((problems + 1)); }
    [ -z "$extra" ] || { echo "lookups.tsv: $scenario: more than three columns"; problems=$((problems + 1)); }
  done <"$dir/lookups.tsv"
  for request in "$dir"/*.json; do
    scenario=$(basename "$request" .json)
    [ "$(awk -F'\t' -v s="$scenario" '!/^#/ && $1 == s' "$dir/lookups.tsv" | wc -l)" -eq 1 ] ||
      { echo "$request: not exactly one row in lookups.tsv"; problems=$((problems + 1)); }
    grep -qxF "request: $scenario.json" "$dir"/cases/*.yaml ||
      { echo "$request: no case runs it"; problems=$((problems + 1)); }
  done
  for case_file in "$dir"/cases/*.yaml; do
    request=$(awk '/^request: / { print $2 }' "$case_file")
    [ -f "$dir/$request" ] || { echo "$case_file: no request '$request'"; problems=$((problems + 1)); }
  done
  echo "$problems problems"
  [ "$problems" -eq 0 ]
}

@test "fixtures: the demo's examples are the requests, parents and settings of cases" {
  # examples/ (make demo) holds copies, written by gen.py, so that a user reads
  # one request beside one parents file; the cases that run the originals
  # are what checks the answers the demo shows.
  run python3 - "$DATA/$SUITE" <<'PY'
import json, os, sys, yaml
here = sys.argv[1]
problems = []
def cases_of(request):
    for name in sorted(os.listdir(os.path.join(here, "cases"))):
        case = yaml.safe_load(open(os.path.join(here, "cases", name)))
        if case["request"] == request:
            yield name, case
for line in open(os.path.join(here, "examples", "scenarios.tsv")):
    if line.startswith("#") or not line.strip():
        continue
    file, settings, _ = line.rstrip("\n").split("\t")
    example = json.load(open(os.path.join(here, "examples", file)))
    origin = [name for name in os.listdir(here)
              if name.endswith(".json") and json.load(open(os.path.join(here, name))) == example]
    if not origin:
        problems.append(f"{file}: not a copy of any request")
        continue
    parents = list(yaml.safe_load_all(open(os.path.join(here, "examples", file[:-5] + ".parents.yaml"))))
    fixtures = [yaml.safe_load(open(os.path.join(here, "parents", p)))
                for p in sorted(os.listdir(os.path.join(here, "parents")))]
    problems += [f"{file}: parent {p['kind']} {p['metadata']['name']} is not in parents/"
                 for p in parents if p not in fixtures]
    wanted = json.load(open(os.path.join(here, "examples", settings)))
    cases = [name for request in origin for name, case in cases_of(request)
             if case.get("settings") == wanted]
    if not cases:
        problems.append(f"{file}: no case runs it ({origin}) with {settings}")
    print(f"{file}: a copy of {origin}, {len(parents)} parents, cases {cases}")
print("\n".join(problems) or "no problems")
sys.exit(1 if problems else 0)
PY
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "every case (test_data/capi-infra/cases)" {
  every_case "$DATA/$SUITE"
}

# ---------------------------------------------------------------------------
# one case per provider profile, and the behaviours the contract names
# ---------------------------------------------------------------------------

@test "capa: an AWSCluster gets its Cluster's labels as additionalTags, a non-ASCII value skipped" {
  run_case "$DATA/$SUITE/cases/awscluster_create_topology.yaml"
}

@test "capz: an AzureCluster gets its Cluster's labels, a key with '/' skipped" {
  run_case "$DATA/$SUITE/cases/azurecluster_create_topology.yaml"
}

@test "capg: a GCPCluster gets its Cluster's labels under plexsphere-" {
  run_case "$DATA/$SUITE/cases/gcpcluster_create_topology.yaml"
}

@test "capo: an OpenStackMachine gets CAPI metadata and serverMetadata in one patch" {
  run_case "$DATA/$SUITE/cases/openstackmachine_create_from_machineset.yaml"
}

@test "a Cluster label change reaches the AWSCluster on its next UPDATE" {
  run_case "$DATA/$SUITE/cases/awscluster_update_cluster_label_changed.yaml"
}

@test "an AWSMachine keeps to its own labels, as CAPI propagates them" {
  run_case "$DATA/$SUITE/cases/awsmachine_create_from_machineset.yaml"
}

@test "off by default: the AWSCluster is left as it is" {
  run_case "$DATA/$SUITE/cases/awscluster_create_topology_feature_off.yaml"
}

@test "a Cluster look-up that fails (503) rejects and can be retried" {
  run_case "$DATA/$SUITE/cases/awscluster_create_lookup_unavailable.yaml"
}
