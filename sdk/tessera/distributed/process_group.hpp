// Tessera SDK: joining the group of processes a launcher started (torch.distributed's
// init_process_group).
//
//   auto pg = tsr::distributed::init_process_group();   // RANK, WORLD_SIZE, TESSERA_INIT_METHOD
//   pg.all_reduce({loss_sum}).wait();
//
// `tessera launch -n N -- PROGRAM` sets the environment for each process: RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, and TESSERA_INIT_METHOD=file://<a private
// directory>. Options given explicitly win over the environment. A process started without a
// launcher (no RANK/WORLD_SIZE) is rank 0 of 1, and needs no rendezvous.
// backend "nccl" (GPUs, one per process) puts this process's member on cuda:$LOCAL_RANK unless
// `device` says otherwise; "gloo" on the cpu.
//
// Under mpirun (Open MPI sets OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; PMIx launchers
// PMIX_RANK), with backend "mpi", or with no backend named and RANK unset, the rank and world
// size are the launcher's, and the group is MPI_COMM_WORLD's (backend "" chooses mpi there): no
// rendezvous is needed.
//
//   mpirun -n 2 PROGRAM                 auto pg = init_process_group();   // the mpi engine
// Errors: tsr::Error (INVALID_ARGUMENT for a malformed variable, UNAVAILABLE when the ranks do
// not meet within the timeout).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "tessera/distributed/collectives.hpp"

namespace tsr::distributed {

struct InitOptions {
  // the engine across processes: "gloo" (cpu), "mpi" (cpu, under mpirun), "nccl" (cuda);
  // "" = mpi under mpirun, else gloo
  std::string backend;
  int rank = -1;            // -1: $RANK, else 0
  int world_size = -1;      // -1: $WORLD_SIZE, else 1
  std::string init_method;  // "": $TESSERA_INIT_METHOD ("file:///dir")
  double timeout_s = 300;
  std::optional<Device> device;  // this process's member; unset: cpu (gloo), cuda:$LOCAL_RANK (nccl)
};

namespace detail {
inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > (1 << 20))
    throw Error(TSR_INVALID_ARGUMENT, std::string("init_process_group: $") + name + " is '" + v +
                                          "', not a non-negative integer");
  return static_cast<int>(x);
}
// Whether an MPI launcher started this process (what the fabric backend checks too).
inline bool started_by_mpi_launcher() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }
}  // namespace detail

inline DeviceGroup init_process_group(InitOptions o = {}) {
  const bool mpi_vars = detail::started_by_mpi_launcher() && !std::getenv("RANK");
  if (o.backend.empty() && mpi_vars) o.backend = "mpi";
  const bool mpi = o.backend == "mpi";
  int rank = o.rank, world = o.world_size;
  if (mpi || mpi_vars) {  // the launcher's numbering (MPI_COMM_WORLD's)
    if (rank < 0) rank = detail::env_int("OMPI_COMM_WORLD_RANK", detail::env_int("PMIX_RANK", -1));
    if (world < 0) world = detail::env_int("OMPI_COMM_WORLD_SIZE", detail::env_int("WORLD_SIZE", -1));
    if (rank < 0 || world < 0)
      throw Error(TSR_INVALID_ARGUMENT,
                  "init_process_group: backend mpi takes the rank and world size from the MPI launcher "
                  "(OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, or PMIX_RANK and WORLD_SIZE), and they are not "
                  "set: start the program with `mpirun -n N PROGRAM`, or set InitOptions rank and world_size");
  } else {
    if (rank < 0) rank = detail::env_int("RANK", 0);
    if (world < 0) world = detail::env_int("WORLD_SIZE", 1);
  }
  if (world < 1 || rank >= world)
    throw Error(TSR_INVALID_ARGUMENT, "init_process_group: rank " + std::to_string(rank) + " of world size " +
                                          std::to_string(world));
  const Device device = o.device ? *o.device
                                 : o.backend == "nccl" ? Device("cuda:" + std::to_string(detail::env_int("LOCAL_RANK", 0)))
                                                       : Device::cpu();
  if (mpi) return DeviceGroup::join(device, rank, world, "", o.timeout_s, "mpi");  // no rendezvous
  std::string method = o.init_method;
  if (method.empty())
    if (const char* m = std::getenv("TESSERA_INIT_METHOD")) method = m;
  if (world == 1 && method.empty()) return DeviceGroup({device}, o.timeout_s);  // alone: nothing to meet
  if (method.empty())
    throw Error(TSR_INVALID_ARGUMENT,
                "init_process_group: world size " + std::to_string(world) +
                    " but no rendezvous: set TESSERA_INIT_METHOD=file:///shared/dir, or start the processes "
                    "with `tessera launch -n N -- PROGRAM`");
  return DeviceGroup::join(device, rank, world, method, o.timeout_s, o.backend.c_str());
}

}  // namespace tsr::distributed
