#!/usr/bin/env bash
# README command 1: installs dependencies, builds, shows what the runtime loaded, and runs the
# quickstart demonstration on the default device.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-deps.sh"
BUILD_DIR="$root/build" bash "$root/tools/build.sh" >/dev/null
"$root/build/bin/tessera" info
"$root/build/bin/tessera_quickstart" "$@"
