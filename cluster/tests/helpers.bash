# Shared by the cluster scenarios: they talk to the test bed through kubectl only (KUBECONFIG and PATH
# come from cluster/test.sh) and check what the API server stored.
ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
RUNNER=$ROOT/target/host/policy-runner
. "$ROOT/cluster/lib.sh"

# get RESOURCE NAME [NAMESPACE]: the stored object, as JSON.
get() { kubectl get "$1" "$2" -n "${3:-default}" -o json; }

# eventually SECONDS 'SHELL CONDITION': until the condition holds, evaluated afresh once a second (so the
# command substitutions in it are too); what it printed last on failure.
eventually() {
  local seconds=$1 condition=$2 out
  for _ in $(seq "$seconds"); do
    if out=$(eval "$condition" 2>&1); then return 0; fi
    sleep 1
  done
  echo "not true within $seconds s: $condition -> $out" >&2
  return 1
}

# field RESOURCE NAME JQ-PATH: one field of the stored object (raw).
field() { get "$1" "$2" | jq -r "$3"; }

# count RESOURCE SELECTOR: how many objects match the label selector in default.
count() { kubectl get "$1" -n default -l "$2" -o json | jq '.items | length'; }

# expect JSON JQ-FILTER EXPECTED: the filter's (raw) output on JSON is EXPECTED.
expect() {
  local actual
  actual=$(jq -r "$2" <<<"$1")
  [ "$actual" = "$3" ] || { echo "$2: expected '$3', stored '$actual'" >&2; return 1; }
}

# The parts of each matching object a write loop would keep changing: metadata (labels, annotations,
# generation), spec, and when each writer last changed them (managedFields outside the status
# subresource: a loop that flips a key and back between two samples still moves its writer's time).
# Status updates do not count.
written_state() {
  kubectl get "$1" -n default -l "$2" -o json --show-managed-fields |
    jq -S '[.items[] | {name: .metadata.name, generation: .metadata.generation,
      labels: .metadata.labels, annotations: .metadata.annotations, spec: .spec,
      writes: [(.metadata.managedFields // [])[] | select(.subresource != "status")
        | {manager, operation, time}]}] | sort_by(.name)'
}

# settings_of POLICY-FILE: the policy's settings, as JSON, for `policy-runner audit`.
settings_of() {
  python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))["spec"]["settings"]))' "$1"
}

# named FILE NAME: the one document of FILE named NAME, as YAML.
named() {
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] == sys.argv[2]]
assert len(docs) == 1, f"{sys.argv[1]} has {len(docs)} objects named {sys.argv[2]}"
yaml.safe_dump(docs[0], sys.stdout)' "$1" "$2"
}

# apply_named FILE NAME [KUBECTL-ARGS...]: `kubectl apply` of that one document.
apply_named() {
  local file=$1 name=$2
  shift 2
  named "$file" "$name" | kubectl apply -f - "$@"
}

# webhook_on_create CONFIGURATION RESOURCE NAME MUTATED: the API server's audit log (cluster/audit-policy.yaml)
# records that it called the mutating webhook of CONFIGURATION (a policy's webhook configuration,
# `clusterwide-<policy>`) on the create of RESOURCE NAME, and, with MUTATED `true`, that the webhook mutated
# it: what the API server itself saw, whatever webhook server hosts the module. A create is a `create`, or a
# server-side apply that created the object (a `patch` answered 201 Created, as k0smotron creates what it owns).
webhook_on_create() {
  jq -e -s --arg config "$1" --arg resource "$2" --arg name "$3" --argjson mutated "$4" '
    [.[] | select(.objectRef.resource == $resource and .objectRef.name == $name and .stage == "ResponseComplete")
     | select(.verb == "create" or (.verb == "patch" and .responseStatus.code == 201))
     | .annotations // {} | to_entries[]
     | select(.key | startswith("mutation.webhook.admission.k8s.io/")) | .value | fromjson
     | select(.configuration == $config and (.mutated == true or ($mutated | not)))] | length > 0' \
    "$STATE/audit.log" >/dev/null
}

# webhook_mutated CONFIGURATION RESOURCE NAME: the webhook mutated the create.
webhook_mutated() { webhook_on_create "$1" "$2" "$3" true; }

# webhook_called CONFIGURATION RESOURCE NAME: the webhook was called on the create, mutating it or not.
webhook_called() { webhook_on_create "$1" "$2" "$3" false; }

# monitor_verdicts POLICY LOG FROM: one line, `allowed=true` or `allowed=false`, per request the
# monitor-mode POLICY (its policies.yml key, `clusterwide-<name>`) evaluated after line FROM of the
# webhook server's LOG: what the policy would have answered, which the API server never sees (monitor
# mode allows every request). From `policy-runner serve`'s line (`policy=<id> … (monitor mode: the
# policy answered allowed=…)`) or from policy-server's JSON log (cluster/lib.sh starts it with
# `--log-fmt json`): its "policy evaluation (monitor mode)" event, whose `response` field prints the
# policy's AdmissionResponse.
monitor_verdicts() {
  local policy=$1 log=$2 from=$3
  if [ -n "${POLICY_SERVER:-}" ]; then
    tail -n +"$((from + 1))" "$log" | jq -R -r --arg policy "$policy" '
      fromjson? | .fields // {} | select(.message == "policy evaluation (monitor mode)" and .policy_id == $policy)
      | .response | capture("allowed: (?<a>true|false)") | "allowed=\(.a)"'
  else
    tail -n +"$((from + 1))" "$log" | grep -F "policy=$policy " |
      sed -n 's/.*(monitor mode: the policy answered \(allowed=[a-z]*\).*/\1/p'
  fi
}
