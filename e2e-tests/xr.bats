#!/usr/bin/env bats
# End-to-end tests of the Crossplane capability: opted-in labels of a
# composite resource become provider-correct cloud tags in spec.cloudTags
# (docs/cloud-tags.md).
#
# Run from the repository root:
#   bats e2e-tests/xr.bats
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e-tests/xr.bats
#
#   CASES='test_data/xr/cases/xdatabase_*' bats e2e-tests/xr.bats   # some cases only
#
# Fixtures live in test_data/xr/ (written by test_data/xr/gen_fixtures.py).
# The expectations are data: test_data/xr/cases/*.yaml, each a request, its
# settings and what the policy must answer (e2e-tests/cases.bash lists the
# keys), written out by hand from the contract; nothing recomputes what the
# policy does. "every XR case" runs them all; the tests after it run one case
# per route and family by name. The tests below those check what a case
# cannot say: determinism, settings refused, the README's profile, the
# fixtures' boundary lengths.

bats_require_minimum_version 1.5.0

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-policy.wasm}
# Applies the patches (`policy-runner patch`, the json-patch crate that
# builds them), whichever host answered.
POLICY_RUNNER=${POLICY_RUNNER:-target/host/policy-runner}
XR=test_data/xr
SKIPPED=cloud-tags.plexsphere.io/skipped
SKIPPED_PATH=/metadata/annotations/cloud-tags.plexsphere.io~1skipped

load cases

setup() {
  if ! command -v "$KWCTL" >/dev/null 2>&1; then
    { echo "cannot run: policy runner '$KWCTL' not found: build it with 'cargo build -p policy-runner --profile host' or set KWCTL=kwctl" >&2; false; }
  fi
  if [ ! -f "$POLICY" ]; then
    { echo "cannot run: policy module '$POLICY' not found: build it with 'cargo build --target wasm32-wasip1 --release -p metadata-propagation-policy' and copy target/wasm32-wasip1/release/metadata_propagation_policy.wasm to $POLICY (or set POLICY=...)" >&2; false; }
  fi
  [ -x "$POLICY_RUNNER" ] || { echo "cannot run: '$POLICY_RUNNER' applies the patches: build it (make runner) or set POLICY_RUNNER=..." >&2; false; }
  local tool
  for tool in jq base64; do
    command -v "$tool" >/dev/null 2>&1 || { echo "cannot run: '$tool' is required by these tests" >&2; false; }
  done
  python3 -c 'import yaml' 2>/dev/null || { echo "cannot run: python3 with PyYAML is required (it reads the cases)" >&2; false; }
}

# ---------------------------------------------------------------- helpers

settings() { cat "$XR/settings_$1.json"; }

# run_policy REQUEST_FILE [runner args...]: runs the policy on the file; the
# response line is left in $response and the decoded patch in $patch_file.
run_policy() {
  request_file=$1
  shift
  run --separate-stderr "$KWCTL" run --request-path "$request_file" "$@" "$POLICY"
  if [ "$status" -ne 0 ]; then
    echo "runner exited $status for $request_file"
    echo "stdout: $output"
    echo "stderr: $stderr"
    return 1
  fi
  response=$output
  REQUEST=$request_file
  patch_file="$BATS_TEST_TMPDIR/patch.json"
  jq -r '.patch // empty' <<<"$response" | base64 -d >"$patch_file"
  apply_response_patch
}

# evaluate REQUEST SETTINGS_JSON: run_policy on $XR/REQUEST.
evaluate() {
  run_policy "$XR/$1" --settings-json "$2"
}

# evaluate_case SUITE_DIR CASE_JSON (cases.bash): the case's request with its
# inline settings or its settings file, both relative to SUITE_DIR.
evaluate_case() {
  local request
  request="$1/$(jq -r '.request' <<<"$2")"
  if jq -e 'has("settings-file")' >/dev/null <<<"$2"; then
    run_policy "$request" --settings-path "$1/$(jq -r '.["settings-file"]' <<<"$2")"
  else
    run_policy "$request" --settings-json "$(jq -c '.settings // {}' <<<"$2")"
  fi
}

