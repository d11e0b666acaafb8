#!/usr/bin/env bats
# The fixer's CronJob (examples/fixer-cronjob.yaml), as a team applies it after examples/fixer-rbac.yaml: the API
# server stores it as written (a server-side dry run: every field kept, the podFailurePolicy on its exit codes
# included), with no Pod Security warning in its namespace, which enforces and warns at `restricted`; the Pod
# the Job controller would make of its template is admitted there (a dry run: the PodSecurity admission plugin
# only warns on a CronJob, and enforces on Pods); and the check has teeth: without any one of the settings
# `restricted` requires, the CronJob gets the warning and its Pod is refused, naming the setting.
#
# fixer-rbac.yaml is applied for real, as the docs' order has it: the CronJob's dry run needs its namespace.
# Applying it again changes nothing; it stays (no namespace controller runs here to delete a namespace).

bats_require_minimum_version 1.5.0

NS=metadata-propagation-fixer

setup_file() {
  load helpers
  kubectl apply -f "$ROOT/examples/fixer-rbac.yaml" >/dev/null
}

setup() {
  load helpers
  CRONJOB=$ROOT/examples/fixer-cronjob.yaml
}

# cronjob [JQ-EDIT]: the example's CronJob as JSON, edited by JQ-EDIT.
cronjob() {
  python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$CRONJOB" | jq "${1:-.}"
}

# pod [JQ-EDIT]: the Pod the Job controller would create from the CronJob's template (JQ-EDIT applied to the
# CronJob first), in the CronJob's namespace.
pod() {
  cronjob "${1:-.}" | jq '{apiVersion: "v1", kind: "Pod",
    metadata: {name: "fixer-cronjob-pod", namespace: .metadata.namespace,
               labels: (.spec.jobTemplate.spec.template.metadata.labels // {})},
    spec: .spec.jobTemplate.spec.template.spec}'
}

# The template's parts a JQ-EDIT changes.
POD_SPEC=.spec.jobTemplate.spec.template.spec
CONTAINER=$POD_SPEC.containers[0]

@test "fixer-rbac.yaml's namespace enforces and warns at the Pod Security restricted level" {
  labels=$(kubectl get namespace "$NS" -o json | jq -c '.metadata.labels')
  expect "$labels" '."pod-security.kubernetes.io/enforce"' restricted
  expect "$labels" '."pod-security.kubernetes.io/warn"' restricted
  # The CronJob runs there, as the ServiceAccount the file binds.
  expect "$(cronjob)" .metadata.namespace "$NS"
  kubectl get serviceaccount "$(cronjob | jq -r "$POD_SPEC.serviceAccountName")" -n "$NS" >/dev/null
}

@test "the CronJob: a server-side dry run stores it as written, with no warning" {
  run --separate-stderr kubectl apply --dry-run=server -f "$CRONJOB" -o json
  [ "$status" -eq 0 ] || { echo "$stderr" >&2; return 1; }
  [ -z "$stderr" ] || { echo "warnings on stderr: $stderr" >&2; return 1; }
  # Every field of the file is in what the API server would store, with its value: none dropped as unknown
  # or by a feature gate that is off (podFailurePolicy, its rules on exit codes 1, 2 and 3).
  printf '%s' "$output" >"$BATS_TEST_TMPDIR/stored.json"
  python3 - "$CRONJOB" "$BATS_TEST_TMPDIR/stored.json" <<'EOF'
import json, sys, yaml
written, stored = yaml.safe_load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, path + (i,))
    else:
        yield path, value
missing = []
for path, value in leaves(written):
    at = stored
    try:
        for key in path:
            at = at[key]
    except (KeyError, IndexError, TypeError):
        at = "<absent>"
    if at != value:
        missing.append(f"{'.'.join(map(str, path))}: written {value!r}, stored {at!r}")
assert not missing, "\n".join(missing)
rules = stored["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
assert [r["action"] for r in rules] == ["Ignore", "FailJob", "Count"], rules
EOF
}

@test "the Pod the Job would create from it is admitted under enforce=restricted, with no warning" {
  run --separate-stderr kubectl apply --dry-run=server -f - -o name <<<"$(pod)"
  [ "$status" -eq 0 ] || { echo "$stderr" >&2; return 1; }
  [ -z "$stderr" ] || { echo "warnings on stderr: $stderr" >&2; return 1; }
  [ "$output" = "pod/fixer-cronjob-pod" ]
  # A dry run: nothing stored.
  run kubectl get pod fixer-cronjob-pod -n "$NS"
  [ "$status" -ne 0 ]
}

# refused JQ-EDIT VIOLATION: with JQ-EDIT the CronJob is stored with the warning naming VIOLATION, and its Pod
# is refused naming it.
refused() {
  local edit=$1 violation=$2
  run --separate-stderr kubectl apply --dry-run=server -f - <<<"$(cronjob "$edit")"
  [ "$status" -eq 0 ] || { echo "the CronJob: $stderr" >&2; return 1; }
  [[ "$stderr" == *'would violate PodSecurity "restricted:latest"'*"$violation"* ]] ||
    { echo "the CronJob with $edit: no warning naming '$violation': $stderr" >&2; return 1; }
  run --separate-stderr kubectl apply --dry-run=server -f - <<<"$(pod "$edit")"
  [ "$status" -ne 0 ] || { echo "the Pod with $edit was admitted: $output" >&2; return 1; }
  [[ "$stderr" == *'forbidden: violates PodSecurity "restricted:latest"'*"$violation"* ]] ||
    { echo "the Pod with $edit: refused, but not naming '$violation': $stderr" >&2; return 1; }
}

@test "without allowPrivilegeEscalation: false, the CronJob gets the warning and its Pod is refused" {
  refused "del($CONTAINER.securityContext.allowPrivilegeEscalation)" 'allowPrivilegeEscalation != false'
}

@test "without any other setting restricted requires, the CronJob gets the warning and its Pod is refused" {
  refused "del($CONTAINER.securityContext.capabilities)" 'unrestricted capabilities'
  refused "del($POD_SPEC.securityContext.runAsNonRoot)" 'runAsNonRoot != true'
  refused "del($POD_SPEC.securityContext.seccompProfile)" 'seccompProfile'
  refused "$POD_SPEC.securityContext.runAsUser = 0" 'runAsUser=0'
}
