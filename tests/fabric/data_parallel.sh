#!/usr/bin/env bash
# Data-parallel equivalence through `tessera launch`: the example trains the same MLP with 1, 2
# and 3 processes on the same global batch (gradients averaged with the Gloo engine); the final
# weights must agree to float rounding, and every run must learn (held-out accuracy >= 0.85).
# Also: a failing rank stops the job with its status. Prints "data_parallel: OK" on success.
#   data_parallel.sh TESSERA_CLI EXAMPLE
set -euo pipefail
cli="$1" example="$2"
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 TESSERA_LOG_LEVEL=error
declare -A sum
for n in 1 2 3; do
  out="$("$cli" launch -n "$n" --timeout 300 -- "$example" --epochs 5 --check 0.85)" ||
    { echo "$out"; echo "data_parallel: FAILED: $n processes"; exit 1; }
  echo "$out" | tail -2
  sum[$n]="$(echo "$out" | sed -n 's/.*weights checksum: //p')"
  [[ -n "${sum[$n]}" ]] || { echo "$out"; echo "data_parallel: FAILED: no checksum from $n processes"; exit 1; }
done
for n in 2 3; do
  awk -v a="${sum[1]}" -v b="${sum[$n]}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * (a < 0 ? -a : a)) }' ||
    { echo "data_parallel: FAILED: checksum ${sum[$n]} with $n processes, ${sum[1]} with one"; exit 1; }
done
# A rank that fails stops the others, and the launcher exits with its status.
set +e
"$cli" launch -n 3 -- sh -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 60' >/dev/null 2>&1
rc=$?
set -e
[[ $rc == 5 ]] || { echo "data_parallel: FAILED: launch exited $rc after rank 1 exited 5"; exit 1; }
echo "data_parallel: OK"
