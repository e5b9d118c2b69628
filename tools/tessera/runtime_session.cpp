// Creating a runtime from the common options, and finding where the core lives.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli.hpp"

namespace tessera_cli {

const tsr_api_t* core_api() {
  static const tsr_api_t* api = tsr_get_api(TSR_ABI_VERSION);
  return api;
}

std::string core_library_path() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&tsr_get_api), &info) && info.dli_fname) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(info.dli_fname, ec);
    return ec ? std::string(info.dli_fname) : p.lexically_normal().string();
  }
  return "";
}

// Mirrors the loader: plugins/ beside the core, i.e. <libdir>/tessera/plugins.
std::string default_plugin_dir() {
  std::string lib = core_library_path();
  if (lib.empty()) return "";
  return (std::filesystem::path(lib).parent_path() / "tessera" / "plugins").string();
}

std::string status_text(tsr_status_t st) {
  if (!st) return "";
  const tsr_api_t* api = core_api();
  std::string msg = api->status_message(st);
  api->status_free(st);
  return msg;
}

RuntimeSession::~RuntimeSession() {
  if (rt_) core_api()->runtime_destroy(rt_);
}

bool RuntimeSession::open(const Args& args) {
  const tsr_api_t* api = core_api();
  if (!api) {
    std::fprintf(stderr, "tessera: the core library does not speak ABI major %d\n", TSR_ABI_MAJOR);
    return false;
  }
  // The commands report refusals themselves; keep the loader's warnings off the terminal
  // unless the user asked for them.
  setenv("TESSERA_LOG_LEVEL", "error", 0);

  tsr_runtime_options_t opts{};
  opts.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
  const char* env_path = std::getenv("TESSERA_PLUGIN_PATH");
  if (args.values.count("--plugin-path")) {
    plugin_path_ = args.value("--plugin-path");
    opts.plugin_path = plugin_path_.c_str();
  } else if (env_path) {
    plugin_path_ = env_path;  // the core reads it itself when plugin_path is NULL
  }
  opts.no_default_plugins = args.has("--no-default-plugins") ? 1 : 0;
  const char* env_conf = std::getenv("TESSERA_ALLOC_CONF");
  if (args.values.count("--alloc-conf")) {
    alloc_conf_ = args.value("--alloc-conf");
    opts.alloc_conf = alloc_conf_.c_str();
  } else if (env_conf) {
    alloc_conf_ = env_conf;
    alloc_conf_from_env_ = true;
  }
  tsr_status_t st = api->runtime_create(&opts, &rt_);
  if (st) {
    rt_ = nullptr;
    std::fprintf(stderr, "tessera: cannot create a runtime: %s\n", status_text(st).c_str());
    return false;
  }
  // What the loader really searched (not a re-derivation of its rules).
  for (size_t i = 0; const char* dir = api->plugin_search_dir(rt_, i); ++i) search_path_.push_back(dir);
  return true;
}

}  // namespace tessera_cli
