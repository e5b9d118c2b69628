#!/usr/bin/env bash
# `tessera new-plugin` as a vendor uses it, from an install:
#   1. install a built Tessera tree into a temporary prefix (templates and docs included);
#   2. check the command's usage errors (exit 2);
#   3. generate a device backend (--device) and an op library (--ops) with the INSTALLED command;
#   4. configure and build each as a separate CMake project against the prefix, warning-free;
#   5. run each project's own test (ctest), then `tessera conformance --plugin ... --device NAME`
#      and `tessera certify` (partial) for the backend, `tessera check-plugin` and `tessera
#      certify` (complete, from the test cases it ships) for the op library, expecting exit 0.
# Prints "new_plugin: OK" on success. Registered as the CTest test sdk_new_plugin.
#
#   new_plugin.sh --build <built tessera tree> [--cmake cmake] [--generator Ninja] [--cxx c++]
#                 [--config Release] [--keep]   (keep the temporary directory and print its path)
set -euo pipefail

build="" cmake_cmd="cmake" generator="" cxx="" config="" keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --cmake) cmake_cmd="$2"; shift 2 ;;
    --generator) generator="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "new_plugin: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$build" ]] || { echo "usage: $0 --build DIR [...]" >&2; exit 2; }
[[ -n "$config" ]] || config=Release
ctest_cmd="$(dirname "$cmake_cmd")/ctest"
[[ -x "$ctest_cmd" ]] || ctest_cmd=ctest

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tessera-new-plugin.XXXXXX")"
if [[ $keep == 1 ]]; then
  echo "new_plugin: keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
step() { echo "== new_plugin: $*"; }
die() { echo "new_plugin: FAILED: $*" >&2; exit 1; }
# Only the install's own plugins directory: an inherited plugin path must not add or shadow any.
unset TESSERA_PLUGIN_PATH

gen_args=()
[[ -n "$generator" ]] && gen_args+=(-G "$generator")
[[ -n "$cxx" ]] && gen_args+=("-DCMAKE_CXX_COMPILER=$cxx")
gen_args+=("-DCMAKE_BUILD_TYPE=$config" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)

prefix="$tmp/prefix"
step "installing $build into $prefix"
"$cmake_cmd" --install "$build" --prefix "$prefix" --config "$config" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; die "cmake --install"; }
tessera="$prefix/bin/tessera"
[[ -x "$tessera" ]] || die "no $tessera"
for f in share/doc/tessera/writing-a-backend.md share/doc/tessera/kernel-contracts.md \
         share/tessera/templates/device/CMakeLists.txt share/tessera/templates/ops/CMakeLists.txt; do
  [[ -f "$prefix/$f" ]] || die "missing $prefix/$f"
done

step "usage errors exit 2"
expect_usage() {
  local rc=0
  (cd "$tmp" && "$tessera" new-plugin "$@") >"$tmp/usage.log" 2>&1 || rc=$?
  [[ $rc == 2 ]] || { cat "$tmp/usage.log"; die "tessera new-plugin $* exited $rc, expected 2"; }
}
expect_usage
expect_usage --device Bad
expect_usage --device cpu
expect_usage --device 1dev
expect_usage --device a --ops b
mkdir -p "$tmp/full" && touch "$tmp/full/file"
expect_usage --device npdev --dir "$tmp/full"
"$tessera" new-plugin --device npdev --dir "$tmp/full" --force >/dev/null || die "--force into a non-empty dir"

# Generates, configures, builds (no warnings) and tests one project; sets $plugin to its .so.
build_project() {
  local kind="$1" name="$2" dir="$tmp/$1"
  step "tessera new-plugin --$kind $name; building it against $prefix"
  "$tessera" new-plugin "--$kind" "$name" --dir "$dir" >"$tmp/$kind-new.log" 2>&1 ||
    { cat "$tmp/$kind-new.log"; die "new-plugin --$kind"; }
  "$cmake_cmd" -S "$dir" -B "$dir/build" "${gen_args[@]}" "-DCMAKE_PREFIX_PATH=$prefix" \
    >"$tmp/$kind-configure.log" 2>&1 || { cat "$tmp/$kind-configure.log"; die "configure the $kind project"; }
  "$cmake_cmd" --build "$dir/build" --config "$config" >"$tmp/$kind-build.log" 2>&1 ||
    { cat "$tmp/$kind-build.log"; die "build the $kind project"; }
  if grep -q "warning:" "$tmp/$kind-build.log"; then cat "$tmp/$kind-build.log"; die "warnings building the $kind project"; fi
  plugin="$dir/build/tessera_$name.so"
  [[ -f "$plugin" && -f "${plugin%.so}.json" ]] || die "no $plugin and its manifest"
  "$ctest_cmd" --test-dir "$dir/build" -C "$config" --output-on-failure >"$tmp/$kind-test.log" 2>&1 ||
    { cat "$tmp/$kind-test.log"; die "the $kind project's own test"; }
}

build_project device npdev
step "tessera conformance --plugin $plugin --device npdev"
"$tessera" conformance --plugin "$plugin" --device npdev >"$tmp/conformance.log" 2>&1 ||
  { cat "$tmp/conformance.log"; die "conformance of the generated backend"; }
tail -1 "$tmp/conformance.log"
# The certificate of a backend with the minimum kernel set: partial (ops it cannot run yet), never
# failed or crashed; exit 0.
step "tessera certify $plugin"
"$tessera" certify --no-gradcheck --certificate "$tmp/npdev.cert.json" "$plugin" >"$tmp/certify.log" 2>&1 ||
  { cat "$tmp/certify.log"; die "certify the generated backend"; }
grep -q "verdict: PARTIAL" "$tmp/certify.log" || { cat "$tmp/certify.log"; die "the backend's certificate is not partial"; }
grep -q '"sha256"' "$tmp/npdev.cert.json" || die "no certificate written"

build_project ops npops
step "tessera check-plugin $plugin"
"$tessera" check-plugin "$plugin" >"$tmp/check.log" 2>&1 || { cat "$tmp/check.log"; die "check-plugin of the op library"; }
grep -q "npops::scale_add" "$tmp/check.log" || { cat "$tmp/check.log"; die "check-plugin does not list npops::scale_add"; }
# The op library ships its test cases (scale_add.tests.json): its certificate is complete.
step "tessera certify $plugin"
"$tessera" certify "$plugin" >"$tmp/certify-ops.log" 2>&1 || { cat "$tmp/certify-ops.log"; die "certify the op library"; }
grep -q "verdict: COMPLETE" "$tmp/certify-ops.log" || { cat "$tmp/certify-ops.log"; die "the op library is not complete"; }

echo "new_plugin: OK"
