// The fabric backend's groups and work handles behind the tessera.collectives table
// (abi/tessera/ext_collectives.h), and the interface every engine implements.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
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

// Runs f and turns what it throws into a status (nullptr when f returns): a Failure as it is,
// anything else prefixed with `what`. Every C entry point of the fabric libraries (the plugin's
// table, the engine libraries' tsr_fabric_* functions) goes through it: no exception crosses a
// C boundary.
template <class F>
tsr_status_t guarded(const std::string& what, F&& f) {
  try {
    f();
    return nullptr;
  } catch (const Failure& e) {
    return make_status(e.code, e.message);
  } catch (const std::bad_alloc&) {
    return make_status(TSR_RESOURCE_EXHAUSTED, what + ": out of host memory");
  } catch (const std::exception& e) {
    return make_status(TSR_INTERNAL, what + ": " + e.what());
  }
}

// What a collective enqueued on device streams leaves behind (Engine::Mode::stream): tells when
// the enqueued work has run on every member's stream. Both throw Failure on a device or
// communication error (the group is then broken).
class Completion {
 public:
  virtual ~Completion() = default;
  virtual bool query() = 0;                       // true once the work has run
  virtual bool wait(double timeout_seconds) = 0;  // true once run; false when the time ran out
};

class Engine {
 public:
  // How an engine's collectives complete, which decides what the plugin does around run():
  //   inline  run() completes the collective before returning (in-process memory loops);
  //   worker  run() blocks on other processes (Gloo, MPI): the plugin calls it on the group's
  //           communication thread, in call order, and the caller's work handle completes when
  //           it returns, so communication overlaps the caller's computation;
  //   stream  run() enqueues on the members' current streams (NCCL) and returns a Completion.
  enum class Mode { inline_, worker, stream };
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  virtual Mode mode() const { return Mode::inline_; }
  // Runs (inline, worker) or enqueues (stream) one collective for this process's members;
  // throws Failure. Stream engines return the Completion; the others return nullptr.
  virtual std::unique_ptr<Completion> run(const tsr_collective_args_t& args) = 0;
};

}  // namespace fabric

namespace fabric {

// The outcome of one issued collective, shared by the caller's work handle and whoever completes
// it (the communication thread, or a stream engine's Completion).
struct WorkState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;         // under mu
  tsr_code_t code = TSR_OK;  // under mu; valid once done
  std::string message;
  std::unique_ptr<Completion> completion;  // stream engines: asked until it reports done

  void finish(tsr_code_t c, std::string m);
  // Waits up to timeout_seconds (< 0: for ever); true once done.
  bool wait(double timeout_seconds);
  bool query();
};

// The communication thread of a group whose engine blocks on other processes: runs the group's
// collectives one after another in call order, each completing its WorkState. The arguments are
// copied when queued (the tensors stay borrowed: the caller keeps them alive until the work
// completes, as the ABI says). Destroying it drains the queue and joins the thread.
class Worker {
 public:
  explicit Worker(Engine* engine);
  ~Worker();
  std::shared_ptr<WorkState> enqueue(const tsr_collective_args_t& args);

 private:
  struct Job;
  void loop();
  Engine* engine_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> queue_;  // under mu_
  bool stop_ = false;                       // under mu_
  std::thread thread_;
};

}  // namespace fabric

struct tsr_comm_group_s {
  std::atomic<int> refs{1};
  tsr_runtime_t* runtime = nullptr;
  std::vector<tsr_device_t> members;  // this process's members, in rank order
  int32_t world_size = 0, rank = 0;
  double timeout_seconds = 300;
  std::unique_ptr<fabric::Engine> engine;
  std::unique_ptr<fabric::Worker> worker;  // worker-mode engines; destroyed (drained) before the engine

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

struct tsr_comm_work_s {
  tsr_comm_group_s* group = nullptr;  // a reference, so the group outlives its work
  std::shared_ptr<fabric::WorkState> state;
  ~tsr_comm_work_s() {
    if (group) group->release();
  }
};

namespace fabric {

// The engine for members that are all devices of one process whose memory the host reads (the
// cpu device type, TESSERA_CPU_DEVICES=N): each collective is plain loops over the members'
// memory, complete when run() returns.
std::unique_ptr<Engine> make_inprocess_engine(tsr_comm_group_s* group);
// The engine for the devices of one process built from device copies and the devices' own
// kernels (ring.cpp): the fallback for cuda devices when NCCL cannot be loaded (peer copies), and
// engine "ring" on any device type.
std::unique_ptr<Engine> make_ring_engine(tsr_comm_group_s* group);
// The engine for one cpu device per process across processes: Gloo over TCP, the processes
// meeting at `rendezvous` ("file:///dir" or "tcp://host:port") under key prefix `prefix`
// (gloo/gloo_engine.cpp, loaded by gloo_proxy.cpp).
std::unique_ptr<Engine> make_gloo_engine(tsr_comm_group_s* group, const std::string& rendezvous,
                                         const std::string& prefix);
// The engine for members that are all cuda devices: NCCL, in one process (rendezvous "":
// ncclCommInitAll) or across processes (the unique id handed out at `rendezvous` under key
// `prefix`) (nccl/nccl_engine.cpp, loaded by nccl_proxy.cpp).
std::unique_ptr<Engine> make_nccl_engine(tsr_comm_group_s* group, const std::string& rendezvous,
                                         const std::string& prefix);
bool is_nccl_engine(const Engine* e);
// Whether tessera_fabric_nccl.so (and so NCCL and the CUDA runtime) loads.
bool nccl_engine_available();
// For group_split of an NCCL group (ncclCommSplit, which every process of the parent calls):
// the subgroup's engine, or nullptr when `group` is NULL (none of this process's members).
std::unique_ptr<Engine> nccl_split(Engine* parent, tsr_comm_group_s* group, const int32_t* ranks, int32_t n);
// For group_split of a Gloo group: the subgroup's store prefix (every member of the parent
// calls this once per split, so the prefixes agree) and the rendezvous; "" for other engines.
std::string gloo_split_prefix(Engine* parent, std::string* rendezvous);

// The engine for one cpu device per process in a job an MPI launcher started (mpirun): MPI on
// a duplicate of MPI_COMM_WORLD, or of `comm` (a subgroup's, from mpi_split) when given
// (mpi/mpi_engine.cpp, loaded by mpi_proxy.cpp). UNIMPLEMENTED when built without MPI.
using MpiComm = std::shared_ptr<void>;  // an MPI communicator, freed with its last reference
std::unique_ptr<Engine> make_mpi_engine(tsr_comm_group_s* group, const MpiComm& comm);
// For group_split: false when `parent` is not an MPI group. Else splits its communicator
// (collective over the parent: every process calls it, listed or not); *comm is the subgroup's,
// or null where none of this process's members is listed.
bool mpi_split(Engine* parent, const int32_t* ranks, int32_t n, MpiComm* comm);
// Whether an MPI launcher started this process (OMPI_COMM_WORLD_SIZE or PMIX_RANK is set).
bool started_by_mpi_launcher();

// The directory of a "file:///dir" rendezvous, which must exist (UNAVAILABLE naming it
// otherwise): every process of the group meets there.
std::string file_rendezvous_dir(const std::string& url);

// "[3, 4]" and "float32 [3, 4]" for messages.
std::string shape_str(const tsr_tensor_t* t);
std::string tensor_desc(const tsr_tensor_t* t);

// "cpu:1" for messages.
std::string device_str(tsr_runtime_t* rt, tsr_device_t d);
const char* kind_name(tsr_collective_kind_t kind);

}  // namespace fabric
