// The MPI engine: one cpu device per process, in a job started by an MPI launcher (mpirun), the
// group's ranks being the ranks of MPI_COMM_WORLD (or of a communicator split from it). MPI
// moves and reduces the data; this file checks arguments, agrees on them across ranks, and
// turns MPI's error codes into statuses.
//
// Built as its own library (tessera_fabric_mpi.so in the plugins' fabric/ subdirectory) that the
// fabric plugin opens on the first MPI group (mpi_proxy.cpp), so that a process that never uses
// MPI never maps libmpi. Its boundary is C (mpi_entry.h): statuses, never exceptions, cross it.
//
// MPI itself: initialized here with MPI_THREAD_MULTIPLE (TESSERA_MPI_THREAD=serialized: at
// MPI_THREAD_SERIALIZED) on the first group unless the program initialized it (then its level is
// used), and finalized at exit only if we initialized it. Every group has its own communication
// thread (worker.cpp), so MPI calls come from several threads: at MPI_THREAD_SERIALIZED one
// process-wide mutex serializes them, and every exchange is a nonblocking operation tested under
// the mutex, never waited for while holding it; below that (FUNNELED, SINGLE) MPI cannot be called
// from our threads at all, and group creation fails saying so.
//
// Each group owns two duplicates of its communicator: one for its collectives, run in call
// order on the group's thread, and one for group_split, called on the user's thread, so that a
// split never races a collective still running on the other (MPI forbids two threads to run
// collectives on one communicator at once). Duplicates also keep user MPI code on
// MPI_COMM_WORLD apart from ours.
//
// Before every collective the ranks all-gather the small header of ../process_args.hpp (as the
// Gloo engine does), so that a rank whose arguments differ is named on every rank and nothing is
// exchanged. After an MPI error the group is broken: later calls fail at once with
// FAILED_PRECONDITION and the first error. MPI has no per-call timeout: a dead rank usually makes
// the launcher end the job; work_wait still gives up after the group's timeout.
#include <dlfcn.h>
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "../group.hpp"
#include "../process_args.hpp"
#include "../reduce_ops.hpp"
#include "mpi_entry.h"
#include "tessera/dtype.hpp"

