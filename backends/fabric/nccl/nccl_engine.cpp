// The NCCL engine: collectives over cuda devices, in one process (several GPUs, one
// communicator each, ncclCommInitAll) or across processes (one or more GPUs each, the unique id
// handed out through the rendezvous). NCCL does the communication; this file checks arguments,
// maps dtypes and reduce ops, enqueues the calls and says when they have run.
//
// Streams: a collective is enqueued on each member device's current stream (the thread's, from
// the core: stream_get_current), one NCCL call per member inside ncclGroupStart/End, so that
// it is ordered after the kernels that produced its tensors and before those that read the
// results, with no host synchronization. A CUDA event recorded on each stream afterwards tells
// a work handle when it has run. Nothing in a collective allocates or synchronizes (unless
// TESSERA_DISTRIBUTED_DEBUG checks are on), so it can be captured into a CUDA graph: under capture
// no event is recorded (the graph's replays complete like any kernel on their stream).
//
// Semantics, where NCCL decides them (docs/distributed.md):
//   - AVG is ncclAvg: floats multiply by 1/n (f16/bf16 in their own precision); integers sum
//     then divide, truncating toward zero (NCCL's FuncSumPostDiv), as the ABI says.
//   - bool reduces as uint8: SUM, AVG and MAX with ncclMax ("or"), MIN and PROD with ncclMin
//     ("and"), which holds for tensors of 0 and 1.
//   - MAX and MIN of floats use fmaxf/fminf: a NaN loses against a number (the other engines
//     propagate NaN). PyTorch's NCCL backend behaves the same.
//   - int16 has no NCCL type: broadcast, all_gather, all_to_all and send/recv move it as bytes;
//     reductions over it are UNIMPLEMENTED.
// Built as its own library (tessera_fabric_nccl.so in the plugins' fabric/ subdirectory),
// opened by the plugin on the first GPU group (nccl_proxy.cpp); its boundary is C (nccl_entry.h).
#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "../args.hpp"
#include "../group.hpp"
#include "../process_args.hpp"
#include "comms.hpp"
#include "nccl_entry.h"
#include "tessera/dtype.hpp"

namespace fabric {
namespace {

const tsr_api_t* g_api = nullptr;

// TESSERA_DISTRIBUTED_DEBUG=1 (or DETAIL): before each collective across processes the ranks
// all-gather their arguments (../process_args.hpp) and wait for it on the host, so that mismatched
// shapes are INVALID_ARGUMENT naming both ranks instead of undefined behaviour in NCCL.
bool debug_checks() {
  const char* v = std::getenv("TESSERA_DISTRIBUTED_DEBUG");
  return v && (std::strcmp(v, "1") == 0 || strcasecmp(v, "detail") == 0);
}

// An NCCL datatype for a dtype and the element count multiplier (int16 moves as 2 bytes).
struct NcclType {
  ncclDataType_t type;
  int64_t scale;
};

NcclType nccl_type(int32_t dtype, bool reducing, const char* what) {
  switch (dtype) {
    case TSR_F32:
      return {ncclFloat32, 1};
    case TSR_F64:
      return {ncclFloat64, 1};
    case TSR_F16:
      return {ncclFloat16, 1};
    case TSR_BF16:
      return {ncclBfloat16, 1};
    case TSR_I32:
      return {ncclInt32, 1};
    case TSR_I64:
      return {ncclInt64, 1};
    case TSR_I8:
      return {ncclInt8, 1};
    case TSR_U8:
    case TSR_BOOL:
      return {ncclUint8, 1};
    default:
      break;
  }
  if (reducing)
    fail(TSR_UNIMPLEMENTED, std::string(what) + ": the nccl engine cannot reduce " + tsr::dtype_name(dtype) +
                                " (NCCL has no such type; convert to int32 or float32 first)");
  return {ncclInt8, static_cast<int64_t>(tsr::itemsize(dtype))};  // moved as bytes
}

ncclRedOp_t nccl_op(tsr_reduce_op_t op, int32_t dtype) {
  if (dtype == TSR_BOOL) return (op == TSR_REDUCE_MIN || op == TSR_REDUCE_PROD) ? ncclMin : ncclMax;
  switch (op) {
    case TSR_REDUCE_AVG:
      return ncclAvg;
    case TSR_REDUCE_MAX:
      return ncclMax;
    case TSR_REDUCE_MIN:
      return ncclMin;
    case TSR_REDUCE_PROD:
      return ncclProd;
    default:
      return ncclSum;
  }
}

// Tells when one collective has run on every member's stream (an event per member).
class StreamCompletion {
 public:
  StreamCompletion(std::shared_ptr<Comms> comms, std::vector<cudaEvent_t> events, std::string what)
      : comms_(std::move(comms)), events_(std::move(events)), what_(std::move(what)), issued_(Clock::now()) {}
  ~StreamCompletion() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);  // fine while pending: CUDA frees it later
  }
  StreamCompletion(const StreamCompletion&) = delete;
  StreamCompletion& operator=(const StreamCompletion&) = delete;

