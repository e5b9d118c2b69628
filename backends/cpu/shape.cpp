// Shape family kernels: flip, tril, triu. Pure data movement, so every dtype is handled by its
// element size (1, 2, 4 or 8 bytes); the output is dense, the input any strided view.
#include <algorithm>
#include <cstring>

#include "cpu_common.hpp"
#include "tessera/kernels/item_size.hpp"

namespace tsr::cpu {
namespace {

// Offset (elements) in `in` of the start of output row r (rows = all dims but the last), with
// the dims in `flip_mask` reversed.
inline int64_t row_offset(const tsr_tensor_view_t& in, int64_t r, int64_t flip_mask) {
  int64_t off = 0;
  for (int32_t d = in.ndim - 2; d >= 0; --d) {
    int64_t n = in.sizes[d], i = r % n;
    r /= n;
    if ((flip_mask >> d) & 1) i = n - 1 - i;
    off += i * in.strides[d];
  }
  return off;
}

void flip_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t mask = c.arg_int(1);
  const int64_t numel = view_numel(out);
  if (numel == 0) return;
  kernels::by_element_size(out.dtype, "flip", [&](auto word) {
    using W = decltype(word);
    const W* src = static_cast<const W*>(in.data);
    W* dst = static_cast<W*>(out.data);
    if (out.ndim == 0) {
      dst[0] = src[0];
      return;
    }
    const int64_t n = out.sizes[out.ndim - 1], rows = numel / n;
    const int64_t sl = in.strides[in.ndim - 1];
    const bool flip_last = (mask >> (out.ndim - 1)) & 1;
    parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const W* s = src + row_offset(in, r, mask);
        W* o = dst + r * n;
        if (flip_last) {
          s += (n - 1) * sl;
          for (int64_t j = 0; j < n; ++j) o[j] = s[-j * sl];
        } else if (sl == 1) {
          std::memcpy(o, s, static_cast<size_t>(n) * sizeof(W));
        } else {
          for (int64_t j = 0; j < n; ++j) o[j] = s[j * sl];
        }
      }
    });
  });
}

template <bool UPPER>
void tri_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t k = c.arg_int(1);
  const int64_t numel = view_numel(out);
  if (numel == 0) return;
  kernels::by_element_size(out.dtype, UPPER ? "triu" : "tril", [&](auto word) {
    using W = decltype(word);
    const W* src = static_cast<const W*>(in.data);
    W* dst = static_cast<W*>(out.data);
    const int32_t nd = out.ndim;
    const int64_t m = out.sizes[nd - 1], nrows = out.sizes[nd - 2], rows = numel / m;
    const int64_t sl = in.strides[nd - 1];
    parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / m), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % nrows;
        // Kept columns [lo, hi): col - row <= k (tril) or >= k (triu).
        int64_t lo = UPPER ? std::min(std::max<int64_t>(i + k, 0), m) : 0;
        int64_t hi = UPPER ? m : std::min(std::max<int64_t>(i + k + 1, 0), m);
        const W* s = src + row_offset(in, r, 0);
        W* o = dst + r * m;
        if (lo > 0) std::memset(o, 0, static_cast<size_t>(lo) * sizeof(W));
        if (sl == 1) {
          if (hi > lo) std::memcpy(o + lo, s + lo, static_cast<size_t>(hi - lo) * sizeof(W));
        } else {
          for (int64_t j = lo; j < hi; ++j) o[j] = s[j * sl];
        }
        if (hi < m) std::memset(o + hi, 0, static_cast<size_t>(m - hi) * sizeof(W));
      }
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(shape) {
  r.kernel("flip", "cpu::flip", device_type, 0, TSR_KERNEL(flip_kernel));
  r.kernel("tril", "cpu::tril", device_type, 0, TSR_KERNEL(tri_kernel<false>));
  r.kernel("triu", "cpu::triu", device_type, 0, TSR_KERNEL(tri_kernel<true>));
}

}  // namespace tsr::cpu
