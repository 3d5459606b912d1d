#!/usr/bin/env bash
# A fuzzing session (issue 19): builds the tests/fuzz targets with clang-14, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/ (its own build folder), then runs
# each named target for the given seconds on its committed corpus, new inputs going to
# build-fuzz/corpus/<target>/ (the committed corpus stays as it is). Findings are written to
# build-fuzz/findings/<target>/ and printed; libFuzzer's statistics (executions, coverage) end
# each target's log, build-fuzz/fuzz-<target>.log.
#
# usage: bench/fuzz.sh SECONDS [TARGET...]   (targets: onnx_frontend neff schedule_script
#        tensor_file; all when none is named). Needs clang-14 and libfuzzer-14-dev.
# FUZZ_TOGETHER=1 runs the targets at the same time (they share the cores) instead of one after
# another; FUZZ_KEEP_GOING=1 runs each in libFuzzer's fork mode, which records a finding and goes
# on instead of stopping at the first (for runs of an hour and more).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: bench/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_frontend neff schedule_script tensor_file)
if [ ! -d build-fuzz ]; then
  CC=clang-14 CXX=clang++-14 meson setup build-fuzz -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dcpp_args=-fsanitize=fuzzer-no-link -Dbuildtype=debugoptimized
fi
ninja -C build-fuzz "${targets[@]/#/tests/fuzz/fuzz_}"
keep_going=()
[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep_going=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)

run_target() {
  local t=$1
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  # -rss_limit_mb: an input that makes the reader allocate beyond this is a finding too.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "build-fuzz/tests/fuzz/fuzz_$t" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 \
    "${keep_going[@]}" -artifact_prefix="build-fuzz/findings/$t/" > "build-fuzz/fuzz-$t.log" 2>&1
}

summary() {
  local t=$1
  echo "== $t: $(find "build-fuzz/findings/$t" -type f | wc -l) findings"
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|cov: [0-9]+" "build-fuzz/fuzz-$t.log" | tail -3
}

status=0
if [ "${FUZZ_TOGETHER:-0}" = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do
    run_target "$t" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  for t in "${targets[@]}"; do summary "$t"; done
else
  for t in "${targets[@]}"; do
    run_target "$t" || status=1
    summary "$t"
  done
fi
exit $status