  // True once every event has completed. An NCCL error (a dead peer) aborts the group and
  // throws; so does a collective still pending after the group's timeout (the peers never
  // came: NCCL would wait for ever), with DEADLINE_EXCEEDED.
  bool query() {
    std::lock_guard<std::mutex> lock(comms_->mu);
    if (!comms_->broken.empty())
      fail(TSR_UNAVAILABLE, what_ + ": the group failed while the collective was pending: " + comms_->broken);
    bool done = true;
    for (size_t i = 0; i < events_.size(); ++i) {
      const cudaError_t e = cudaEventQuery(events_[i]);
      if (e == cudaErrorNotReady) {
        done = false;
        break;
      }
      if (e != cudaSuccess)
        fail(TSR_INTERNAL, what_ + ": the device failed on " + comms_->member(i) + ": " + cuda_str(e));
    }
    if (done) return true;
    comms_->check_locked(what_);
    if (Clock::now() - issued_ > std::chrono::duration<double>(comms_->timeout_s)) {
      const std::string m = what_ + ": not complete after the group's timeout (" + std::to_string(comms_->timeout_s) +
                            " s); the communicators were aborted (did a rank exit, or not make the same call?)";
      comms_->abort_locked(m);
      fail(TSR_DEADLINE_EXCEEDED, m);
    }
    return false;
  }

  bool wait(double timeout_s) {
    const auto start = Clock::now();
    auto pause = std::chrono::microseconds(10);
    for (;;) {
      if (query()) return true;
      if (timeout_s >= 0 && Clock::now() - start >= std::chrono::duration<double>(timeout_s)) return false;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }

 private:
  std::shared_ptr<Comms> comms_;
  std::vector<cudaEvent_t> events_;
  std::string what_;
  Clock::time_point issued_;
};

class NcclEngine {
 public:
  NcclEngine(tsr_comm_group_s* g, std::shared_ptr<Comms> comms) : g_(g), c_(std::move(comms)) {}

  Comms& comms() { return *c_; }

