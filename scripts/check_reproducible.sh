#!/usr/bin/env bash
# make check-reproducible: two builds of the committed HEAD agree byte for byte.
#
# Each build is `make release VERSION=<the version policy-metadata.yml carries>`
# in a fresh clone, the two clones in different directories (different names
# and depths), each with its own empty cargo build and target directories
# (its own CACHE_DIR), and the second with CARGO_HOME at another path (its
# registry a link to this machine's, so nothing is downloaded again). What
# they share is what the project pins: the Rust toolchain (rust-toolchain.toml),
# the pinned wasm-opt and cargo-cyclonedx (built once per machine), and this
# checkout's runner, the host tool that annotates (a clone's copy, newer than
# its sources, so make does not rebuild it).
#
# Compared: cargo's module, policy.wasm, the static runner (make
# static-runner), the runner image's digest, and every file of the two
# release folders (annotated module, SBOM, artifacthub-pkg.yml, the static
# runner, its SBOM and image, SHA256SUMS, notes, build-info.txt); and no
# module and no runner names a path of the build (the clone, its build
# directory, CARGO_HOME). The scratch directory is removed when the
# check passes and kept for inspection when it fails. Each build's time is
# printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
version=$(sed -n 's/^ *io\.kubewarden\.policy\.version: *//p' policy-metadata.yml)
module=$(make -s --no-print-directory print-module)
dist=$(make -s --no-print-directory print-dist-runner)
wasm_opt=$(make -s --no-print-directory print-wasm-opt)
cdx=$(make -s --no-print-directory print-cargo-cyclonedx)
for f in target/host/policy-runner "$wasm_opt" "$cdx"; do
  [ -x "$f" ] || { echo "check-reproducible: $f is missing (make check-reproducible builds it)" >&2; exit 1; }
done
[ -z "$(git status --porcelain)" ] ||
  echo "check-reproducible: note: uncommitted changes are not in the clones; the committed HEAD is built" >&2

tmp=$(mktemp -d)
ok=0
trap 'if [ "$ok" = 1 ]; then rm -rf "$tmp"; else echo "check-reproducible: kept for inspection: $tmp" >&2; fi' EXIT
real_cargo_home=${CARGO_HOME:-$HOME/.cargo}
mkdir -p "$tmp/cargo-home-b"
for d in registry git; do
  [ -e "$real_cargo_home/$d" ] && ln -s "$real_cargo_home/$d" "$tmp/cargo-home-b/$d"
done

# build NAME DIR CARGO_HOME
build() {
  local name=$1 dir=$2 cargo_home=$3 cache=$tmp/$1-cache start
  git clone -q --no-local "$root" "$dir"
  git -C "$dir" checkout -q --detach "$(git rev-parse HEAD)"
  mkdir -p "$cache" "$dir/target/host"
  echo "$dir" >"$cache/checkout"
  cp target/host/policy-runner "$dir/target/host/policy-runner"
  touch "$dir/target/host/policy-runner"
  start=$(date +%s)
  (cd "$dir" && env -u CARGO_BUILD_BUILD_DIR -u CARGO_TARGET_DIR CARGO_HOME="$cargo_home" \
    make -s --no-print-directory release VERSION="$version" CACHE_DIR="$cache" \
    WASM_OPT="$wasm_opt" CARGO_CYCLONEDX="$cdx") >"$tmp/$name.log" 2>&1 ||
    { cat "$tmp/$name.log" >&2; echo "check-reproducible: build $name failed" >&2; exit 1; }
  echo "check-reproducible: build $name ($dir) took $(($(date +%s) - start)) s"
}

a=$tmp/a/metadata-propagation-policy
b=$tmp/b/elsewhere/deeper/mpp
build a "$a" "$real_cargo_home"
build b "$b" "$tmp/cargo-home-b"

failed=0
for f in "$module" policy.wasm "$dist"; do
  if cmp -s "$a/$f" "$b/$f"; then
    echo "check-reproducible: $f identical ($(wc -c <"$a/$f") bytes, sha256 $(sha256sum "$a/$f" | cut -c1-16)…)"
  else
    echo "check-reproducible: $f differs between the two builds" >&2
    failed=1
  fi
done
rel=target/release-$version
image=policy-runner-image-linux-amd64.tar
digest_a=$(python3 scripts/oci_image.py --digest "$a/$rel/$image")
digest_b=$(python3 scripts/oci_image.py --digest "$b/$rel/$image")
if [ "$digest_a" = "$digest_b" ]; then
  echo "check-reproducible: the runner image's digest is the same: $digest_a"
else
  echo "check-reproducible: the runner image's digest differs: $digest_a and $digest_b" >&2
  failed=1
fi
if diff -r "$a/$rel" "$b/$rel" >"$tmp/diff" 2>&1; then
  echo "check-reproducible: the release folders are identical: $(cd "$a/$rel" && ls | tr '\n' ' ')"
else
  cat "$tmp/diff" >&2
  echo "check-reproducible: the release folders differ" >&2
  failed=1
fi
# No path of either build in any module or runner (strings of 6+ bytes).
for f in "$a/$module" "$a/policy.wasm" "$a/$rel/annotated-policy.wasm" "$b/$module" "$b/policy.wasm" "$a/$dist" "$b/$dist"; do
  if strings -n 6 "$f" | grep -F -e "$tmp" -e "$real_cargo_home" -e "$HOME/" >"$tmp/paths"; then
    echo "check-reproducible: $f names a path of its build:" >&2
    sed 's/^/  /' "$tmp/paths" | head -n 5 >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1
ok=1
echo "check-reproducible: two clean builds of $(git rev-parse --short HEAD) agree byte for byte"
