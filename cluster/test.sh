#!/usr/bin/env bash
# `make cluster-test`: the scenarios of cluster/tests against the test bed. Starts it when none is running
# and stops it afterwards; a test bed that was already up is left up (and reused as it is).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. cluster/lib.sh

started=0
if ! cluster_running; then
  cluster/up.sh
  started=1
fi
finish() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    for name in $PROCESSES; do
      echo "---- the end of $STATE/$name.log ----" >&2
      tail -n 20 "$STATE/$name.log" >&2 || true
    done
  fi
  [ "$started" -eq 0 ] || cluster/down.sh
  exit "$rc"
}
trap finish EXIT
PATH=$STATE/bin:$PATH KUBECONFIG=$STATE/kubeconfig bats ${CLUSTER_TESTS:-cluster/tests}
