# Sourced by the benchmark scripts (bench.sh, bench-compare.sh,
# cost-per-entry.sh): the instructions valgrind's callgrind counts.
#
# callgrind_count N ARGS...: the instructions of `$RUNNER ARGS --iterations N
# --warmup 0`, ARGS naming the module. The runner compiles on one thread, so
# idle compile threads are not counted; callers take the difference of two
# N, so compiling the module drops out.
callgrind_count() {
  local n=$1
  shift
  POLICY_RUNNER_SERIAL_COMPILATION=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$RUNNER" "$@" --iterations "$n" --warmup 0 \
    2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
