#!/usr/bin/env bash
# Data-parallel equivalence under mpirun (the MPI engine, chosen by init_process_group under an
# MPI launcher): the example trains the same MLP alone and with 2 and 3 processes on the same
# global batch; the final weights must agree to float rounding (as tests/fabric/data_parallel.sh
# checks for the Gloo engine), and every run must learn. Prints "data_parallel_mpi: OK".
# With the CLI given, also `tessera train` alone and under mpirun -n 2: the same losses step by step.
#   data_parallel_mpi.sh MPIRUN EXAMPLE [CLI]      (Open MPI's environment set by CTest)
set -euo pipefail
mpirun="$1" example="$2" cli="${3:-}"
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
if [[ -n "$cli" ]]; then
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/tessera-dp-mpi.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$cli" train --steps 30 --quiet --out "$tmp/one" >/dev/null || { echo "data_parallel_mpi: FAILED: tessera train alone"; exit 1; }
  "$mpirun" --allow-run-as-root --oversubscribe -n 2 "$cli" train --steps 30 --quiet --out "$tmp/two" >"$tmp/two.log" 2>&1 ||
    { cat "$tmp/two.log"; echo "data_parallel_mpi: FAILED: tessera train under mpirun -n 2"; exit 1; }
  python3 "$(dirname "$0")/../fabric/compare_losses.py" "$tmp/one/log.json" "$tmp/two/log.json" 30 \
    "tessera train, alone vs mpirun -n 2" || { echo "data_parallel_mpi: FAILED: the train losses differ"; exit 1; }
fi
echo "data_parallel_mpi: OK"
