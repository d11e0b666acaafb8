# Sourced by the benchmark scripts (bench.sh, bench-compare.sh,
# bench-pieces.sh): their reports go to stdout and into BENCHMARKS.md, so
# the numbers there are the ones a named command printed, never copied.
#
# report NAME FUNCTION: runs FUNCTION into $OUT/NAME.md and prints it; a run
# over every scenario (no ONLY) with WRITE not 0 also writes it into
# BENCHMARKS.md's NAME section (scripts/write_section.py). A run that fails
# writes nothing.
report() {
  "$2" >"$OUT/$1.md"
  cat "$OUT/$1.md"
  if [[ -z "${ONLY:-}" && "${WRITE:-1}" != 0 ]]; then
    scripts/write_section.py BENCHMARKS.md "$1" <"$OUT/$1.md"
  fi
}
