#!/usr/bin/env bash
# `make release VERSION=x.y.z` (docs/releasing.md), in two steps the Makefile
# runs around its build of policy.wasm and the runner:
#
#   release.sh preflight VERSION   refuses, before anything is built, a
#                                  VERSION that is not x.y.z[-pre], that
#                                  CHANGELOG.md has no section for, that is
#                                  not the version of Cargo.toml and
#                                  policy-metadata.yml, whose notes would not
#                                  describe the module built from HEAD
#                                  (entries left under [Unreleased], another
#                                  commit named: scripts/changelog.py
#                                  release), or a working tree with
#                                  uncommitted changes
#   release.sh assemble VERSION DIR  writes the release folder DIR
#
# The folder holds everything a release publishes, each file a function of
# the commit (two clean builds agree byte for byte: make check-reproducible):
#
#   annotated-policy.wasm  policy.wasm with policy-metadata.yml and README.md
#                          embedded by the runner (kwctl would stamp its own
#                          version instead of the runner's)
#   policy.wasm            the module before annotation (artifacthub-pkg.yml
#                          links it)
#   sbom.cdx.json          CycloneDX SBOM of the module's Rust dependencies
#                          (cargo-cyclonedx, wasm32-wasip1, no dev-dependencies)
#   artifacthub-pkg.yml    Artifact Hub's package at VERSION, `digest:` the
#                          annotated module's sha256
#   policy-runner-linux-amd64
#                          the runner, linked statically (musl), for a cluster
#                          or a CI job (make static-runner)
#   policy-runner-linux-amd64.cdx.json
#                          its CycloneDX SBOM (the runner's dependencies for
#                          x86_64-unknown-linux-musl, default features)
#   policy-runner-image-linux-amd64.tar
#                          the runner's OCI image as an OCI image layout in a
#                          tar (scripts/oci_image.py): /policy-runner alone
#   SHA256SUMS             the seven files above (sha256sum -c SHA256SUMS)
#   RELEASE_NOTES.md       the changelog's section for VERSION, the digests,
#                          the references to pin and how to verify them
#   build-info.txt         the commit and the tool versions that made the bytes
#
# Environment (the Makefile sets it): RUNNER, WASM_OPT, CARGO_CYCLONEDX, CARGO,
# DIST_RUNNER, DIST_TARGET, SOURCE_DATE_EPOCH (artifacthub-pkg.yml's createdAt).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() {
  echo "make release: $*" >&2
  exit 1
}

semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
cargo_version() { sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1; }
metadata_version() { sed -n 's/^ *io\.kubewarden\.policy\.version: *//p' policy-metadata.yml; }

preflight() {
  local version=$1 dirty problems
  [ -n "$version" ] || die "usage: make release VERSION=x.y.z (a version CHANGELOG.md describes; docs/releasing.md)"
  [[ "$version" =~ $semver ]] || die "VERSION=$version is not a version x.y.z or x.y.z-pre (Semantic Versioning)"
  if ! problems=$(python3 scripts/changelog.py check 2>&1 >/dev/null); then
    echo "$problems" >&2
    die "CHANGELOG.md does not pass scripts/changelog.py check (above)"
  fi
  python3 scripts/changelog.py notes "$version" >/dev/null 2>&1 ||
    die "CHANGELOG.md has no section '## [$version] - YYYY-MM-DD': a release is a version the changelog describes; add its section (with its upgrade notes) and commit it"
  if [ "$(cargo_version)" != "$version" ] || [ "$(metadata_version)" != "$version" ]; then
    die "VERSION=$version, but Cargo.toml says $(cargo_version) and policy-metadata.yml (io.kubewarden.policy.version) $(metadata_version): set both to $version, run 'make artifacthub-pkg.yml', and commit"
  fi
  if ! problems=$(python3 scripts/changelog.py release "$version" "$(git rev-parse HEAD)" 2>&1 >/dev/null); then
    echo "$problems" >&2
    die "the release notes of $version would not describe the module built from $(git rev-parse --short HEAD) (above): fix CHANGELOG.md and commit"
  fi
  dirty=$(git status --porcelain --untracked-files=normal)
  if [ -n "$dirty" ]; then
    echo "make release: the working tree has uncommitted changes; a release is built from a commit, so commit or stash them:" >&2
    sed 's/^/  /' <<<"$dirty" | head -n 20 >&2
    exit 1
  fi
}

