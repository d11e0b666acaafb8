#!/usr/bin/env bash
# `make cluster-down`: stops every process cluster/up.sh started, by the pid it recorded (newest first), and
# removes the test bed's state: certificates, etcd's data, kubeconfigs. The logs stay in target/cluster/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. cluster/lib.sh

stopped=()
for name in $(echo "$PROCESSES" | tr ' ' '\n' | tac); do
  [ -f "$STATE/$name.pid" ] || continue
  pid=$(cat "$STATE/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    stopped+=("$name")
  fi
  rm -f "$STATE/$name.pid"
done
if [ -d "$STATE" ]; then
  find "$STATE" -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf {} +
fi
echo "cluster-down: stopped ${stopped[*]:-nothing}; state removed, logs kept in $STATE"
