#!/usr/bin/env bash
# Data-parallel equivalence under mpirun (the MPI engine, chosen by init_process_group under an
# MPI launcher): the example trains the same MLP alone and with 2 and 3 processes on the same
# global batch; the final weights must agree to float rounding (as tests/fabric/data_parallel.sh
# checks for the Gloo engine), and every run must learn. Prints "data_parallel_mpi: OK".
#   data_parallel_mpi.sh MPIRUN EXAMPLE      (Open MPI's environment set by CTest)
set -euo pipefail
mpirun="$1" example="$2"
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 TESSERA_LOG_LEVEL=error
declare -A sum
for n in 1 2 3; do
  if [[ $n == 1 ]]; then cmd=("$example"); else cmd=("$mpirun" --allow-run-as-root --oversubscribe -n "$n" "$example"); fi
  out="$("${cmd[@]}" --epochs 5 --check 0.85 2>&1)" ||
    { echo "$out"; echo "data_parallel_mpi: FAILED: $n processes"; exit 1; }
  [[ $n == 1 ]] || echo "$out" | grep -q "($n ranks x" ||
    { echo "$out"; echo "data_parallel_mpi: FAILED: $n processes did not train as $n ranks"; exit 1; }
  echo "$out" | tail -1
  sum[$n]="$(echo "$out" | sed -n 's/.*weights checksum: //p')"
  [[ -n "${sum[$n]}" ]] || { echo "$out"; echo "data_parallel_mpi: FAILED: no checksum from $n processes"; exit 1; }
done
for n in 2 3; do
  awk -v a="${sum[1]}" -v b="${sum[$n]}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * (a < 0 ? -a : a)) }' ||
    { echo "data_parallel_mpi: FAILED: checksum ${sum[$n]} with $n processes, ${sum[1]} with one"; exit 1; }
done
echo "data_parallel_mpi: OK"
