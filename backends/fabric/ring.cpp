// The ring engine: collectives among the devices of one process built from nothing but device
// copies and the devices' own elementwise kernels, through the SDK. It is the fallback for GPUs
// when NCCL cannot be loaded: a copy between two cuda devices goes peer to peer (the cuda
// backend enables peer access on the first copy where cudaDeviceCanAccessPeer allows it), and
// the reductions run as the cuda backend's add_/mul_/maximum kernels on the receiving GPU, so
// no byte goes through host memory. Nothing in it is specific to a device type: with engine
// "ring" it runs on virtual cpu devices too, which is how it is tested without GPUs.
//
// all_reduce is the bandwidth-optimal ring (as NCCL's ring algorithm): a reduce-scatter in n-1
// steps, in which member i sends chunk (i-s-1) mod n to member i+1, which combines it into its
// own copy of that chunk, so that member i ends with chunk i reduced over every member; then an
// all-gather in n-1 steps passing the reduced chunks on round the ring. Every member sends and
// receives 2(n-1)/n of the tensor, and at every step all n links carry one chunk at once.
//
// Ordering: every copy and kernel runs on the current stream of the device it writes (the core
// puts a copy on its destination's stream). Between two steps every member's stream waits for
// every other's (an event per member), so a chunk is read only after the step that wrote it, and
// written only after the step that read it. Devices without streams (cpu) run each call at once,
// and the events are no-ops there.
//
// Precision: a reduction rounds to the dtype at each of the n-1 steps, as NCCL does (the
// in-process engine accumulates in a wider type and rounds once): f16/bf16 sums of many members
// differ from it by a few units in the last place.
#include <chrono>
#include <thread>

#include "args.hpp"
#include "group.hpp"
#include "tessera/stream.hpp"
#include "tessera/tessera.hpp"

namespace fabric {
namespace {

using tsr::Device;
using tsr::Tensor;

// Chunk c of k elements split n ways: the first k % n chunks have one element more.
struct Chunk {
  int64_t start, len;
};
Chunk chunk(int64_t k, int32_t n, int32_t c) {
  const int64_t base = k / n, rem = k % n;
  return {c * base + std::min<int64_t>(c, rem), base + (c < rem ? 1 : 0)};
}

// The completion of a ring collective: an event recorded at its end on every member's stream.
class EventsCompletion final : public Completion {
 public:
  explicit EventsCompletion(std::vector<tsr::Event> events) : events_(std::move(events)) {}
  bool query() override {
    for (const tsr::Event& e : events_)
      if (!e.query()) return false;
    return true;
  }
  bool wait(double timeout_seconds) override {
    if (timeout_seconds < 0) {
      for (const tsr::Event& e : events_) e.synchronize();
      return true;
    }
    // Events have no timed wait: poll, backing off to 1 ms.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    auto pause = std::chrono::microseconds(20);
    while (!query()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
    return true;
  }

 private:
  std::vector<tsr::Event> events_;
};

class RingEngine final : public Engine {
 public:
  explicit RingEngine(tsr_comm_group_s* g) : g_(g) {
    for (const tsr_device_t& d : g->members) devices_.push_back(Device(d));
  }
  const char* name() const override { return "ring"; }
  Mode mode() const override { return Mode::stream; }

  std::unique_ptr<Completion> run(const tsr_collective_args_t& a) override {
    tsr::RuntimeScope scope(g_->runtime);  // the SDK's factories, streams and events: the group's runtime
    const char* what = kind_name(a.kind);
    if (a.kind == TSR_COLLECTIVE_SEND || a.kind == TSR_COLLECTIVE_RECV)
      fail(TSR_UNIMPLEMENTED, std::string(what) +
                                  ": point to point pairs members of different processes; every member of a ring "
                                  "group is here (copy the tensor with .to(device) instead)");
    if (a.kind != TSR_COLLECTIVE_BARRIER) {
      const Checked c = check_collective(*g_, a);  // nothing is written before this passes
      try {
        run_checked(a, c);
      } catch (const tsr::Error& e) {  // a copy or kernel of the devices failed
        fail(e.code(), std::string(what) + " (ring engine): " + e.what());
      }
    }
    join_streams();
    std::vector<tsr::Event> end;
    for (const Device& d : devices_) {
      end.emplace_back(d);
      end.back().record();
    }
    return std::make_unique<EventsCompletion>(std::move(end));
  }

