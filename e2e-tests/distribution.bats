#!/usr/bin/env bats
# Distribution end to end: the annotated module goes through a real OCI
# registry (Debian's docker-registry, plain HTTP on 127.0.0.1, started by
# scripts/registry.sh) and comes back byte for byte, and the pulled module
# still evaluates.
#
# Run from the repository root, after `make annotated-policy.wasm`:
#   bats e2e-tests/distribution.bats
#   KWCTL=kwctl bats e2e-tests/distribution.bats   # push/pull/run with kwctl
#
# The registry's own HTTP API (curl + jq) is the oracle for what was stored:
# media types, digests and annotations are checked there, not through the
# tool that pushed them.

bats_require_minimum_version 1.5.0

KWCTL=${KWCTL:-target/host/policy-runner}
POLICY=${POLICY:-annotated-policy.wasm}
REPO=policies/metadata-propagation
TAG=v0.1.0-e2e
OCI_MANIFEST=application/vnd.oci.image.manifest.v1+json

# A missing tool or build fails every test (never a skip: `make check`
# installs and builds all of them). setup_file records what is missing and
# each test fails in setup, naming it.
setup_file() {
  export MISSING=""
  local tool
  if ! command -v docker-registry >/dev/null 2>&1; then
    MISSING="docker-registry is not installed (Debian/Ubuntu: apt-get install docker-registry)"
    return 0
  fi
  for tool in curl jq python3 sha256sum base64; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      MISSING="'$tool' is required by these tests"
      return 0
    fi
  done
  if ! command -v "$KWCTL" >/dev/null 2>&1; then
    MISSING="'$KWCTL' not found: build it with 'cargo build -p policy-runner --profile host' or set KWCTL=kwctl"
    return 0
  fi
  if [ ! -f "$POLICY" ]; then
    MISSING="'$POLICY' not found: run 'make annotated-policy.wasm'"
    return 0
  fi

  export REGISTRY_DIR="$BATS_FILE_TMPDIR/registry"
  REGISTRY=$(scripts/registry.sh start "$REGISTRY_DIR")
  export REGISTRY
  # kwctl reaches a registry over plain HTTP only when a sources file lists it.
  export SOURCES="$BATS_FILE_TMPDIR/sources.yml"
  printf 'insecure_sources:\n  - "%s"\n' "$REGISTRY" >"$SOURCES"
}

setup() {
  if [ -n "${MISSING:-}" ]; then
    echo "cannot run: $MISSING" >&2
    return 1
  fi
}

teardown_file() {
  if [ -n "${REGISTRY_DIR:-}" ]; then
    scripts/registry.sh stop "$REGISTRY_DIR"
  fi
}

# ---------------------------------------------------------------- helpers

is_kwctl() { [ "$(basename "$KWCTL")" = kwctl ]; }

# push MODULE URI [FLAGS...]: `push -o json` through kwctl or the runner.
push() {
  local module=$1 uri=$2
  shift 2
  if is_kwctl; then
    "$KWCTL" push --sources-path "$SOURCES" -o json "$@" "$module" "registry://$uri"
  else
    "$KWCTL" push --insecure-http -o json "$@" "$module" "$uri"
  fi
}

# pull URI FILE
pull() {
  if is_kwctl; then
    "$KWCTL" pull --sources-path "$SOURCES" -o "$2" "registry://$1"
  else
    "$KWCTL" pull --insecure-http -o "$2" "$1"
  fi
}

pushed_ref() { cat "$BATS_FILE_TMPDIR/immutable_ref"; }
digest_of() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

manifest() { # manifest REFERENCE (tag or digest): the raw manifest body
  curl -fsS -H "Accept: $OCI_MANIFEST" "http://$REGISTRY/v2/$REPO/manifests/$1"
}

# The metadata annotations embedded in a module (custom section
# io.kubewarden.metadata), as one JSON object.
embedded_annotations() {
  python3 - "$1" <<'EOF'
import json, sys
data = open(sys.argv[1], "rb").read()
def leb(pos):
    value = shift = 0
    while True:
        byte = data[pos]; pos += 1
        value |= (byte & 0x7F) << shift; shift += 7
        if byte < 0x80:
            return value, pos
pos = 8
while pos < len(data):
    section_id = data[pos]
    size, pos = leb(pos + 1)
    end = pos + size
    if section_id == 0:
        name_len, name_pos = leb(pos)
        if data[name_pos:name_pos + name_len] == b"io.kubewarden.metadata":
            print(json.dumps(json.loads(data[name_pos + name_len:end])["annotations"]))
            sys.exit(0)
    pos = end
sys.exit("no io.kubewarden.metadata section")
EOF
}

# ---------------------------------------------------------------- tests

