#!/usr/bin/env bash
# Installs everything Tessera needs on a fresh Debian 12 machine (root; the
# package registries of Debian and PyPI). Safe to run twice: it installs only
# what is missing.
#
#  - Debian: Bazel 4 (bazel-bootstrap), LLVM/MLIR/clang 22, lit and FileCheck
#    (llvm-22-tools), clang 22's runtimes (libclang-rt-22-dev: libFuzzer and
#    the sanitizers, for tools/fuzz.sh), Abseil, Protocol Buffers, GoogleTest,
#    Python's headers (python3-dev, for the bridge's CPython extension).
#  - PyPI: CUDA 12.9's ptxas (nvidia-cuda-nvcc-cu12), which still assembles
#    for sm_60 and sm_70 (CUDA 13's refuses), so every backend's PTX is
#    checked for its own architecture. Installed under /opt/tessera/cuda12.
#  - The CUDA 13 toolkit itself (cuda.h, ptxas, libdevice) is expected at
#    /usr/local/cuda, as on the machines this project builds on.
set -euo pipefail

packages=(bazel-bootstrap llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
          libclang-rt-22-dev lld-22 libabsl-dev libprotobuf-dev protobuf-compiler libgtest-dev
          python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

legacy=/opt/tessera/cuda12
if [ ! -x "$legacy/bin/ptxas" ]; then
  echo "setup: installing CUDA 12.9 ptxas (for sm_60/sm_70) into $legacy"
  python3 -m pip install -q --no-deps --target "$legacy/wheel" "nvidia-cuda-nvcc-cu12==12.9.*" \
    || echo "setup: warning: could not install CUDA 12 ptxas; sm_60/sm_70 PTX will be checked with ptxas -arch=sm_75"
  found=$(find "$legacy/wheel" -type f -name ptxas 2>/dev/null | head -n1 || true)
  if [ -n "$found" ]; then
    mkdir -p "$legacy/bin"
    chmod +x "$found"
    ln -sf "$found" "$legacy/bin/ptxas"
  fi
fi

if [ ! -f /usr/local/cuda/include/cuda.h ] || [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "setup: error: the CUDA toolkit is expected at /usr/local/cuda (cuda.h, ptxas, libdevice)" >&2
  exit 1
fi
echo "setup: ok ($(clang-22 --version | head -n1); $(/usr/local/cuda/bin/ptxas --version | tail -n1))"