 private:
  int32_t n() const { return static_cast<int32_t>(devices_.size()); }

  // Every member's current stream waits for the work so far on every other member's.
  void join_streams() {
    if (n() == 1) return;
    std::vector<tsr::Event> marks;
    for (const Device& d : devices_) {
      marks.emplace_back(d);
      marks.back().record();
    }
    for (int32_t i = 0; i < n(); ++i) {
      const tsr::Stream s = tsr::current_stream(devices_[i]);
      for (int32_t j = 0; j < n(); ++j)
        if (j != i) s.wait(marks[j]);
    }
  }

  static Tensor flat(tsr_tensor_t* t) { return Tensor::borrow(t).view({-1}); }
  static Tensor piece(const Tensor& t, Chunk c) { return t.narrow(0, c.start, c.len); }

  // dst op= src, on dst's device (its current stream); bool SUM/AVG/MAX are "or", MIN/PROD "and".
  static void combine(Tensor dst, const Tensor& src, tsr_reduce_op_t op) {
    if (dst.dtype() == TSR_BOOL) {
      if (op == TSR_REDUCE_MIN || op == TSR_REDUCE_PROD)
        tsr::logical_and_(dst, src);
      else
        tsr::logical_or_(dst, src);
      return;
    }
    switch (op) {
      case TSR_REDUCE_PROD:
        tsr::mul_(dst, src);
        return;
      case TSR_REDUCE_MAX:
        dst.copy_(tsr::maximum(dst, src));  // maximum propagates NaN, as the other engines do
        return;
      case TSR_REDUCE_MIN:
        dst.copy_(tsr::minimum(dst, src));
        return;
      default:
        tsr::add_(dst, src);
        return;
    }
  }

  // AVG's division: true division for floating dtypes, truncation toward zero for integers.
  static void average(Tensor t, int32_t n) {
    if (t.dtype() == TSR_BOOL || n == 1) return;
    const Tensor divisor = tsr::scalar_tensor(static_cast<double>(n), t.dtype(), true, t.runtime());
    if (tsr::is_floating(t.dtype()))
      tsr::div_(t, divisor);
    else
      t.copy_(tsr::div(t, divisor, "trunc"));
  }

  // The ring reduce-scatter over work[m] (k elements each, in place): afterwards member m's
  // chunk m is reduced over every member (and divided for AVG). staging[m] holds one chunk.
  void reduce_scatter(const std::vector<Tensor>& work, int64_t k, tsr_reduce_op_t op) {
    const int32_t N = n();
    std::vector<Tensor> staging;
    for (int32_t m = 0; m < N; ++m) staging.push_back(tsr::empty({chunk(k, N, 0).len}, work[m].dtype(), devices_[m]));
    for (int32_t s = 0; s < N - 1; ++s) {
      join_streams();
      for (int32_t i = 0; i < N; ++i) {
        const int32_t to = (i + 1) % N, c = ((i - s - 1) % N + N) % N;
        const Chunk ch = chunk(k, N, c);
        if (ch.len == 0) continue;
        Tensor recv = staging[to].narrow(0, 0, ch.len);
        recv.copy_(piece(work[i], ch));  // peer copy, on `to`'s stream
        combine(piece(work[to], ch), recv, op);
      }
    }
    if (op == TSR_REDUCE_AVG)
      for (int32_t m = 0; m < N; ++m) average(piece(work[m], chunk(k, N, m)), N);
  }

