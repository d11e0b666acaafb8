# Data-driven cases, shared by the suites (capi.bats, inplace.bats, xr.bats):
# a case is a YAML file in <suite dir>/cases/ that names a request, the
# settings, and what the policy must answer. Loaded with `load cases`.
#
#   title: what the case shows (printed when it fails)
#   request: <file>.json            relative to the suite dir (the parent of cases/)
#   settings: {...}                 inline settings, or
#   settings-file: <file>.json      relative to the suite dir
#   expect:                         every key is checked; an unknown key fails
#     allowed: true|false           true also means no status
#     patch: none | ["op /path", ...]            the JSONPatch's op/path pairs, order ignored
#     patch-values: {"op /path": value}          that operation's value
#     patch-within: ["/path", ...]               every operation at or below one of these
#     patched: {jq filter: value}                over the request's object with the patch applied
#     tags: {...} | absent                       the patched object's spec.cloudTags
#     skipped: [record, ...] | absent            the patched object's skip annotation: the records'
#                                   compact JSON text, keys in the order written
#     unchanged-except: metadata | cloud-tags | infra-tags | <jq filter>
#                                   the object and the patched object are equal once the
#                                   filter (metadata: the propagated labels/annotations;
#                                   cloud-tags: spec.cloudTags and the skip annotation;
#                                   infra-tags: the CAPI infrastructure tag fields and the
#                                   skip annotation) ran
#     warnings: [...]               exactly these admission warnings, in order
#     warning-count: N
#     warnings-naming: [[text, text...], ...]    for each entry, exactly one warning holds every text
#     warning-mentions: [...] / no-warning-mentions: [...]
#     message-mentions: [...]       status.message holds each text
#     deviations: [...]             a validate-mode rejection listing exactly these, in order
#     audit: {key: value}           auditAnnotations
#     response: {jq filter: value}  over the whole response
#     response-satisfies: [jq filter, ...]       each true over the whole response
#
# The expected values are written by hand from the contract (the fixtures'
# READMEs say where each comes from); nothing here computes them from the
# policy. e2e-tests/check_case.py checks them. The suite defines
# `evaluate_case SUITE_DIR CASE_JSON`, which runs the policy, sets REQUEST (the
# request file) and response (the host's stdout) and calls apply_response_patch.

decoded_patch() {
  jq -r '.patch // empty' <<<"$response" | base64 -d
}

# The request's object with the response's patch applied by the project's
# runner (`policy-runner patch`, the json-patch crate that builds it),
# whichever host answered.
apply_response_patch() {
  PATCHED_OBJECT=""
  PATCH_ERROR=""
  if jq -e '.patch != null' >/dev/null <<<"$response"; then
    if ! PATCHED_OBJECT=$(decoded_patch | "$POLICY_RUNNER" patch --object <(jq '.object' "$REQUEST") --patch - 2>&1); then
      PATCH_ERROR="$PATCHED_OBJECT"
      PATCHED_OBJECT=""
    fi
  fi
}

# run_case FILE: evaluates the case and checks every expectation
# (check_case.py); prints each failure under the case's name and fails if any did.
run_case() {
  local file=$1 json dir log
  json=$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1], encoding="utf-8")), ensure_ascii=False))' "$file") ||
    { echo "$file: not a YAML case"; return 1; }
  dir="${BATS_TEST_TMPDIR:-${BATS_TMPDIR:-/tmp}}"
  log="$dir/case-evaluate.log"
  if ! evaluate_case "$(dirname "$(dirname "$file")")" "$json" >"$log" 2>&1; then
    printf '%s (%s): the policy did not run\n' "$file" "$(jq -r .title <<<"$json")"
    cat "$log"
    return 1
  fi
  if [[ -n "$PATCH_ERROR" ]]; then
    printf '%s: the patch does not apply: %s\n' "$file" "$PATCH_ERROR"
    return 1
  fi
  printf '%s\n' "$response" >"$dir/case-response.json"
  printf '%s\n' "$PATCHED_OBJECT" >"$dir/case-patched.json"
  PYTHONDONTWRITEBYTECODE=1 python3 e2e-tests/check_case.py "$file" "$REQUEST" "$dir/case-response.json" \
    ${PATCHED_OBJECT:+"$dir/case-patched.json"}
}

# run_cases FILE...: run_case on each; fails naming every failing case.
run_cases() {
  local file failed=0 count=0
  for file in "$@"; do
    count=$((count + 1))
    run_case "$file" || failed=$((failed + 1))
  done
  [[ "$count" -gt 0 ]] || { echo "no case files"; return 1; }
  if [[ "$failed" -gt 0 ]]; then
    echo "$failed of $count cases failed"
    return 1
  fi
}

# every_case SUITE_DIR: run_cases over SUITE_DIR/cases/*.yaml, or only those
# whose path matches the glob in $CASES.
every_case() {
  local files=() file
  for file in "$1"/cases/*.yaml; do
    # shellcheck disable=SC2053 # CASES is a glob
    [[ -z "${CASES:-}" || "$file" == $CASES ]] && files+=("$file")
  done
  [[ ${#files[@]} -gt 0 ]] || skip "CASES='${CASES:-}' selects no case of $1"
  run_cases "${files[@]}"
}
