#!/usr/bin/env bash
# tools/gpu-check.sh: the CUDA backend's checks on a machine with one NVIDIA GPU (an H200 is what
# the targets in tessera_cuda_bench assume). Budget: about 8 minutes on 16 cores from a cold
# build directory (ccache makes reruns much faster).
#
#   tools/gpu-check.sh [BUILD_DIR]        (default: build-gpu beside the sources)
#
# Steps: configure (Release, Ninja, -DTESSERA_CUDA=ON, for this machine's GPU only: CMake picks it,
# see TESSERA_CUDA_ARCHITECTURES in CMakeLists.txt; ccache when installed),
# build only what the checks run (core, cpu and cuda plugins, the tests under tests/cuda, the
# `tessera` command, tessera_cuda_bench, the fabric NCCL engine, its tests and
# tessera_allreduce_bench), `ctest -R cuda` (which includes the NCCL engine's cuda.fabric.*
# tests and the sm100 plugin's cuda.Sm100Loading.*), `tessera conformance --device cuda`, then
# tessera_cuda_bench (with its scaled_mm fp8 / MXFP8 / NVFP4 rows) and the all-reduce
# benchmark's nccl rows. A summary of the steps is printed, then the benchmark's markdown table
# last. Exit status: 0 when every step passed, 1 when one failed, 2 when the machine cannot run the
# checks (no GPU, no nvcc, no cmake/ninja): those fail at once with the reason.
#
# Environment: JOBS (default nproc), CUDA_ARCHS (default: the GPU present), GPU_CHECK_NO_GRADCHECK=1 to
# skip the conformance gradchecks, GPU_CHECK_BENCH_ARGS (e.g. "--quick").
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-gpu}"
jobs="${JOBS:-$(nproc)}"
archs="${CUDA_ARCHS:-}"  # empty: CMake builds for the GPU it finds
t_start=$(date +%s)

die() {
  echo "gpu-check: $*" >&2
  exit 2
}

# ---- can this machine run the checks? ----------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
  die "no GPU: nvidia-smi not found (this script needs a machine with an NVIDIA GPU and its driver)"
fi
if ! gpu_list="$(nvidia-smi -L 2>&1)" || ! grep -q '^GPU ' <<<"$gpu_list"; then
  die "no GPU: nvidia-smi -L reports none (${gpu_list//$'\n'/ })"
fi
nvcc="${CUDACXX:-}"
[ -z "$nvcc" ] && nvcc="$(command -v nvcc || true)"
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -n "$nvcc" ] || die "no CUDA compiler: nvcc not on PATH nor in /usr/local/cuda/bin (set CUDACXX)"
command -v cmake >/dev/null 2>&1 || die "cmake not found"
command -v ninja >/dev/null 2>&1 || die "ninja not found"
echo "gpu-check: $(head -1 <<<"$gpu_list"); nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); $jobs jobs"
echo "gpu-check: build dir $build"

export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
unset TESSERA_PLUGIN_PATH
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"

declare -a summary=()
failed=0
step() {  # step NAME TIMEOUT_S CMD...: runs, records the outcome, never exits
  local name="$1" limit="$2"
  shift 2
  local t0 rc=0
  t0=$(date +%s)
  echo
  echo "== $name =="
  timeout --kill-after=10 "$limit" "$@" || rc=$?
  local dt=$(($(date +%s) - t0))
  if [ "$rc" -eq 0 ]; then
    summary+=("ok      $name (${dt}s)")
  else
    [ "$rc" -eq 124 ] && summary+=("FAILED  $name: timed out after ${limit}s") || summary+=("FAILED  $name (exit $rc, ${dt}s)")
    failed=1
  fi
  return "$rc"
}

# ---- configure and build -------------------------------------------------------------------
if ! step "configure" 120 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_CUDA=ON -DTESSERA_CUDA_ARCHITECTURES="$archs" -DCMAKE_CUDA_COMPILER="$nvcc"; then
  printf '%s\n' "${summary[@]}"
  exit 1
