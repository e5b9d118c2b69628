// Loading the fabric engine libraries: see engine_library.hpp.
#include "engine_library.hpp"

#include <dlfcn.h>

#include <vector>

namespace fabric {

std::string open_engine_library(const char* file, const char* const* symbols, void** out, int n) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&open_engine_library), &info) || !info.dli_fname)
    return "cannot find the fabric plugin's own file (dladdr failed)";
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.rfind('/') + 1);
  const std::string path = dir + "fabric/" + file;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return "cannot load " + path + ": " + (e ? e : "dlopen failed");
  }
  std::vector<void*> found(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    found[static_cast<size_t>(i)] = dlsym(h, symbols[i]);
    if (!found[static_cast<size_t>(i)]) return path + " lacks the engine's entry point " + symbols[i];
  }
  for (int i = 0; i < n; ++i) out[i] = found[static_cast<size_t>(i)];
  return "";
}

}  // namespace fabric