# The CycloneDX SBOM of the crates compiled into the module: the policy
# crate's dependencies for its target (wasm32-wasip1), no dev- or
# build-dependencies (the proc macros whose code the module holds stay). It
# runs on a scratch copy of what the module is built from, the policy crate
# and the core without their dev-dependencies (scripts/sbom_workspace.py
# says why), never in the checkout (cargo-cyclonedx writes next to each
# Cargo.toml). The scratch path in its bom-refs becomes
# /metadata-propagation-policy and its timestamp is the commit's
# (SOURCE_DATE_EPOCH): the file is a function of the commit.
#
# sbom OUT TARGET PACKAGE MEMBER...: the SBOM of the workspace member PACKAGE
# (its folder) for TARGET, made in a scratch workspace of MEMBER... alone.
# The runner's is made the same way: its members (the policy crate, the
# core, the audit library and the runner) without their dev-dependencies,
# for the target it is released for.
sbom() {
  local out=$1 target=$2 package=$3 scratch epoch member folders=()
  shift 3
  for member in "$@"; do [ "$member" = . ] || folders+=("$member"); done
  scratch=$(mktemp -d)
  epoch=$(git log -1 --format=%ct HEAD)
  git ls-files -z Cargo.toml Cargo.lock rust-toolchain.toml src "${folders[@]}" | xargs -0 cp --parents -t "$scratch"
  python3 scripts/sbom_workspace.py "$scratch" "$@"
  (cd "$scratch" && SOURCE_DATE_EPOCH=$epoch \
    "$CARGO_CYCLONEDX" cyclonedx -qq --format json --spec-version 1.5 --target "$target" \
    --no-build-deps --override-filename sbom)
  sed "s#file://$scratch#file:///metadata-propagation-policy#g" "$scratch/$package/sbom.json" >"$out"
  rm -rf "$scratch"
  if grep -q "$scratch" "$out"; then die "$(basename "$out") still names the scratch directory $scratch"; fi
  jq -e '.bomFormat == "CycloneDX" and (.components | length) > 0' "$out" >/dev/null ||
    die "cargo-cyclonedx wrote no components for $package"
}

