#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12 (idempotent; needs root or sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config git
      libgtest-dev libgmock-dev libboost-dev nlohmann-json3-dev libopenblas-openmp-dev
      binutils python3
      # oneDNN: the CPU backend's conv2d forward and backward (backends/cpu/conv_dnnl.cpp,
      # docs/kernels/nn.md); without it conv2d on the CPU runs as im2col + GEMM, about 2.4x slower.
      libdnnl-dev
      # OpenSSL's libcrypto: the SHA-256 of a plugin in `tessera certify`'s certificate.
      libssl-dev
      # oneDNN: the cpu backend's f32 GEMM (its AVX-512 JIT sgemm) in cpu/tessera_cpu_onednn.so,
      # opened on first use; without it f32 GEMM runs on OpenBLAS.
      libdnnl-dev
      # Gloo: the fabric backend's engine for collectives across processes (docs/distributed.md).
      libgloo-dev
      # Open MPI: the fabric backend's mpi engine, and mpirun for its tests (docs/distributed.md).
      libopenmpi-dev openmpi-bin
      # clang with its libFuzzer and sanitizer runtimes and OpenMP, for the libFuzzer targets (tools/fuzz.sh).
      clang libclang-rt-dev libomp-dev
      # PyTorch for the parity suite (tests/parity, docs/parity.md), for /usr/bin/python3. Large:
      # about 240 packages with its dependencies; the suite skips itself where it is missing.
      python3-torch
      # The Python bindings (bindings/python, docs/bindings.md) for /usr/bin/python3: pybind11,
      # the interpreter's headers, NumPy, and pytest for their tests.
      python3-pybind11 python3-dev python3-numpy python3-pytest
      # ONNX import (tools/onnx, docs/onnx.md): ONNX's C++ library (protobuf classes, checker, shape
      # inference) and the protobuf headers it needs; the Python package for tests/onnx (models
      # exported from PyTorch, the ONNX node test data).
      libonnx-dev libprotobuf-dev python3-onnx)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# node-addon-api for the Node.js binding (bindings/node, docs/bindings.md), from the npm registry
# at the version its package-lock.json pins. Without node or npm the binding is skipped (its
# ctest test says so); Node itself is not installed here.
root="$(cd "$(dirname "$0")/.." && pwd)"
if command -v npm >/dev/null 2>&1 && [ ! -f "$root/bindings/node/node_modules/node-addon-api/napi.h" ]; then
  (cd "$root/bindings/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
    echo "setup-deps: npm ci in bindings/node failed: the Node binding will be skipped" >&2
fi