  // Enqueues one collective; a completion, or nullptr under graph capture.
  std::unique_ptr<StreamCompletion> run(const tsr_collective_args_t& a) {
    const char* what = kind_name(a.kind);
    const size_t n = g_->members.size();
    const int32_t world = g_->world_size;
    // Arguments first: nothing is enqueued unless all of them are right.
    std::vector<View> in, out;
    bool reducing = false;
    if (a.kind == TSR_COLLECTIVE_BARRIER) {
    } else if (a.kind == TSR_COLLECTIVE_SEND || a.kind == TSR_COLLECTIVE_RECV) {
      const bool sending = a.kind == TSR_COLLECTIVE_SEND;
      if (n != 1)
        fail(TSR_UNIMPLEMENTED, std::string(what) + ": point to point needs one member per process (this process has " +
                                    std::to_string(n) + "; copy between its own GPUs with .to(device))");
      if (a.num_tensors != 1)
        fail(TSR_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(a.num_tensors) +
                                       " tensors for a process with 1 member of the group");
      if (a.root < 0 || a.root >= world || a.root == g_->rank)
        fail(TSR_INVALID_ARGUMENT, std::string(what) + ": peer " + std::to_string(a.root) +
                                       " is not another rank of a group of " + std::to_string(world));
      (sending ? in : out) =
          member_views(*g_, sending ? a.inputs : a.outputs, sending ? "input" : "output", what, true);
    } else {
      Checked c = check_collective(*g_, a);
      in = std::move(c.in);
      out = std::move(c.out);
      reducing = a.kind == TSR_COLLECTIVE_ALL_REDUCE || a.kind == TSR_COLLECTIVE_REDUCE ||
                 a.kind == TSR_COLLECTIVE_REDUCE_SCATTER;
    }
    const std::vector<View>& main = in.empty() ? out : in;
    const int32_t dtype = main.empty() ? TSR_F32 : main[0].dtype;
    const NcclType nt = main.empty() ? NcclType{ncclFloat32, 1} : nccl_type(dtype, reducing, what);
    const ncclRedOp_t op = reducing ? nccl_op(a.op, dtype) : ncclSum;
    const int64_t k_in = in.empty() ? 0 : in[0].numel, k_out = out.empty() ? 0 : out[0].numel;

    // The members' current streams, and whether they are being captured into a graph.
    const tsr_api_t* api = fabric::api();
    std::vector<cudaStream_t> streams(n);
    bool capturing = false;
    for (size_t i = 0; i < n; ++i) {
      tsr_stream_t* s = nullptr;
      if (tsr_status_t st = api->stream_get_current(g_->runtime, g_->members[i], &s)) {
        Failure f{api->status_code(st), std::string(what) + ": " + api->status_message(st)};
        api->status_free(st);
        throw f;
      }
      streams[i] = reinterpret_cast<cudaStream_t>(s);  // the cuda backend's handles are cudaStream_t
      cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
      cuda_ok(cudaStreamIsCapturing(streams[i], &cs), std::string(what) + ": cudaStreamIsCapturing");
      capturing = capturing || cs == cudaStreamCaptureStatusActive;
    }

    std::lock_guard<std::mutex> lock(c_->mu);
    c_->check_locked(what);
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c_->timeout_s));
    DeviceGuard guard;
    const bool p2p = a.kind == TSR_COLLECTIVE_SEND || a.kind == TSR_COLLECTIVE_RECV;
    if (debug_checks() && world > static_cast<int32_t>(n) && !p2p) {
      if (capturing)
        fail(TSR_FAILED_PRECONDITION, std::string(what) +
                                          ": TESSERA_DISTRIBUTED_DEBUG checks wait for the other ranks on the host, "
                                          "which a stream being captured into a CUDA graph cannot do (unset it)");
      agree(a, main.empty() ? nullptr : main[0].t, dtype, k_in, k_out, streams, deadline, guard);
    }

