// The "cuda" plugin the loader sees: a thin shell linked against the CUDA runtime only.
//
// Why: the backend links cuBLAS, cuBLASLt, cuSOLVER and cuDNN, several hundred MB of shared
// libraries whose loading alone took 160 ms on the development machine, on every process start,
// GPU or not (runtime creation + first op: 10 ms without the plugin, 170 ms with it). The loader
// scores every plugin it finds, so the score must not need those libraries: the shell scores the
// machine with cudaGetDeviceCount (probe.cpp) and, only when there is a device and the loader
// chooses the plugin, loads the backend library (cuda/tessera_cuda_backend.so beside this file,
// outside the directory the loader scans) and forwards init and shutdown to it.
//
// The backend library stays loaded until the process exits (as the core keeps plugins: CUDA
// libraries dislike dlclose).
#include <dlfcn.h>

#include <memory>
#include <string>

#include "../probe.hpp"
#include "tessera/plugin.hpp"

#ifndef TSR_CUDA_PLUGIN_VERSION
#define TSR_CUDA_PLUGIN_VERSION "0.0.0"
#endif

namespace {

// Path of the backend library: cuda/tessera_cuda_backend.so in this plugin's directory.
std::string backend_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&backend_path), &info) || !info.dli_fname)
    tsr::fail(TSR_INTERNAL, "cuda plugin: cannot find its own file (dladdr failed)");
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : self.substr(0, slash);
  return dir + "/cuda/tessera_cuda_backend.so";
}

// The backend's plugin table (loaded once per process; thread-safe through the static).
const tsr_plugin_t* backend() {
  static const tsr_plugin_t* table = [] {
    const std::string path = backend_path();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      tsr::fail(TSR_FAILED_PRECONDITION, "cuda plugin: cannot load the backend library ", path, ": ",
                why ? why : "unknown error");
    }
    auto query = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
    const tsr_plugin_t* p = query ? query(TSR_ABI_VERSION) : nullptr;
    if (!p || !p->init)
      tsr::fail(TSR_FAILED_PRECONDITION, "cuda plugin: ", path, " has no usable ", TSR_PLUGIN_QUERY_SYMBOL, " for ABI ",
                TSR_ABI_VERSION_MAJOR(TSR_ABI_VERSION), ".x");
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

TSR_DEFINE_PLUGIN("cuda", TSR_CUDA_PLUGIN_VERSION,
                  "Tessera CUDA backend: CUDA kernels, cuBLAS/cuBLASLt, cuDNN, streams, events, graphs",
                  tsr::cuda::score, shell_init, shell_shutdown)
