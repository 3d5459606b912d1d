#!/usr/bin/env bash
# Installs what neuron-halide-cc needs from Debian, if anything is missing. Idempotent and quiet
# when everything is there. Needs root (or sudo) only when it has something to install.
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config cmake            # build (meson finds Halide through cmake)
  libhalide14-0-dev llvm-14-dev                     # Halide 14 and LLVM 14 (Support: cl, json, threads)
  libonnx-dev libprotobuf-dev                       # ONNX 1.12: protos, checker, shape inference
  libeigen3-dev libarchive-dev doctest-dev          # simulator matmuls, NEFF tar, unit tests
  zlib1g-dev                                        # the NEFF's gzip, compressed in parallel
  libssl-dev                                        # the NEFF's SHA-256 (libcrypto, CPU SHA extensions)
  libsqlite3-dev                                    # the autoscheduler's tuning database
  libonnx-testdata                                  # the ONNX backend test suite (sweep, conformance)
  python3-onnx python3-numpy                        # example and test model generators
  chromium python3-pil                              # the profile's timeline rendered and looked at
  pybind11-dev python3-dev python3-pytest           # the Python module and its tests
  python3-torch python3-torchvision                 # torch modules traced in those tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
