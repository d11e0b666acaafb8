#!/usr/bin/env bats
# End-to-end tests of the Crossplane capability: opted-in labels of a
# composite resource become provider-correct cloud tags in spec.cloudTags
# (README, "Crossplane: cloud tags").
#
# Run from the repository root:
#   bats e2e-tests/xr.bats
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e-tests/xr.bats
#
# Fixtures live in test_data/xr/ (written by test_data/xr/gen_fixtures.py).
# Every expectation below is written out by hand from the contract; nothing
# here recomputes what the policy does.

bats_require_minimum_version 1.5.0

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-policy.wasm}
# Applies the patches (`policy-runner patch`, the json-patch crate that
# builds them), whichever host answered.
POLICY_RUNNER=${POLICY_RUNNER:-target/host/policy-runner}
XR=test_data/xr
SKIPPED=cloud-tags.plexsphere.io/skipped
SKIPPED_PATH=/metadata/annotations/cloud-tags.plexsphere.io~1skipped

setup() {
  if ! command -v "$KWCTL" >/dev/null 2>&1; then
    skip "policy runner '$KWCTL' not found: build it with 'cargo build -p policy-runner --profile host' or set KWCTL=kwctl"
  fi
  if [ ! -f "$POLICY" ]; then
    skip "policy module '$POLICY' not found: build it with 'cargo build --target wasm32-wasip1 --release -p metadata-propagation-policy' and copy target/wasm32-wasip1/release/metadata_propagation_policy.wasm to $POLICY (or set POLICY=...)"
  fi
  [ -x "$POLICY_RUNNER" ] || skip "'$POLICY_RUNNER' applies the patches: build it (make runner) or set POLICY_RUNNER=..."
  local tool
  for tool in jq base64; do
    command -v "$tool" >/dev/null 2>&1 || skip "'$tool' is required by these tests"
  done
}

# ---------------------------------------------------------------- helpers

# rep TEXT N: TEXT repeated N times (to write long boundary strings legibly).
rep() {
  local out="" i
  for ((i = 0; i < $2; i++)); do out+=$1; done
  printf '%s' "$out"
}

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
  patch_file="$BATS_TEST_TMPDIR/patch.json"
  jq -r '.patch // empty' <<<"$response" | base64 -d >"$patch_file"
}

