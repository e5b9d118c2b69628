// Tessera SDK (vendor side): a plugin "shell", the light shared object the loader scans and
// scores, which loads the heavy backend library only when the loader chooses the plugin.
//
// Why: a GPU backend links libraries of several hundred MB (cuBLAS, cuDNN, ...) whose loading
// alone costs 100+ ms on every process start, GPU or not. The loader scores every plugin it
// finds, so the score must not need them: the shell links what scoring needs (e.g. the CUDA
// runtime), and forwards init and shutdown to the backend library, a plugin built like any
// other but installed in a subdirectory the loader does not scan.
//
//   // backends/foo/shell/plugin_shell.cpp
//   #include "tessera/plugin_shell.hpp"
//   TSR_DEFINE_PLUGIN_SHELL("foo", "1.0.0", "Foo backend: ...", foo_score, "foo/tessera_foo_backend.so")
//
// `score` is the shell's own tsr_plugin_t score function. The backend path is relative to the
// directory of the shell's own file. The backend library is loaded once per process (thread-safe)
// and stays loaded until the process exits (as the core keeps plugins: GPU libraries dislike
// dlclose). A library that cannot be loaded, or has no usable plugin table, makes init fail with
// FAILED_PRECONDITION naming the path and dlerror's reason. POSIX (dlopen/dladdr) only.
#pragma once

#include <dlfcn.h>

#include <memory>
#include <string>

#include "tessera/plugin.hpp"

namespace tsr::shell_detail {

// The directory of the shared object that contains `address` (the shell itself).
inline std::string directory_of(const void* address, const char* plugin) {
  Dl_info info{};
  if (!dladdr(address, &info) || !info.dli_fname)
    fail(TSR_INTERNAL, plugin, " plugin: cannot find its own file (dladdr failed)");
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? std::string(".") : self.substr(0, slash);
}

// Loads `path` and returns its plugin table; throws tsr::Error (FAILED_PRECONDITION).
inline const tsr_plugin_t* load_backend(const std::string& path, const char* plugin) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    fail(TSR_FAILED_PRECONDITION, plugin, " plugin: cannot load the backend library ", path, ": ",
         why ? why : "unknown error");
  }
  auto query = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
  const tsr_plugin_t* p = query ? query(TSR_ABI_VERSION) : nullptr;
  if (!p || !p->init)
    fail(TSR_FAILED_PRECONDITION, plugin, " plugin: ", path, " has no usable ", TSR_PLUGIN_QUERY_SYMBOL, " for ABI ",
         TSR_ABI_VERSION_MAJOR(TSR_ABI_VERSION), ".x");
  return p;
}

struct ShellState {
  const tsr_plugin_t* impl;
  void* state;
};

}  // namespace tsr::shell_detail

// Defines the shell's plugin entry (TSR_DEFINE_PLUGIN) with init/shutdown forwarded to the
// backend library at RELATIVE_BACKEND_PATH. Use once, at namespace scope, in the shell's file.
#define TSR_DEFINE_PLUGIN_SHELL(NAME, VERSION, DESCRIPTION, SCORE, RELATIVE_BACKEND_PATH)                           \
  namespace {                                                                                                     \
  const tsr_plugin_t* tsr_shell_backend() {                                                                       \
    static const tsr_plugin_t* table = ::tsr::shell_detail::load_backend(                                         \
        ::tsr::shell_detail::directory_of(reinterpret_cast<const void*>(&tsr_shell_backend), NAME) + "/" +         \
            RELATIVE_BACKEND_PATH,                                                                                \
        NAME);                                                                                                    \
    return table;                                                                                                 \
  }                                                                                                               \
  tsr_status_t tsr_shell_init(const tsr_api_t* api, tsr_runtime_t* rt, tsr_registrar_t* reg, void** state) {     \
    const tsr_plugin_t* impl = tsr_shell_backend(); /* throws: TSR_DEFINE_PLUGIN makes it init's status */        \
    std::unique_ptr<::tsr::shell_detail::ShellState> s(new ::tsr::shell_detail::ShellState{impl, nullptr});       \
    if (tsr_status_t st = impl->init(api, rt, reg, &s->state)) return st;                                         \
    *state = s.release();                                                                                         \
    return nullptr;                                                                                               \
  }                                                                                                               \
  void tsr_shell_shutdown(const tsr_api_t* api, void* state) {                                                    \
    std::unique_ptr<::tsr::shell_detail::ShellState> s(static_cast<::tsr::shell_detail::ShellState*>(state));     \
    if (s && s->impl->shutdown) s->impl->shutdown(api, s->state);                                                 \
  }                                                                                                               \
  }                                                                                                               \
  TSR_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, SCORE, tsr_shell_init, tsr_shell_shutdown)
