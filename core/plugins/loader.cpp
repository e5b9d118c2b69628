// The plugin loader: finds plugin .so files and their JSON manifests, orders them by
// dependencies, and loads each one transactionally. Every refusal is recorded with its reason
// and the runtime keeps going.
#define BOOST_DLL_USE_STD_FS
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "plugins/registrar.hpp"
#include "tessera/search_path.hpp"
#include "runtime/status.hpp"

namespace fs = std::filesystem;

namespace tsr::core {

namespace {

struct Candidate {
  std::string name, version, path, abi;
  std::vector<std::string> depends;
};

// Plugins are never unloaded before process exit: kernels, allocators and statuses they
// handed out may outlive any one runtime, and GPU runtimes dislike dlclose.
std::mutex g_libs_mutex;
std::vector<boost::dll::shared_library>* g_libs = new std::vector<boost::dll::shared_library>;

std::string core_plugin_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&core_plugin_dir), &info) && info.dli_fname)
    return (fs::path(info.dli_fname).lexically_normal().parent_path() / "tessera" / "plugins").string();
  return "";
}

bool world_writable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH);
}

void refuse(Runtime* rt, const std::string& name, const std::string& version, const std::string& path,
            const std::string& reason, int32_t score = 0) {
  PluginRecord r;
  r.name = name;
  r.version = version;
  r.path = path;
  r.reason = reason;
  r.score = score;
  rt->plugin_records.push_back(r);
  log(TSR_LOG_WARN, "plugin '" + name + "' (" + path + ") refused: " + reason);
}

bool read_manifest(Runtime* rt, const fs::path& so, Candidate* c) {
  fs::path manifest = so;
  manifest.replace_extension(".json");
  std::string stem = so.stem().string();
  std::ifstream in(manifest);
  if (!in) {
    refuse(rt, stem, "", so.string(), "missing manifest " + manifest.filename().string());
    return false;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    c->name = j.at("name").get<std::string>();
    c->version = j.value("version", "");
    c->abi = j.value("abi", "");
    if (j.contains("depends")) c->depends = j.at("depends").get<std::vector<std::string>>();
    c->path = so.string();
  } catch (const std::exception& e) {
    refuse(rt, stem, "", so.string(), "bad manifest " + manifest.filename().string() + ": " + e.what());
    return false;
  }
  if (c->name.empty()) {
    refuse(rt, stem, "", so.string(), "manifest has an empty name");
    return false;
  }
  return true;
}

void load_one(Runtime* rt, const Candidate& c) {
  if (world_writable(c.path) || world_writable(fs::path(c.path).parent_path().string()))
    return refuse(rt, c.name, c.version, c.path, "refusing a world-writable plugin file or directory");
  int abi_major = std::atoi(c.abi.c_str());
  if (c.abi.empty() || abi_major != TSR_ABI_MAJOR)
    return refuse(rt, c.name, c.version, c.path,
                  "manifest ABI '" + c.abi + "' is incompatible with the core's ABI " + std::to_string(TSR_ABI_MAJOR) +
                      "." + std::to_string(TSR_ABI_MINOR));
  boost::dll::shared_library lib;
  try {
    lib.load(c.path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    const char* err = dlerror();
    return refuse(rt, c.name, c.version, c.path, std::string("cannot load: ") + (err ? err : e.what()));
  }
  {
    // Once opened, a library stays mapped until exit, refused or not: a GPU runtime that a
    // plugin initialised in score() must not be unmapped under it.
    std::lock_guard<std::mutex> lock(g_libs_mutex);
    g_libs->push_back(lib);
  }
  if (!lib.has(TSR_PLUGIN_QUERY_SYMBOL))
    return refuse(rt, c.name, c.version, c.path, "missing entry symbol " TSR_PLUGIN_QUERY_SYMBOL);
  auto query = lib.get<const tsr_plugin_t*(uint32_t)>(TSR_PLUGIN_QUERY_SYMBOL);
  const tsr_plugin_t* p = nullptr;
  try {
    p = query(TSR_ABI_VERSION);
  } catch (...) {
    return refuse(rt, c.name, c.version, c.path, "tsr_plugin_query threw a C++ exception");
  }
  if (!p)
    return refuse(
        rt, c.name, c.version, c.path,
        "plugin does not support the host ABI " + std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR));
  if (p->struct_size < offsetof(tsr_plugin_t, shutdown) || !p->init || !p->name)
    return refuse(rt, c.name, c.version, c.path, "plugin header is truncated or lacks init/name");
  uint32_t major = TSR_ABI_VERSION_MAJOR(p->abi_version), minor = TSR_ABI_VERSION_MINOR(p->abi_version);
  if (major != TSR_ABI_MAJOR)
    return refuse(rt, c.name, c.version, c.path,
                  "plugin was built for ABI " + std::to_string(major) + "." + std::to_string(minor) +
                      ", the core speaks " + std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR));
  if (c.name != p->name)
    return refuse(rt, c.name, c.version, c.path,
                  std::string("plugin calls itself '") + p->name + "' but its manifest says '" + c.name + "'");
  int32_t score = 1;
  if (p->score) {
    char reason[512] = {0};
    try {
      score = p->score(api_table(), reason, sizeof(reason) - 1);
    } catch (...) {
      return refuse(rt, c.name, c.version, c.path, "score() threw a C++ exception");
    }
    if (score <= 0)
      return refuse(rt, c.name, c.version, c.path, std::string("scored 0: ") + (reason[0] ? reason : "no reason given"),
                    score);
  }
  Registrar reg;
  reg.runtime = rt;
  reg.plugin = c.name;
  void* state = nullptr;
  tsr_status_t st = nullptr;
  try {
    st = p->init(api_table(), rt, &reg, &state);
  } catch (const std::exception& e) {
    return refuse(rt, c.name, c.version, c.path, std::string("init threw a C++ exception: ") + e.what(), score);
  } catch (...) {
    return refuse(rt, c.name, c.version, c.path, "init threw a C++ exception", score);
  }
  if (st) {
    std::string msg = st->message;
    free_status(st);
    // Nothing was published: the staged registrations die with `reg`.
    if (p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) && p->shutdown && state) {
      try {
        p->shutdown(api_table(), state);
      } catch (...) {
      }
    }
    return refuse(rt, c.name, c.version, c.path, "init failed: " + msg, score);
  }
  if ((st = commit(&reg))) {
    std::string msg = st->message;
    free_status(st);
    if (p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) && p->shutdown) {
      try {
        p->shutdown(api_table(), state);
      } catch (...) {
      }
    }
    return refuse(rt, c.name, c.version, c.path, "registration failed: " + msg, score);
  }
  PluginRecord r;
  r.name = c.name;
  r.version = p->version ? p->version : c.version;
  r.path = c.path;
  r.loaded = true;
  r.score = score;
  rt->plugin_records.push_back(r);
  LoadedPlugin lp;
  lp.name = c.name;
  lp.header = p;
  lp.state = state;
  lp.shutdown = p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) ? p->shutdown : nullptr;
  rt->loaded_plugins.push_back(lp);
  log(TSR_LOG_INFO, "loaded plugin '" + c.name + "' from " + c.path);
}

}  // namespace

