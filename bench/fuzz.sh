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
status=0
for t in "${targets[@]}"; do
  ninja -C build-fuzz "tests/fuzz/fuzz_$t"
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  # -rss_limit_mb: an input that makes the reader allocate beyond this is a finding too.
  if ! ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "build-fuzz/tests/fuzz/fuzz_$t" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
      -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/findings/$t/" > "build-fuzz/fuzz-$t.log" 2>&1; then
    status=1
  fi
  echo "== $t: $(grep -c . <(ls "build-fuzz/findings/$t")) findings"
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|cov: [0-9]+" "build-fuzz/fuzz-$t.log" | tail -3
done
exit $status