assemble() {
  local version=$1 dir=$2 tmp module_sha manifest_digest oci source image_digest
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  cp policy.wasm "$tmp/policy.wasm"
  "$RUNNER" annotate -m policy-metadata.yml -u README.md -o "$tmp/annotated-policy.wasm" policy.wasm
  sbom "$tmp/sbom.cdx.json" wasm32-wasip1 . . crates/core

  # The runner, static, with its SBOM and its image.
  # No program interpreter, no shared library: it runs in an image that holds nothing else.
  if readelf -lW "$DIST_RUNNER" | grep -q INTERP || readelf -dW "$DIST_RUNNER" | grep -q NEEDED; then
    die "$DIST_RUNNER is not linked statically (readelf names an interpreter or a shared library)"
  fi
  install -m 0755 "$DIST_RUNNER" "$tmp/policy-runner-linux-amd64"
  sbom "$tmp/policy-runner-linux-amd64.cdx.json" "$DIST_TARGET" crates/runner . crates/core crates/audit crates/runner
  image_digest=$(python3 scripts/oci_image.py --binary "$tmp/policy-runner-linux-amd64" --version "$version" \
    --tag "v$version" --revision "$(git rev-parse HEAD)" --created "$(git log -1 --format=%ct HEAD)" \
    --source "$(sed -n 's/^ *io\.kubewarden\.policy\.source: *//p' policy-metadata.yml)" \
    -o "$tmp/policy-runner-image-linux-amd64.tar")

  module_sha=$(sha256sum "$tmp/annotated-policy.wasm" | cut -d' ' -f1)
  "$RUNNER" scaffold artifacthub --metadata-path policy-metadata.yml --questions-path questions-ui.yml \
    --output "$tmp/artifacthub.yml"
  # Artifact Hub reprocesses a version whose digest changed.
  sed "/^createdAt: /a digest: sha256:$module_sha" "$tmp/artifacthub.yml" >"$tmp/artifacthub-pkg.yml"
  rm "$tmp/artifacthub.yml"
  grep -qx "version: $version" "$tmp/artifacthub-pkg.yml" || die "artifacthub-pkg.yml is not at version $version"

  (cd "$tmp" && sha256sum annotated-policy.wasm policy.wasm sbom.cdx.json artifacthub-pkg.yml \
    policy-runner-linux-amd64 policy-runner-linux-amd64.cdx.json policy-runner-image-linux-amd64.tar >SHA256SUMS)

  manifest_digest=$(python3 scripts/oci_manifest.py "$tmp/annotated-policy.wasm")
  oci=$(sed -n 's/^ *io\.kubewarden\.policy\.ociUrl: *//p' policy-metadata.yml)
  source=$(sed -n 's/^ *io\.kubewarden\.policy\.source: *//p' policy-metadata.yml)
  {
    echo "# metadata-propagation v$version"
    echo
    # The changelog's links to the repository's files, as links to them at the tag.
    python3 scripts/changelog.py notes "$version" | sed -e 's/^### /## /' \
      -e "s#](\(docs/\|examples/\|[A-Za-z_-]*\.md\)#]($source/blob/v$version/\1#g"
    echo
    echo "## Pin this release by digest"
    echo
    echo "- Module: \`registry://$oci@$manifest_digest\` (the tag \`v$version\` names the same"
    echo "  manifest; \`spec.module\` should name the digest)."
    echo "- The annotated module's sha256 (the OCI layer): \`$module_sha\`."
    echo "- Signed with cosign by \`.github/workflows/release.yml\` (keyless, GitHub's OIDC identity);"
    echo "  the SBOM (\`sbom.cdx.json\`, CycloneDX) is attached as a signed attestation. How to verify:"
    echo "  [Verifying a release and pinning it]($source/blob/v$version/docs/releasing.md#verifying-a-release-and-pinning-it)."
    echo "- Runner image (\`policy-runner\` linked statically, linux/amd64, for \`audit --cluster --fix\` in a"
    echo "  pod): \`$oci-runner@$image_digest\` (the tag \`v$version\` names the same manifest), signed the"
    echo "  same way, with \`policy-runner-linux-amd64.cdx.json\` attached as its SBOM. The binary alone is"
    echo "  \`policy-runner-linux-amd64\`, sha256 \`$(sha256sum "$tmp/policy-runner-linux-amd64" | cut -d' ' -f1)\`:"
    echo "  [The runner image]($source/blob/v$version/docs/releasing.md#the-runner-image)."
  } >"$tmp/RELEASE_NOTES.md"

  {
    echo "version: $version"
    echo "commit: $(git rev-parse HEAD)"
    echo "rustc: $(rustc -V)"
    echo "cargo: $("$CARGO" -V)"
    echo "wasm-opt: $("$WASM_OPT" --version)"
    echo "cargo-cyclonedx: cargo-cyclonedx $("$CARGO_CYCLONEDX" cyclonedx --version | awk '{print $NF}')"
    echo "annotated by: policy-runner $("$RUNNER" --version | awk '{print $NF}')"
    echo "oci manifest digest: $manifest_digest"
    echo "runner target: $DIST_TARGET (cargo profile dist)"
    echo "runner C compiler: $(musl-gcc --version | head -n1)"
    echo "runner image digest: $image_digest"
  } >"$tmp/build-info.txt"

  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  cp -r "$tmp" "$dir"
  chmod 755 "$dir"
  echo "make release: $dir"
  ls -l "$dir" | tail -n +2 | awk '{print "  " $5 "\t" $9}'
  echo "  pin: registry://$oci@$manifest_digest"
  echo "  runner image: $oci-runner@$image_digest"
}

case ${1:-} in
  preflight) [ $# -eq 2 ] || die "usage: $0 preflight VERSION"; preflight "$2" ;;
  assemble) [ $# -eq 3 ] || die "usage: $0 assemble VERSION DIR"; assemble "$2" "$3" ;;
  *) echo "usage: $0 preflight VERSION | assemble VERSION DIR" >&2; exit 64 ;;
esac