fail() {
  echo "$@"
  echo "response: $response"
  return 1
}

# check JQ_FILTER [jq args...]: the filter over the response must be true.
check() {
  local filter=$1
  shift
  jq -e "$@" "$filter" <<<"$response" >/dev/null || fail "expected response to satisfy: $filter $*"
}

assert_allowed() {
  check '.allowed == true'
  check '.status == null'
}

# The patch only touches spec.cloudTags and the skip annotation.
assert_patch_confined() {
  jq -e --arg skipped "$SKIPPED_PATH" \
    'all(.[]; .path == "/spec/cloudTags" or (.path | startswith("/spec/cloudTags/")) or .path == $skipped)' \
    "$patch_file" >/dev/null || fail "patch touches more than spec.cloudTags and the skip annotation: $(cat "$patch_file")"
}

# The request's object with the patch applied by the runner; only add,
# remove and replace below the root are expected.
patched_object() {
  jq -e 'all(.[]; (.op | IN("add", "remove", "replace")) and .path != "")' "$patch_file" >/dev/null ||
    { echo "unexpected operation in the patch: $(cat "$patch_file")"; return 1; }
  "$POLICY_RUNNER" patch --object <(jq .object "$request_file") --patch "$patch_file"
}

# An object without spec.cloudTags and the skip annotation (nor annotations
# left empty by removing it).
STRIP='(if (.spec | type) == "object" then del(.spec.cloudTags) else . end)
  | if (.metadata.annotations | type) == "object" then
      del(.metadata.annotations[$skipped])
      | if .metadata.annotations == {} then del(.metadata.annotations) else . end
    else . end'

# Once both are stripped, the patched object equals the submitted one. Keys
# are compared sorted (the runner prints them so); a reordering would take
# operations on other paths, which assert_patch_confined refuses.
assert_untouched_elsewhere() {
  local patched before after
  patched=$(patched_object) || fail "patch does not apply: $patched"
  before=$(jq -cS --arg skipped "$SKIPPED" ".object | $STRIP" "$request_file")
  after=$(jq -cS --arg skipped "$SKIPPED" "$STRIP" <<<"$patched")
  [ "$before" = "$after" ] || fail "the patch changed more than spec.cloudTags and the skip annotation" \
    $'\n'"before: $before"$'\n'"after:  $after"
}

# assert_tags JSON_OBJECT: spec.cloudTags of the patched object; "absent"
# means the field must not exist.
assert_tags() {
  local patched
  patched=$(patched_object) || fail "patch does not apply"
  if [ "$1" = absent ]; then
    jq -e '.spec | has("cloudTags") | not' <<<"$patched" >/dev/null ||
      fail "spec.cloudTags should be absent: $(jq -c .spec.cloudTags <<<"$patched")"
    return
  fi
  jq -e --argjson want "$1" '.spec.cloudTags == $want' <<<"$patched" >/dev/null ||
    fail "spec.cloudTags differs"$'\n'"expected: $(jq -cS . <<<"$1")"$'\n'"actual:   $(jq -cS .spec.cloudTags <<<"$patched")"
}

# assert_skipped TEXT: the skip annotation of the patched object is exactly
# TEXT; "absent" means no such annotation.
assert_skipped() {
  local patched actual
  patched=$(patched_object) || fail "patch does not apply"
  if [ "$1" = absent ]; then
    jq -e --arg k "$SKIPPED" '(.metadata.annotations // {}) | has($k) | not' <<<"$patched" >/dev/null ||
      fail "annotation $SKIPPED should be absent"
    return
  fi
  actual=$(jq -r --arg k "$SKIPPED" '.metadata.annotations[$k] // "<absent>"' <<<"$patched")
  [ "$actual" = "$1" ] || fail "skip annotation differs"$'\n'"expected: $1"$'\n'"actual:   $actual"
}

