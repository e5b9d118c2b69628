// The Gloo engine: one cpu device per process, the processes meeting through a rendezvous store
// and exchanging over Gloo's TCP transport (Debian's libgloo). Gloo does the communication; this
// file checks arguments, agrees on them across ranks, and maps Gloo's exceptions to statuses.
//
// Built as its own library (tessera_fabric_gloo.so in the plugins' fabric/ subdirectory) that
// the fabric plugin opens on the first multi-process group (gloo_proxy.cpp), so that a process
// that never leaves one machine's devices never maps Gloo and what it links (ibverbs, hiredis).
// Its boundary is C: statuses, never C++ exceptions, cross it.
//
// Before every collective the ranks all-gather a small header (kind, op, root, dtype, shapes;
// ../process_args.hpp, shared with the MPI engine), so that a rank whose tensor differs is named
// on every rank and nothing is exchanged: the cost is one extra small all-gather per call, the
// price of errors that say which rank disagrees.
// After a failure inside Gloo (a peer died, a timeout) the group is broken: later calls fail at
// once with the first error, as an NCCL communicator after an error.
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <map>
#include <mutex>

#include "../group.hpp"
#include "../process_args.hpp"
#include "../reduce_ops.hpp"
#include "gloo_entry.h"
#include "../tcp_store.hpp"

namespace fabric {
namespace {

// Gloo writes to sockets without MSG_NOSIGNAL: when a peer has died, the write raises SIGPIPE,
// whose default action ends the process (a surviving rank would die instead of getting
// UNAVAILABLE). While Gloo runs on a thread we block SIGPIPE there, so the write fails with
// EPIPE, which Gloo reports; a SIGPIPE left pending by it is consumed before the mask is
// restored. Gloo's I/O thread, created under the block, inherits it.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SigpipeBlocked() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&old_, SIGPIPE)) {
      sigset_t s;
      sigemptyset(&s);
      sigaddset(&s, SIGPIPE);
      const timespec zero = {0, 0};
      sigtimedwait(&s, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t old_;
};

// Tessera's tcp:// store (../tcp_store.hpp, shared with the NCCL engine) as Gloo's store.
class GlooTcpStore final : public gloo::rendezvous::Store {
 public:
  GlooTcpStore(const std::string& host, int port, std::chrono::milliseconds timeout) : s_(host, port, timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { s_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return s_.get(key); }
  void wait(const std::vector<std::string>& keys) override { s_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    s_.wait(keys, timeout);
  }

 private:
  TcpStore s_;
};

class GlooEngine {
 public:
  // `rendezvous` is "file:///dir" (one machine) or "tcp://host:port" (rank 0 serves the store).
  GlooEngine(tsr_comm_group_s* g, const std::string& rendezvous, const std::string& prefix)
      : g_(g), rendezvous_(rendezvous), prefix_(prefix) {
    const tsr_device_t& d = g->members[0];
    if (d.type != TSR_DEVICE_TYPE_CPU)
      fail(TSR_UNIMPLEMENTED, "group_create: the gloo engine exchanges host memory, and " + device_str(g->runtime, d) +
                                  " is not a cpu device (GPU groups use the nccl engine)");
    std::string self_host = "127.0.0.1";  // where peers reach this process, unless told otherwise
    std::unique_ptr<gloo::rendezvous::Store> base;
    try {
      if (rendezvous.rfind("file://", 0) == 0) {
        const std::string dir = file_rendezvous_dir(rendezvous);
        base = std::make_unique<gloo::rendezvous::FileStore>(dir);
      } else {
        std::string host;
        int port = 0;
        if (!parse_tcp_url(rendezvous, &host, &port))
          fail(TSR_INVALID_ARGUMENT, "group_create: rendezvous '" + rendezvous + "' is not tcp://host:port");
        // The top-level group's rank 0 serves (once per address and process); subgroups meet
        // through the same server under their own prefix.
        if (g->rank == 0 && prefix.find("/split") == std::string::npos) server_ = serve_rendezvous(rendezvous, host, port);
        base = std::make_unique<GlooTcpStore>(host, port, timeout());
        if (host != "127.0.0.1" && host != "localhost" && host != "::1") {
          char name[256] = {0};
          if (gethostname(name, sizeof(name) - 1) == 0) self_host = name;
        }
      }
    } catch (const Failure&) {
      throw;
    } catch (const std::exception& e) {
      fail(TSR_UNAVAILABLE, "group_create: rank " + std::to_string(g->rank) + " cannot reach the rendezvous " +
                                rendezvous + ": " + e.what());
    }
    try {
      SigpipeBlocked no_sigpipe;  // also for Gloo's I/O thread, created here
      gloo::transport::tcp::attr attr;
      const char* host = std::getenv("TESSERA_FABRIC_HOST");
      attr.hostname = host && *host ? host : self_host;
      dev_ = gloo::transport::tcp::CreateDevice(attr);
      gloo::rendezvous::PrefixStore store(prefix, *base);
      ctx_ = std::make_shared<gloo::rendezvous::Context>(g->rank, g->world_size);
      ctx_->setTimeout(timeout());
      ctx_->connectFullMesh(store, dev_);
    } catch (const std::exception& e) {
      fail(TSR_UNAVAILABLE, "group_create: rank " + std::to_string(g->rank) + " of " + std::to_string(g->world_size) +
                                " could not meet the others at " + rendezvous + " within " +
                                std::to_string(g->timeout_seconds) + " s: " + e.what());
    }
  }

