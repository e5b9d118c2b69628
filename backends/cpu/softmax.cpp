// softmax, log_softmax over one dim of contiguous tensors: shape viewed as [outer, D, inner].
// Numerically stable (subtract the max; a NaN in a slice makes the whole slice NaN, as in
// PyTorch). inner == 1: row kernels (large outputs written with streaming stores); inner > 1:
// tiles of up to 256 columns processed together so that every loop is unit-stride and
// vectorizable. The exps take x - max <= 0, so they skip exp's overflow handling. Also the
// backward kernels (_softmax_backward_data, _log_softmax_backward_data) in the same geometry.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "tessera/kernels/softmax_geometry.hpp"

namespace tsr::cpu {
namespace {

constexpr int64_t kTile = 256;

template <class T>
using C = compute_t<T>;

// Three visits of the row: max, sum of exps, the write (the row stays in cache after the first
// read, so memory sees one read and one write). `stream`: the write bypasses the cache.
template <class T, bool LOG>
TSR_CPU_MULTIVERSION void softmax_row(const T* x, T* y, int64_t D, bool stream) {
  using CT = C<T>;
  // max (NaN-propagating). A row of -inf gives NaN (as PyTorch): -inf - -inf.
  const CT shift = row_max<CT>(x, D);
  if constexpr (LOG) {
    // (x - max) - log(sum): x - max is exact near the max, unlike x - (max + log(sum)).
    const CT ls = std::log(row_exp_sum<false, CT>(x, D, shift, nullptr));
    write_row(y, D, stream, [&](int64_t k) { return static_cast<T>((CT(x[k]) - shift) - ls); });
  } else if (D <= kRowBuf<CT>) {
    alignas(64) CT buf[kRowBuf<CT>];
    const CT inv = CT(1) / row_exp_sum<true, CT>(x, D, shift, buf);
    write_row(y, D, stream, [&](int64_t k) { return static_cast<T>(buf[k] * inv); });
  } else {
    const CT inv = CT(1) / row_exp_sum<false, CT>(x, D, shift, nullptr);
    write_row(y, D, stream, [&](int64_t k) { return static_cast<T>(exp_no_overflow_c<CT>(CT(x[k]) - shift) * inv); });
  }
}

// Columns j0..j0+len of one [D, inner] slab.
template <class T, bool LOG>
TSR_CPU_MULTIVERSION void softmax_cols(const T* x, T* y, int64_t D, int64_t inner, int64_t len) {
  using CT = C<T>;
  CT m[kTile], s[kTile];
  for (int64_t j = 0; j < len; ++j) {
    m[j] = -std::numeric_limits<CT>::infinity();
    s[j] = 0;
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* row = x + d * inner;
    for (int64_t j = 0; j < len; ++j) m[j] = max_nan<CT>(m[j], CT(row[j]));
  }
  if constexpr (!LOG && !is_reduced_float<T>::value) {
    // One exp per element: store e^(x-m) in y, then scale.
    for (int64_t d = 0; d < D; ++d) {
      const T* row = x + d * inner;
      T* out = y + d * inner;
      for (int64_t j = 0; j < len; ++j) {
        const CT e = exp_no_overflow_c<CT>(CT(row[j]) - m[j]);
        out[j] = e;
        s[j] += e;
      }
    }
    for (int64_t j = 0; j < len; ++j) s[j] = CT(1) / s[j];
    for (int64_t d = 0; d < D; ++d) {
      T* out = y + d * inner;
      for (int64_t j = 0; j < len; ++j) out[j] = out[j] * s[j];
    }
    return;
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* row = x + d * inner;
    for (int64_t j = 0; j < len; ++j) s[j] += exp_no_overflow_c<CT>(CT(row[j]) - m[j]);
  }
  if constexpr (LOG) {
    for (int64_t j = 0; j < len; ++j) s[j] = std::log(s[j]);
    for (int64_t d = 0; d < D; ++d) {
      const T* row = x + d * inner;
      T* out = y + d * inner;
      for (int64_t j = 0; j < len; ++j) out[j] = static_cast<T>((CT(row[j]) - m[j]) - s[j]);
    }
  } else {
    for (int64_t j = 0; j < len; ++j) s[j] = CT(1) / s[j];
    for (int64_t d = 0; d < D; ++d) {
      const T* row = x + d * inner;
      T* out = y + d * inner;
      for (int64_t j = 0; j < len; ++j) out[j] = static_cast<T>(exp_no_overflow_c<CT>(CT(row[j]) - m[j]) * s[j]);
    }
  }
}

// Calls row(off) for each slice along the dim when it is the last (inner == 1: rows starting at
// element off), else cols(off, len) for each tile of up to kTile columns of a [D, inner] slab,
// split across threads: the forward and backward kernels' shared walk of [outer, D, inner].
template <class Row, class Cols>
void for_each_slice(const kernels::SoftmaxGeo& g, const Row& row, const Cols& cols) {
  const int64_t outer = g.outer, D = g.D, inner = g.inner;
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kParallelGrain / D), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) row(o * D);
    });
    return;
  }
  const int64_t ntiles = (inner + kTile - 1) / kTile;
  const int64_t per_item = D * std::min(inner, kTile);
  parallel_for(0, outer * ntiles, std::max<int64_t>(1, kParallelGrain / per_item), [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / ntiles, j0 = (item % ntiles) * kTile;
      cols(o * D * inner + j0, std::min(kTile, inner - j0));
    }
  });
}