assert_warning_count() {
  check '(.warnings // []) | length == $n' --argjson n "$1"
}

# assert_warning KEY REASON: exactly one warning names both.
assert_warning() {
  check '[(.warnings // [])[] | select(contains($key) and contains($reason))] | length == 1' \
    --arg key "$1" --arg reason "$2"
}

# record QUALIFIED_KEY PROVIDER REASON: one skip record as the contract
# writes it (compact, fields in contract order).
record() {
  printf '{"qualifiedKey":"%s","tagKey":"plexsphere:%s","provider":"%s","reason":"%s"}' "$1" "$1" "$2" "$3"
}

# ----------------------------------------------------------------- cases

@test "every XR case (test_data/xr/cases)" {
  every_case "$XR"
}

# One case per route and family, so a broken one shows by name.

@test "v1 legacy claim-backed XNetwork on aws: opted-in labels and label-set entries become prefixed tags" {
  run_case "$XR/cases/xnetwork_v1_aws.propagating.yaml"
}

@test "v2 XDatabase on hetzner: rune limits at and one past 63, strict key characters" {
  run_case "$XR/cases/xdatabase_hetzner_limits.limits.yaml"
}

@test "count cap on aws: the 50 lowest qualified keys in byte order are kept" {
  run_case "$XR/cases/xdatabase_aws_count_cap.count-cap.yaml"
}

@test "UPDATE with stale plexsphere tags, user-owned tags and a stale skip annotation" {
  run_case "$XR/cases/xnetwork_stale_update.propagating.yaml"
}

@test "adopted XR (platform/origin label) is left exactly as submitted" {
  run_case "$XR/cases/xnetwork_adopted.propagating.yaml"
}

@test "label-set annotation that is not JSON is rejected, naming the annotation" {
  run_case "$XR/cases/xdatabase_labels_annotation_not_json.propagating.yaml"
}

@test "a Kubernetes kind (ConfigMap) with opted-in labels: allowed unchanged, a warning names the kind" {
  run_case "$XR/cases/configmap_create_opted_in_labels.propagating.yaml"
}

# ------------------------------------------------------------ determinism