  const std::string& rendezvous() const { return rendezvous_; }
  std::string next_split_prefix() { return prefix_ + "/split" + std::to_string(splits_++); }

  void run(const tsr_collective_args_t& a) {
    const char* what = kind_name(a.kind);
    if (!broken_.empty())
      fail(TSR_FAILED_PRECONDITION, std::string(what) + ": the group failed earlier and cannot be used: " + broken_);
    const ProcessArgs p = ProcessArgs::check(g_, a);
    const int n = g_->world_size, me = g_->rank;
    const int32_t dtype = p.dtype;
    const int64_t k_in = p.k_in, k_out = p.k_out;
    const size_t isz = p.itemsize;
    char* pin = p.pin;
    char* pout = p.pout;
    try {
      SigpipeBlocked no_sigpipe;
      if (p.peer) return point_to_point(a, p.in ? pin : pout, static_cast<size_t>(p.in ? k_in : k_out) * isz);
      agree(a, p);  // throws INVALID_ARGUMENT on every rank alike
      if (k_in == 0 && a.kind != TSR_COLLECTIVE_BARRIER) return;  // every rank agreed on the size
      switch (a.kind) {
        case TSR_COLLECTIVE_ALL_REDUCE:
          all_reduce(dtype, pin, k_in, a.op);
          return;
        case TSR_COLLECTIVE_REDUCE: {
          std::vector<char> scratch(pin, pin + static_cast<size_t>(k_in) * isz);  // only the root's changes
          gloo::ReduceOptions o(ctx_);
          prepare(o, dtype, scratch.data(), k_in, scratch.data(), k_in);
          o.setRoot(a.root);
          o.setReduceFunction(pairwise(dtype, a.op));
          gloo::reduce(o);
          if (me == a.root) {
            if (a.op == TSR_REDUCE_AVG) divide_dispatch(dtype, scratch.data(), k_in, n);
            std::memcpy(pin, scratch.data(), scratch.size());
          }
          return;
        }
        case TSR_COLLECTIVE_BROADCAST: {
          gloo::BroadcastOptions o(ctx_);
          prepare(o, dtype, me == a.root ? pin : nullptr, k_in, pin, k_in);
          o.setRoot(a.root);
          gloo::broadcast(o);
          return;
        }
        case TSR_COLLECTIVE_ALL_GATHER: {
          gloo::AllgatherOptions o(ctx_);
          prepare(o, dtype, pin, k_in, pout, k_out);
          gloo::allgather(o);
          return;
        }
        case TSR_COLLECTIVE_REDUCE_SCATTER: {  // an all_reduce of the whole input, then our slice
          std::vector<char> scratch(pin, pin + static_cast<size_t>(k_in) * isz);
          all_reduce(dtype, scratch.data(), k_in, a.op == TSR_REDUCE_AVG ? TSR_REDUCE_SUM : a.op);
          char* mine = scratch.data() + static_cast<size_t>(me) * static_cast<size_t>(k_out) * isz;
          if (a.op == TSR_REDUCE_AVG) divide_dispatch(dtype, mine, k_out, n);  // only our slice
          std::memcpy(pout, mine, static_cast<size_t>(k_out) * isz);
          return;
        }
        case TSR_COLLECTIVE_ALL_TO_ALL: {
          gloo::AlltoallOptions o(ctx_);
          prepare(o, dtype, pin, k_in, pout, k_out);
          gloo::alltoall(o);
          return;
        }
        case TSR_COLLECTIVE_BARRIER: {
          gloo::BarrierOptions o(ctx_);
          o.setTag(tag_++);
          o.setTimeout(timeout());
          gloo::barrier(o);
          return;
        }
        default:
          return;
      }
    } catch (const gloo::Exception& e) {
      const std::string m = e.what();
      const bool timed_out = m.find("imed out") != std::string::npos || m.find("imeout") != std::string::npos;
      broken_ = std::string(what) + " on rank " + std::to_string(me) + ": " + m;
      fail(timed_out ? TSR_DEADLINE_EXCEEDED : TSR_UNAVAILABLE,
           std::string(what) + ": rank " + std::to_string(me) + " of " + std::to_string(n) + " failed " +
               (timed_out ? "after waiting " + std::to_string(g_->timeout_seconds) + " s for the others"
                          : "to reach a peer (did a rank exit or crash?)") +
               ": " + m);
    }
  }

 private:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(g_->timeout_seconds * 1000));
  }

