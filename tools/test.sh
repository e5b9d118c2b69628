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
BUILD_DIR="$root/build" bash "$root/tools/build.sh"
echo "== tests (Release) =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs" --timeout 600

if [ "${TESSERA_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan: core, cpu backend, their tests) =="
  # -O1 -g1: line tables for the sanitizer reports at a fraction of -O2 -g's compile time.
  BUILD_DIR="$root/build-asan" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_TOOLS=OFF \
    -DTESSERA_TEST_SUBSET=sanitized
  echo "== tests (ASan+UBSan) =="
  # OpenMP/OpenBLAS thread pools are reachable at exit; leak checking stays on for our code.
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" --timeout 900
fi
