#!/usr/bin/env bash
# The sanitizer job (issue 19), part of the README's test command and of .ci/run: configures
# build-sanitize/ once with AddressSanitizer (LeakSanitizer with it) and UndefinedBehaviorSanitizer
# at -O1 without debug information (a cheaper build than -O2 -g; reports still name the
# functions), builds what the tests need and runs the tests below under them. Any report fails
# its test: ASan aborts at its first, LeakSanitizer makes the process exit non-zero, and UBSan is
# told to halt at its first. Left out, for CI's 90 minutes on 2 cores: the tests that run every
# ONNX node test or a search through the compiler (onnx-testdata-sweep, algorithms-onnx-node-tests,
# algorithms-dev-models, e2e-onnx-node-tests, onnx-conformance, schedule-fuzz) and error-codes (a
# Python script); the fuzz targets run the readers of files from strangers under both sanitizers
# too (bench/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f build-sanitize/build.ninja ] || meson setup build-sanitize -Db_sanitize=address,undefined \
  -Doptimization=1 -Ddebug=false >/dev/null
tests=(unit cli backend backend-tools codegen-errors codegen-passes vision-ops
  decomposed-ops autoschedule schedule-scripts schedule-docs e2e-dev-models
  fuzz-corpus-onnx_frontend fuzz-corpus-neff fuzz-corpus-schedule_script fuzz-corpus-tensor_file)
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The sanitized programs run slower than the timeouts were set for.
meson test -C build-sanitize --print-errorlogs --num-processes 2 --timeout-multiplier 4 "${tests[@]}"
