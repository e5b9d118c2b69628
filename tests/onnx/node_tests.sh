#!/usr/bin/env bash
# ONNX's backend node tests through the importer and the graph runner, as ctest runs them:
#   tests/onnx/node_tests.sh PYTHON TESSERA WORK_DIR MAX_FAILED
# Generates the cases (tools/onnx/gen_node_tests.py) into WORK_DIR, then runs
# `tessera onnx-conformance`, which fails when more than MAX_FAILED cases fail (docs/onnx.md
# lists the known ones). Exit 77 (ctest: skipped) when PYTHON cannot import onnx.
set -euo pipefail
py="$1" tessera="$2" work="$3" max_failed="$4"
root="$(cd "$(dirname "$0")/../.." && pwd)"
if ! err="$("$py" -c 'import onnx, numpy' 2>&1)"; then
  echo "onnx node tests: skipped: $py cannot import onnx (${err##*$'\n'}); install python3-onnx (tools/setup-deps.sh)"
  exit 77
fi
rm -rf "$work"
"$py" "$root/tools/onnx/gen_node_tests.py" "$work" > /dev/null
OMP_NUM_THREADS=1 "$tessera" onnx-conformance "$work/node" --max-failed "$max_failed" --failures
