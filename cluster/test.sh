#!/usr/bin/env bash
# `make cluster-test`: the scenarios of cluster/tests against the test bed. Starts it when none is running
# and stops it afterwards; a test bed that was already up is left up (and reused as it is).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. cluster/lib.sh

pids() { for name in $PROCESSES; do cat "$STATE/$name.pid"; done; }

started=0
finish() {
  local rc=$? pid left=""
  if [ "$rc" -ne 0 ]; then
    for name in $PROCESSES; do
      echo "---- the end of $STATE/$name.log ----" >&2
      tail -n 20 "$STATE/$name.log" >&2 || true
    done
  fi
  if [ "$started" -eq 1 ]; then
    # cluster-down stops every process it started (the webhook server the tests restarted included)
    # and frees every port.
    local started_pids
    started_pids=$(pids 2>/dev/null || true)
    cluster/down.sh
    for pid in $started_pids; do
      if kill -0 "$pid" 2>/dev/null; then left="$left $pid"; fi
    done
    for port in $TESTBED_PORTS; do
      if ! port_free "$port"; then left="$left port:$port"; fi
    done
    if [ -n "$left" ]; then
      echo "cluster-down left running:$left" >&2
      [ "$rc" -ne 0 ] || rc=1
    fi
  fi
  exit "$rc"
}
trap finish EXIT
if ! cluster_running; then
  cluster/up.sh
  started=1
  # Idempotent: a second cluster-up finds everything running and starts nothing.
  before=$(pids)
  again=$(cluster/up.sh)
  [[ "$again" == *"already running"* ]] || fail "a second cluster-up did not find the test bed running: $again"
  [ "$(pids)" = "$before" ] || fail "a second cluster-up restarted a component"
fi
PATH=$STATE/bin:$PATH KUBECONFIG=$STATE/kubeconfig scripts/bats_checked.sh ${CLUSTER_TESTS:-cluster/tests}