    ncclResult_t first = ncclSuccess;
    auto call = [&](ncclResult_t r) {
      if (r != ncclSuccess && r != ncclInProgress && first == ncclSuccess) first = r;
    };
    const size_t isz = main.empty() ? 0 : tsr::itemsize(dtype);
    ncclGroupStart();
    for (size_t i = 0; i < n; ++i) {
      guard.set(c_->devices[i]);
      ncclComm_t comm = c_->comms[i];
      cudaStream_t s = streams[i];
      switch (a.kind) {
        case TSR_COLLECTIVE_ALL_REDUCE:
          if (k_in) call(ncclAllReduce(in[i].data, in[i].data, count(k_in, nt), nt.type, op, comm, s));
          break;
        case TSR_COLLECTIVE_REDUCE:  // in place on the root; the others' recvbuff is not written
          if (k_in) call(ncclReduce(in[i].data, in[i].data, count(k_in, nt), nt.type, op, a.root, comm, s));
          break;
        case TSR_COLLECTIVE_BROADCAST:
          if (k_in) call(ncclBroadcast(in[i].data, in[i].data, count(k_in, nt), nt.type, a.root, comm, s));
          break;
        case TSR_COLLECTIVE_ALL_GATHER:
          if (k_in) call(ncclAllGather(in[i].data, out[i].data, count(k_in, nt), nt.type, comm, s));
          break;
        case TSR_COLLECTIVE_REDUCE_SCATTER:
          if (k_out) call(ncclReduceScatter(in[i].data, out[i].data, count(k_out, nt), nt.type, op, comm, s));
          break;
        case TSR_COLLECTIVE_ALL_TO_ALL: {
          const int64_t slice = k_in / world;
          if (!slice) break;
          const size_t bytes = static_cast<size_t>(slice) * isz;
          for (int32_t j = 0; j < world; ++j) {  // slice j goes to rank j; rank j's slice for us lands in slot j
            call(ncclSend(in[i].data + static_cast<size_t>(j) * bytes, count(slice, nt), nt.type, j, comm, s));
            call(ncclRecv(out[i].data + static_cast<size_t>(j) * bytes, count(slice, nt), nt.type, j, comm, s));
          }
          break;
        }
        case TSR_COLLECTIVE_SEND:
          if (k_in) call(ncclSend(in[i].data, count(k_in, nt), nt.type, a.root, comm, s));
          break;
        case TSR_COLLECTIVE_RECV:
          if (k_out) call(ncclRecv(out[i].data, count(k_out, nt), nt.type, a.root, comm, s));
          break;
        case TSR_COLLECTIVE_BARRIER:  // a one-float all-reduce: done on a stream once every rank got there
          call(ncclAllReduce(c_->scratch[i], c_->scratch[i], 1, ncclFloat32, ncclSum, comm, s));
          break;
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    if (first == ncclSuccess && end != ncclSuccess && end != ncclInProgress) first = end;
    if (first != ncclSuccess) {
      // Every argument NCCL could refuse was checked above: an error here is NCCL's own or a
      // peer's, after which the communicators are not to be trusted.
      const std::string m =
          std::string(what) + ": NCCL failed to enqueue on rank " + std::to_string(g_->rank) + ": " + nccl_str(first);
      c_->abort_locked(m);
      fail(code_of(first), m);
    }
    c_->settle_locked(what, deadline);  // non-blocking communicators: until NCCL has enqueued
    if (capturing) return nullptr;
    std::vector<cudaEvent_t> events;
    try {
      for (size_t i = 0; i < n; ++i) {
        guard.set(c_->devices[i]);
        cudaEvent_t e = nullptr;
        cuda_ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), std::string(what) + ": cudaEventCreate");
        events.push_back(e);
        cuda_ok(cudaEventRecord(e, streams[i]), std::string(what) + ": cudaEventRecord");
      }
    } catch (...) {
      for (cudaEvent_t e : events) cudaEventDestroy(e);
      throw;
    }
    return std::make_unique<StreamCompletion>(c_, std::move(events), what);
  }

 private:
  static size_t count(int64_t elements, const NcclType& nt) { return static_cast<size_t>(elements * nt.scale); }

  // TESSERA_DISTRIBUTED_DEBUG: every rank all-gathers every rank's header over NCCL (on the
  // current streams, after the work already there) and compares them on the host. mu held.
  void agree(const tsr_collective_args_t& a, tsr_tensor_t* t, int32_t dtype, int64_t k_in, int64_t k_out,
             const std::vector<cudaStream_t>& streams, Clock::time_point deadline, DeviceGuard& guard) {
    const size_t n = c_->comms.size();
    const int32_t world = g_->world_size;
    const std::vector<int64_t> mine = make_header(a, t, dtype, k_in, k_out);
    const size_t bytes = sizeof(int64_t) * kHeader * static_cast<size_t>(world);
    std::vector<int64_t*> bufs(n, nullptr);
    std::vector<int64_t> all(static_cast<size_t>(kHeader * world));
    struct Free {  // the buffers go whatever happens
      std::vector<int64_t*>& b;
      const std::vector<int>& d;
      ~Free() {
        for (size_t i = 0; i < b.size(); ++i)
          if (b[i] && cudaSetDevice(d[i]) == cudaSuccess) cudaFree(b[i]);
      }
    } free_bufs{bufs, c_->devices};
    for (size_t i = 0; i < n; ++i) {
      guard.set(c_->devices[i]);
      cuda_ok(cudaMalloc(reinterpret_cast<void**>(&bufs[i]), bytes), "debug header check: cudaMalloc");
      int64_t* slot = bufs[i] + static_cast<size_t>(g_->rank + static_cast<int32_t>(i)) * kHeader;
      cuda_ok(cudaMemcpyAsync(slot, mine.data(), sizeof(int64_t) * kHeader, cudaMemcpyHostToDevice, streams[i]),
              "debug header check: cudaMemcpyAsync");
    }
    ncclGroupStart();
    ncclResult_t first = ncclSuccess;
    for (size_t i = 0; i < n; ++i) {
      guard.set(c_->devices[i]);
      int64_t* slot = bufs[i] + static_cast<size_t>(g_->rank + static_cast<int32_t>(i)) * kHeader;
      const ncclResult_t r = ncclAllGather(slot, bufs[i], kHeader, ncclInt64, c_->comms[i], streams[i]);
      if (r != ncclSuccess && r != ncclInProgress && first == ncclSuccess) first = r;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (first == ncclSuccess && end != ncclSuccess && end != ncclInProgress) first = end;
    if (first != ncclSuccess) {
      const std::string m = "debug header check: NCCL failed: " + nccl_str(first);
      c_->abort_locked(m);
      fail(code_of(first), m);
    }
    c_->settle_locked(std::string(kind_name(a.kind)) + " (debug header check)", deadline);
    guard.set(c_->devices[0]);
    cuda_ok(cudaMemcpyAsync(all.data(), bufs[0], bytes, cudaMemcpyDeviceToHost, streams[0]),
            "debug header check: cudaMemcpyAsync");
    // Poll rather than synchronize, so that a rank that never comes ends in the timeout.
    for (;;) {
      const cudaError_t q = cudaStreamQuery(streams[0]);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) cuda_ok(q, "debug header check: cudaStreamQuery");
      c_->check_locked(kind_name(a.kind));
      if (Clock::now() > deadline) {
        const std::string m = std::string(kind_name(a.kind)) +
                              " (debug header check): the other ranks did not "
                              "arrive within the group's timeout";
        c_->abort_locked(m);
        fail(TSR_DEADLINE_EXCEEDED, m);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (size_t i = 1; i < n; ++i) {  // the other local members' copies are done too before freeing
      guard.set(c_->devices[i]);
      cuda_ok(cudaStreamSynchronize(streams[i]), "debug header check: cudaStreamSynchronize");
    }
    check_headers(a, all.data(), world, k_in, k_out);
  }

  tsr_comm_group_s* g_;
  std::shared_ptr<Comms> c_;
};

}  // namespace

