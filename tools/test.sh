#!/usr/bin/env bash
# README command 2 and CI: installs dependencies, builds, runs every test, then builds the core
# and CPU tests with ASan+UBSan and runs those, then the multi-threaded tests with TSan, then a
# short run of the libFuzzer targets (tools/fuzz.sh, clang; docs/fuzzing.md).
#
# Environment: JOBS (default nproc); CI=true (what .ci/run sets) for CI's settings below;
# TESSERA_WERROR=ON|OFF (default: ON in CI); TESSERA_TEST_CUDA_ARCHS=LIST to build the CUDA
# backend for LIST (default: what CMake chooses for this machine); TESSERA_SKIP_SANITIZERS=1
# to stop after the Release tests; TESSERA_FUZZ_SECONDS (default 20) per libFuzzer target.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-deps.sh"
jobs="${JOBS:-$(nproc)}"
# ctest runs $jobs test binaries at once, each with an OpenMP team per CPU: with libgomp's default
# spin-waiting those teams burn the cores the other tests need, and a test that takes
# milliseconds alone takes seconds beside them. Tests check results, not speed: wait passively.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
ci=0
[ "${CI:-}" = true ] && ci=1

echo "== build (Release) =="
# Warnings fail the build in CI, whose compiler the tree is kept warning-free for; elsewhere a
# newer compiler may warn about code CI accepts, and README command 2 must not fail for that.
werror="${TESSERA_WERROR:-$([ "$ci" = 1 ] && echo ON || echo OFF)}"
# The CUDA backend is built whenever a toolkit is present (TESSERA_CUDA=AUTO), for the
# architectures CMake chooses (CMakeLists.txt: the GPUs of the machine, else PTX for compute_80);
# passing the variable, empty unless TESSERA_TEST_CUDA_ARCHS is set, keeps an older build
# directory's cached choice from sticking. CI has no GPU: the CUDA tests skip there, so CI checks
# only that the backend compiles and links, with nvcc's optimizers off on both sides (host and
# cicc): they are most of nvcc's time and rarely reject code the front end took.
cuda_args=(-DTESSERA_CUDA_ARCHITECTURES="${TESSERA_TEST_CUDA_ARCHS:-}")
if [ "$ci" = 1 ]; then
  cuda_args+=(-DCMAKE_CUDA_FLAGS_RELEASE="-O0 -Xcicc -O0 -DNDEBUG")
fi
# Test code at -O0: the tests exercise the optimized core and backends, and the test files
# themselves, most of the build, compile fastest at -O0.
BUILD_DIR="$root/build" bash "$root/tools/build.sh" -DTESSERA_TEST_OPTIMIZE=-O0 -DTESSERA_WERROR="$werror" \
  "${cuda_args[@]}"
echo "== tests (Release) =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs" --timeout 600

if [ "${TESSERA_SKIP_SANITIZERS:-0}" != 1 ]; then
  # Both sanitizer builds: no tools, benchmarks or CUDA; optimization off (-O0 -g1: line tables
  # for the reports at a fraction of -O2 -g's compile time; test code without line tables, its
  # frames still name their functions). The sanitized suites are small, so running them
  # unoptimized costs less than compiling them optimized would. No -Werror: the Release build
  # already holds the same code to it, and instrumented builds draw warnings of their own.
  sanitizer_args=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG"
    "-DTESSERA_TEST_OPTIMIZE=-O0;-g0" -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_TOOLS=OFF -DTESSERA_CUDA=OFF)

  echo "== build (ASan+UBSan: core, cpu backend, their tests) =="
  BUILD_DIR="$root/build-asan" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" "${sanitizer_args[@]}" \
    -DTESSERA_SANITIZE=address,undefined -DTESSERA_TEST_SUBSET=sanitized
  echo "== tests (ASan+UBSan) =="
  # OpenMP/OpenBLAS thread pools are reachable at exit; leak checking stays on for our code.
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" --timeout 900

  echo "== build (TSan: core, cpu backend, the multi-threaded tests) =="
  BUILD_DIR="$root/build-tsan" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" "${sanitizer_args[@]}" \
    -DTESSERA_SANITIZE=thread -DTESSERA_TEST_SUBSET=threads
  echo "== tests (TSan) =="
  # OMP_NUM_THREADS=1: libgomp (and the OpenMP OpenBLAS) is not built with TSan, which cannot
  # see its barriers and would report every parallel loop as a race. What is checked is our own
  # synchronization between host threads (runtime, registry, allocators, streams, autograd, the
  # data loader); the kernels' OpenMP loops are left to the ASan build and the Release tests.
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    ctest --test-dir "$root/build-tsan" --output-on-failure -j "$jobs" --timeout 900

  echo "== libFuzzer (clang, ASan+UBSan: the safetensors reader, plugin manifests) =="
  # A smoke run: the targets build and survive their seeds plus a few hundred thousand inputs;
  # long runs are by hand (docs/fuzzing.md).
  FUZZ_SECONDS="${TESSERA_FUZZ_SECONDS:-20}" bash "$root/tools/fuzz.sh"
fi