namespace fabric {
namespace {

// ---- MPI in this process ------------------------------------------------------------------

struct MpiProcess {
  std::mutex init_mu;           // creation of the first group
  bool ready = false;           // under init_mu
  bool we_initialized = false;  // finalize at exit
  int level = MPI_THREAD_SINGLE;
  std::mutex call_mu;  // every MPI call at MPI_THREAD_SERIALIZED
  std::mutex ops_mu;
  std::map<std::pair<int32_t, int>, MPI_Op> ops;  // user-defined ops by (dtype, op), under ops_mu
};

MpiProcess& mpi() {
  static MpiProcess* p = new MpiProcess;  // never destroyed: the atexit handler uses it
  return *p;
}

// Holds the process-wide MPI mutex when the library serializes calls (MPI_THREAD_SERIALIZED).
class MpiCall {
 public:
  MpiCall() {
    if (mpi().level < MPI_THREAD_MULTIPLE) lock_ = std::unique_lock<std::mutex>(mpi().call_mu);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

std::string level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

// Runs one nonblocking MPI operation to completion and returns MPI's code; `start(&request)`
// initiates it. At MPI_THREAD_MULTIPLE: MPI_Wait. At MPI_THREAD_SERIALIZED the process-wide lock
// is held only while starting and while testing, so that the other groups' threads progress
// their own operations meanwhile: holding it through a blocking call would deadlock ranks whose
// groups' threads took it in different orders.
template <class F>
int complete(F&& start) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (mpi().level >= MPI_THREAD_MULTIPLE) {
    const int rc = start(&req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  {
    MpiCall call;
    const int rc = start(&req);
    if (rc != MPI_SUCCESS) return rc;
  }
  for (;;) {
    int done = 0;
    {
      MpiCall call;
      const int rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS || done) return rc;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::string error_string(int rc) {
  char s[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(s, static_cast<size_t>(len));
}

// At exit, when we initialized MPI: our ops freed, then MPI_Finalize (OpenMPI reports a process
// that exits without it as failed).
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MpiCall call;
  {
    std::lock_guard<std::mutex> lock(mpi().ops_mu);
    for (auto& kv : mpi().ops) MPI_Op_free(&kv.second);
    mpi().ops.clear();
  }
  MPI_Finalize();
}

// The plugin opens this library with RTLD_LOCAL, and libmpi with it, but MPI components that
// the library dlopens may use libmpi's symbols without linking it (Open MPI's mca_pml_ob1.so does
// on Debian 12): with libmpi local, such a load fails with "undefined symbol" in some builds, so
// libmpi is made global first, as mpi4py does. (Debian 12's Open MPI, as the tests use it, loads
// fine without; this is for the others.)
void make_libmpi_global() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);  // a reference we never drop
}

// Initializes MPI on the first group unless the program has; checks the thread level.
void ensure_mpi() {
  MpiProcess& p = mpi();
  std::lock_guard<std::mutex> lock(p.init_mu);
  if (p.ready) return;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    fail(TSR_FAILED_PRECONDITION, "group_create: MPI was finalized already (MPI_Finalize ran before this group)");
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    make_libmpi_global();
    // TESSERA_MPI_THREAD=serialized asks for less (for MPI libraries slower at MULTIPLE).
    const char* want = std::getenv("TESSERA_MPI_THREAD");
    const int level = want && std::string(want) == "serialized" ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    if (MPI_Init_thread(nullptr, nullptr, level, &provided) != MPI_SUCCESS)
      fail(TSR_UNAVAILABLE, "group_create: MPI_Init_thread failed");
    p.we_initialized = true;
    std::atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    fail(TSR_UNIMPLEMENTED, "group_create: MPI provides " + level_name(provided) +
                                ", but the mpi engine calls MPI from each group's communication thread and needs "
                                "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (" +
                                (initialized ? "initialize MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE)"
                                             : "this MPI library was built without thread support") +
                                ")");
  p.level = provided;
  p.ready = true;
}

// ---- dtypes and ops -----------------------------------------------------------------------

// The MPI datatype that moves a dtype's elements (f16 and bf16 as 16-bit words: MPI has no such
// types; their reductions are user-defined ops).
MPI_Datatype datatype(int32_t dtype) {
  switch (dtype) {
    case TSR_BOOL:
      return MPI_C_BOOL;
    case TSR_U8:
      return MPI_UINT8_T;
    case TSR_I8:
      return MPI_INT8_T;
    case TSR_I16:
      return MPI_INT16_T;
    case TSR_I32:
      return MPI_INT32_T;
    case TSR_I64:
      return MPI_INT64_T;
    case TSR_F16:
    case TSR_BF16:
      return MPI_UINT16_T;
    case TSR_F32:
      return MPI_FLOAT;
    case TSR_F64:
      return MPI_DOUBLE;
    default:
      fail(TSR_INVALID_ARGUMENT, "mpi engine: dtype " + std::to_string(dtype) + " has no MPI datatype");
  }
}

// MPI's calling convention for reduce_ops.hpp's combine_arrays: inout[j] = in[j] OP inout[j].
template <class T, tsr_reduce_op_t OP>
void user_op(void* in, void* inout, int* len, MPI_Datatype*) {
  combine_arrays<T, OP>(inout, in, inout, static_cast<size_t>(*len));
}

// The op that reduces `dtype` as `op` does (AVG: SUM; the engine divides afterwards). MPI's
// built-in ops where they have the engines' semantics: SUM and PROD of floats; every op of
// integers (Open MPI's and MPICH's loops wrap around in two's complement, as the tensors'
// arithmetic does; the test IntegersWrapAround checks it); LOR and LAND of bools. User-defined ops from reduce_ops.hpp elsewhere: f16 and bf16 (no MPI type),
// and MAX and MIN of floats, which must propagate NaN as torch.maximum does (MPI_MAX need not).
MPI_Op reduce_op(int32_t dtype, tsr_reduce_op_t op) {
  const bool floating = dtype == TSR_F32 || dtype == TSR_F64;
  if (dtype == TSR_BOOL) return op == TSR_REDUCE_MIN || op == TSR_REDUCE_PROD ? MPI_LAND : MPI_LOR;
  if (dtype != TSR_F16 && dtype != TSR_BF16 && !(floating && (op == TSR_REDUCE_MAX || op == TSR_REDUCE_MIN))) {
    switch (op) {
      case TSR_REDUCE_MAX:
        return MPI_MAX;
      case TSR_REDUCE_MIN:
        return MPI_MIN;
      case TSR_REDUCE_PROD:
        return MPI_PROD;
      default:
        return MPI_SUM;
    }
  }
  const tsr_reduce_op_t key = op == TSR_REDUCE_AVG ? TSR_REDUCE_SUM : op;
  std::lock_guard<std::mutex> lock(mpi().ops_mu);
  const std::pair<int32_t, int> id{dtype, static_cast<int>(key)};
  auto it = mpi().ops.find(id);
  if (it != mpi().ops.end()) return it->second;
  MPI_User_function* fn = nullptr;
  tsr::dispatch_all(dtype, "fabric mpi reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_op(key, [&](auto o) { fn = &user_op<T, decltype(o)::value>; });
  });
  MPI_Op created;
  if (MPI_Op_create(fn, /*commute=*/1, &created) != MPI_SUCCESS)
    fail(TSR_INTERNAL, "mpi engine: MPI_Op_create failed for " + std::string(tsr::dtype_name(dtype)));
  mpi().ops.emplace(id, created);
  return created;
}

// ---- the engine ---------------------------------------------------------------------------

class MpiEngine {
 public:
  // On duplicates of `source` (MPI_COMM_WORLD, or a communicator from split()).
  MpiEngine(tsr_comm_group_s* g, MPI_Comm source) : g_(g) {
    ensure_mpi();
    int csize = 0;
    {
      MpiCall call;
      MPI_Comm_size(source, &csize);
    }
    const char* source_name = source == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "the parent's split communicator";
    // Duplicate first (collective over `source`), then agree on what each rank was given, so
    // that a rank with wrong arguments fails every rank instead of leaving them in MPI_Comm_dup.
    MPI_Comm data = MPI_COMM_NULL, control = MPI_COMM_NULL;
    int rc = complete([&](MPI_Request* r) { return MPI_Comm_idup(source, &data, r); });
    if (rc == MPI_SUCCESS) rc = complete([&](MPI_Request* r) { return MPI_Comm_idup(source, &control, r); });
    if (rc != MPI_SUCCESS) {
      MpiCall call;
      free_comm(&data);
      fail(TSR_UNAVAILABLE,
           "group_create: MPI_Comm_dup of " + std::string(source_name) + " failed: " + error_string(rc));
    }
    {
      MpiCall call;
      MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN);
      MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
    }
    const bool cpu = g->members.size() == 1 && g->members[0].type == TSR_DEVICE_TYPE_CPU;
    int mine[3] = {g->rank, g->world_size, cpu ? 1 : 0};
    std::vector<int> all(static_cast<size_t>(3 * csize));
    rc = complete([&](MPI_Request* r) { return MPI_Iallgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, control, r); });
    std::string error;
    if (rc != MPI_SUCCESS) error = "group_create: exchanging the ranks failed: " + error_string(rc);
    for (int r = 0; r < csize && error.empty(); ++r) {
      const int* h = all.data() + 3 * r;
      if (h[0] != r || h[1] != csize)
        error = "group_create: rank " + std::to_string(r) + " of " + source_name + " (size " + std::to_string(csize) +
                ") was given rank " + std::to_string(h[0]) + " of world_size " + std::to_string(h[1]) +
                "; the mpi engine's ranks are MPI's (under mpirun take them from OMPI_COMM_WORLD_RANK and "
                "OMPI_COMM_WORLD_SIZE, as init_process_group does)";
      else if (!h[2])
        error = "group_create: rank " + std::to_string(r) +
                "'s member is not one cpu device (the mpi engine exchanges host memory, one device per process)";
    }
    if (!error.empty()) {
      MpiCall call;
      free_comm(&data);
      free_comm(&control);
      fail(rc != MPI_SUCCESS ? TSR_UNAVAILABLE : TSR_INVALID_ARGUMENT, error);
    }
    comm_ = data;
    control_ = control;
  }

