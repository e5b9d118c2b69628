#!/usr/bin/env bash
# README command 2 and CI: installs dependencies, builds, runs every test, then builds the core
# and CPU tests with ASan+UBSan and runs those too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-deps.sh"
jobs="${JOBS:-$(nproc)}"
# ctest runs $jobs test binaries at once, each with an OpenMP team per CPU: with libgomp's default
# spin-waiting those teams burn the cores the other tests need (measured: a small training test
# 21 ms alone, 3.9 s beside spinning teams). Tests check results, not speed: wait passively.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

echo "== build (Release) =="
# The CUDA backend is built whenever a toolkit is present (TESSERA_CUDA=AUTO). Without a GPU the
# CUDA tests skip, so CI checks only that the backend compiles and links: the whole front end of
# nvcc (host and device parsing, template instantiation, cicc's code generation) for
# compute_80 as PTX, the oldest target, so newer intrinsics cannot sneak in, with optimization
# off on both sides. Measured on binary_arith.cu: 61 s for sm_80 SASS at -O3, 11 s this way
# (what is skipped is ptxas and the optimizers, which rarely reject code the front end took).
# A release build targets sm_80, sm_90 and sm_100 + PTX (the CMake default), and
# tools/gpu-check.sh builds for the GPU it runs on. TESSERA_TEST_CUDA_ARCHS=LIST builds LIST at
# full optimization instead.
cuda_args=()
if [ "${TESSERA_TEST_CUDA_ARCHS:-}" != "" ]; then
  cuda_args=(-DTESSERA_CUDA_ARCHITECTURES="$TESSERA_TEST_CUDA_ARCHS")
elif [ "${CI:-}" = true ]; then
  cuda_args=(-DTESSERA_CUDA_ARCHITECTURES=80-virtual -DCMAKE_CUDA_FLAGS_RELEASE="-O0 -Xcicc -O0 -DNDEBUG")
fi
# Test code at -O0: the tests exercise the optimized core and backends, and compiling the test
# files themselves at -O0 saves a third of their compile time over -O1.
BUILD_DIR="$root/build" bash "$root/tools/build.sh" -DTESSERA_TEST_OPTIMIZE=-O0 "${cuda_args[@]}"
echo "== tests (Release) =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs" --timeout 600

if [ "${TESSERA_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan: core, cpu backend, their tests) =="
  # -O0 -g1: line tables for the sanitizer reports at a fraction of -O2 -g's compile time (a test
  # file: 40 s at -O1, 16 s at -O0, 14 s without line tables, which test code can do without:
  # its frames still name their functions); the sanitized suite runs slower, but it is small.
  BUILD_DIR="$root/build-asan" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
    "-DTESSERA_TEST_OPTIMIZE=-O0;-g0" \
    -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_TOOLS=OFF -DTESSERA_CUDA=OFF \
    -DTESSERA_TEST_SUBSET=sanitized
  echo "== tests (ASan+UBSan) =="
  # OpenMP/OpenBLAS thread pools are reachable at exit; leak checking stays on for our code.
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" --timeout 900
fi