# evaluate REQUEST SETTINGS_JSON: run_policy on $XR/REQUEST.
evaluate() {
  run_policy "$XR/$1" --settings-json "$2"
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

assert_no_patch() {
  check '.patch == null and .patchType == null'
}

assert_no_warnings() {
  check '(.warnings // []) | length == 0'
}

# assert_ops JSON_ARRAY: the patch's "op path" pairs are exactly these.
assert_ops() {
  check '.patchType == "JSONPatch"'
  local actual expected
  actual=$(jq -c '[.[] | .op + " " + .path] | sort' "$patch_file")
  expected=$(jq -c 'sort' <<<"$1")
  [ "$actual" = "$expected" ] || fail "patch ops differ" $'\n'"expected: $expected"$'\n'"actual:   $actual"$'\n'"patch: $(cat "$patch_file")"
}

# The patch only touches spec.cloudTags and the skip annotation.
assert_patch_confined() {
  jq -e --arg skipped "$SKIPPED_PATH" \
    'all(.[]; .path == "/spec/cloudTags" or (.path | startswith("/spec/cloudTags/")) or .path == $skipped)' \
    "$patch_file" >/dev/null || fail "patch touches more than spec.cloudTags and the skip annotation: $(cat "$patch_file")"
}

# op_value OP PATH: the value of that patch operation (JSON).
op_value() {
  jq -c --arg op "$1" --arg path "$2" '[.[] | select(.op == $op and .path == $path) | .value] | if length == 1 then .[0] else error("expected one \($op) \($path)") end' "$patch_file"
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

# ---------------------------------------------------- Crossplane v1 legacy

@test "v1 legacy claim-backed XNetwork on aws: opted-in labels and label-set entries become prefixed tags" {
  evaluate xnetwork_v1_aws.json "$(settings propagating)"
  assert_allowed
  check '.uid == "e2e-xr-v1-aws-0001"'
  assert_ops '["add /spec/cloudTags"]'
  assert_patch_confined
  # platform/tier: the label says "standard", the label-set annotation wins.
  # platform/origin, crossplane.io/*, app.kubernetes.io/part-of and
  # acme:checkout/not-opted-in are not opted in.
  assert_tags '{
    "plexsphere:acme:checkout/owner": "team-payments@acme.example",
    "plexsphere:acme:checkout/region": "日本語 / Tōkyō",
    "plexsphere:platform/env": "prod",
    "plexsphere:platform/team": "payments",
    "plexsphere:platform/tier": "critical"
  }'
  [ "$(op_value add /spec/cloudTags | jq -r '.["plexsphere:acme:checkout/region"]')" = "日本語 / Tōkyō" ]
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

@test "v1 XNetwork with empty settings: nothing propagates, no patch" {
  evaluate xnetwork_v1_aws.json '{}'
  assert_allowed
  assert_no_patch
  assert_no_warnings
}

@test "v1 XNetwork: opted-in keys the object does not carry change nothing" {
  evaluate xnetwork_v1_aws.json '{"cloudTags":{"propagatingLabels":["acme:checkout/absent","team/cost-center"]}}'
  assert_allowed
  assert_no_patch
  assert_no_warnings
}

@test "UPDATE with stale plexsphere tags, user-owned tags and a stale skip annotation" {
  evaluate xnetwork_stale_update.json "$(settings propagating)"
  assert_allowed
  assert_ops '[
    "add /spec/cloudTags/plexsphere:acme:checkout~1owner",
    "replace /spec/cloudTags/plexsphere:platform~1env",
    "remove /spec/cloudTags/plexsphere:platform~1retired",
    "remove /metadata/annotations/cloud-tags.plexsphere.io~1skipped"
  ]'
  assert_patch_confined
  [ "$(op_value add /spec/cloudTags/plexsphere:acme:checkout~1owner)" = '"team-payments"' ]
  [ "$(op_value replace /spec/cloudTags/plexsphere:platform~1env)" = '"prod"' ]
  # CostCenter and owner carry no prefix: user-owned, kept as they are.
  assert_tags '{
    "CostCenter": "42",
    "owner": "finops",
    "plexsphere:acme:checkout/owner": "team-payments",
    "plexsphere:platform/env": "prod",
    "plexsphere:platform/team": "payments"
  }'
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

@test "UPDATE whose only tags are stale plexsphere tags: spec.cloudTags is removed" {
  evaluate xdatabase_stale_only_prefixed.json "$(settings propagating)"
  assert_allowed
  assert_ops '["remove /spec/cloudTags", "remove /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  assert_tags absent
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

@test "converged v2 XDatabase on hetzner: no patch, the standing skip is still warned" {
  evaluate xdatabase_converged_hetzner.json "$(settings propagating)"
  assert_allowed
  assert_no_patch
  assert_warning_count 1
  assert_warning "acme:checkout/on call" key-character-class
}

# ------------------------------------------------------------- v2 limits

@test "v2 XDatabase on hetzner: rune limits at and one past 63, strict key characters" {
  local u40 u41 j63
  u40=$(rep ü 40) # tag key plexsphere:acme:limits/ü*40 = 63 runes (103 bytes)
  u41=$(rep ü 41) # 64 runes
  j63=$(rep 日 63) # value of 63 runes (189 bytes)
  evaluate xdatabase_hetzner_limits.json "$(settings limits)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  assert_tags "$(jq -n --arg u40 "$u40" --arg j63 "$j63" '{
    "plexsphere:acme:limits/\($u40)": "at-limit",
    "plexsphere:acme:limits/value-at": $j63,
    "plexsphere:platform/env": "prod"
  }')"
  assert_skipped "[$(record "acme:limits/on call" hetzner key-character-class),$(record "acme:limits/owner@night" hetzner key-character-class),$(record acme:limits/value-over hetzner value-too-long),$(record "acme:limits/$u41" hetzner key-too-long)]"
  assert_warning_count 4
  assert_warning "acme:limits/on call" key-character-class
  assert_warning "acme:limits/owner@night" key-character-class
  assert_warning "acme:limits/value-over" value-too-long
  assert_warning "acme:limits/$u41" key-too-long
  assert_untouched_elsewhere
}

@test "v2 XDatabase on OpenStack: byte limits at and one past 255, only control characters refused" {
  local k_at k_over v_at
  k_at="acme:limits/$(rep 日 77)x"   # tag key = 11 + 12 + 231 + 1 = 255 bytes (90 runes)
  k_over="acme:limits/$(rep 日 77)xy" # 256 bytes (91 runes)
  v_at="$(rep é 127)x"                # 255 bytes (128 runes); value-over is é*128 = 256 bytes, also 128 runes
  evaluate xdatabase_openstack_limits.json "$(settings limits)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  # provider "OpenStack" matches the openstack profile ignoring case;
  # "aws:" is reserved only on aws.
  assert_tags "$(jq -n --arg k_at "$k_at" --arg v_at "$v_at" '{
    "plexsphere:acme:limits/cost center, #1 (€)": "kept",
    "plexsphere:acme:limits/value-at": $v_at,
    "plexsphere:\($k_at)": "at-limit",
    "plexsphere:aws:cost-center": "42",
    "plexsphere:platform/env": "prod"
  }')"
  # The tab is escaped (\t) inside the annotation's JSON text.
  assert_skipped "[$(record 'acme:limits/on\tcall' openstack key-character-class),$(record acme:limits/value-over openstack value-too-long),$(record "$k_over" openstack key-too-long)]"
  assert_warning_count 3
  assert_warning 'acme:limits/on\tcall' key-character-class
  assert_warning "acme:limits/value-over" value-too-long
  assert_warning "$k_over" key-too-long
  assert_untouched_elsewhere
}

@test "v2 XDatabase on AWS: rune limits at and one past 128/256, reserved prefix in any case, reason order" {
  local e105 e106 z130 e256
  e105=$(rep é 105) # tag key plexsphere:acme:limits/é*105 = 128 runes (233 bytes)
  e106=$(rep é 106) # 129 runes
  z130=$(rep z 130)
  e256=$(rep é 256) # value of 256 runes (512 bytes)
  evaluate xdatabase_aws_limits.json "$(settings limits)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  assert_tags "$(jq -n --arg e105 "$e105" --arg e256 "$e256" '{
    "plexsphere:acme:limits/aws:billing": "finops",
    "plexsphere:acme:limits/cost center+a=b@c": "kept",
    "plexsphere:acme:limits/value-at": $e256,
    "plexsphere:acme:limits/\($e105)": "at-limit",
    "plexsphere:platform/env": "prod"
  }')"
  # AwS:z*130: reserved-prefix wins over key-too-long.
  # acme:limits/,é*105: key-too-long wins over key-character-class.
  # acme:limits/value,over: value-too-long wins over key-character-class.
  assert_skipped "[$(record "AwS:$z130" aws reserved-prefix),$(record "acme:limits/,$e105" aws key-too-long),$(record "acme:limits/owner,backup" aws key-character-class),$(record "acme:limits/value,over" aws value-too-long),$(record acme:limits/value-over aws value-too-long),$(record "acme:limits/$e106" aws key-too-long),$(record aws:cost-center aws reserved-prefix)]"
  assert_warning_count 7
  assert_warning "AwS:$z130" reserved-prefix
  assert_warning "acme:limits/,$e105" key-too-long
  assert_warning "acme:limits/owner,backup" key-character-class
  assert_warning "acme:limits/value,over" value-too-long
  assert_warning "acme:limits/value-over" value-too-long
  assert_warning "acme:limits/$e106" key-too-long
  assert_warning "aws:cost-center" reserved-prefix
  assert_untouched_elsewhere
}

@test "count cap on aws: the 50 lowest qualified keys in byte order are kept" {
  evaluate xdatabase_aws_count_cap.json "$(settings count_cap)"
  assert_allowed
  # 59 opted-in labels: 57 valid, k0,bad (comma) and aws:tag/x (reserved)
  # are skipped first and take no slot. "K" (0x4B) sorts before "k" (0x6B),
  # so acme:tag/K99 is kept and k49 is the first to hit the cap.
  assert_ops '[
    "add /spec/cloudTags/plexsphere:acme:tag~1K99",
    "add /spec/cloudTags/plexsphere:acme:tag~1k00", "add /spec/cloudTags/plexsphere:acme:tag~1k01",
    "add /spec/cloudTags/plexsphere:acme:tag~1k02", "add /spec/cloudTags/plexsphere:acme:tag~1k03",
    "add /spec/cloudTags/plexsphere:acme:tag~1k04", "add /spec/cloudTags/plexsphere:acme:tag~1k05",
    "add /spec/cloudTags/plexsphere:acme:tag~1k06", "add /spec/cloudTags/plexsphere:acme:tag~1k07",
    "add /spec/cloudTags/plexsphere:acme:tag~1k08", "add /spec/cloudTags/plexsphere:acme:tag~1k09",
    "add /spec/cloudTags/plexsphere:acme:tag~1k10", "add /spec/cloudTags/plexsphere:acme:tag~1k11",
    "add /spec/cloudTags/plexsphere:acme:tag~1k12", "add /spec/cloudTags/plexsphere:acme:tag~1k13",
    "add /spec/cloudTags/plexsphere:acme:tag~1k14", "add /spec/cloudTags/plexsphere:acme:tag~1k15",
    "add /spec/cloudTags/plexsphere:acme:tag~1k16", "add /spec/cloudTags/plexsphere:acme:tag~1k17",
    "add /spec/cloudTags/plexsphere:acme:tag~1k18", "add /spec/cloudTags/plexsphere:acme:tag~1k19",
    "add /spec/cloudTags/plexsphere:acme:tag~1k20", "add /spec/cloudTags/plexsphere:acme:tag~1k21",
    "add /spec/cloudTags/plexsphere:acme:tag~1k22", "add /spec/cloudTags/plexsphere:acme:tag~1k23",
    "add /spec/cloudTags/plexsphere:acme:tag~1k24", "add /spec/cloudTags/plexsphere:acme:tag~1k25",
    "add /spec/cloudTags/plexsphere:acme:tag~1k26", "add /spec/cloudTags/plexsphere:acme:tag~1k27",
    "add /spec/cloudTags/plexsphere:acme:tag~1k28", "add /spec/cloudTags/plexsphere:acme:tag~1k29",
    "add /spec/cloudTags/plexsphere:acme:tag~1k30", "add /spec/cloudTags/plexsphere:acme:tag~1k31",
    "add /spec/cloudTags/plexsphere:acme:tag~1k32", "add /spec/cloudTags/plexsphere:acme:tag~1k33",
    "add /spec/cloudTags/plexsphere:acme:tag~1k34", "add /spec/cloudTags/plexsphere:acme:tag~1k35",
    "add /spec/cloudTags/plexsphere:acme:tag~1k36", "add /spec/cloudTags/plexsphere:acme:tag~1k37",
    "add /spec/cloudTags/plexsphere:acme:tag~1k38", "add /spec/cloudTags/plexsphere:acme:tag~1k39",
    "add /spec/cloudTags/plexsphere:acme:tag~1k40", "add /spec/cloudTags/plexsphere:acme:tag~1k41",
    "add /spec/cloudTags/plexsphere:acme:tag~1k42", "add /spec/cloudTags/plexsphere:acme:tag~1k43",
    "add /spec/cloudTags/plexsphere:acme:tag~1k44", "add /spec/cloudTags/plexsphere:acme:tag~1k45",
    "add /spec/cloudTags/plexsphere:acme:tag~1k46", "add /spec/cloudTags/plexsphere:acme:tag~1k47",
    "add /spec/cloudTags/plexsphere:acme:tag~1k48",
    "replace /metadata/annotations/cloud-tags.plexsphere.io~1skipped"
  ]'
  assert_patch_confined
  assert_tags '{
    "CostCenter": "42",
    "plexsphere:acme:tag/K99": "v99",
    "plexsphere:acme:tag/k00":"v00","plexsphere:acme:tag/k01":"v01","plexsphere:acme:tag/k02":"v02","plexsphere:acme:tag/k03":"v03","plexsphere:acme:tag/k04":"v04",
    "plexsphere:acme:tag/k05":"v05","plexsphere:acme:tag/k06":"v06","plexsphere:acme:tag/k07":"v07","plexsphere:acme:tag/k08":"v08","plexsphere:acme:tag/k09":"v09",
    "plexsphere:acme:tag/k10":"v10","plexsphere:acme:tag/k11":"v11","plexsphere:acme:tag/k12":"v12","plexsphere:acme:tag/k13":"v13","plexsphere:acme:tag/k14":"v14",
    "plexsphere:acme:tag/k15":"v15","plexsphere:acme:tag/k16":"v16","plexsphere:acme:tag/k17":"v17","plexsphere:acme:tag/k18":"v18","plexsphere:acme:tag/k19":"v19",
    "plexsphere:acme:tag/k20":"v20","plexsphere:acme:tag/k21":"v21","plexsphere:acme:tag/k22":"v22","plexsphere:acme:tag/k23":"v23","plexsphere:acme:tag/k24":"v24",
    "plexsphere:acme:tag/k25":"v25","plexsphere:acme:tag/k26":"v26","plexsphere:acme:tag/k27":"v27","plexsphere:acme:tag/k28":"v28","plexsphere:acme:tag/k29":"v29",
    "plexsphere:acme:tag/k30":"v30","plexsphere:acme:tag/k31":"v31","plexsphere:acme:tag/k32":"v32","plexsphere:acme:tag/k33":"v33","plexsphere:acme:tag/k34":"v34",
    "plexsphere:acme:tag/k35":"v35","plexsphere:acme:tag/k36":"v36","plexsphere:acme:tag/k37":"v37","plexsphere:acme:tag/k38":"v38","plexsphere:acme:tag/k39":"v39",
    "plexsphere:acme:tag/k40":"v40","plexsphere:acme:tag/k41":"v41","plexsphere:acme:tag/k42":"v42","plexsphere:acme:tag/k43":"v43","plexsphere:acme:tag/k44":"v44",
    "plexsphere:acme:tag/k45":"v45","plexsphere:acme:tag/k46":"v46","plexsphere:acme:tag/k47":"v47","plexsphere:acme:tag/k48":"v48"
  }'
  check '(.patch | @base64d | fromjson | [.[] | select(.path | startswith("/spec/cloudTags/"))] | length) == 50'
  assert_skipped "[$(record "acme:tag/k0,bad" aws key-character-class),$(record acme:tag/k49 aws count-cap),$(record acme:tag/k50 aws count-cap),$(record acme:tag/k51 aws count-cap),$(record acme:tag/k52 aws count-cap),$(record acme:tag/k53 aws count-cap),$(record acme:tag/k54 aws count-cap),$(record aws:tag/x aws reserved-prefix),$(record platform/env aws count-cap)]"
  assert_warning_count 9
  assert_warning "acme:tag/k0,bad" key-character-class
  assert_warning "acme:tag/k49" count-cap
  assert_warning "acme:tag/k50" count-cap
  assert_warning "acme:tag/k51" count-cap
  assert_warning "acme:tag/k52" count-cap
  assert_warning "acme:tag/k53" count-cap
  assert_warning "acme:tag/k54" count-cap
  assert_warning "aws:tag/x" reserved-prefix
  assert_warning "platform/env" count-cap
  assert_untouched_elsewhere
}

