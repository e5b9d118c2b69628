// Shared declarations of the Node addon: errors, dtype and device names, the per-env data.
// The addon sees only the C ABI (abi/tessera) and the header-only SDK (sdk/tessera).
#pragma once

#include <napi.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsrnode {

// The environment a finalizer receives: with NAPI_EXPERIMENTAL (CMake's
// TESSERA_NODE_SYNC_FINALIZERS) finalizers run during garbage collection and get a "basic" env
// on which only GC-safe calls compile.
#ifdef NAPI_EXPERIMENTAL
using finalize_env_t = node_api_basic_env;
constexpr bool kSyncFinalizers = true;
#else
using finalize_env_t = napi_env;
constexpr bool kSyncFinalizers = false;
#endif

class ReleaseQueue;  // blob.hpp

// What one Node environment (the main thread, or a worker_threads Worker) keeps.
struct AddonData {
  Napi::FunctionReference tensor_ctor;
  std::shared_ptr<ReleaseQueue> releases;
  // Open ts.tidy() scopes, innermost last: weak references to the tensors made inside each.
  std::vector<std::vector<napi_ref>> tidy_scopes;
};
AddonData& addon_data(Napi::Env env);

// ---- errors -----------------------------------------------------------------------------------

// The canonical code's name ("INVALID_ARGUMENT"), what JS sees as err.code.
const char* code_name(tsr_code_t code);
// An Error carrying Tessera's message and `code`.
Napi::Error make_error(Napi::Env env, tsr_code_t code, const std::string& message);
// What a JS value is, for messages: "a number (1.5)", "null", "a Tensor", "an array".
std::string describe_js(Napi::Env env, const Napi::Value& v);
// Throws a TypeError (a JS value of the wrong kind: the binding's own check, never the core's).
[[noreturn]] void throw_type_error(Napi::Env env, const std::string& message);

// Runs f, turning a tsr::Error from the SDK into a JS Error with its code. Every entry point
// goes through it, so no C++ exception reaches node-addon-api without a code.
template <class F>
auto guard(Napi::Env env, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const tsr::Error& e) {
    throw make_error(env, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    throw make_error(env, TSR_RESOURCE_EXHAUSTED, "tessera: out of host memory");
  }
}

// ---- dtypes and devices -------------------------------------------------------------------------

// PyTorch's names ("float32", "int64", "bool", "bfloat16"); aliases such as "float" or "long"
// are accepted on input.
const char* dtype_js_name(tsr_dtype_t dt);
tsr_dtype_t parse_dtype(Napi::Env env, const Napi::Value& v, const std::string& what);
tsr_device_t parse_device(Napi::Env env, const Napi::Value& v, const std::string& what);
std::string device_string(tsr_device_t d);

inline tsr_runtime_t* rt() { return tsr::runtime(); }

}  // namespace tsrnode
