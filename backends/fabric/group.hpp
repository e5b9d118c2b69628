// The fabric backend's groups and work handles behind the tessera.collectives table
// (abi/tessera/ext_collectives.h), and the interface every engine implements.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tessera/ext_collectives.h"
#include "tessera/tensor.h"

namespace fabric {

// A status as the table returns it (nullptr = OK), made with the core's status_create.
tsr_status_t make_status(tsr_code_t code, const std::string& message);
const tsr_api_t* api();

// A collective that failed: thrown inside the backend, turned into a status at the ABI.
struct Failure {
  tsr_code_t code;
  std::string message;
};
[[noreturn]] void fail(tsr_code_t code, const std::string& message);

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  // Runs (or enqueues) one collective for this process's members; throws Failure.
  virtual void run(const tsr_collective_args_t& args) = 0;
};

}  // namespace fabric

struct tsr_comm_group_s {
  std::atomic<int> refs{1};
  tsr_runtime_t* runtime = nullptr;
  std::vector<tsr_device_t> members;  // this process's members, in rank order
  int32_t world_size = 0, rank = 0;
  double timeout_seconds = 300;
  std::unique_ptr<fabric::Engine> engine;

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

struct tsr_comm_work_s {
  tsr_comm_group_s* group = nullptr;  // a reference, so the group outlives its work
  std::atomic<bool> done{false};
  tsr_code_t code = TSR_OK;  // the collective's outcome, valid once done
  std::string message;
  ~tsr_comm_work_s() {
    if (group) group->release();
  }
};

namespace fabric {

// The engine for members that are all devices of one process whose memory the host reads (the
// cpu device type, TESSERA_CPU_DEVICES=N): each collective is plain loops over the members'
// memory, complete when run() returns.
std::unique_ptr<Engine> make_inprocess_engine(tsr_comm_group_s* group);
// The engine for one cpu device per process across processes: Gloo over TCP, the processes
// meeting at `rendezvous` ("file:///dir" or "tcp://host:port") under key prefix `prefix`
// (gloo/gloo_engine.cpp, loaded by gloo_proxy.cpp).
std::unique_ptr<Engine> make_gloo_engine(tsr_comm_group_s* group, const std::string& rendezvous,
                                         const std::string& prefix);
// For group_split of a Gloo group: the subgroup's store prefix (every member of the parent
// calls this once per split, so the prefixes agree) and the rendezvous; "" for other engines.
std::string gloo_split_prefix(Engine* parent, std::string* rendezvous);

// "cpu:1" for messages.
std::string device_str(tsr_runtime_t* rt, tsr_device_t d);
const char* kind_name(tsr_collective_kind_t kind);

}  // namespace fabric
