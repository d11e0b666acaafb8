#!/usr/bin/env bash
# `bats ARGS...`, and then no skipped test: every bats run of `make check`
# goes through here. bats exits 0 when a test skips, so a suite whose
# precondition is missing would pass untested; here a skipped test fails
# the run unless e2e-tests/allowed-skips.tsv lists it (its name, tab, why it
# may skip). Every skip is printed, allowed or not, with its reason.
#
# A precondition the project builds itself (the runner, the module, a
# pinned tool, a release folder) is never a skip: the suites fail on it.
#
# Usage: scripts/bats_checked.sh [bats options] FILE...
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
allowed=${BATS_ALLOWED_SKIPS:-$here/e2e-tests/allowed-skips.tsv}
report=$(mktemp -d)
trap 'rm -rf "$report"' EXIT

rc=0
bats --report-formatter tap --output "$report" "$@" || rc=$?
[ -f "$report/report.tap" ] || { echo "bats_checked.sh: bats wrote no report (exit $rc)" >&2; exit $((rc ? rc : 1)); }

# TAP: `ok N name # skip reason` (the reason may be empty).
skips=$(sed -n 's/^ok [0-9][0-9]* \(.*\) # skip\(.*\)$/\1\t\2/p' "$report/report.tap")
unexpected=0
if [ -n "$skips" ]; then
  while IFS=$'\t' read -r name reason; do
    reason=${reason# }
    if awk -F'\t' -v n="$name" '!/^#/ && NF >= 2 && $1 == n && $2 != "" { found = 1 } END { exit !found }' "$allowed"; then
      echo "bats_checked.sh: skipped, allowed by $(basename "$allowed"): $name (${reason:-no reason given})"
    else
      echo "bats_checked.sh: skipped, NOT allowed: $name (${reason:-no reason given})" >&2
      unexpected=$((unexpected + 1))
    fi
  done <<<"$skips"
fi
if [ "$unexpected" -gt 0 ]; then
  echo "bats_checked.sh: $unexpected test(s) skipped: a test runs, passes or fails; list a skip that must stay, with its reason, in $allowed" >&2
  exit 1
fi
exit "$rc"
