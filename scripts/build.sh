#!/usr/bin/env bash
# Set up (scripts/setup.sh), configure ./build once, and build. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build -j"$(nproc)"
# The Python module (build/python/neuron_halide) on Debian's python3's path, through a .pth file
# in its site-packages naming this build (rewritten when the checkout moves).
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
pth="$site/neuron_halide.pth"
if [ "$(cat "$pth" 2>/dev/null)" != "$PWD/build/python" ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo mkdir -p "$site"
  echo "$PWD/build/python" | $sudo tee "$pth" >/dev/null
fi