  ~MpiEngine() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;  // MPI_Finalize freed everything (a group released after exit began)
    MpiCall call;
    free_comm(&comm_);
    free_comm(&control_);
  }

  // The communicator of the parent's ranks `ranks`; MPI_COMM_NULL where we are not listed.
  // Collective over the parent (every member calls group_split), on the control communicator.
  MPI_Comm split(const int32_t* ranks, int32_t n) {
    bool listed = false;
    for (int32_t i = 0; i < n; ++i) listed = listed || ranks[i] == g_->rank;
    MpiCall call;
    MPI_Comm sub = MPI_COMM_NULL;
    const int rc = MPI_Comm_split(control_, listed ? 0 : MPI_UNDEFINED, g_->rank, &sub);
    if (rc != MPI_SUCCESS)
      fail(TSR_UNAVAILABLE,
           "group_split: MPI_Comm_split on rank " + std::to_string(g_->rank) + " failed: " + error_string(rc));
    return sub;
  }

  void run(const tsr_collective_args_t& a) {
    const char* what = kind_name(a.kind);
    if (!broken_.empty())
      fail(TSR_FAILED_PRECONDITION, std::string(what) + ": the group failed earlier and cannot be used: " + broken_);
    const ProcessArgs p = ProcessArgs::check(g_, a);
    if (p.peer) return point_to_point(a, p);
    agree(a, p);  // throws INVALID_ARGUMENT on every rank alike
    if (a.kind == TSR_COLLECTIVE_BARRIER) return exchange(what, [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
    if (p.k_in == 0) return;  // every rank agreed on the size
    if (p.k_in > INT_MAX || p.k_out > INT_MAX)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": " + tensor_desc(p.k_in > INT_MAX ? p.in : p.out) +
                                     " has more elements than MPI counts in an int (2^31 - 1); split the tensor");
    const int n = g_->world_size, me = g_->rank;
    const MPI_Datatype type = datatype(p.dtype);
    const int k_in = static_cast<int>(p.k_in), k_out = static_cast<int>(p.k_out);
    // MPI forbids aliased send and receive buffers: an input that overlaps the output (the same
    // tensor passed as both, possible at world size 1) is copied first.
    std::vector<char> copy;
    const char* src = p.pin;
    if (p.out && p.pin < p.pout + static_cast<size_t>(k_out) * p.itemsize &&
        p.pout < p.pin + static_cast<size_t>(k_in) * p.itemsize) {
      copy.assign(p.pin, p.pin + static_cast<size_t>(k_in) * p.itemsize);
      src = copy.data();
    }
    switch (a.kind) {
      case TSR_COLLECTIVE_ALL_REDUCE:
        exchange(what, [&](MPI_Request* r) {
          return MPI_Iallreduce(MPI_IN_PLACE, p.pin, k_in, type, reduce_op(p.dtype, a.op), comm_, r);
        });
        if (a.op == TSR_REDUCE_AVG) divide_dispatch(p.dtype, p.pin, k_in, n);
        return;
      case TSR_COLLECTIVE_REDUCE:  // the others' inputs stay as they were
        exchange(what, [&](MPI_Request* r) {
          return MPI_Ireduce(me == a.root ? MPI_IN_PLACE : p.pin, me == a.root ? p.pin : nullptr, k_in, type,
                             reduce_op(p.dtype, a.op), a.root, comm_, r);
        });
        if (me == a.root && a.op == TSR_REDUCE_AVG) divide_dispatch(p.dtype, p.pin, k_in, n);
        return;
      case TSR_COLLECTIVE_BROADCAST:
        exchange(what, [&](MPI_Request* r) { return MPI_Ibcast(p.pin, k_in, type, a.root, comm_, r); });
        return;
      case TSR_COLLECTIVE_ALL_GATHER:
        exchange(what, [&](MPI_Request* r) { return MPI_Iallgather(src, k_in, type, p.pout, k_in, type, comm_, r); });
        return;
      case TSR_COLLECTIVE_REDUCE_SCATTER:
        exchange(what, [&](MPI_Request* r) {
          return MPI_Ireduce_scatter_block(src, p.pout, k_out, type, reduce_op(p.dtype, a.op), comm_, r);
        });
        if (a.op == TSR_REDUCE_AVG) divide_dispatch(p.dtype, p.pout, k_out, n);
        return;
      case TSR_COLLECTIVE_ALL_TO_ALL:
        exchange(what,
                 [&](MPI_Request* r) { return MPI_Ialltoall(src, k_in / n, type, p.pout, k_in / n, type, comm_, r); });
        return;
      default:
        return;
    }
  }

 private:
  static void free_comm(MPI_Comm* c) {
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    *c = MPI_COMM_NULL;
  }

  // An MPI failure breaks the group (a peer's state is unknown after it).
  void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    const std::string m = error_string(rc);
    broken_ = std::string(what) + " on rank " + std::to_string(g_->rank) + ": " + m;
    fail(TSR_UNAVAILABLE, std::string(what) + ": rank " + std::to_string(g_->rank) + " of " +
                              std::to_string(g_->world_size) + " failed in MPI: " + m);
  }

