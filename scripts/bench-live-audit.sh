#!/usr/bin/env bash
# `make bench-live-audit`: what `policy-runner audit --cluster` and `--fix` cost against the test bed
# (BENCHMARKS.md, "Live audit and --fix"): a live audit of 2,000 and then 4,000 objects (Machines under
# MachineDeployments and MachineSets of paused Clusters, XRs, managed resources), at the default pace and
# unpaced: wall time, requests by verb (the runner's count and the API server's apiserver_request_total),
# peak memory; then `--fix` of 500 deviating objects at --qps 50 against 500 / 50 s.
# scripts/bench_live_audit.py says what it creates and what it checks: the requests stay at the list pages
# plus the parents that were not listed.
#
# Starts the test bed when none is running and stops it afterwards; a running one is reused and left up,
# without the bench's objects (namespace bench-live-audit). Writes its table into BENCHMARKS.md (section
# live-audit) when every parameter is the default and every check holds; otherwise prints it only.
#
# Environment:
#   COUNTS       objects of the policies' kinds to audit, cumulative (default "2000 4000")
#   FIX_OBJECTS  deviating objects to fix (default 500)
#   FIX_QPS      the fixer's --qps (default 50)
#   RUNNER       the runner (default target/host/policy-runner; the Makefile target builds it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. cluster/lib.sh

started=0
finish() {
  local rc=$?
  if [ "$started" -eq 1 ]; then
    cluster/down.sh >/dev/null || rc=1
  elif [ -f "$STATE/kubeconfig" ]; then
    python3 scripts/bench_live_audit.py cleanup || rc=1
  fi
  exit "$rc"
}
trap finish EXIT
if ! cluster_running; then
  cluster/up.sh >&2
  started=1
fi
export PATH=$STATE/bin:$PATH KUBECONFIG=$STATE/kubeconfig BENCH_FRESH_TESTBED=$started
out=$(mktemp)
status=0
python3 scripts/bench_live_audit.py run >"$out" || status=$?
cat "$out"
if [ "$status" -eq 0 ] && [ "${COUNTS:-2000 4000}" = "2000 4000" ] && [ "${FIX_OBJECTS:-500}" = 500 ] &&
  [ "${FIX_QPS:-50}" = 50 ]; then
  python3 scripts/write_section.py BENCHMARKS.md live-audit <"$out"
  echo "bench-live-audit: BENCHMARKS.md (live-audit) written" >&2
elif [ "$status" -eq 0 ]; then
  echo "bench-live-audit: parameters changed: the table is printed, not written" >&2
fi
rm -f "$out"
exit "$status"
