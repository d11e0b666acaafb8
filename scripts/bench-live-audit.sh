#!/usr/bin/env bash
# `make bench-live-audit`: what `policy-runner audit --cluster` and `--fix` cost at a real control plane's
# size against the test bed (BENCHMARKS.md, "Live audit and --fix"): a live audit of 10,000, 50,000 and then
# 100,000 objects (the mix a management cluster holds: Machines and their AWSMachines under MachineSets and
# MachineDeployments of paused Clusters, Crossplane managed resources under their XRs, XRs), unpaced and at
# the default pace: wall time, requests by verb (the runner's count and the API server's
# apiserver_request_total), peak memory; then `--fix` of 10,000 deviating objects at --qps 100 against
# 10,000 / 100 s. scripts/bench_live_audit.py says what it creates and what it checks (the bounds: peak RSS,
# its growth, the unpaced time at 100,000, the requests, one PATCH and no GET per fixed object).
# About an hour on 2 CPUs, most of it the default pace's GETs of the parents and the creation of the objects.
#
# Starts the test bed when none is running and stops it afterwards; a running one is reused and left up,
# without the bench's objects (namespace bench-live-audit). Writes its table into BENCHMARKS.md (section
# live-audit) when every parameter is the default, every check holds and the runner's sources are committed
# (the table names the commit); otherwise prints it only, and exits 1 when a check failed.
#
# Environment:
#   COUNTS       objects to create and audit, cumulative (default "10000 50000 100000"; steps of 100 or more)
#   FIX_OBJECTS  deviating objects to fix (default 10000)
#   FIX_QPS      the fixer's --qps (default 100)
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
# What the table measures: the runner's sources, the test bed and this bench, as committed.
dirty=$(git status --porcelain -- crates src fuzz Cargo.toml Cargo.lock cluster scripts/bench-live-audit.sh \
  scripts/bench_live_audit.py)
if [ "$status" -ne 0 ]; then
  echo "bench-live-audit: a check failed (above): the table is printed, not written" >&2
elif [ "${COUNTS:-10000 50000 100000}" != "10000 50000 100000" ] || [ "${FIX_OBJECTS:-10000}" != 10000 ] ||
  [ "${FIX_QPS:-100}" != 100 ]; then
  echo "bench-live-audit: parameters changed: the table is printed, not written" >&2
elif [ -n "$dirty" ]; then
  echo "bench-live-audit: uncommitted changes the table would not name: the table is printed, not written:" >&2
  echo "$dirty" >&2
  status=1
else
  python3 scripts/write_section.py BENCHMARKS.md live-audit <"$out"
  echo "bench-live-audit: BENCHMARKS.md (live-audit) written" >&2
fi
rm -f "$out"
exit "$status"
