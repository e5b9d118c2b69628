// The Gloo engine as the fabric plugin sees it: a proxy that opens tessera_fabric_gloo.so (in the
// fabric/ subdirectory beside the plugin) on the first multi-process group and forwards to its C
// entry points (gloo/gloo_entry.h), loaded through engine_library.hpp. A process that never
// creates such a group never maps Gloo.
#include <mutex>

#include "engine_library.hpp"
#include "gloo/gloo_entry.h"

namespace fabric {
namespace {

struct GlooLib {
  tsr_fabric_gloo_create_fn create = nullptr;
  tsr_fabric_gloo_run_fn run = nullptr;
  tsr_fabric_gloo_split_prefix_fn split_prefix = nullptr;
  tsr_fabric_gloo_destroy_fn destroy = nullptr;
};

// Loaded once, never closed (engine_library.hpp).
const GlooLib& gloo_lib() {
  static std::once_flag once;
  static GlooLib lib;
  static std::string error;
  std::call_once(once, [] {
    std::vector<void*> f;
    if (!load_engine_library("gloo", "tessera_fabric_gloo.so",
                             {"tsr_fabric_gloo_create", "tsr_fabric_gloo_run", "tsr_fabric_gloo_split_prefix",
                              "tsr_fabric_gloo_destroy"},
                             &f, &error))
      return;
    lib.create = reinterpret_cast<tsr_fabric_gloo_create_fn>(f[0]);
    lib.run = reinterpret_cast<tsr_fabric_gloo_run_fn>(f[1]);
    lib.split_prefix = reinterpret_cast<tsr_fabric_gloo_split_prefix_fn>(f[2]);
    lib.destroy = reinterpret_cast<tsr_fabric_gloo_destroy_fn>(f[3]);
  });
  if (!lib.create) fail(TSR_UNAVAILABLE, "group_create: " + error);
  return lib;
}

class GlooProxy final : public Engine {
 public:
  GlooProxy(tsr_comm_group_s* g, const std::string& rendezvous, const std::string& prefix) : lib_(gloo_lib()) {
    if (tsr_status_t st = lib_.create(api(), g, rendezvous.c_str(), prefix.c_str(), &engine_)) rethrow(st);
  }
  ~GlooProxy() override { lib_.destroy(engine_); }
  const char* name() const override { return "gloo"; }
  Mode mode() const override { return Mode::worker; }
  std::unique_ptr<Completion> run(const tsr_collective_args_t& a) override {
    if (tsr_status_t st = lib_.run(engine_, &a)) rethrow(st);
    return nullptr;
  }
  std::string split_prefix(std::string* rendezvous) {
    char prefix[512] = {0}, url[4096] = {0};
    lib_.split_prefix(engine_, prefix, sizeof(prefix), url, sizeof(url));
    *rendezvous = url;
    return prefix;
  }

 private:
  const GlooLib& lib_;
  void* engine_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_gloo_engine(tsr_comm_group_s* group, const std::string& rendezvous,
                                         const std::string& prefix) {
  return std::make_unique<GlooProxy>(group, rendezvous, prefix);
}

std::string gloo_split_prefix(Engine* parent, std::string* rendezvous) {
  auto* g = dynamic_cast<GlooProxy*>(parent);
  return g ? g->split_prefix(rendezvous) : "";
}

}  // namespace fabric