  // The ring all-gather after reduce_scatter: member m's chunk m goes round the ring.
  void all_gather_chunks(const std::vector<Tensor>& work, int64_t k) {
    const int32_t N = n();
    for (int32_t s = 0; s < N - 1; ++s) {
      join_streams();
      for (int32_t i = 0; i < N; ++i) {
        const int32_t to = (i + 1) % N, c = ((i - s) % N + N) % N;
        const Chunk ch = chunk(k, N, c);
        if (ch.len) piece(work[to], ch).copy_(piece(work[i], ch));
      }
    }
  }

  // Copies of the members' inputs, each on its own device, for collectives that must not write
  // their inputs.
  std::vector<Tensor> clones(const std::vector<View>& in) {
    std::vector<Tensor> w;
    for (const View& v : in) w.push_back(flat(v.t).clone());
    return w;
  }

  void run_checked(const tsr_collective_args_t& a, const Checked& c) {
    const int32_t N = n();
    const int64_t k = c.in[0].numel;
    join_streams();  // every member's input is complete on every stream that reads it
    switch (a.kind) {
      case TSR_COLLECTIVE_ALL_REDUCE: {
        std::vector<Tensor> work;
        for (const View& v : c.in) work.push_back(flat(v.t));
        reduce_scatter(work, k, a.op);
        all_gather_chunks(work, k);
        return;
      }
      case TSR_COLLECTIVE_REDUCE: {
        std::vector<Tensor> work = clones(c.in);
        reduce_scatter(work, k, a.op);
        join_streams();
        Tensor root = flat(c.in[a.root].t);
        for (int32_t m = 0; m < N; ++m) {
          const Chunk ch = chunk(k, N, m);
          if (ch.len) piece(root, ch).copy_(piece(work[m], ch));
        }
        return;
      }
      case TSR_COLLECTIVE_REDUCE_SCATTER: {
        std::vector<Tensor> work = clones(c.in);
        reduce_scatter(work, k, a.op);  // k splits into n equal slices (checked): chunk m is slice m
        join_streams();
        for (int32_t m = 0; m < N; ++m)
          if (k) flat(c.out[m].t).copy_(piece(work[m], chunk(k, N, m)));
        return;
      }
      case TSR_COLLECTIVE_BROADCAST: {
        const Tensor root = flat(c.in[a.root].t);
        for (int32_t m = 0; m < N; ++m)
          if (m != a.root && k) flat(c.in[m].t).copy_(root);
        return;
      }
      case TSR_COLLECTIVE_ALL_GATHER: {
        // Direct copies: out[m] slice j = in[j]. An input that is its own slice of its output
        // (all_gather_into_tensor's in-place form) is skipped, never read after a write.
        for (int32_t m = 0; m < N; ++m) {
          const Tensor out = flat(c.out[m].t);
          for (int32_t j = 0; j < N; ++j) {
            Tensor dst = out.narrow(0, j * k, k);
            if (k && dst.data_ptr() != c.in[j].data) dst.copy_(flat(c.in[j].t));
          }
        }
        return;
      }
      case TSR_COLLECTIVE_ALL_TO_ALL: {
        // out[i] slice j = in[j] slice i. When an output is also an input, read from copies.
        bool aliased = false;
        for (int32_t m = 0; m < N; ++m)
          for (int32_t j = 0; j < N; ++j) aliased = aliased || c.out[m].data == c.in[j].data;
        std::vector<Tensor> src;
        if (aliased) {
          src = clones(c.in);
          join_streams();
        } else {
          for (const View& v : c.in) src.push_back(flat(v.t));
        }
        const int64_t slice = k / N;
        for (int32_t i = 0; i < N; ++i) {
          const Tensor out = flat(c.out[i].t);
          for (int32_t j = 0; j < N; ++j)
            if (slice) out.narrow(0, j * slice, slice).copy_(src[j].narrow(0, i * slice, slice));
        }
        return;
      }
      default:
        return;
    }
  }

  tsr_comm_group_s* g_;
  std::vector<Device> devices_;
};

}  // namespace

std::unique_ptr<Engine> make_ring_engine(tsr_comm_group_s* group) { return std::make_unique<RingEngine>(group); }

}  // namespace fabric
