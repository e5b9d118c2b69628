#!/usr/bin/env bash
# The installed SDK as a vendor and an application see it:
#   1. install a built Tessera tree into a temporary prefix and check the layout;
#   2. build plugins/example_gemm as a SEPARATE CMake project against that prefix
#      (find_package(Tessera), Tessera::sdk only) and install it into a fresh plugin directory;
#   3. build tests/sdk/consumer (consumer_host.cpp, linking Tessera::tessera) against the prefix;
#   4. run the host with TESSERA_PLUGIN_PATH=<fresh plugin dir>: it calls example::gemm_bias_act.
# Prints "install_consumer: OK" on success. Registered as the CTest test sdk_install_consumer.
#
#   install_consumer.sh --source <tessera source> --build <built tessera tree>
#                       [--cmake cmake] [--generator Ninja] [--cxx c++] [--config Release]
#                       [--keep]   (keep the temporary directory and print its path)
set -euo pipefail

src="" build="" cmake_cmd="cmake" generator="" cxx="" config="" keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --source) src="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --cmake) cmake_cmd="$2"; shift 2 ;;
    --generator) generator="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "install_consumer: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$src" && -n "$build" ]] || { echo "usage: $0 --source DIR --build DIR [...]" >&2; exit 2; }
[[ -n "$config" ]] || config=Release

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tessera-consumer.XXXXXX")"
if [[ $keep == 1 || -n "${TESSERA_KEEP_CONSUMER:-}" ]]; then
  echo "install_consumer: keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
step() { echo "== install_consumer: $*"; }
die() { echo "install_consumer: FAILED: $*" >&2; exit 1; }

gen_args=()
[[ -n "$generator" ]] && gen_args+=(-G "$generator")
[[ -n "$cxx" ]] && gen_args+=("-DCMAKE_CXX_COMPILER=$cxx")
gen_args+=("-DCMAKE_BUILD_TYPE=$config")
# Never pick up a Tessera from the environment or the user's package registry.
gen_args+=(-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)

prefix="$tmp/prefix"
step "installing $build into $prefix"
"$cmake_cmd" --install "$build" --prefix "$prefix" --config "$config" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; die "cmake --install"; }

