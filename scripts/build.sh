#!/usr/bin/env bash
# Set up (scripts/setup.sh), configure ./build once, and build. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j"$(nproc)"