# ---------------------------------------------------------- generic profile

@test "unknown provider gcp falls back to the generic profile" {
  evaluate xdatabase_gcp_generic.json "$(settings propagating)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  assert_tags '{
    "plexsphere:acme:checkout/owner": "team-data",
    "plexsphere:platform/env": "staging",
    "plexsphere:platform/team": "data"
  }'
  assert_skipped "[$(record "acme:checkout/on-call@night" generic key-character-class),$(record "acme:checkout/owner+backup" generic key-character-class)]"
  assert_warning_count 2
  assert_warning "acme:checkout/on-call@night" key-character-class
  assert_warning "acme:checkout/owner+backup" key-character-class
  assert_untouched_elsewhere
}

@test "missing provider falls back to generic: 63-rune keys, 255-rune values" {
  local g40 g41 s255
  g40=$(rep g 40)  # tag key = 63 runes
  g41=$(rep g 41)  # 64 runes
  s255=$(rep ß 255) # 255 runes (510 bytes); value-over is ß*256
  evaluate xdatabase_no_provider.json "$(settings limits)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_patch_confined
  assert_tags "$(jq -n --arg g40 "$g40" --arg s255 "$s255" '{
    "plexsphere:acme:limits/\($g40)": "at-limit",
    "plexsphere:acme:limits/value-at": $s255,
    "plexsphere:platform/env": "dev"
  }')"
  assert_skipped "[$(record "acme:limits/$g41" generic key-too-long),$(record acme:limits/value-over generic value-too-long)]"
  assert_warning_count 2
  assert_warning "acme:limits/$g41" key-too-long
  assert_warning "acme:limits/value-over" value-too-long
  assert_untouched_elsewhere
}