template <bool LOG>
void softmax_impl(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const kernels::SoftmaxGeo g = kernels::softmax_geo(c, in);
  if (g.empty()) return;
  const int64_t outer = g.outer, D = g.D, inner = g.inner;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(out.data);
    const bool stream = inner == 1 && outer * D * int64_t(sizeof(T)) >= stream_store_bytes();
    for_each_slice(
        g, [&](int64_t off) { softmax_row<T, LOG>(x + off, y + off, D, stream); },
        [&](int64_t off, int64_t len) { softmax_cols<T, LOG>(x + off, y + off, D, inner, len); });
  });
}

void softmax_kernel(KernelCall& c) { softmax_impl<false>(c); }
void log_softmax_kernel(KernelCall& c) { softmax_impl<true>(c); }

// The backward, from the output y and its gradient g: softmax dx = y * (g - sum(g * y)),
// log_softmax dx = g - exp(y) * sum(g), sums along the dim in the compute type. A row (inner == 1)
// is read twice, the second time from cache; inner > 1 runs tiles of up to kTile columns.
template <class T, bool LOG>
TSR_CPU_MULTIVERSION void softmax_bw_row(const T* g, const T* y, T* dx, int64_t D) {
  using CT = C<T>;
  const CT sum = lane_sum<CT>(D, [&](int64_t i) { return LOG ? CT(g[i]) : CT(g[i]) * CT(y[i]); });
  for (int64_t k = 0; k < D; ++k)
    dx[k] = LOG ? static_cast<T>(CT(g[k]) - exp_c<CT>(CT(y[k])) * sum) : static_cast<T>(CT(y[k]) * (CT(g[k]) - sum));
}

template <class T, bool LOG>
TSR_CPU_MULTIVERSION void softmax_bw_cols(const T* g, const T* y, T* dx, int64_t D, int64_t inner, int64_t len) {
  using CT = C<T>;
  CT s[kTile];
  for (int64_t j = 0; j < len; ++j) s[j] = 0;
  for (int64_t d = 0; d < D; ++d)
    for (int64_t j = 0; j < len; ++j)
      s[j] += LOG ? CT(g[d * inner + j]) : CT(g[d * inner + j]) * CT(y[d * inner + j]);
  for (int64_t d = 0; d < D; ++d)
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = d * inner + j;
      dx[k] = LOG ? static_cast<T>(CT(g[k]) - exp_c<CT>(CT(y[k])) * s[j]) : static_cast<T>(CT(y[k]) * (CT(g[k]) - s[j]));
    }
}

template <bool LOG>
void softmax_backward_impl(KernelCall& c) {
  const tsr_tensor_view_t &G = c.input(0), &Y = c.input(1), &DX = c.output(0);
  const kernels::SoftmaxGeo geo = kernels::softmax_geo(c, Y, 2);
  if (geo.empty()) return;
  const int64_t D = geo.D, inner = geo.inner;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = static_cast<const T*>(G.data);
    const T* y = static_cast<const T*>(Y.data);
    T* dx = static_cast<T*>(DX.data);
    for_each_slice(
        geo, [&](int64_t off) { softmax_bw_row<T, LOG>(g + off, y + off, dx + off, D); },
        [&](int64_t off, int64_t len) { softmax_bw_cols<T, LOG>(g + off, y + off, dx + off, D, inner, len); });
  });
}

void softmax_backward_kernel(KernelCall& c) { softmax_backward_impl<false>(c); }
void log_softmax_backward_kernel(KernelCall& c) { softmax_backward_impl<true>(c); }

}  // namespace

TSR_CPU_KERNELS(softmax) {
  r.kernel("softmax", "cpu::softmax", device_type, kFloatingMask, TSR_KERNEL(softmax_kernel));
  r.kernel("log_softmax", "cpu::log_softmax", device_type, kFloatingMask, TSR_KERNEL(log_softmax_kernel));
  r.kernel("_softmax_backward_data", "cpu::softmax_backward", device_type, kFloatingMask,
           TSR_KERNEL(softmax_backward_kernel));
  r.kernel("_log_softmax_backward_data", "cpu::log_softmax_backward", device_type, kFloatingMask,
           TSR_KERNEL(log_softmax_backward_kernel));
}

}  // namespace tsr::cpu