void load_plugins(Runtime* rt, const tsr_runtime_options_t* options) {
  std::vector<std::string> dirs;
  const char* path = options && options->plugin_path ? options->plugin_path : std::getenv("TESSERA_PLUGIN_PATH");
  if (path) dirs = ::tsr::split_search_path(path);
  if (!(options && options->no_default_plugins)) {
    std::string def = core_plugin_dir();
    if (!def.empty()) dirs.push_back(def);
  }
  rt->plugin_dirs = dirs;
  // Collect candidates in search order; first name wins.
  std::vector<Candidate> cands;
  std::set<std::string> seen_dirs;
  for (const std::string& d : dirs) {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(d, ec);
    if (!seen_dirs.insert(canon.string()).second) continue;
    if (!fs::is_directory(d, ec)) continue;
    if (world_writable(d)) {
      refuse(rt, "(directory)", "", d, "refusing a world-writable plugin directory");
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".so") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      Candidate c;
      if (!read_manifest(rt, f, &c)) continue;
      auto dup = std::find_if(cands.begin(), cands.end(), [&](const Candidate& o) { return o.name == c.name; });
      if (dup != cands.end()) {
        refuse(rt, c.name, c.version, c.path, "shadowed by " + dup->path + " (same name, found first)");
        continue;
      }
      cands.push_back(c);
    }
  }
  // Dependency order (depth-first); a missing or cyclic dependency refuses the dependent.
  std::map<std::string, const Candidate*> by_name;
  for (const Candidate& c : cands) by_name[c.name] = &c;
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::vector<const Candidate*> order;
  std::map<std::string, std::string> dep_error;
  std::function<bool(const Candidate&)> visit = [&](const Candidate& c) -> bool {
    if (state[c.name] == 2) return !dep_error.count(c.name);
    if (state[c.name] == 1) {
      dep_error[c.name] = "dependency cycle through '" + c.name + "'";
      return false;
    }
    state[c.name] = 1;
    bool ok = true;
    for (const std::string& d : c.depends) {
      auto it = by_name.find(d);
      if (it == by_name.end()) {
        dep_error[c.name] = "depends on '" + d + "', which was not found";
        ok = false;
      } else if (!visit(*it->second)) {
        if (!dep_error.count(c.name))
          dep_error[c.name] =
              "depends on '" + d + "', which cannot be loaded" + (dep_error.count(d) ? " (" + dep_error[d] + ")" : "");
        ok = false;
      }
    }
    state[c.name] = 2;
    if (ok) order.push_back(&c);
    return ok;
  };
  for (const Candidate& c : cands) visit(c);
  for (const Candidate& c : cands)
    if (dep_error.count(c.name)) refuse(rt, c.name, c.version, c.path, dep_error[c.name]);
  std::set<std::string> loaded;
  for (const Candidate* c : order) {
    bool deps_ok =
        std::all_of(c->depends.begin(), c->depends.end(), [&](const std::string& d) { return loaded.count(d) > 0; });
    if (!deps_ok) {
      refuse(rt, c->name, c->version, c->path, "a dependency failed to load");
      continue;
    }
    size_t before = rt->loaded_plugins.size();
    load_one(rt, *c);
    if (rt->loaded_plugins.size() > before) loaded.insert(c->name);
  }
}

void shutdown_plugins(Runtime* rt) {
  for (auto it = rt->loaded_plugins.rbegin(); it != rt->loaded_plugins.rend(); ++it) {
    if (!it->shutdown) continue;
    try {
      it->shutdown(api_table(), it->state);
    } catch (...) {
      log(TSR_LOG_ERROR, "plugin '" + it->name + "' threw from shutdown");
    }
  }
  rt->loaded_plugins.clear();
}

}  // namespace tsr::core
