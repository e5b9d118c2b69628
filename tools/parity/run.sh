#!/usr/bin/env bash
# The PyTorch parity suite (docs/parity.md), as ctest runs it:
#   tools/parity/run.sh DUMP_TOOL WORK_DIR [compare.py options]
# Dumps every conformance case from Tessera (DUMP_TOOL: tessera-parity-dump) into WORK_DIR, then
# replays and compares them in PyTorch. Exit 77 (ctest: skipped) when the interpreter cannot
# import torch: PyTorch is an optional test dependency (Debian's python3-torch, which
# tools/setup-deps.sh installs). TESSERA_PARITY_PYTHON picks the interpreter (default
# /usr/bin/python3: Debian's torch is installed for the system interpreter, and a python3
# earlier on PATH may be another one).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${TESSERA_PARITY_PYTHON:-/usr/bin/python3}"
if [ $# -lt 2 ]; then
  echo "usage: $0 DUMP_TOOL WORK_DIR [compare.py options]" >&2
  exit 2
fi
dump="$1" work="$2"
shift 2
if ! [ -x "$py" ]; then
  echo "parity: skipped: no interpreter $py (set TESSERA_PARITY_PYTHON, or install python3-torch: tools/setup-deps.sh)"
  exit 77
fi
if ! err="$("$py" -c 'import torch' 2>&1)"; then
  echo "parity: skipped: $py cannot import torch (${err##*$'\n'}); install Debian's python3-torch (tools/setup-deps.sh does)"
  exit 77
fi
mkdir -p "$work"
"$dump" "$work/parity"
# The comparison, then its self-test: deliberately wrong mappings must be caught.
"$py" "$here/compare.py" "$work/parity" "$@"
"$py" "$here/compare.py" "$work/parity" --self-test