@test "the same request twice gives byte-identical output" {
  local fixture settings_name first
  for pair in xdatabase_aws_count_cap.json:count_cap xdatabase_aws_limits.json:limits \
    xdatabase_openstack_limits.json:limits xnetwork_stale_update.json:propagating; do
    fixture=${pair%%:*}
    settings_name=${pair##*:}
    evaluate "$fixture" "$(settings "$settings_name")"
    first=$response
    evaluate "$fixture" "$(settings "$settings_name")"
    [ "$first" = "$response" ] || fail "$fixture: outputs differ"$'\n'"first:  $first"
  done
}

# ------------------------------------------------------- invalid settings

assert_settings_refused() {
  run "$KWCTL" run --request-path "$XR/xnetwork_v1_aws.json" --settings-json "$1" "$POLICY"
  [ "$status" -ne 0 ] || fail "expected a non-zero exit, got 0: $output"
  [[ $output == *"Provided settings are not valid"* ]] || fail "missing 'Provided settings are not valid': $output"
  [[ $output == *"$2"* ]] || fail "message does not name $2: $output"
}

@test "settings: a seeded label in propagatingLabels is refused" {
  assert_settings_refused '{"cloudTags":{"propagatingLabels":["platform/env","platform/origin"]}}' 'cloudTags.propagatingLabels[1]'
  assert_settings_refused '{"cloudTags":{"propagatingLabels":["platform/mesh-ip"]}}' 'platform/mesh-ip'
  assert_settings_refused '{"cloudTags":{"propagatingLabels":["platform/domain"]}}' 'platform/domain'
}

@test "settings: an unknown field is refused" {
  assert_settings_refused '{"cloudTags":{"propagatingLabel":["platform/env"]}}' 'propagatingLabel'
  assert_settings_refused '{"cloudTag":{"propagatingLabels":["platform/env"]}}' 'cloudTag'
}

@test "settings: an empty providerPath is refused" {
  assert_settings_refused '{"cloudTags":{"propagatingLabels":["platform/env"],"providerPath":""}}' 'cloudTags.providerPath'
}

# ------------------------ user-defined profiles (docs/settings.md, "User-defined tag profiles")
# settings_ready_profiles.json holds the ready-made profiles (docs/cloud-tags.md)
# (crates/core/tests/tags/ready_made_profiles.rs checks it against the README). This one stays
# a test rather than a case: its settings are the README's aws profile over
# the count-cap settings, taken from those files rather than copied.

@test "user profile aws (README, cap 47 for upjet's 3 default tags): the 47 lowest keys are kept" {
  # The count-cap fixture under the README's aws profile instead of the
  # built-in (cap 50): 57 valid labels, so K99 and k00..k45 are kept and
  # k46..k54 and platform/env hit the cap.
  local doc
  doc=$(jq -c --slurpfile ready "$XR/settings_ready_profiles.json" \
    '.cloudTags.profiles = [$ready[0].cloudTags.profiles[] | select(.name == "aws")]' \
    "$XR/settings_count_cap.json")
  [ "$(jq -c '[.cloudTags.profiles[] | [.name, .providers, .cap]]' <<<"$doc")" = '[["aws",["aws"],47]]' ]
  evaluate xdatabase_aws_count_cap.json "$doc"
  assert_allowed
  assert_patch_confined
  check '(.patch | @base64d | fromjson | [.[] | select(.op == "add" and (.path | startswith("/spec/cloudTags/")))] | length) == 47'
  local tags='{"CostCenter": "42", "plexsphere:acme:tag/K99": "v99"' i
  for i in $(seq -w 0 45); do tags+=",\"plexsphere:acme:tag/k$i\": \"v$i\""; done
  assert_tags "$tags}"
  local skipped
  skipped=$(record "acme:tag/k0,bad" aws key-character-class)
  for i in $(seq 46 54); do skipped+=",$(record "acme:tag/k$i" aws count-cap)"; done
  skipped+=",$(record aws:tag/x aws reserved-prefix),$(record platform/env aws count-cap)"
  assert_skipped "[$skipped]"
  assert_warning_count 12
  for i in $(seq 46 54); do
    assert_warning "\"acme:tag/k$i\"" "on provider profile aws: count-cap (47 tags with lower-sorting keys already reached the cap of 47)"
  done
  assert_warning '"platform/env"' "on provider profile aws: count-cap (47 tags"
  assert_warning '"acme:tag/k0,bad"' key-character-class
  assert_warning '"aws:tag/x"' reserved-prefix
  assert_untouched_elsewhere
}

@test "settings: profile problems are all refused at once, each naming its field" {
  local doc='{"cloudTags":{"profiles":[{"name":"generic","providers":["gcp"],"keyMax":0,"valueMax":63,"unit":"bytes","cap":64,"keyCharacters":{"sets":["digits"]}}]}}'
  assert_settings_refused "$doc" 'cloudTags.profiles[0].name'
  assert_settings_refused "$doc" 'cloudTags.profiles[0].keyMax: 0 is out of bounds; use a number from 1 to 4096'
  assert_settings_refused '{"cloudTags":{"profiles":[{"name":"a","providers":["a"],"keyMax":9,"valueMax":9,"unit":"chars"}]}}' 'cloudTags.profiles[0].unit'
  assert_settings_refused '{"cloudTags":{"profiles":[{"name":"a","providers":["aws "],"keyMax":9,"valueMax":9,"unit":"runes","cap":9,"keyCharacters":{"sets":["printable"]}}]}}' 'cloudTags.profiles[0].providers[0]: "aws " contains " " (U+0020); provider values are matched exactly (ignoring case), remove it'
}

# ------------------------------------------------------- fixture sanity

@test "fixtures: boundary keys and values have the intended lengths" {
  # Guards the test data itself: the limit scenarios above only mean
  # something if these strings sit exactly at / one past the ceilings.
  length_of() { # FIXTURE KEY-FILTER UNIT(length|utf8bytelength)
    jq -r --arg a cloud-tags.plexsphere.io/labels "(.object.metadata.annotations[\$a] | fromjson) as \$l | $2 | $3" "$XR/$1"
  }
  # aws, runes: tag key = 11 + qualified key
  [ "$(length_of xdatabase_aws_limits.json '$l | keys[] | select(startswith("acme:limits/é"))' length | sort -n | tr '\n' ' ')" = "117 118 " ]
  [ "$(length_of xdatabase_aws_limits.json '$l["acme:limits/value-at"]' length)" = 256 ]
  [ "$(length_of xdatabase_aws_limits.json '$l["acme:limits/value-over"]' length)" = 257 ]
  # hetzner, runes
  [ "$(length_of xdatabase_hetzner_limits.json '$l | keys[] | select(startswith("acme:limits/ü"))' length | sort -n | tr '\n' ' ')" = "52 53 " ]
  [ "$(length_of xdatabase_hetzner_limits.json '$l["acme:limits/value-at"]' length)" = 63 ]
  [ "$(length_of xdatabase_hetzner_limits.json '$l["acme:limits/value-over"]' length)" = 64 ]
  # openstack, bytes
  [ "$(length_of xdatabase_openstack_limits.json '$l | keys[] | select(startswith("acme:limits/日"))' utf8bytelength | sort -n | tr '\n' ' ')" = "244 245 " ]
  [ "$(length_of xdatabase_openstack_limits.json '$l["acme:limits/value-at"]' utf8bytelength)" = 255 ]
  [ "$(length_of xdatabase_openstack_limits.json '$l["acme:limits/value-over"]' utf8bytelength)" = 256 ]
  [ "$(length_of xdatabase_openstack_limits.json '$l["acme:limits/value-over"]' length)" = 128 ]
  # generic, runes
  [ "$(length_of xdatabase_no_provider.json '$l | keys[] | select(startswith("acme:limits/g"))' length | sort -n | tr '\n' ' ')" = "52 53 " ]
  [ "$(length_of xdatabase_no_provider.json '$l["acme:limits/value-at"]' length)" = 255 ]
  [ "$(length_of xdatabase_no_provider.json '$l["acme:limits/value-over"]' length)" = 256 ]
  # the label whose key is too long for hetzner
  [ "$(printf %s billing.payments.example.org/cost-allocation-identifier | wc -m)" = 55 ]
  # count cap: 59 opted-in labels present
  [ "$(jq -r '(.object.metadata.annotations["cloud-tags.plexsphere.io/labels"] | fromjson | keys) + (.object.metadata.labels | keys) | length' "$XR/xdatabase_aws_count_cap.json")" = 61 ] # 59 opted in + 2 not
}

@test "fixtures: every request has a case, every case a request and settings" {
  local problems=0 request case_file file
  for request in "$XR"/*.json "$XR"/examples/*.json; do
    [[ "$(basename "$request")" == settings* ]] && continue
    grep -qxF "request: ${request#"$XR"/}" "$XR"/cases/*.yaml ||
      { echo "$request: no case in $XR/cases/ runs it"; problems=$((problems + 1)); }
  done
  for case_file in "$XR"/cases/*.yaml; do
    for file in $(awk '/^(request|settings-file): / { print $2 }' "$case_file"); do
      [ -f "$XR/$file" ] || { echo "$case_file: no file '$file'"; problems=$((problems + 1)); }
    done
  done
  echo "$problems problems"
  [ "$problems" -eq 0 ]
}