const tsr_api_t* api() { return g_api; }

}  // namespace fabric

extern "C" {

TSR_FABRIC_NCCL_EXPORT tsr_status_t tsr_fabric_nccl_create(const tsr_api_t* api, tsr_comm_group_s* group,
                                                           const char* rendezvous, const char* prefix, void** out) {
  fabric::g_api = api;
  return fabric::guarded("fabric nccl engine: group_create", [&] {
    *out =
        new fabric::NcclEngine(group, fabric::create_comms(group, rendezvous ? rendezvous : "", prefix ? prefix : ""));
  });
}

TSR_FABRIC_NCCL_EXPORT tsr_status_t tsr_fabric_nccl_split(void* parent, tsr_comm_group_s* group, const int32_t* ranks,
                                                          int32_t num_ranks, void** out) {
  *out = nullptr;
  return fabric::guarded("fabric nccl engine: group_split", [&] {
    auto* p = static_cast<fabric::NcclEngine*>(parent);
    std::shared_ptr<fabric::Comms> c = fabric::split_comms(p->comms(), ranks, num_ranks);
    if (c && group) *out = new fabric::NcclEngine(group, std::move(c));
  });
}

TSR_FABRIC_NCCL_EXPORT tsr_status_t tsr_fabric_nccl_run(void* engine, const tsr_collective_args_t* args,
                                                        void** completion) {
  *completion = nullptr;
  return fabric::guarded(std::string("fabric nccl engine: ") + fabric::kind_name(args->kind),
                         [&] { *completion = static_cast<fabric::NcclEngine*>(engine)->run(*args).release(); });
}

TSR_FABRIC_NCCL_EXPORT tsr_status_t tsr_fabric_nccl_query(void* completion, int32_t* done) {
  return fabric::guarded("fabric nccl engine: work_query",
                         [&] { *done = static_cast<fabric::StreamCompletion*>(completion)->query(); });
}

TSR_FABRIC_NCCL_EXPORT tsr_status_t tsr_fabric_nccl_wait(void* completion, double timeout_seconds, int32_t* done) {
  return fabric::guarded("fabric nccl engine: work_wait",
                         [&] { *done = static_cast<fabric::StreamCompletion*>(completion)->wait(timeout_seconds); });
}

TSR_FABRIC_NCCL_EXPORT void tsr_fabric_nccl_release(void* completion) {
  delete static_cast<fabric::StreamCompletion*>(completion);
}

TSR_FABRIC_NCCL_EXPORT void tsr_fabric_nccl_destroy(void* engine) { delete static_cast<fabric::NcclEngine*>(engine); }

}  // extern "C"
