#!/usr/bin/env bash
# What `make check` needs besides the Rust toolchain, checked before anything
# is built: each missing tool is named with the command that installs it, and
# the check fails, so no test is skipped for want of a tool. `.ci/run`
# installs all of them; on a Debian machine with only rustup (as root, or with sudo):
#
#   apt-get update
#   apt-get install -y bats jq g++ curl python3-yaml python3-jsonschema docker-registry musl-tools
#   rustup target add wasm32-wasip1 x86_64-unknown-linux-musl && rustup component add rustfmt clippy
#
# Which tests need which tool (docs/development.md, "Tools"):
#   a C++ compiler             binaryen's wasm-opt, built from the pinned wasm-opt crate:
#                              policy.wasm, so every e2e suite, and the benchmarks
#   bats, jq                   every e2e suite
#   python3 + PyYAML           check-schemas, the fixture and invariant checks, check-docs
#   python3 + jsonschema>=4.10 check-schemas, the e2e invariants (Debian bookworm's 4.10.3 passes)
#   docker-registry, curl      e2e-tests/distribution.bats (push and pull to a real OCI registry)
#   rustfmt, clippy            make fmt, make lint
#   wasm32-wasip1              the policy module
#   musl-gcc, the x86_64-unknown-linux-musl target
#                              the static runner (make static-runner): the release tests, the runner
#                              image's cluster test
#   go 1.26 or later, openssl  cluster-test: the test bed's components are built from their Go modules,
#                              its certificates made with openssl (docs/test-bed.md)
set -uo pipefail

missing=()
need() { # need CHECK-COMMAND "what" "how to install it"
  if ! eval "$1" >/dev/null 2>&1; then missing+=("$2: $3"); fi
}
# The install command as this user runs it: root runs apt-get itself.
if [ "$(id -u)" -eq 0 ]; then apt='apt-get install -y'; else apt='sudo apt-get install -y'; fi
need 'command -v cargo' "cargo (Rust)" "install rustup: https://rustup.rs"
need 'rustup target list --installed | grep -qx wasm32-wasip1' "the wasm32-wasip1 target" "rustup target add wasm32-wasip1"
need 'cargo fmt --version' "rustfmt" "rustup component add rustfmt"
need 'cargo clippy --version' "clippy" "rustup component add clippy"
need 'rustup target list --installed | grep -qx x86_64-unknown-linux-musl' "the x86_64-unknown-linux-musl target" "rustup target add x86_64-unknown-linux-musl"
need 'command -v musl-gcc' "musl-gcc (the static runner: ring's C code)" "$apt musl-tools"
need 'command -v c++' "a C++ compiler (binaryen's wasm-opt is built from source)" "$apt g++"
need 'command -v bats' "bats" "$apt bats"
need 'command -v jq' "jq" "$apt jq"
need 'command -v curl' "curl" "$apt curl"
need 'command -v base64 && command -v sha256sum' "base64, sha256sum" "$apt coreutils"
need 'command -v python3' "python3" "$apt python3"
need "python3 -c 'import yaml'" "PyYAML" "$apt python3-yaml (or: python3 -m pip install pyyaml)"
need "python3 -c 'import importlib.metadata as m, sys; v = m.version(\"jsonschema\").split(\".\"); sys.exit((int(v[0]), int(v[1])) < (4, 10))'" \
  "jsonschema 4.10 or later" "$apt python3-jsonschema (or: python3 -m pip install 'jsonschema>=4.10')"
need 'command -v docker-registry' "docker-registry" "$apt docker-registry"
# Go from go.dev or the machine's image: Debian bookworm's golang (1.19) is too old for the pinned modules.
need 'go version | grep -Eq "go1\.(2[6-9]|[3-9][0-9])"' "Go 1.26 or later" "https://go.dev/doc/install (Debian bookworm's golang is 1.19, too old)"
need 'command -v openssl && command -v setsid' "openssl, setsid" "$apt openssl util-linux"

if [ ${#missing[@]} -gt 0 ]; then
  echo "make check needs tools this machine does not have:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  echo "(run apt-get update first; .ci/run installs all of them; README.md, \"Set-up: two commands\")" >&2
  exit 1
fi
echo "check-tools: every tool make check uses is here"
