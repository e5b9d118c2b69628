#!/bin/sh
# Runs the Node binding's tests (ctest test `node`): `node --test` over test/*.test.js.
# TESSERA_NODE: the node executable CMake found (else `node` from PATH); exit 77 (a ctest skip)
# when there is none. TESSERA_NODE_ADDON: the built tessera.node (index.js loads it).
dir=$(cd "$(dirname "$0")" && pwd)
node=${TESSERA_NODE:-node}
if ! command -v "$node" >/dev/null 2>&1; then
  echo "skipped: no node executable (install nodejs, Node >= 18)"
  exit 77
fi
# One test file at a time: each file starts its own OpenMP team, and the training tests time
# themselves on what may be a 2-core machine.
exec "$node" --test --test-concurrency=1 "$dir"/*.test.js
