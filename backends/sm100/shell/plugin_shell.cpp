// The "sm100" plugin the loader sees: a thin shell linked against the CUDA runtime only, like
// the cuda plugin's (backends/cuda/shell/plugin_shell.cpp, which says why). It scores the
// machine (probe.cpp: 0 unless a compute capability 10.x GPU is present) and, only when the
// loader chooses it, loads the backend library sm100/tessera_sm100_backend.so beside this file
// (outside the directory the loader scans), which links cuBLASLt, and forwards init and
// shutdown to it. The backend library stays loaded until the process exits.
#include <dlfcn.h>

#include <memory>
#include <string>

#include "../probe.hpp"
#include "tessera/plugin.hpp"

#ifndef TSR_SM100_PLUGIN_VERSION
#define TSR_SM100_PLUGIN_VERSION "0.0.0"
#endif

namespace {

std::string backend_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&backend_path), &info) || !info.dli_fname)
    tsr::fail(TSR_INTERNAL, "sm100 plugin: cannot find its own file (dladdr failed)");
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : self.substr(0, slash);
  return dir + "/sm100/tessera_sm100_backend.so";
}

const tsr_plugin_t* backend() {
  static const tsr_plugin_t* table = [] {
    const std::string path = backend_path();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      tsr::fail(TSR_FAILED_PRECONDITION, "sm100 plugin: cannot load the backend library ", path, ": ",
                why ? why : "unknown error");
    }
    auto query = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
    const tsr_plugin_t* p = query ? query(TSR_ABI_VERSION) : nullptr;
    if (!p || !p->init)
      tsr::fail(TSR_FAILED_PRECONDITION, "sm100 plugin: ", path, " has no usable ", TSR_PLUGIN_QUERY_SYMBOL);
    return p;
  }();
  return table;
}

struct ShellState {
  const tsr_plugin_t* impl;
  void* state;
};

tsr_status_t shell_init(const tsr_api_t* api, tsr_runtime_t* rt, tsr_registrar_t* reg, void** state) {
  const tsr_plugin_t* impl = backend();  // throws: TSR_DEFINE_PLUGIN makes it the init's status
  std::unique_ptr<ShellState> s(new ShellState{impl, nullptr});
  if (tsr_status_t st = impl->init(api, rt, reg, &s->state)) return st;
  *state = s.release();
  return nullptr;
}

void shell_shutdown(const tsr_api_t* api, void* state) {
  std::unique_ptr<ShellState> s(static_cast<ShellState*>(state));
  if (s && s->impl->shutdown) s->impl->shutdown(api, s->state);
}

}  // namespace

TSR_DEFINE_PLUGIN("sm100", TSR_SM100_PLUGIN_VERSION,
                  "Tessera Blackwell (compute capability 10.x) kernels overriding generic cuda ones: block-scaled "
                  "MXFP8/NVFP4 and fp8 scaled_mm through cuBLASLt, quantize_mxfp8/quantize_nvfp4 for sm_100a",
                  tsr::sm100::score, shell_init, shell_shutdown)
