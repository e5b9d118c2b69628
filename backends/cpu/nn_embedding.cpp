// _nn_embedding (row gather) and _nn_embedding_backward (row scatter-add, skipping padding_idx).
// Indices arrive as dense int64; out-of-range indices are refused with the offending value.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

void check_index(const KernelCall& c, int64_t idx, int64_t V) {
  if (idx < 0 || idx >= V)
    fail(TSR_INVALID_ARGUMENT, c.op_name(), ": index ", idx, " is out of range for ", V, " rows");
}

void embedding_kernel(KernelCall& c) {
  const auto& w = c.input(0);
  const auto& idx = c.input(1);
  const auto& out = c.output(0);
  const int64_t V = w.sizes[0], D = w.sizes[1];
  const int64_t M = view_numel(idx);
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  for (int64_t i = 0; i < M; ++i) check_index(c, ix[i], V);
  const size_t row_bytes = static_cast<size_t>(D) * itemsize(c.dtype());
  const char* src = static_cast<const char*>(w.data);
  char* dst = static_cast<char*>(out.data);
  parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, D)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row_bytes, src + ix[i] * row_bytes, row_bytes);
  });
}

void embedding_backward_kernel(KernelCall& c) {
  const auto& g = c.input(0);
  const auto& idx = c.input(1);
  const auto& out = c.output(0);
  const int64_t V = out.sizes[0], D = out.sizes[1];
  const int64_t M = view_numel(idx);
  const int64_t pad = c.arg_int(3);
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  for (int64_t i = 0; i < M; ++i) check_index(c, ix[i], V);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    const T* gp = static_cast<const T*>(g.data);
    T* op = static_cast<T*>(out.data);
    // Threads own column blocks, so rows hit by many indices need no atomics.
    parallel_for(0, D, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, M)), [&](int64_t b, int64_t e) {
      const int64_t len = e - b;
      std::vector<CT> acc(static_cast<size_t>(V * len), CT(0));
      for (int64_t i = 0; i < M; ++i) {
        if (ix[i] == pad) continue;
        const T* row = gp + i * D + b;
        CT* a = acc.data() + ix[i] * len;
        for (int64_t j = 0; j < len; ++j) a[j] += CT(row[j]);
      }
      for (int64_t v = 0; v < V; ++v)
        for (int64_t j = 0; j < len; ++j) op[v * D + b + j] = static_cast<T>(acc[static_cast<size_t>(v * len + j)]);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_embedding) {
  r.kernel("_nn_embedding", "cpu::nn_embedding", device_type, kAllMask, TSR_KERNEL(embedding_kernel));
  r.kernel("_nn_embedding_backward", "cpu::nn_embedding_backward", device_type, kFloatingMask,
           TSR_KERNEL(embedding_backward_kernel));
}

}  // namespace tsr::cpu
