#!/usr/bin/env bash
# Data-parallel equivalence through `tessera launch`: the example trains the same MLP with 1, 2
# and 3 processes on the same global batch (gradients averaged with the Gloo engine); the final
# weights must agree to float rounding, and every run must learn (held-out accuracy >= 0.85).
# Also `tessera train` on 1 and 2 processes (the same losses step by step), and a failing rank
# stops the job with its status. Prints "data_parallel: OK" on success.
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
# Two "machines" (both here, 127.0.0.1) of one process each, meeting at a tcp:// rendezvous.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
node1_log="$(mktemp)"
"$cli" launch -n 1 --nnodes 2 --node-rank 1 --master "127.0.0.1:$port" --timeout 300 -- "$example" --epochs 5 \
  >"$node1_log" 2>&1 &
node1=$!
out="$("$cli" launch -n 1 --nnodes 2 --node-rank 0 --master "127.0.0.1:$port" --timeout 300 -- "$example" --epochs 5)" ||
  { echo "$out"; cat "$node1_log"; echo "data_parallel: FAILED: two nodes (node 0)"; exit 1; }
wait "$node1" || { cat "$node1_log"; echo "data_parallel: FAILED: two nodes (node 1)"; exit 1; }
rm -f "$node1_log"
sum[nodes]="$(echo "$out" | sed -n 's/.*weights checksum: //p')"
echo "two nodes over tcp://: weights checksum ${sum[nodes]}"
for n in 2 3 nodes; do
  awk -v a="${sum[1]}" -v b="${sum[$n]}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * (a < 0 ? -a : a)) }' ||
    { echo "data_parallel: FAILED: checksum ${sum[$n]} with $n processes, ${sum[1]} with one"; exit 1; }
done
# `tessera train` launched on 2 processes follows the one-process run: the same losses step by
# step (same global batch, gradients averaged), to float rounding.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/tessera-dp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=1 "$cli" train --steps 30 --quiet --out "$tmp/one" >/dev/null ||
  { echo "data_parallel: FAILED: tessera train alone"; exit 1; }
"$cli" launch -n 2 -- "$cli" train --steps 30 --quiet --out "$tmp/two" >"$tmp/two.log" 2>&1 ||
  { cat "$tmp/two.log"; echo "data_parallel: FAILED: tessera train on 2 processes"; exit 1; }
python3 "$(dirname "$0")/compare_losses.py" "$tmp/one/log.json" "$tmp/two/log.json" 30 \
  "tessera train, 1 vs 2 processes" || { echo "data_parallel: FAILED: the train losses differ"; exit 1; }
# Interrupted at step 15 and resumed on 2 processes, it logs the same 30 losses. Only rank 0 is
# given the checkpoint's path (the other rank's does not exist): rank 0 reads the file and the
# group hands it to the others, as on machines without a shared directory.
"$cli" launch -n 2 -- "$cli" train --steps 30 --stop-at 15 --quiet --out "$tmp/half" >"$tmp/half.log" 2>&1 ||
  { cat "$tmp/half.log"; echo "data_parallel: FAILED: tessera train on 2 processes, to step 15"; exit 1; }
"$cli" launch -n 2 -- sh -c 'if [ "$RANK" = 0 ]; then ck="$1"; else ck=/nonexistent/checkpoint.safetensors; fi
  exec "$0" train --quiet --resume "$ck" --out "$2"' "$cli" "$tmp/half/checkpoint.safetensors" "$tmp/resumed" \
  >"$tmp/resumed.log" 2>&1 ||
  { cat "$tmp/resumed.log"; echo "data_parallel: FAILED: tessera train resumed on 2 processes"; exit 1; }
python3 "$(dirname "$0")/compare_losses.py" "$tmp/two/log.json" "$tmp/resumed/log.json" 30 \
  "tessera train on 2 processes, straight vs resumed at step 15" ||
  { echo "data_parallel: FAILED: the resumed losses differ"; exit 1; }
# A rank that fails stops the others, and the launcher exits with its status.
set +e
"$cli" launch -n 3 -- sh -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 60' >/dev/null 2>&1
rc=$?
set -e
[[ $rc == 5 ]] || { echo "data_parallel: FAILED: launch exited $rc after rank 1 exited 5"; exit 1; }
echo "data_parallel: OK"
