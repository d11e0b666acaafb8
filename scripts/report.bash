# Sourced by the benchmark scripts (bench.sh, bench-compare.sh,
# bench-pieces.sh): their reports go to stdout and into BENCHMARKS.md, so
# the numbers there are the ones a named command printed, never copied; and
# which scenarios a callgrind run counts.
#
# report NAME FUNCTION: runs FUNCTION into $OUT/NAME.md and prints it; a run
# over every scenario (no ONLY) with WRITE not 0 also writes it into
# BENCHMARKS.md's NAME section (scripts/write_section.py). A run that fails
# writes nothing; so does one where FLOORS_ABOVE (bench.sh) names a
# scenario whose floor measured above its policy: a floor is the least a
# policy giving that answer can cost, so such a row is a broken floor (or a
# broken measurement), and the run fails naming it.
report() {
  "$2" >"$OUT/$1.md"
  cat "$OUT/$1.md"
  if [[ -s "${FLOORS_ABOVE:-/dev/null}" ]]; then
    echo >&2
    echo "A floor measured above its policy, so it is not a floor:" >&2
    sed 's/^/  /' "$FLOORS_ABOVE" >&2
    echo "BENCHMARKS.md is left as it was." >&2
    exit 1
  fi
  if [[ -z "${ONLY:-}" && "${WRITE:-1}" != 0 ]]; then
    scripts/write_section.py BENCHMARKS.md "$1" <"$OUT/$1.md"
  fi
}

# The two 10,000-gate scenarios take most of an hour each under callgrind.
SLOW=" topology-kcp-10k-parent-gates topology-kcp-10k-child-gates "

# counted NAME: whether a callgrind run counts scenario NAME: the ones ONLY
# names, or without ONLY every one but the SLOW ones.
counted() {
  if [[ -n "${ONLY:-}" ]]; then
    [[ " $ONLY " == *" $1 "* ]]
  else
    [[ "$SLOW" != *" $1 "* ]]
  fi
}
