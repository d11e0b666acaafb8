#!/usr/bin/env bash
# A clone of the committed HEAD in which `make release` runs without building
# anything, for e2e-tests/release.bats:
#
#   scripts/release_clone.sh DEST   prints the clone's CACHE_DIR
#
# The clone gets this checkout's runner, its static build (make static-runner),
# cargo module and policy.wasm, newer than every source, so make finds them up to date; its own CACHE_DIR, which
# names the clone as the checkout that owns it (the Makefile touches a
# checkout's files when another one used the cache last). Run make in it with
# `CACHE_DIR=<printed> WASM_OPT=… CARGO_CYCLONEDX=…` (this checkout's pinned
# tools). The release folder then holds this checkout's module: what the
# release tests check is how the folder is made from it. Whether two clean
# builds agree is make check-reproducible's question.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 64; }
dest=$1
module=$(make -s --no-print-directory print-module)
dist=$(make -s --no-print-directory print-dist-runner)
for f in target/host/policy-runner "$dist" "$module" policy.wasm; do
  [ -f "$f" ] || { echo "release_clone.sh: $f is missing: run 'make policy.wasm runner static-runner'" >&2; exit 1; }
done

git clone -q --no-local . "$dest"
git -C "$dest" checkout -q --detach "$(git rev-parse HEAD)"
cache=$(mktemp -d)
echo "$(cd "$dest" && pwd)" >"$cache/checkout"
mkdir -p "$dest/target/host" "$dest/$(dirname "$module")" "$dest/$(dirname "$dist")"
cp target/host/policy-runner "$dest/target/host/policy-runner"
cp "$dist" "$dest/$dist"
cp "$module" "$dest/$module"
cp policy.wasm "$dest/policy.wasm"
# In make's order: the cargo module after the sources, policy.wasm after it.
touch "$dest/target/host/policy-runner" "$dest/$dist" "$dest/$module"
sleep 1
touch "$dest/policy.wasm"
echo "$cache"