  // One nonblocking operation, to completion (complete()); an MPI error breaks the group.
  template <class F>
  void exchange(const char* what, F&& start) {
    check(complete(std::forward<F>(start)), what);
  }

  // Every rank all-gathers every rank's header; a difference is the same error on every rank.
  void agree(const tsr_collective_args_t& a, const ProcessArgs& p) {
    const int n = g_->world_size;
    std::vector<int64_t> mine = make_header(a, p), all(static_cast<size_t>(kHeader * n), 0);
    exchange(p.what, [&](MPI_Request* r) {
      return MPI_Iallgather(mine.data(), kHeader, MPI_INT64_T, all.data(), kHeader, MPI_INT64_T, comm_, r);
    });
    check_headers(a, p, all.data(), n);
  }

  // SEND / RECV: MPI keeps the messages of one pair in order, so the k-th send to a peer meets
  // its k-th recv. The sender first sends its header, so that a receiver whose tensor differs
  // says how (and still takes the data off the wire, keeping later pairs in step).
  void point_to_point(const tsr_collective_args_t& a, const ProcessArgs& p) {
    const char* what = p.what;
    const int me = g_->rank, peer = a.root;
    const int64_t k = p.in ? p.k_in : p.k_out;
    if (k > INT_MAX)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": " + tensor_desc(p.in ? p.in : p.out) +
                                     " has more elements than MPI counts in an int (2^31 - 1); split the tensor");
    const MPI_Datatype type = datatype(p.dtype);
    std::vector<int64_t> mine = make_header(a, p);
    char empty = 0;
    if (a.kind == TSR_COLLECTIVE_SEND) {
      exchange(what, [&](MPI_Request* r) { return MPI_Isend(mine.data(), kHeader, MPI_INT64_T, peer, 0, comm_, r); });
      exchange(what, [&](MPI_Request* r) {
        return MPI_Isend(k ? p.pin : &empty, static_cast<int>(k), type, peer, 0, comm_, r);
      });
      return;
    }
    std::vector<int64_t> theirs(kHeader, 0);
    exchange(what, [&](MPI_Request* r) { return MPI_Irecv(theirs.data(), kHeader, MPI_INT64_T, peer, 0, comm_, r); });
    const bool same_dtype = theirs[3] == mine[3];
    const bool same_shape = std::memcmp(theirs.data() + 6, mine.data() + 6, sizeof(int64_t) * (2 + kMaxDims)) == 0;
    if (same_dtype && same_shape) {
      exchange(what, [&](MPI_Request* r) {
        return MPI_Irecv(k ? p.pout : &empty, static_cast<int>(k), type, peer, 0, comm_, r);
      });
      return;
    }
    // Take the sender's data anyway (its count and type), then refuse.
    const int64_t their_k = theirs[4];
    const int32_t their_dtype = static_cast<int32_t>(theirs[3]);
    std::vector<char> discard(static_cast<size_t>(their_k) * static_cast<size_t>(tsr::itemsize(their_dtype)) + 1);
    const MPI_Datatype their_type = datatype(their_dtype);
    exchange(what, [&](MPI_Request* r) {
      return MPI_Irecv(discard.data(), static_cast<int>(their_k), their_type, peer, 0, comm_, r);
    });
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": rank " + std::to_string(peer) + " sent " +
                                   header_desc(theirs.data()) + " but rank " + std::to_string(me) + " receives into " +
                                   header_desc(mine.data()) + (same_dtype ? " (shapes differ)" : " (dtypes differ)"));
  }

  tsr_comm_group_s* g_;
  MPI_Comm comm_ = MPI_COMM_NULL;     // the collectives, on the group's thread
  MPI_Comm control_ = MPI_COMM_NULL;  // group_split, on the user's thread
  std::string broken_;
};

