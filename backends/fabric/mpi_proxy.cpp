// The MPI engine as the fabric plugin sees it: a proxy that opens tessera_fabric_mpi.so (in the
// fabric/ subdirectory beside the plugin) on the first MPI group and forwards to its C entry
// points (mpi/mpi_entry.h), loaded through engine_library.hpp. A process that never creates an
// MPI group never maps libmpi. Also: whether this process was started by an MPI launcher.
#include <cstdlib>
#include <mutex>

#include "engine_library.hpp"
#include "mpi/mpi_entry.h"

namespace fabric {
namespace {

struct MpiLib {
  tsr_fabric_mpi_create_fn create = nullptr;
  tsr_fabric_mpi_run_fn run = nullptr;
  tsr_fabric_mpi_split_fn split = nullptr;
  tsr_fabric_mpi_comm_free_fn comm_free = nullptr;
  tsr_fabric_mpi_destroy_fn destroy = nullptr;
};

// Loaded once, never closed (engine_library.hpp). A build without MPI has no such library: the
// error says so.
const MpiLib& mpi_lib(const char* what) {
  static std::once_flag once;
  static MpiLib lib;
  static std::string error;
  std::call_once(once, [] {
    std::vector<void*> f;
    if (!load_engine_library("mpi", "tessera_fabric_mpi.so",
                             {"tsr_fabric_mpi_create", "tsr_fabric_mpi_run", "tsr_fabric_mpi_split",
                              "tsr_fabric_mpi_comm_free", "tsr_fabric_mpi_destroy"},
                             &f, &error)) {
      error += " (the fabric backend is built with the mpi engine where CMake finds MPI; Debian: libopenmpi-dev)";
      return;
    }
    lib.create = reinterpret_cast<tsr_fabric_mpi_create_fn>(f[0]);
    lib.run = reinterpret_cast<tsr_fabric_mpi_run_fn>(f[1]);
    lib.split = reinterpret_cast<tsr_fabric_mpi_split_fn>(f[2]);
    lib.comm_free = reinterpret_cast<tsr_fabric_mpi_comm_free_fn>(f[3]);
    lib.destroy = reinterpret_cast<tsr_fabric_mpi_destroy_fn>(f[4]);
  });
  if (!lib.create) fail(TSR_UNIMPLEMENTED, std::string(what) + ": the mpi engine is not available: " + error);
  return lib;
}

class MpiProxy final : public Engine {
 public:
  MpiProxy(tsr_comm_group_s* g, void* comm) : lib_(mpi_lib("group_create")) {
    if (tsr_status_t st = lib_.create(api(), g, comm, &engine_)) rethrow(st);
  }
  ~MpiProxy() override { lib_.destroy(engine_); }
  const char* name() const override { return "mpi"; }
  Mode mode() const override { return Mode::worker; }
  std::unique_ptr<Completion> run(const tsr_collective_args_t& a) override {
    if (tsr_status_t st = lib_.run(engine_, &a)) rethrow(st);
    return nullptr;
  }
  MpiComm split(const int32_t* ranks, int32_t n) {
    void* comm = nullptr;
    if (tsr_status_t st = lib_.split(engine_, ranks, n, &comm)) rethrow(st);
    if (!comm) return nullptr;
    const MpiLib* lib = &lib_;
    return MpiComm(comm, [lib](void* c) { lib->comm_free(c); });
  }

 private:
  const MpiLib& lib_;
  void* engine_ = nullptr;
};

}  // namespace

bool started_by_mpi_launcher() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

std::unique_ptr<Engine> make_mpi_engine(tsr_comm_group_s* group, const MpiComm& comm) {
  return std::make_unique<MpiProxy>(group, comm.get());
}

bool mpi_split(Engine* parent, const int32_t* ranks, int32_t n, MpiComm* comm) {
  auto* m = dynamic_cast<MpiProxy*>(parent);
  if (!m) return false;
  *comm = m->split(ranks, n);
  return true;
}

}  // namespace fabric