@test "push prints the immutable reference, and the tag resolves to it" {
  run --separate-stderr push "$POLICY" "$REGISTRY/$REPO:$TAG"
  echo "stdout: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  ref=$(jq -r .immutable_ref <<<"$output")
  [[ "$ref" =~ ^$REGISTRY/$REPO@sha256:[0-9a-f]{64}$ ]]
  echo "$ref" >"$BATS_FILE_TMPDIR/immutable_ref"

  digest=$(curl -fsS -o /dev/null -D - -H "Accept: $OCI_MANIFEST" \
    "http://$REGISTRY/v2/$REPO/manifests/$TAG" |
    tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p')
  [ "$REGISTRY/$REPO@$digest" = "$ref" ]
}

@test "the manifest is an OCI artifact with Kubewarden's media types" {
  ref=$(pushed_ref)
  digest=${ref#*@}
  manifest "$digest" >"$BATS_TEST_TMPDIR/manifest.json"
  cat "$BATS_TEST_TMPDIR/manifest.json"
  echo

  # Stored as an OCI image manifest (kwctl, like oci-client, sends the media
  # type as the Content-Type and leaves `mediaType` out of the body).
  content_type=$(curl -fsS -o /dev/null -D - -H "Accept: $OCI_MANIFEST" \
    "http://$REGISTRY/v2/$REPO/manifests/$digest" |
    tr -d '\r' | sed -n 's/^[Cc]ontent-[Tt]ype: //p')
  [ "$content_type" = "$OCI_MANIFEST" ]
  # The registry served the bytes whose digest we were given.
  [ "$(digest_of "$BATS_TEST_TMPDIR/manifest.json")" = "$digest" ]
  printf '{}' >"$BATS_TEST_TMPDIR/config.json"
  jq -e --arg type "$OCI_MANIFEST" --arg layer "$(digest_of "$POLICY")" --argjson size "$(stat -c %s "$POLICY")" \
    --arg config "$(digest_of "$BATS_TEST_TMPDIR/config.json")" '
      .schemaVersion == 2
      and (.mediaType // $type) == $type
      and .config == {mediaType: "application/vnd.wasm.config.v1+json", digest: $config, size: 2}
      and (.layers | length) == 1
      and .layers[0].mediaType == "application/vnd.wasm.content.layer.v1+wasm"
      and .layers[0].digest == $layer
      and .layers[0].size == $size' "$BATS_TEST_TMPDIR/manifest.json"
}

@test "the config blob is {}" {
  ref=$(pushed_ref)
  config=$(manifest "${ref#*@}" | jq -r .config.digest)

  run curl -fsS "http://$REGISTRY/v2/$REPO/blobs/$config"
  [ "$status" -eq 0 ]
  [ "$output" = "{}" ]
}

@test "manifest annotations are the module's single-line metadata annotations, as kwctl copies them" {
  ref=$(pushed_ref)
  manifest "${ref#*@}" | jq -S .annotations >"$BATS_TEST_TMPDIR/actual.json"
  embedded_annotations "$POLICY" >"$BATS_TEST_TMPDIR/embedded.json"
  # kwctl push.rs: drop multi-line values, trim the rest, and publish
  # io.kubewarden.policy.source as org.opencontainers.image.source.
  jq -S 'with_entries(select(.value | rtrimstr("\n") | split("\n") | length <= 1)
                      | .value |= sub("^\\s+|\\s+$"; ""; "g"))
         | . + (if has("org.opencontainers.image.source") then {}
                else {"org.opencontainers.image.source": .["io.kubewarden.policy.source"]} end)' \
    "$BATS_TEST_TMPDIR/embedded.json" >"$BATS_TEST_TMPDIR/expected.json"
  diff -u "$BATS_TEST_TMPDIR/expected.json" "$BATS_TEST_TMPDIR/actual.json"

  # Spot checks against policy-metadata.yml itself.
  jq -e '
      .["io.kubewarden.policy.title"] == "metadata-propagation"
      and .["org.opencontainers.image.source"] == "https://github.com/plexsphere/metadata-propagation-policy"
      and .["io.kubewarden.policy.ociUrl"] == "ghcr.io/plexsphere/policies/metadata-propagation"
      and has("io.kubewarden.kwctl")
      and (has("io.kubewarden.policy.usage") | not)' "$BATS_TEST_TMPDIR/actual.json"
}

@test "pull by digest gives back the pushed bytes" {
  ref=$(pushed_ref)

  run --separate-stderr pull "$ref" "$BATS_FILE_TMPDIR/pulled.wasm"
  echo "stdout: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  cmp "$POLICY" "$BATS_FILE_TMPDIR/pulled.wasm"
}

@test "pull by tag gives the same bytes" {
  run --separate-stderr pull "$REGISTRY/$REPO:$TAG" "$BATS_TEST_TMPDIR/by-tag.wasm"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  cmp "$POLICY" "$BATS_TEST_TMPDIR/by-tag.wasm"
}

@test "the pulled module evaluates: an AWS XR gets its cloud tags" {
  [ -f "$BATS_FILE_TMPDIR/pulled.wasm" ] || { echo "the pull test did not leave a module" >&2; false; }

  run --separate-stderr "$KWCTL" run \
    --request-path test_data/xr/examples/xnetwork_aws.json \
    --settings-path test_data/xr/examples/settings.json \
    "$BATS_FILE_TMPDIR/pulled.wasm"
  echo "stdout: $output"
  [ "$status" -eq 0 ]
  jq -e '.allowed == true and .patchType == "JSONPatch"' <<<"$output"
  jq -r .patch <<<"$output" | base64 -d | jq -e '
      any(.[]; .op == "add" and .path == "/spec/cloudTags"
               and .value["plexsphere:platform/env"] == "prod")'
}

@test "pull of a digest the registry does not hold fails" {
  run --separate-stderr pull "$REGISTRY/$REPO@sha256:$(printf '0%.0s' {1..64})" \
    "$BATS_TEST_TMPDIR/missing.wasm"
  echo "stderr: $stderr"
  [ "$status" -ne 0 ]
  [ ! -s "$BATS_TEST_TMPDIR/missing.wasm" ]
}

@test "push refuses a module without metadata" {
  python3 -c 'import sys; sys.stdout.buffer.write(b"\0asm\x01\0\0\0")' >"$BATS_TEST_TMPDIR/bare.wasm"

  run --separate-stderr push "$BATS_TEST_TMPDIR/bare.wasm" "$REGISTRY/$REPO:bare"
  echo "stderr: $stderr"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"not annotated"* ]]
}