@test "skip on an XR without annotations: the annotations map is created with only the skip record" {
  # billing.payments.example.org/cost-allocation-identifier is 55 runes, so
  # its tag key is 66 runes, over hetzner's 63.
  evaluate xdatabase_skip_without_annotations.json "$(settings propagating)"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations"]'
  [ "$(op_value add /spec/cloudTags)" = '{"plexsphere:platform/env":"prod"}' ]
  local want
  want=$(jq -cn --arg v "[$(record billing.payments.example.org/cost-allocation-identifier hetzner key-too-long)]" \
    '{"cloud-tags.plexsphere.io/skipped": $v}')
  [ "$(op_value add /metadata/annotations)" = "$want" ] || fail "annotations differ: $(op_value add /metadata/annotations)"
  assert_warning_count 1
  assert_warning billing.payments.example.org/cost-allocation-identifier key-too-long
  assert_untouched_elsewhere
}

@test "cloudTags.providerPath selects where the provider is read" {
  local opt_in='"propagatingLabels":["platform/env","acme:checkout/on call"]'
  # spec.parameters.cloud.name is "hetzner": a space is not a key character.
  evaluate xdatabase_custom_provider_path.json "{\"cloudTags\":{$opt_in,\"providerPath\":\"spec.parameters.cloud.name\"}}"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_tags '{"plexsphere:platform/env": "prod"}'
  assert_skipped "[$(record "acme:checkout/on call" hetzner key-character-class)]"
  assert_warning_count 1
  assert_untouched_elsewhere

  # default path spec.parameters.provider is "aws": a space is allowed.
  evaluate xdatabase_custom_provider_path.json "{\"cloudTags\":{$opt_in}}"
  assert_allowed
  assert_ops '["add /spec/cloudTags"]'
  assert_tags '{"plexsphere:acme:checkout/on call": "payments-sre", "plexsphere:platform/env": "prod"}'
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

# ---------------------------------------------------------- left unchanged

@test "adopted XR (platform/origin label) is left exactly as submitted" {
  evaluate xnetwork_adopted.json "$(settings propagating)"
  assert_allowed
  assert_no_patch
  assert_no_warnings
}

@test "adopted XR (platform/origin in the label-set annotation) is left exactly as submitted" {
  evaluate xdatabase_adopted_via_annotation.json "$(settings propagating)"
  assert_allowed
  assert_no_patch
  assert_no_warnings
}

@test "DELETE is allowed without a patch" {
  evaluate xnetwork_delete.json "$(settings propagating)"
  assert_allowed
  check '.uid == "e2e-xr-delete-0004"'
  assert_no_patch
  assert_no_warnings
}

@test "a Kubernetes kind (ConfigMap) with opted-in labels: allowed unchanged, a warning names the kind" {
  evaluate configmap_create_opted_in_labels.json "$(settings propagating)"
  assert_allowed
  check '.uid == "e2e-xr-configmap-0005"'
  assert_no_patch
  check '.warnings == ["ConfigMap (v1) is a Kubernetes kind, neither a Cluster API object nor a Crossplane composite resource, so this policy leaves it unchanged; remove it from the policy'"'"'s rules"]'
}

# ------------------------------------------------------------- rejections

assert_rejected_naming() {
  check '.allowed == false'
  assert_no_patch
  check '.status.message | type == "string" and contains($field)' --arg field "$1"
}

@test "label-set annotation that is not JSON is rejected, naming the annotation" {
  evaluate xdatabase_labels_annotation_not_json.json "$(settings propagating)"
  assert_rejected_naming cloud-tags.plexsphere.io/labels
}

@test "label-set annotation that is a JSON array is rejected, naming the annotation" {
  evaluate xdatabase_labels_annotation_array.json "$(settings propagating)"
  assert_rejected_naming cloud-tags.plexsphere.io/labels
}

@test "label-set annotation with a nested object value is rejected, naming the annotation" {
  evaluate xdatabase_labels_annotation_nested.json "$(settings propagating)"
  assert_rejected_naming cloud-tags.plexsphere.io/labels
}

@test "provider that is a number is rejected, naming the provider field" {
  evaluate xdatabase_provider_number.json "$(settings propagating)"
  assert_rejected_naming spec.parameters.provider
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

# --------------------------------------------------------------- examples

@test "example: v1 claim-backed XNetwork on aws" {
  run_policy $XR/examples/xnetwork_aws.json --settings-path "$XR/examples/settings.json"
  assert_allowed
  assert_ops '["add /spec/cloudTags"]'
  assert_tags '{
    "plexsphere:acme:checkout/owner": "team-payments",
    "plexsphere:platform/env": "prod",
    "plexsphere:platform/team": "payments"
  }'
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

@test "example: v2 XDatabase on hetzner with a skipped label" {
  run_policy $XR/examples/xdatabase_hetzner.json --settings-path "$XR/examples/settings.json"
  assert_allowed
  assert_ops '["add /spec/cloudTags", "add /metadata/annotations/cloud-tags.plexsphere.io~1skipped"]'
  assert_tags '{
    "plexsphere:acme:checkout/owner": "Zoë Dupré",
    "plexsphere:platform/env": "prod",
    "plexsphere:platform/team": "payments"
  }'
  assert_skipped '[{"qualifiedKey":"acme:checkout/on call","tagKey":"plexsphere:acme:checkout/on call","provider":"hetzner","reason":"key-character-class"}]'
  assert_warning_count 1
  assert_warning "acme:checkout/on call" key-character-class
  assert_untouched_elsewhere
}

@test "example: v2 XDatabase on openstack" {
  run_policy $XR/examples/xdatabase_openstack.json --settings-path "$XR/examples/settings.json"
  assert_allowed
  assert_ops '["add /spec/cloudTags"]'
  assert_tags '{
    "plexsphere:acme:checkout/on call": "orders-sre",
    "plexsphere:acme:checkout/region": "東京",
    "plexsphere:platform/env": "staging",
    "plexsphere:platform/team": "orders"
  }'
  assert_skipped absent
  assert_no_warnings
  assert_untouched_elsewhere
}

