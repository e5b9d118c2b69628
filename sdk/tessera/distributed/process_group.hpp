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
// Errors: tsr::Error (INVALID_ARGUMENT for a malformed variable, UNAVAILABLE when the ranks do
// not meet within the timeout).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "tessera/distributed/collectives.hpp"

namespace tsr::distributed {

struct InitOptions {
  std::string backend = "gloo";  // the engine across processes: "gloo" (cpu) or "nccl" (cuda)
  int rank = -1;                 // -1: $RANK, else 0
  int world_size = -1;           // -1: $WORLD_SIZE, else 1
  std::string init_method;       // "": $TESSERA_INIT_METHOD ("file:///dir")
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
}  // namespace detail

inline DeviceGroup init_process_group(InitOptions o = {}) {
  const int rank = o.rank >= 0 ? o.rank : detail::env_int("RANK", 0);
  const int world = o.world_size >= 0 ? o.world_size : detail::env_int("WORLD_SIZE", 1);
  if (world < 1 || rank >= world)
    throw Error(TSR_INVALID_ARGUMENT, "init_process_group: rank " + std::to_string(rank) + " of world size " +
                                          std::to_string(world));
  const Device device = o.device ? *o.device
                                 : o.backend == "nccl" ? Device("cuda:" + std::to_string(detail::env_int("LOCAL_RANK", 0)))
                                                       : Device::cpu();
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