const tsr_api_t* g_api = nullptr;

}  // namespace

const tsr_api_t* api() { return g_api; }

}  // namespace fabric

extern "C" {

TSR_FABRIC_MPI_EXPORT tsr_status_t tsr_fabric_mpi_create(const tsr_api_t* api, tsr_comm_group_s* group, void* comm,
                                                         void** out) {
  fabric::g_api = api;
  return fabric::guarded("fabric mpi engine",
      [&] { *out = new fabric::MpiEngine(group, comm ? *static_cast<MPI_Comm*>(comm) : MPI_COMM_WORLD); });
}

TSR_FABRIC_MPI_EXPORT tsr_status_t tsr_fabric_mpi_run(void* engine, const tsr_collective_args_t* args) {
  return fabric::guarded("fabric mpi engine", [&] { static_cast<fabric::MpiEngine*>(engine)->run(*args); });
}

TSR_FABRIC_MPI_EXPORT tsr_status_t tsr_fabric_mpi_split(void* engine, const int32_t* ranks, int32_t num_ranks,
                                                        void** comm) {
  *comm = nullptr;
  return fabric::guarded("fabric mpi engine", [&] {
    MPI_Comm sub = static_cast<fabric::MpiEngine*>(engine)->split(ranks, num_ranks);
    if (sub != MPI_COMM_NULL) *comm = new MPI_Comm(sub);
  });
}

TSR_FABRIC_MPI_EXPORT void tsr_fabric_mpi_comm_free(void* comm) {
  if (!comm) return;
  auto* c = static_cast<MPI_Comm*>(comm);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    fabric::MpiCall call;
    MPI_Comm_free(c);
  }
  delete c;
}

TSR_FABRIC_MPI_EXPORT void tsr_fabric_mpi_destroy(void* engine) { delete static_cast<fabric::MpiEngine*>(engine); }

}  // extern "C"
