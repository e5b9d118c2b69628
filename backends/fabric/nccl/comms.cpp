// NCCL communicators: creation, settling of non-blocking calls, errors, abort and destruction.
// See comms.hpp.
#include "comms.hpp"

#include <algorithm>
#include <thread>

#include "unique_id.hpp"

namespace fabric {

std::string cuda_str(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

void cuda_ok(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  fail(e == cudaErrorMemoryAllocation ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL, what + " failed: " + cuda_str(e));
}

std::string nccl_str(ncclResult_t r) {
  std::string s = ncclGetErrorString(r);
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) s += std::string(" (") + last + ")";
  return s;
}

tsr_code_t code_of(ncclResult_t r) {
  switch (r) {
    case ncclRemoteError:
    case ncclSystemError:
      return TSR_UNAVAILABLE;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return TSR_INVALID_ARGUMENT;
    default:
      return TSR_INTERNAL;
  }
}

std::string Comms::member(size_t i) const {
  return "rank " + std::to_string(rank + static_cast<int32_t>(i)) + " (cuda:" + std::to_string(devices[i]) + ")";
}

void Comms::abort_locked(const std::string& why) {
  if (broken.empty()) broken = why.empty() ? "aborted" : why;
  for (ncclComm_t& c : comms)
    if (c) {
      ncclCommAbort(c);  // frees it, and stops what it has in flight on the device
      c = nullptr;
    }
}

void Comms::settle_locked(const std::string& what, Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(20);
  for (size_t i = 0; i < comms.size(); ++i) {
    if (!comms[i]) continue;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(comms[i], &state);
      if (r != ncclSuccess) state = r;
      if (state == ncclSuccess) break;
      if (state != ncclInProgress) {
        const std::string m = what + ": NCCL failed on " + member(i) + " of " + std::to_string(world) + ": " +
                              nccl_str(state);
        abort_locked(m);
        fail(code_of(state), m);
      }
      if (Clock::now() > deadline) {
        const std::string m = what + ": " + member(i) + " of " + std::to_string(world) +
                              " waited the group's timeout (" + std::to_string(timeout_s) +
                              " s) for the other ranks (did a rank exit, or not make the same call?)";
        abort_locked(m);
        fail(TSR_DEADLINE_EXCEEDED, m);
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

void Comms::check_locked(const std::string& what) {
  if (!broken.empty())
    fail(TSR_FAILED_PRECONDITION, what + ": the group failed earlier and cannot be used: " + broken);
  for (size_t i = 0; i < comms.size(); ++i) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comms[i], &state);
    if (r != ncclSuccess) state = r;
    if (state != ncclSuccess && state != ncclInProgress) {
      const std::string m = what + ": NCCL reports an error on " + member(i) + " of " + std::to_string(world) +
                            " (did a rank exit or crash?): " + nccl_str(state);
      abort_locked(m);
      fail(code_of(state), m);
    }
  }
}

void Comms::allocate_scratch() {
  DeviceGuard guard;
  for (size_t i = 0; i < devices.size(); ++i) {
    guard.set(devices[i]);
    float* p = nullptr;
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p), sizeof(float)), "group_create: cudaMalloc on " + member(i));
    scratch.push_back(p);
    cuda_ok(cudaMemset(p, 0, sizeof(float)), "group_create: cudaMemset on " + member(i));
  }
}

Comms::~Comms() {
  DeviceGuard guard;
  std::lock_guard<std::mutex> lock(mu);
  if (broken.empty() && !comms.empty()) {
    try {
      // Finalize flushes what is in flight; grouped, the members finalize together (one
      // thread cannot finalize a member whose peers, here too, have not started).
      ncclGroupStart();
      for (ncclComm_t c : comms) ncclCommFinalize(c);
      const ncclResult_t r = ncclGroupEnd();
      if (r != ncclSuccess && r != ncclInProgress)
        abort_locked("group_release: ncclCommFinalize failed: " + nccl_str(r));
      else
        settle_locked("group_release", Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                          std::chrono::duration<double>(timeout_s)));
    } catch (const Failure&) {
      // settle_locked aborted the communicators; nothing is left to destroy.
    }
    for (ncclComm_t& c : comms)
      if (c) {
        ncclCommDestroy(c);
        c = nullptr;
      }
  }
  for (size_t i = 0; i < scratch.size(); ++i) {
    if (cudaSetDevice(devices[i]) == cudaSuccess) cudaFree(scratch[i]);
  }
}

