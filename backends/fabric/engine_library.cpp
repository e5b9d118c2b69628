// Loading the engine libraries beside the plugin (engine_library.hpp).
#include "engine_library.hpp"

#include <dlfcn.h>

namespace fabric {

bool load_engine_library(const std::string& engine, const std::string& file, const std::vector<const char*>& names,
                         std::vector<void*>* fns, std::string* error) {
  fns->clear();
  // Our own file's directory: the plugin may be loaded from the build tree or an install.
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&load_engine_library), &info) || !info.dli_fname) {
    *error = "cannot find the fabric plugin's own file (dladdr failed)";
    return false;
  }
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.rfind('/') + 1);
  const std::string path = dir + "fabric/" + file;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    *error = "cannot load the " + engine + " engine " + path + ": " + (e ? e : "dlopen failed");
    return false;
  }
  for (const char* name : names) {
    void* f = dlsym(h, name);
    if (!f) {
      fns->clear();
      *error = path + " lacks the engine's entry points (" + name + ")";
      return false;
    }
    fns->push_back(f);
  }
  return true;
}

void rethrow(tsr_status_t st) {
  Failure f{api()->status_code(st), api()->status_message(st)};
  api()->status_free(st);
  throw f;
}

}  // namespace fabric
