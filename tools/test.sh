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
# The CUDA backend is built whenever a toolkit is present (TESSERA_CUDA=AUTO). CI checks that it
# compiles and links for one architecture (sm_80, the oldest target, so newer intrinsics cannot
# sneak in); a release build targets sm_80, sm_90 and sm_100 + PTX (the CMake default), and
# tools/gpu-check.sh builds for the GPU it runs on. Without a GPU the CUDA tests skip.
cuda_args=()
if [ "${CI:-}" = true ] || [ "${TESSERA_TEST_CUDA_ARCHS:-}" != "" ]; then
  cuda_args=(-DTESSERA_CUDA_ARCHITECTURES="${TESSERA_TEST_CUDA_ARCHS:-80-real}")
fi
BUILD_DIR="$root/build" bash "$root/tools/build.sh" "${cuda_args[@]}"
echo "== tests (Release) =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs" --timeout 600

if [ "${TESSERA_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan: core, cpu backend, their tests) =="
  # -O1 -g1: line tables for the sanitizer reports at a fraction of -O2 -g's compile time.
  BUILD_DIR="$root/build-asan" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_TOOLS=OFF -DTESSERA_CUDA=OFF \
    -DTESSERA_TEST_SUBSET=sanitized
  echo "== tests (ASan+UBSan) =="
  # OpenMP/OpenBLAS thread pools are reachable at exit; leak checking stays on for our code.
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" --timeout 900
fi