std::shared_ptr<Comms> create_comms(tsr_comm_group_s* g, const std::string& rendezvous, const std::string& key) {
  auto c = std::make_shared<Comms>();
  c->rank = g->rank;
  c->world = g->world_size;
  c->timeout_s = g->timeout_seconds;
  int visible = 0;
  const cudaError_t ce = cudaGetDeviceCount(&visible);
  if (ce != cudaSuccess)
    fail(TSR_UNAVAILABLE, "group_create: the nccl engine cannot use the GPUs: cudaGetDeviceCount failed: " +
                              cuda_str(ce));
  std::string names;
  for (const tsr_device_t& d : g->members) {
    if (d.index >= visible)
      fail(TSR_INVALID_ARGUMENT, "group_create: " + device_str(g->runtime, d) + " is not among the " +
                                     std::to_string(visible) + " GPUs the CUDA runtime sees");
    c->devices.push_back(d.index);
    names += (names.empty() ? "" : ", ") + device_str(g->runtime, d);
  }
  const size_t n = c->devices.size();
  c->comms.assign(n, nullptr);
  DeviceGuard guard;
  std::lock_guard<std::mutex> lock(c->mu);
  if (rendezvous.empty()) {
    // Every member is here: one call makes them all (blocking communicators).
    const ncclResult_t r = ncclCommInitAll(c->comms.data(), static_cast<int>(n), c->devices.data());
    if (r != ncclSuccess) {
      c->comms.assign(n, nullptr);
      fail(r == ncclInvalidArgument || r == ncclInvalidUsage ? TSR_INVALID_ARGUMENT : TSR_UNAVAILABLE,
           "group_create: ncclCommInitAll over " + names + " failed: " + nccl_str(r));
    }
  } else {
    ncclUniqueId id{};
    if (g->rank == 0) {
      const ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) fail(TSR_UNAVAILABLE, "group_create: ncclGetUniqueId failed on rank 0: " + nccl_str(r));
    }
    std::vector<char> bytes(reinterpret_cast<char*>(&id), reinterpret_cast<char*>(&id) + sizeof(id));
    std::shared_ptr<void> keep;  // rank 0's tcp:// server: every rank has the id once init completes
    share_unique_id(rendezvous, key, g->rank == 0, g->timeout_seconds, &bytes, &keep);
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(&id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // so that a rank that never comes cannot hang us: settle_locked times out
    ncclResult_t first = ncclSuccess;
    size_t failed = 0;
    ncclGroupStart();
    for (size_t i = 0; i < n; ++i) {
      guard.set(c->devices[i]);  // NCCL binds a communicator to the current device
      const ncclResult_t r =
          ncclCommInitRankConfig(&c->comms[i], c->world, id, c->rank + static_cast<int>(i), &config);
      if (r != ncclSuccess && r != ncclInProgress && first == ncclSuccess) first = r, failed = i;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (first == ncclSuccess && end != ncclSuccess && end != ncclInProgress) first = end;
    if (first != ncclSuccess) {
      const std::string m = "group_create: NCCL initialization failed on " + c->member(failed) + " of " +
                            std::to_string(c->world) + ": " + nccl_str(first);
      c->abort_locked(m);
      fail(code_of(first) == TSR_INTERNAL ? TSR_UNAVAILABLE : code_of(first), m);
    }
    c->settle_locked("group_create (NCCL initialization at " + rendezvous + ")",
                     Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(g->timeout_seconds)));
  }
  c->allocate_scratch();
  return c;
}

std::shared_ptr<Comms> split_comms(Comms& parent, const int32_t* ranks, int32_t num_ranks) {
  std::lock_guard<std::mutex> lock(parent.mu);
  parent.check_locked("group_split");
  auto c = std::make_shared<Comms>();
  c->world = num_ranks;
  c->timeout_s = parent.timeout_s;
  const size_t n = parent.comms.size();
  std::vector<ncclComm_t> children(n, nullptr);
  std::vector<int> colors(n, NCCL_SPLIT_NOCOLOR), keys(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int32_t r = parent.rank + static_cast<int32_t>(i);
    for (int32_t k = 0; k < num_ranks; ++k)
      if (ranks[k] == r) colors[i] = 0, keys[i] = k;
  }
  DeviceGuard guard;
  ncclResult_t first = ncclSuccess;
  ncclGroupStart();  // every local member splits at once (one thread drives them all)
  for (size_t i = 0; i < n; ++i) {
    guard.set(parent.devices[i]);
    // config NULL: the child inherits the parent's (non-blocking across processes).
    const ncclResult_t r = ncclCommSplit(parent.comms[i], colors[i], keys[i], &children[i], nullptr);
    if (r != ncclSuccess && r != ncclInProgress && first == ncclSuccess) first = r;
  }
  const ncclResult_t end = ncclGroupEnd();
  if (first == ncclSuccess && end != ncclSuccess && end != ncclInProgress) first = end;
  for (size_t i = 0; i < n; ++i)
    if (children[i]) {
      c->comms.push_back(children[i]);
      c->devices.push_back(parent.devices[i]);
      if (c->comms.size() == 1) c->rank = keys[i];
    }
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(parent.timeout_s));
  if (first != ncclSuccess) {
    const std::string m = "group_split: ncclCommSplit failed: " + nccl_str(first);
    std::lock_guard<std::mutex> child_lock(c->mu);
    c->abort_locked(m);
    parent.abort_locked(m);
    fail(code_of(first), m);
  }
  parent.settle_locked("group_split", deadline);
  {
    std::lock_guard<std::mutex> child_lock(c->mu);
    c->settle_locked("group_split", deadline);
  }
  if (c->comms.empty()) return nullptr;
  c->allocate_scratch();
  return c;
}

}  // namespace fabric