# ------------------------------------ user-defined profiles (README, "User-defined tag profiles")
# settings_ready_profiles.json holds the README's ready-made profiles
# (tests/tag_ready_profiles.rs checks it against the README).

@test "user profile azure: '/' keys, reserved prefixes and '<' are skipped, ':' keys become tags" {
  evaluate xdatabase_azure_profile.json "$(settings ready_profiles)"
  assert_allowed
  assert_patch_confined
  assert_tags '{"plexsphere:acme:cost-center": "cc-4711", "plexsphere:acme:owner": "team-data"}'
  assert_skipped "[$(record Microsoft:billing azure reserved-prefix),$(record 'acme:ticket<id>' azure key-character-class),$(record platform/env azure key-character-class),$(record platform/team azure key-character-class)]"
  assert_warning_count 4
  assert_warning '"platform/env"' "on provider profile azure: key-character-class"
  assert_untouched_elsewhere
}

@test "user profile gcp-labels: no tag can propagate, one summary warning, every skip recorded" {
  evaluate xdatabase_gcp_labels_profile.json "$(settings ready_profiles)"
  assert_allowed
  assert_patch_confined
  assert_tags absent
  assert_skipped "[$(record acme:cost-center gcp-labels key-character-class),$(record acme:owner gcp-labels key-character-class),$(record platform/env gcp-labels key-character-class),$(record platform/team gcp-labels key-character-class)]"
  assert_warning_count 1
  check '.warnings[0] | startswith("cloud tags skipped: no tag can ever propagate under provider profile gcp-labels: ")'
  check '.warnings[0] | endswith("; 4 opted-in label(s) skipped, each recorded in annotation cloud-tags.plexsphere.io/skipped")'
  assert_untouched_elsewhere
}

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
