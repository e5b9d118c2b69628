#!/usr/bin/env bash
# README command 1: installs dependencies, builds, and runs the main job: `tessera train`
# trains a small GPT on 3-digit addition on the best loaded device (about a minute on 2 CPU
# cores) and reports held-out exact-match accuracy. Extra arguments go to `tessera train`
# (e.g. --steps 1200, --text FILE, --device cuda:0).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-deps.sh"
BUILD_DIR="$root/build" bash "$root/tools/build.sh" >/dev/null
"$root/build/bin/tessera" train --out "$root/build/tessera-train-out" "$@"