fi
# tessera_sm100: the Blackwell plugin, scored (and refused with its reason) on other GPUs; its
# test (cuda.Sm100Loading.*) is under tests/cuda, its scaled_mm rows in tessera_cuda_bench
# (the fp8 rows run on sm_89 and later, MXFP8/NVFP4 on compute capability 10.x only, SKIP rows
# elsewhere).
targets=(tessera tessera_cpu tessera_cuda tessera_cuda_backend tessera_sm100 tessera_sm100_backend tessera_cli
  tessera_cuda_bench)
# The fabric backend's NCCL engine, its tests (cuda.fabric.*, run by `ctest -R cuda`) and the
# all-reduce benchmark (its nccl rows), when this build has them.
for t in tessera_fabric tessera_fabric_nccl test_fabric_nccl tessera_allreduce_bench; do
  if ninja -C "$build" -t targets all 2>/dev/null | grep -q "^$t:"; then
    targets+=("$t")
  else
    echo "gpu-check: no target $t in this build (the NCCL engine needs nccl.h and libnccl; see backends/fabric)"
  fi
done
# Every target under tests/cuda (the directory's phony "all" target), when the suite is wired.
if ninja -C "$build" -t targets all 2>/dev/null | grep -q '^tests/cuda/all:'; then
  targets+=(tests/cuda/all)
else
  echo "gpu-check: no tests/cuda targets in this build (tests off or the suite not wired)"
fi
if ! step "build (${targets[*]})" 420 cmake --build "$build" -j "$jobs" --target "${targets[@]}"; then
  printf '\n== summary ==\n'
  printf '%s\n' "${summary[@]}"
  exit 1
fi

# ---- tests ---------------------------------------------------------------------------------
ctest_out="$(mktemp)"
bench_out="$(mktemp)"
trap 'rm -f "$ctest_out" "$bench_out"' EXIT
# Into a file (a pipeline would run `step` in a subshell and lose its summary line), then shown.
step "ctest -R cuda" 300 ctest --test-dir "$build" -R cuda --output-on-failure -j 4 --timeout 240 >"$ctest_out" 2>&1
cat "$ctest_out"
# Tests skip without a cuda device: on this machine, all of them skipping means the plugin did not load.
if ! grep -q ' Passed ' "$ctest_out"; then
  summary+=("FAILED  ctest -R cuda: no test passed (all skipped: did the cuda plugin load? see 'tessera info')")
  failed=1
fi

conf_args=(conformance --device cuda)
[ "${GPU_CHECK_NO_GRADCHECK:-0}" = 1 ] && conf_args+=(--no-gradcheck)
step "tessera ${conf_args[*]}" 300 "$build/bin/tessera" "${conf_args[@]}"

# ---- benchmark (its table is printed last) ---------------------------------------------------
# stdout (the table) to a file, printed after the summary; progress and errors go to stderr.
# shellcheck disable=SC2086
step "tessera_cuda_bench${GPU_CHECK_BENCH_ARGS:+ $GPU_CHECK_BENCH_ARGS}" 300 \
  "$build/bin/tessera_cuda_bench" ${GPU_CHECK_BENCH_ARGS:-} >"$bench_out"
if grep -q '^no CUDA device' "$bench_out"; then
  summary+=("FAILED  tessera_cuda_bench saw no CUDA device: $(grep '^no CUDA device' "$bench_out")")
  failed=1
fi

# The NCCL engine's all-reduce at world size 1 (and over every GPU when there are several).
if [ -x "$build/bin/tessera_allreduce_bench" ]; then
  nccl_out="$(mktemp)"
  step "tessera_allreduce_bench (nccl rows)" 180 "$build/bin/tessera_allreduce_bench" --max-mib 64 --iters 10 >"$nccl_out"
  sed -n '/nccl engine/,$p' "$nccl_out"
  if ! grep -q 'nccl engine, world size 1' "$nccl_out"; then
    summary+=("FAILED  tessera_allreduce_bench printed no nccl rows: $(grep 'nccl engine' "$nccl_out" || echo 'none')")
    failed=1
  fi
  rm -f "$nccl_out"
fi

echo
echo "== summary ($(($(date +%s) - t_start))s) =="
printf '%s\n' "${summary[@]}"
echo
cat "$bench_out"  # starts with the step's own "== tessera_cuda_bench ==" header
exit "$failed"
