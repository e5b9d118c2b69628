#!/usr/bin/env bash
# README command 1: installs dependencies, builds, and runs the main job: `tessera train`
# trains a small GPT on 3-digit addition on the best loaded device (about a minute on 2 CPU
# cores) and reports held-out exact-match accuracy; then the saved model (model.tsm) is served
# by examples/serve_gpt, a C program with no frontend code. Extra arguments go to
# `tessera train` (e.g. --steps 1200, --text FILE, --device cuda:0).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-deps.sh"
BUILD_DIR="$root/build" bash "$root/tools/build.sh" >/dev/null
out="$root/build/tessera-train-out"
"$root/build/bin/tessera" train --out "$out" "$@"
case " $* " in
  *" --text "*|*" --text="*|*" --digits"*) ;;  # the C host answers 3-digit addition problems only
  *)
    echo
    echo "Serving $out/model.tsm from C (examples/serve_gpt: dlopen the core, one dlsym):"
    "$root/build/bin/tessera_serve_gpt" "$out/model.tsm" 123+456= 707+295= 999+001= ;;
esac