step "checking the installed layout"
core="$(find "$prefix" -name libtessera.so -print -quit)"
[[ -n "$core" ]] || die "no libtessera.so under $prefix"
libdir="$(dirname "$core")"
[[ "$libdir" == "$prefix/lib" || "$libdir" == "$prefix/lib64" || "$libdir" == "$prefix"/lib/*-linux-gnu ]] ||
  die "libtessera.so in unexpected $libdir"
for f in "$libdir/tessera/plugins/tessera_cpu.so" "$libdir/tessera/plugins/tessera_cpu.json" \
         "$libdir/cmake/Tessera/TesseraConfig.cmake" "$libdir/cmake/Tessera/TesseraConfigVersion.cmake" \
         "$libdir/cmake/Tessera/TesseraTargets.cmake" "$libdir/cmake/Tessera/TesseraPlugin.cmake" \
         "$prefix/include/tessera/tessera.h" "$prefix/include/tessera/api.h" \
         "$prefix/include/tessera/plugin.hpp" "$prefix/include/tessera/tessera.hpp" \
         "$prefix/include/tessera/dtype.hpp"; do
  [[ -f "$f" ]] || die "missing $f"
done
# Every ABI header and every SDK header of the source tree is installed.
for h in "$src"/abi/tessera/*.h "$src"/sdk/tessera/*.hpp "$src"/sdk/tessera/*.h; do
  [[ -e "$h" ]] || continue
  [[ -f "$prefix/include/tessera/$(basename "$h")" ]] || die "header $(basename "$h") not installed"
done
# The example plugin is not part of the Tessera install: vendors ship their own.
[[ ! -e "$libdir/tessera/plugins/tessera_example_gemm.so" ]] ||
  die "tessera_example_gemm.so should not be installed with the core"
# Exactly the tsr_* family is exported by the core.
if command -v nm >/dev/null; then
  bad="$(nm -D --defined-only "$core" | awk '$2 ~ /[TDBRVW]/ {print $3}' | grep -v '^tsr_' || true)"
  [[ -z "$bad" ]] || die "libtessera.so exports non-tsr_ symbols: $(echo "$bad" | head -5 | tr '\n' ' ')"
fi

step "building plugins/example_gemm as a separate project against $prefix"
"$cmake_cmd" -S "$src/plugins/example_gemm" -B "$tmp/gemm-build" "${gen_args[@]}" \
  "-DCMAKE_PREFIX_PATH=$prefix" >"$tmp/gemm-configure.log" 2>&1 ||
  { cat "$tmp/gemm-configure.log"; die "configure example_gemm"; }
grep -q "Tessera" "$tmp/gemm-build/CMakeCache.txt" || die "example_gemm did not find Tessera"
grep -q "^Tessera_DIR:PATH=$libdir/cmake/Tessera" "$tmp/gemm-build/CMakeCache.txt" ||
  die "example_gemm found Tessera somewhere else: $(grep '^Tessera_DIR' "$tmp/gemm-build/CMakeCache.txt")"
"$cmake_cmd" --build "$tmp/gemm-build" --config "$config" >"$tmp/gemm-build.log" 2>&1 ||
  { cat "$tmp/gemm-build.log"; die "build example_gemm"; }
if grep -q "warning:" "$tmp/gemm-build.log"; then cat "$tmp/gemm-build.log"; die "warnings building example_gemm"; fi
vendor="$tmp/vendor"
"$cmake_cmd" --install "$tmp/gemm-build" --prefix "$vendor" --config "$config" >"$tmp/gemm-install.log" 2>&1 ||
  { cat "$tmp/gemm-install.log"; die "install example_gemm"; }
plugin_dir="$(dirname "$(find "$vendor" -name tessera_example_gemm.so -print -quit)")"
[[ -f "$plugin_dir/tessera_example_gemm.so" && -f "$plugin_dir/tessera_example_gemm.json" ]] ||
  die "example_gemm install lacks the .so or the .json (in $vendor)"
# The plugin must not depend on the core library: it sees the core only through the api table.
if command -v readelf >/dev/null && readelf -d "$plugin_dir/tessera_example_gemm.so" | grep -q 'libtessera'; then
  die "tessera_example_gemm.so links libtessera"
fi
echo "   plugin dir: $plugin_dir ($(ls "$plugin_dir" | tr '\n' ' '))"

step "building the consumer host (tests/sdk/consumer) against $prefix"
"$cmake_cmd" -S "$src/tests/sdk/consumer" -B "$tmp/host-build" "${gen_args[@]}" \
  "-DCMAKE_PREFIX_PATH=$prefix" >"$tmp/host-configure.log" 2>&1 ||
  { cat "$tmp/host-configure.log"; die "configure consumer host"; }
"$cmake_cmd" --build "$tmp/host-build" --config "$config" >"$tmp/host-build.log" 2>&1 ||
  { cat "$tmp/host-build.log"; die "build consumer host"; }
if grep -q "warning:" "$tmp/host-build.log"; then cat "$tmp/host-build.log"; die "warnings building the host"; fi
host="$(find "$tmp/host-build" -name consumer_host -type f -perm -u+x -print -quit)"
[[ -n "$host" ]] || die "consumer_host was not built"

step "running $host with TESSERA_PLUGIN_PATH=$plugin_dir"
# The host must find the INSTALLED core (its RPATH), not the build tree's.
if command -v ldd >/dev/null; then
  resolved="$(ldd "$host" | awk '/libtessera/ {print $3}')"
  [[ "$resolved" == "$libdir"/* ]] || die "consumer_host resolves libtessera to '$resolved', not $libdir"
fi
TESSERA_PLUGIN_PATH="$plugin_dir" "$host" "$plugin_dir" || die "consumer_host failed"
echo "install_consumer: OK"
