#!/usr/bin/env bash
# A throwaway OCI registry on loopback for the distribution tests: Debian's
# `docker-registry` (CNCF distribution), filesystem storage in a scratch
# directory, plain HTTP on 127.0.0.1 and a free port.
#
#   scripts/registry.sh start DIR   starts it in the background, waits until
#                                   /v2/ answers, prints HOST:PORT
#   scripts/registry.sh stop DIR    stops the registry started in DIR
#
# DIR holds config.yml, storage/, registry.log, pid and addr. Exit code 2
# from `start` means docker-registry is not installed.
set -euo pipefail

REGISTRY_BIN=${REGISTRY_BIN:-docker-registry}

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 64
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local dir=$1 port addr pid attempt i
  if ! command -v "$REGISTRY_BIN" >/dev/null 2>&1; then
    echo "$REGISTRY_BIN is not installed (Debian/Ubuntu: apt-get install docker-registry)" >&2
    exit 2
  fi
  mkdir -p "$dir/storage"
  # A port can be taken between choosing and binding it: try a few.
  for attempt in 1 2 3; do
    port=$(free_port)
    addr=127.0.0.1:$port
    cat >"$dir/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
http:
  addr: $addr
EOF
    # No inherited descriptors besides the log (bats waits on fd 3).
    "$REGISTRY_BIN" serve "$dir/config.yml" </dev/null >"$dir/registry.log" 2>&1 3>&- &
    pid=$!
    echo "$pid" >"$dir/pid"
    for ((i = 0; i < 100; i++)); do
      if curl -fsS -o /dev/null "http://$addr/v2/" 2>/dev/null; then
        echo "$addr" >"$dir/addr"
        echo "$addr"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "registry on $addr did not come up (attempt $attempt):" >&2
    cat "$dir/registry.log" >&2 || true
  done
  return 1
}

stop() {
  local dir=$1 pid i
  [ -f "$dir/pid" ] || return 0
  pid=$(cat "$dir/pid")
  if kill "$pid" 2>/dev/null; then
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pid"
}

[ $# -eq 2 ] || usage
case $1 in
  start) start "$2" ;;
  stop) stop "$2" ;;
  *) usage ;;
esac
