// _nn_max_pool2d (values and flat per-plane indices of each window's first maximum, NaN
// propagating as PyTorch) and _nn_max_pool2d_backward (scatter-add of gradients to those
// indices). Planes are independent, so both parallelize over N*C without atomics.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu_common.hpp"
#include "tessera/kernels/pool_geometry.hpp"

namespace tsr::cpu {
namespace {

// The geometry and the window walk are shared with the CUDA backend
// (tessera/kernels/pool_geometry.hpp).
using kernels::pool_geo;
using kernels::PoolGeo;

// Whether every window lies inside the plane (no padding reached, ceil_mode's last window
// included): then the fast walk needs no bounds checks.
bool windows_inside(const PoolGeo& g) {
  return g.ph == 0 && g.pw == 0 && g.OH > 0 && g.OW > 0 && (g.OH - 1) * g.sh + (g.kh - 1) * g.dh < g.H &&
         (g.OW - 1) * g.sw + (g.kw - 1) * g.dw < g.W;
}

// One output row of a plane whose windows lie inside it, vectorized across the row: the window's
// elements are visited in the generic walk's order (row by row) and merged with selects, so the
// first maximum and the first NaN win as in kernels::max_pool_window, without its branch per
// element (mispredicted on real data: 20 ns per output on the small CNN's 2x2 pools).
template <class T>
inline void max_pool_row_inside(const T* __restrict xp, T* __restrict yrow, int64_t* __restrict irow,
                                compute_t<T>* __restrict best, const PoolGeo& g, int64_t oh) {
  using CT = compute_t<T>;
  const int64_t OW = g.OW;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh + i * g.dh;
    const T* __restrict row = xp + ih * g.W;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t off = j * g.dw;
      if (i == 0 && j == 0) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          best[ow] = CT(row[ow * g.sw]);
          irow[ow] = ih * g.W + ow * g.sw;
        }
        continue;
      }
      for (int64_t ow = 0; ow < OW; ++ow) {
        const CT v = CT(row[ow * g.sw + off]);
        const bool take = v > best[ow] || (v != v && best[ow] == best[ow]);
        best[ow] = take ? v : best[ow];
        irow[ow] = take ? ih * g.W + ow * g.sw + off : irow[ow];
      }
    }
  }
  for (int64_t ow = 0; ow < OW; ++ow) yrow[ow] = static_cast<T>(best[ow]);
}

// The same row for a KH x KW window known at compile time (2x2 and 3x3, the common pools): the
// whole window is merged in registers for each output, so nothing goes through memory between
// the window's elements.
template <class T, int KH, int KW>
inline void max_pool_row_fixed(const T* __restrict xp, T* __restrict yrow, int64_t* __restrict irow,
                               const PoolGeo& g, int64_t oh) {
  using CT = compute_t<T>;
  const int64_t W = g.W, sw = g.sw, dw = g.dw, ih0 = oh * g.sh;
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    const int64_t iw0 = ow * sw;
    CT best = CT(xp[ih0 * W + iw0]);
    int64_t bi = ih0 * W + iw0;
    for (int i = 0; i < KH; ++i)
      for (int j = 0; j < KW; ++j) {
        if (i == 0 && j == 0) continue;
        const int64_t at = (ih0 + i * g.dh) * W + iw0 + j * dw;
        const CT v = CT(xp[at]);
        const bool take = v > best || (v != v && best == best);
        best = take ? v : best;
        bi = take ? at : bi;
      }
    yrow[ow] = static_cast<T>(best);
    irow[ow] = bi;
  }
}

template <class T>
TSR_CPU_MULTIVERSION void max_pool_planes(const T* x, T* y, int64_t* idx, const PoolGeo& g, int64_t p0, int64_t p1) {
  using CT = compute_t<T>;
  if (windows_inside(g)) {
    std::vector<CT> best(static_cast<size_t>(g.OW));
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const T* xp = x + p * g.H * g.W;
        T* yrow = y + (p * g.OH + oh) * g.OW;
        int64_t* irow = idx + (p * g.OH + oh) * g.OW;
        if (g.kh == 2 && g.kw == 2)
          max_pool_row_fixed<T, 2, 2>(xp, yrow, irow, g, oh);
        else if (g.kh == 3 && g.kw == 3)
          max_pool_row_fixed<T, 3, 3>(xp, yrow, irow, g, oh);
        else
          max_pool_row_inside<T>(xp, yrow, irow, best.data(), g, oh);
      }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    const T* xp = x + p * g.H * g.W;
    T* yp = y + p * g.OH * g.OW;
    int64_t* ip = idx + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        CT best;
        const int64_t bi = kernels::max_pool_window(xp, g, oh, ow, &best);
        yp[oh * g.OW + ow] = static_cast<T>(best);
        ip[oh * g.OW + ow] = bi;
      }
  }
}

void max_pool_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  TSR_CHECK(in.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected a 4-D input");
  PoolGeo g = pool_geo(c, in.sizes);
  const int64_t planes = in.sizes[0] * in.sizes[1];
  int64_t* idx = static_cast<int64_t*>(c.output(1).data);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.OH * g.OW * g.kh * g.kw)),
                 [&](int64_t b, int64_t e) {
                   max_pool_planes<T>(static_cast<const T*>(in.data), static_cast<T*>(c.output(0).data), idx, g, b, e);
                 });
  });
}

// args: grad [N, C, OH, OW], indices [N, C, OH, OW], input_hw -> dx [N, C, H, W]
void max_pool_backward_kernel(KernelCall& c) {
  const auto& gv = c.input(0);
  const auto& out = c.output(0);
  const int64_t planes = out.sizes[0] * out.sizes[1], HW = out.sizes[2] * out.sizes[3];
  const int64_t L = gv.sizes[2] * gv.sizes[3];
  const int64_t* idx = static_cast<const int64_t*>(c.input(1).data);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    const T* g = static_cast<const T*>(gv.data);
    T* dx = static_cast<T*>(out.data);
    parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, HW + L)),
                 [&](int64_t b, int64_t e) {
                   std::vector<CT> acc(static_cast<size_t>(HW));
                   for (int64_t p = b; p < e; ++p) {
                     std::fill(acc.begin(), acc.end(), CT(0));
                     for (int64_t l = 0; l < L; ++l) {
                       const int64_t i = idx[p * L + l];
                       if (i >= 0 && i < HW) acc[static_cast<size_t>(i)] += CT(g[p * L + l]);
                     }
                     for (int64_t i = 0; i < HW; ++i) dx[p * HW + i] = static_cast<T>(acc[static_cast<size_t>(i)]);
                   }
                 });
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_pool) {
  r.kernel("_nn_max_pool2d", "cpu::nn_max_pool2d", device_type, kFloatingMask, TSR_KERNEL(max_pool_kernel));
  r.kernel("_nn_max_pool2d_backward", "cpu::nn_max_pool2d_backward", device_type, kFloatingMask,
           TSR_KERNEL(max_pool_backward_kernel));
}

}  // namespace tsr::cpu
