#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz/libfuzzer): builds them with clang under ASan+UBSan into
# build-fuzz/, then runs each for FUZZ_SECONDS:
#   tools/fuzz.sh [TARGET...]      TARGET: safetensors, manifest, graph (default: all three)
# Environment: FUZZ_SECONDS (per target, default 60; CI runs a short smoke run), JOBS.
# The corpus grows in build-fuzz/corpus/TARGET across runs, seeded from tests/fuzz/libfuzzer/seeds
# (made by make_seeds.py for safetensors). A crash, a sanitizer report, a trap (a broken promise,
# see each target's header) or a timeout stops the run with exit 1 and leaves the input as
# build-fuzz/artifacts/TARGET/crash-*; replay it with: build-fuzz/bin/tessera_fuzz_TARGET FILE
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
((${#targets[@]})) || targets=(safetensors manifest graph)
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (tools/setup-deps.sh installs clang)" >&2; exit 1; }

# -O1: libFuzzer wants speed per run more than the sanitizer builds' quick compile; -g1 for the
# reports' line numbers. No CUDA, tests, tools or benchmarks: the targets need the core and the
# CPU backend only.
CC=clang CXX=clang++ BUILD_DIR="$build" BUILD_TYPE=RelWithDebInfo bash "$root/tools/build.sh" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTESSERA_LIBFUZZER=ON -DTESSERA_SANITIZE=address,undefined -DTESSERA_CUDA=OFF \
  -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_TOOLS=OFF -DTESSERA_BUILD_BENCH=OFF

seeds="$build/seeds"
mkdir -p "$seeds/manifest" "$seeds/graph"
cp "$root"/tests/fuzz/libfuzzer/seeds/manifest/*.json "$seeds/manifest/"
cp "$root"/tests/fuzz/libfuzzer/seeds/graph/*.txt "$seeds/graph/"
python3 "$root/tests/fuzz/libfuzzer/make_seeds.py" "$seeds/safetensors"
# OpenMP's and OpenBLAS's thread pools are reachable at exit; leak checking stays on for ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" TESSERA_LOG_LEVEL="${TESSERA_LOG_LEVEL:-error}"
for t in "${targets[@]}"; do
  bin="$build/bin/tessera_fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz.sh: no target '$t' (safetensors, manifest, graph)" >&2; exit 2; }
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  echo "== libFuzzer: $t, ${seconds} s =="
  "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -dict="$root/tests/fuzz/libfuzzer/$t.dict" -artifact_prefix="$build/artifacts/$t/" \
    "$build/corpus/$t" "$seeds/$t"
done
