// The NCCL engine as the fabric plugin sees it: a proxy that opens tessera_fabric_nccl.so (in the
// fabric/ subdirectory beside the plugin, engine_library.cpp) on the first GPU group and forwards
// to its C entry points (nccl/nccl_entry.h). The plugin links neither NCCL nor the CUDA runtime:
// a process that never makes a GPU group never maps them.
#include <mutex>

#include "engine_library.hpp"
#include "group.hpp"
#include "nccl/nccl_entry.h"

namespace fabric {
namespace {

struct NcclLib {
  tsr_fabric_nccl_create_fn create = nullptr;
  tsr_fabric_nccl_split_fn split = nullptr;
  tsr_fabric_nccl_run_fn run = nullptr;
  tsr_fabric_nccl_query_fn query = nullptr;
  tsr_fabric_nccl_wait_fn wait = nullptr;
  tsr_fabric_nccl_release_fn release = nullptr;
  tsr_fabric_nccl_destroy_fn destroy = nullptr;
  std::string error;  // why the library did not load (create is then null)
};

// Loaded once, never closed (like every plugin library).
const NcclLib& loaded_nccl_lib() {
  static std::once_flag once;
  static NcclLib lib;
  std::call_once(once, [] {
    std::vector<void*> fns;
    if (!load_engine_library("nccl", "tessera_fabric_nccl.so",
                             {"tsr_fabric_nccl_create", "tsr_fabric_nccl_split", "tsr_fabric_nccl_run",
                              "tsr_fabric_nccl_query", "tsr_fabric_nccl_wait", "tsr_fabric_nccl_release",
                              "tsr_fabric_nccl_destroy"},
                             &fns, &lib.error))
      return;
    lib.create = reinterpret_cast<tsr_fabric_nccl_create_fn>(fns[0]);
    lib.split = reinterpret_cast<tsr_fabric_nccl_split_fn>(fns[1]);
    lib.run = reinterpret_cast<tsr_fabric_nccl_run_fn>(fns[2]);
    lib.query = reinterpret_cast<tsr_fabric_nccl_query_fn>(fns[3]);
    lib.wait = reinterpret_cast<tsr_fabric_nccl_wait_fn>(fns[4]);
    lib.release = reinterpret_cast<tsr_fabric_nccl_release_fn>(fns[5]);
    lib.destroy = reinterpret_cast<tsr_fabric_nccl_destroy_fn>(fns[6]);
  });
  return lib;
}

const NcclLib& nccl_lib() {
  const NcclLib& lib = loaded_nccl_lib();
  if (!lib.create)
    fail(TSR_UNIMPLEMENTED, "group_create: " + lib.error +
                                " (the nccl engine is built only where CMake found CUDA and NCCL: nccl.h, libnccl)");
  return lib;
}

class NcclCompletion final : public Completion {
 public:
  NcclCompletion(const NcclLib& lib, void* c) : lib_(lib), c_(c) {}
  ~NcclCompletion() override { lib_.release(c_); }
  bool query() override {
    int32_t done = 0;
    if (tsr_status_t st = lib_.query(c_, &done)) rethrow(st);
    return done != 0;
  }
  bool wait(double timeout_seconds) override {
    int32_t done = 0;
    if (tsr_status_t st = lib_.wait(c_, timeout_seconds, &done)) rethrow(st);
    return done != 0;
  }

 private:
  const NcclLib& lib_;
  void* c_;
};

class NcclProxy final : public Engine {
 public:
  NcclProxy(tsr_comm_group_s* g, const std::string& rendezvous, const std::string& prefix) : lib_(nccl_lib()) {
    if (tsr_status_t st = lib_.create(api(), g, rendezvous.empty() ? nullptr : rendezvous.c_str(), prefix.c_str(),
                                      &engine_))
      rethrow(st);
  }
  NcclProxy(const NcclLib& lib, void* engine) : lib_(lib), engine_(engine) {}
  ~NcclProxy() override { lib_.destroy(engine_); }
  const char* name() const override { return "nccl"; }
  Mode mode() const override { return Mode::stream; }
  std::unique_ptr<Completion> run(const tsr_collective_args_t& a) override {
    void* c = nullptr;
    if (tsr_status_t st = lib_.run(engine_, &a, &c)) rethrow(st);
    if (!c) return nullptr;  // captured into a CUDA graph: complete as far as the host is concerned
    return std::make_unique<NcclCompletion>(lib_, c);
  }
  // The subgroup's engine, or nullptr when `group` is NULL (none of this process's members).
  std::unique_ptr<Engine> split(tsr_comm_group_s* group, const int32_t* ranks, int32_t n) {
    void* e = nullptr;
    if (tsr_status_t st = lib_.split(engine_, group, ranks, n, &e)) rethrow(st);
    if (!e) return nullptr;
    return std::make_unique<NcclProxy>(lib_, e);
  }

 private:
  const NcclLib& lib_;
  void* engine_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine(tsr_comm_group_s* group, const std::string& rendezvous,
                                         const std::string& prefix) {
  return std::make_unique<NcclProxy>(group, rendezvous, prefix);
}

bool nccl_engine_available() { return loaded_nccl_lib().create != nullptr; }

bool is_nccl_engine(const Engine* e) { return dynamic_cast<const NcclProxy*>(e) != nullptr; }

std::unique_ptr<Engine> nccl_split(Engine* parent, tsr_comm_group_s* group, const int32_t* ranks, int32_t n) {
  return static_cast<NcclProxy*>(parent)->split(group, ranks, n);
}

}  // namespace fabric
