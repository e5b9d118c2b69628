// The NCCL communicators of one group's local members, and everything that touches them: their
// creation (ncclCommInitAll in one process, ncclCommInitRankConfig after the unique id went
// through the rendezvous across processes, ncclCommSplit for subgroups), the wait for NCCL's
// non-blocking calls, the detection of asynchronous errors, abort and destruction.
//
// Shared (shared_ptr) by the engine and the completions of its collectives: a work handle may
// be asked after its group was released. The mutex serializes NCCL calls on the communicators
// between the thread that issues collectives and threads that ask work handles.
//
// Across processes the communicators are non-blocking (ncclConfig_t.blocking = 0), so that an
// initialization or a collective whose peers never come ends with DEADLINE_EXCEEDED after the
// group's timeout, and ncclCommAbort, instead of hanging: every NCCL call is followed by
// settle(), which polls ncclCommGetAsyncError until the call has finished. In one process
// ncclCommInitAll makes blocking communicators (every member is here; nobody can fail to come).
// After an error the communicators are aborted and the group is broken: later calls fail at once
// with FAILED_PRECONDITION and the first error, as the Gloo engine's.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../group.hpp"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "the fabric NCCL engine needs NCCL 2.18 or newer (ncclCommSplit, non-blocking communicators)"
#endif

namespace fabric {

using Clock = std::chrono::steady_clock;

// CUDA's name and text for an error.
std::string cuda_str(cudaError_t e);
// Throws Failure (RESOURCE_EXHAUSTED for out of memory, else INTERNAL) unless e is cudaSuccess.
void cuda_ok(cudaError_t e, const std::string& what);
// NCCL's text for a result, with ncclGetLastError's details when it has some.
std::string nccl_str(ncclResult_t r);
// The status code for an NCCL error: UNAVAILABLE for a peer or the network, INVALID_ARGUMENT
// for misuse, INTERNAL for the rest.
tsr_code_t code_of(ncclResult_t r);

// Restores the calling thread's current CUDA device when it goes out of scope (NCCL calls,
// event records and allocations use the member's device; the caller's must not change).
class DeviceGuard {
 public:
  DeviceGuard() {
    if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
  }
  ~DeviceGuard() {
    if (prev_ >= 0) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  void set(int device) { cuda_ok(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")"); }

 private:
  int prev_ = -1;
};

struct Comms {
  std::vector<ncclComm_t> comms;  // one per local member, in rank order
  std::vector<int> devices;       // the members' CUDA device ordinals
  std::vector<float*> scratch;    // per member: one float on its device, for barrier
  int32_t rank = 0;               // the first local member's rank
  int32_t world = 0;
  double timeout_s = 300;
  std::mutex mu;
  std::string broken;  // under mu: why the communicators were aborted ("" while usable)

  Comms() = default;
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  // Finalizes and destroys the communicators (waiting at most the timeout for work still in
  // flight, then aborting), frees the scratch buffers.
  ~Comms();

  // "rank 2 (cuda:1)" for messages.
  std::string member(size_t i) const;
  // The calls below expect mu held.
  // Aborts every communicator and marks the group broken with `why`.
  void abort_locked(const std::string& why);
  // Waits until NCCL's calls on every communicator have finished (non-blocking communicators
  // answer ncclInProgress until then). On an error, or when `deadline` passes, aborts and
  // throws Failure naming `what`.
  void settle_locked(const std::string& what, Clock::time_point deadline);
  // Throws Failure (and aborts) when a communicator reports an asynchronous error, e.g. a peer
  // that died; FAILED_PRECONDITION when the group is already broken.
  void check_locked(const std::string& what);
  // Allocates the barrier buffers (at creation, never in a collective: capture-safe).
  void allocate_scratch();
};

// The communicators for `g`'s members (every one a cuda device of this process; messages name
// them with the runtime's names). rendezvous "" : one process, ncclCommInitAll. Otherwise rank
// 0 publishes the unique id under `key` (unique_id.hpp) and every process initializes its
// members' ranks together (ncclGroupStart/End), within the group's timeout.
std::shared_ptr<Comms> create_comms(tsr_comm_group_s* g, const std::string& rendezvous, const std::string& key);

// ncclCommSplit of every local member of `parent`: members whose rank is in `ranks` (ascending)
// form the new group, renumbered by their position there; the others take part with
// NCCL_SPLIT_NOCOLOR. nullptr when no local member is listed.
std::shared_ptr<Comms> split_comms(Comms& parent, const int32_t* ranks, int32_t num_ranks);

}  // namespace fabric
