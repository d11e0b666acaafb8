#!/usr/bin/env bash
# The static explain page (web/): the policy core compiled to
# wasm32-unknown-unknown and bound with wasm-bindgen.
#
#   scripts/web.sh build   cargo build + wasm-bindgen into web/pkg/
#   scripts/web.sh test    serve web/ on 127.0.0.1 and run the headless
#                          Chromium test (web/tests/browser_test.py)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CARGO=${CARGO:-cargo}
TARGET=wasm32-unknown-unknown
OUT=web/pkg

# The CLI must be exactly the version of the wasm-bindgen crate (pinned with
# `=` in crates/web/Cargo.toml): the two share an unstable schema.
bindgen_version() {
  sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' crates/web/Cargo.toml
}

build() {
  local want have
  want=$(bindgen_version)
  [ -n "$want" ] || { echo "web.sh: no pinned wasm-bindgen version in crates/web/Cargo.toml" >&2; exit 1; }
  if ! command -v wasm-bindgen >/dev/null 2>&1; then
    echo "web.sh: wasm-bindgen not found; install it with:" >&2
    echo "  cargo install wasm-bindgen-cli --version $want --locked" >&2
    exit 1
  fi
  have=$(wasm-bindgen --version | awk '{print $2}')
  if [ "$have" != "$want" ]; then
    echo "web.sh: wasm-bindgen $have found, the crate uses $want; install the matching CLI with:" >&2
    echo "  cargo install wasm-bindgen-cli --version $want --locked --force" >&2
    exit 1
  fi
  rustup target list --installed 2>/dev/null | grep -qx "$TARGET" || rustup target add "$TARGET"

  # `cargo rustc --crate-type cdylib`: with crate-type ["cdylib", "rlib"] a
  # plain `cargo build` silently skips LTO (rust-lang/cargo#9672), as for
  # policy.wasm in the Makefile.
  "$CARGO" rustc --locked -p explain-web --lib --crate-type cdylib --target "$TARGET" --release
  # The page links the policy's core, which has no SDK and no waPC: the module
  # exports no waPC guest and imports no waPC host functions.
  local linked=${CARGO_TARGET_DIR:-target}/$TARGET/release/explain_web.wasm
  rm -rf "$OUT"
  wasm-bindgen --target web --no-typescript --out-name explain_web --out-dir "$OUT" "$linked"
  # A module the browser cannot resolve would only fail at page load.
  if grep -q "from ['\"]wapc['\"]" "$OUT/explain_web.js"; then
    echo "web.sh: the module imports waPC host functions; the page cannot load it" >&2
    exit 1
  fi
  echo "web.sh: built $OUT:"
  wc -c "$OUT"/explain_web_bg.wasm "$OUT"/explain_web.js | sed '$d'
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

browser_test() {
  [ -f "$OUT/explain_web_bg.wasm" ] || { echo "web.sh: $OUT is not built; run make web" >&2; exit 1; }
  local port status=0
  port=$(free_port)
  python3 -m http.server "$port" --bind 127.0.0.1 --directory web >/dev/null 2>&1 &
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
  for _ in $(seq 50); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html', timeout=1)" \
      2>/dev/null && break
    sleep 0.1
  done
  python3 web/tests/browser_test.py "http://127.0.0.1:$port/" || status=$?
  return "$status"
}

case "${1:-build}" in
  build) build ;;
  test) browser_test ;;
  *) echo "usage: scripts/web.sh [build|test]" >&2; exit 2 ;;
esac