  // A Gloo options object's buffers (typed: Gloo counts elements by sizeof(T); a null one is
  // left unset), its tag (unique per collective, in call order on every rank) and timeout.
  template <class Opts>
  void prepare(Opts& o, int32_t dtype, char* in, int64_t k_in, char* out, int64_t k_out) {
    tsr::dispatch_all(dtype, "fabric gloo", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (in) o.setInput(reinterpret_cast<T*>(in), static_cast<size_t>(k_in));
      if (out) o.setOutput(reinterpret_cast<T*>(out), static_cast<size_t>(k_out));
    });
    o.setTag(tag_++);
    o.setTimeout(timeout());
  }

  // In place over k elements at p (AVG: the sum, then divided here).
  void all_reduce(int32_t dtype, char* p, int64_t k, tsr_reduce_op_t op) {
    gloo::AllreduceOptions o(ctx_);
    prepare(o, dtype, nullptr, 0, p, k);
    o.setReduceFunction(pairwise(dtype, op));
    gloo::allreduce(o);
    if (op == TSR_REDUCE_AVG) divide_dispatch(dtype, p, k, g_->world_size);
  }

  // Every rank all-gathers every rank's header; a difference is the same error on every rank.
  void agree(const tsr_collective_args_t& a, const ProcessArgs& p) {
    const int n = g_->world_size;
    std::vector<int64_t> mine = make_header(a, p), all(static_cast<size_t>(kHeader * n), 0);
    gloo::AllgatherOptions o(ctx_);
    o.setInput(mine.data(), mine.size());
    o.setOutput(all.data(), all.size());
    o.setTag(tag_++);
    o.setTimeout(timeout());
    gloo::allgather(o);
    check_headers(a, p, all.data(), n);
  }

  // SEND / RECV: the k-th send from A to B meets B's k-th receive from A (slot from the pair and k).
  void point_to_point(const tsr_collective_args_t& a, char* data, size_t nbytes) {
    const int me = g_->rank, peer = a.root;
    const bool sending = a.kind == TSR_COLLECTIVE_SEND;
    const int src = sending ? me : peer, dst = sending ? peer : me;
    uint64_t& count = (sending ? sent_ : received_)[peer];
    const uint64_t slot = (static_cast<uint64_t>(src) << 48) | (static_cast<uint64_t>(dst) << 32) | (count++ & 0xffffffffu);
    std::vector<char> empty(1);
    auto buf = ctx_->createUnboundBuffer(nbytes ? data : empty.data(), nbytes);
    bool ok;
    if (sending) {
      buf->send(peer, slot);
      ok = buf->waitSend(timeout());
    } else {
      buf->recv(peer, slot);
      ok = buf->waitRecv(timeout());
    }
    if (!ok) {
      broken_ = std::string(kind_name(a.kind)) + " timed out";
      fail(TSR_DEADLINE_EXCEEDED, std::string(kind_name(a.kind)) + ": rank " + std::to_string(me) + " waited " +
                                      std::to_string(g_->timeout_seconds) + " s for rank " + std::to_string(peer));
    }
  }

  tsr_comm_group_s* g_;
  std::string rendezvous_, prefix_;
  std::shared_ptr<TcpStoreServer> server_;
  std::shared_ptr<gloo::transport::Device> dev_;
  std::shared_ptr<gloo::rendezvous::Context> ctx_;
  uint32_t tag_ = 1;
  uint64_t splits_ = 0;
  std::map<int, uint64_t> sent_, received_;
  std::string broken_;
};

const tsr_api_t* g_api = nullptr;

}  // namespace

const tsr_api_t* api() { return g_api; }

}  // namespace fabric

extern "C" {

TSR_FABRIC_GLOO_EXPORT tsr_status_t tsr_fabric_gloo_create(const tsr_api_t* api, tsr_comm_group_s* group,
                                                            const char* rendezvous, const char* prefix, void** out) {
  fabric::g_api = api;
  return fabric::guarded("fabric gloo engine", [&] { *out = new fabric::GlooEngine(group, rendezvous, prefix); });
}

TSR_FABRIC_GLOO_EXPORT tsr_status_t tsr_fabric_gloo_run(void* engine, const tsr_collective_args_t* args) {
  return fabric::guarded("fabric gloo engine", [&] { static_cast<fabric::GlooEngine*>(engine)->run(*args); });
}

TSR_FABRIC_GLOO_EXPORT void tsr_fabric_gloo_split_prefix(void* engine, char* prefix, size_t prefix_len,
                                                         char* rendezvous, size_t rendezvous_len) {
  auto* e = static_cast<fabric::GlooEngine*>(engine);
  std::snprintf(prefix, prefix_len, "%s", e->next_split_prefix().c_str());
  std::snprintf(rendezvous, rendezvous_len, "%s", e->rendezvous().c_str());
}

TSR_FABRIC_GLOO_EXPORT void tsr_fabric_gloo_destroy(void* engine) { delete static_cast<fabric::GlooEngine*>(engine); }

}  // extern "C"
