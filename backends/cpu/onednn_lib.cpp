// Opening the oneDNN side library (onednn_lib.hpp).
#include "onednn_lib.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace tsr::cpu {

const OneDnn* onednn() {
  static const OneDnn* lib = []() -> const OneDnn* {
    const char* e = std::getenv("TESSERA_CPU_SGEMM");
    if (e && std::strcmp(e, "openblas") == 0) return nullptr;
    Dl_info info;  // our own file's directory: the plugin runs from a build tree or an install
    if (!dladdr(reinterpret_cast<void*>(&onednn), &info) || !info.dli_fname) return nullptr;
    std::string path = info.dli_fname;
    path = path.substr(0, path.rfind('/') + 1) + "cpu/tessera_cpu_onednn.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return nullptr;  // not built here, or libdnnl missing: OpenBLAS does the work
    static OneDnn table;
    table.sgemm = reinterpret_cast<tsr_cpu_onednn_sgemm_fn>(dlsym(h, "tsr_cpu_onednn_sgemm"));
    return table.sgemm ? &table : nullptr;
  }();
  return lib;
}

}  // namespace tsr::cpu
