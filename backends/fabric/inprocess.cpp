// The in-process engine: every member of the group is a device of this process whose memory the
// host reads (the cpu device type, TESSERA_CPU_DEVICES=N virtual devices), and one collective
// call carries every member's tensors. So a collective is plain loops over the members' memory:
// all arguments are checked first (nothing is written when they do not match), then reductions
// run chunk by chunk straight into the destinations, the other collectives through a scratch
// copy, so in-place calls are safe.
//
// Floating reductions accumulate in a wider type (float for f16/bf16, double for f32) and round
// once per element; integers wrap around like the tensors' own arithmetic;
// bool SUM/MAX are "or", MIN/PROD "and". MAX and MIN propagate NaN, as torch.maximum does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "args.hpp"
#include "group.hpp"
#include "reduce_ops.hpp"
#include "tessera/dtype.hpp"

namespace fabric {
namespace {

// dest[j] = op over the members of in[m][offset + j], j < k, as T, for every dest. Chunked: a
// chunk of every member is reduced into accumulators that stay in cache, then stored to each
// destination, so nothing is allocated and each byte is read and written once. In place is
// safe: a chunk is read whole before it is written. The op is a template argument so that the
// inner loop vectorizes.
template <class T, tsr_reduce_op_t OP>
void reduce_to(const std::vector<View>& in, int64_t offset, int64_t k, bool avg, const std::vector<char*>& dests) {
  using A = acc_t<T>;
  constexpr int64_t kChunk = 2048;
  A acc[kChunk];
  T res[kChunk];
  const size_t n = in.size();
  for (int64_t c = 0; c < k; c += kChunk) {
    const int64_t len = std::min(kChunk, k - c);
    const T* p0 = reinterpret_cast<const T*>(in[0].data) + offset + c;
    for (int64_t j = 0; j < len; ++j) acc[j] = static_cast<A>(p0[j]);
    for (size_t m = 1; m < n; ++m) {
      const T* pm = reinterpret_cast<const T*>(in[m].data) + offset + c;
      for (int64_t j = 0; j < len; ++j) acc[j] = combine_op<A, OP>(acc[j], static_cast<A>(pm[j]));
    }
    if constexpr (!std::is_same_v<T, bool>)
      if (avg)
        for (int64_t j = 0; j < len; ++j) acc[j] = static_cast<A>(acc[j] / static_cast<A>(n));
    for (int64_t j = 0; j < len; ++j) res[j] = static_cast<T>(acc[j]);  // one rounding
    for (char* d : dests) std::memcpy(reinterpret_cast<T*>(d) + c, res, static_cast<size_t>(len) * sizeof(T));
  }
}

void reduce_dispatch(int32_t dtype, const std::vector<View>& in, int64_t offset, int64_t k, tsr_reduce_op_t op,
                     const std::vector<char*>& dests) {
  tsr::dispatch_all(dtype, "fabric reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_op(op, [&](auto o) { reduce_to<T, decltype(o)::value>(in, offset, k, op == TSR_REDUCE_AVG, dests); });
  });
}

class InProcessEngine final : public Engine {
 public:
  explicit InProcessEngine(tsr_comm_group_s* g) : g_(g) {
    for (const tsr_device_t& d : g->members)
      if (d.type != TSR_DEVICE_TYPE_CPU)
        fail(TSR_UNIMPLEMENTED, "group_create: the in-process engine reduces in host memory, and " +
                                    device_str(g->runtime, d) +
                                    " is not a cpu device (GPU groups use the nccl engine)");
  }
  const char* name() const override { return "inprocess"; }

  std::unique_ptr<Completion> run(const tsr_collective_args_t& a) override {
    run_inline(a);
    return nullptr;
  }

 private:
  void run_inline(const tsr_collective_args_t& a) {
    const char* what = kind_name(a.kind);
    const int32_t n = static_cast<int32_t>(g_->members.size());
    if (a.kind == TSR_COLLECTIVE_BARRIER) return;  // every member is this call
    if (a.kind == TSR_COLLECTIVE_SEND || a.kind == TSR_COLLECTIVE_RECV)
      fail(TSR_UNIMPLEMENTED, std::string(what) +
                                  ": point to point pairs members of different processes; every member of an "
                                  "in-process group is here (copy the tensor with .to(device) instead)");
    const Checked c = check_collective(*g_, a);  // nothing is written before this passes
    const std::vector<View>& in = c.in;
    const std::vector<View>& out = c.out;
    const int64_t k = in[0].numel;
    const size_t isz = static_cast<size_t>(tsr::itemsize(in[0].dtype));
    switch (a.kind) {
      case TSR_COLLECTIVE_ALL_REDUCE:
      case TSR_COLLECTIVE_REDUCE: {
        std::vector<char*> dests;
        for (int32_t m = 0; m < n; ++m)
          if (a.kind == TSR_COLLECTIVE_ALL_REDUCE || m == a.root) dests.push_back(in[m].data);
        reduce_dispatch(in[0].dtype, in, 0, k, a.op, dests);
        return;
      }
      case TSR_COLLECTIVE_BROADCAST: {
        std::vector<char> r(in[a.root].data, in[a.root].data + k * static_cast<int64_t>(isz));
        for (int32_t m = 0; m < n; ++m)
          if (m != a.root) copy_out(in[m], r.data(), 0, r.size());
        return;
      }
      case TSR_COLLECTIVE_ALL_GATHER: {
        std::vector<char> r(static_cast<size_t>(k * n) * isz);
        for (int32_t m = 0; m < n; ++m)
          if (k) std::memcpy(r.data() + static_cast<size_t>(m * k) * isz, in[m].data, static_cast<size_t>(k) * isz);
        for (int32_t m = 0; m < n; ++m) copy_out(out[m], r.data(), 0, r.size());
        return;
      }
      case TSR_COLLECTIVE_REDUCE_SCATTER: {
        // Outputs never alias inputs here (their sizes differ), so each slice goes straight out.
        for (int32_t m = 0; m < n; ++m) reduce_dispatch(in[0].dtype, in, m * (k / n), k / n, a.op, {out[m].data});
        return;
      }
      case TSR_COLLECTIVE_ALL_TO_ALL: {
        const size_t slice = static_cast<size_t>(k / n) * isz;
        std::vector<std::vector<char>> res(static_cast<size_t>(n), std::vector<char>(slice * static_cast<size_t>(n)));
        for (int32_t i = 0; i < n; ++i)    // receiver
          for (int32_t j = 0; j < n; ++j)  // sender: its slice number i goes to i's slot j
            if (slice) std::memcpy(res[i].data() + j * slice, in[j].data + i * slice, slice);
        for (int32_t m = 0; m < n; ++m) copy_out(out[m], res[m].data(), 0, res[m].size());
        return;
      }
      default:
        return;
    }
  }

  static void copy_out(const View& v, const char* src, size_t offset, size_t nbytes) {
    if (nbytes) std::memcpy(v.data + offset, src, nbytes);
  }

  tsr_comm_group_s* g_;
};

}  // namespace

std::unique_ptr<Engine> make_inprocess_engine(tsr_comm_group_s* group) {
  return std::make_unique<InProcessEngine>(group);
}

}  // namespace fabric
