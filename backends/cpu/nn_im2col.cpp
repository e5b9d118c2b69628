// _nn_im2col / _nn_col2im: the patch gather behind convolution and pooling, and its adjoint
// (scatter-add). Dense [N, C, H, W] <-> [N, C*kh*kw, OH*OW]; the output grid (OH, OW) is passed
// explicitly so ceil-mode pooling windows may run past the padded input (they read pad_value).
#include <algorithm>
#include <vector>

#include "cpu_common.hpp"
#include "tessera/kernels/im2col_geometry.hpp"

namespace tsr::cpu {
namespace {

using Geometry = kernels::Im2colGeo;
using kernels::im2col_geo;

template <class T>
TSR_CPU_MULTIVERSION void im2col_rows(const T* x, T* col, const Geometry& g, T pad, int64_t r0, int64_t r1) {
  const int64_t K = g.kh * g.kw, L = g.OH * g.OW;
  for (int64_t r = r0; r < r1; ++r) {  // r = (n*C + c)*K + k
    const int64_t k = r % K, nc = r / K;
    const int64_t ki = k / g.kw, kj = k % g.kw;
    const T* plane = x + nc * g.H * g.W;
    T* out = col + r * L;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
      T* orow = out + oh * g.OW;
      if (ih < 0 || ih >= g.H) {
        for (int64_t ow = 0; ow < g.OW; ++ow) orow[ow] = pad;
        continue;
      }
      const T* irow = plane + ih * g.W;
      const int64_t off = kj * g.dw - g.pw;
      if (g.sw == 1) {
        // valid ow: 0 <= ow + off < W
        const int64_t lo = std::clamp<int64_t>(-off, 0, g.OW), hi = std::clamp<int64_t>(g.W - off, lo, g.OW);
        for (int64_t ow = 0; ow < lo; ++ow) orow[ow] = pad;
        for (int64_t ow = lo; ow < hi; ++ow) orow[ow] = irow[ow + off];
        for (int64_t ow = hi; ow < g.OW; ++ow) orow[ow] = pad;
      } else {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const int64_t iw = ow * g.sw + off;
          orow[ow] = (iw >= 0 && iw < g.W) ? irow[iw] : pad;
        }
      }
    }
  }
}

void im2col_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const auto& out = c.output(0);
  TSR_CHECK(in.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected a 4-D input");
  Geometry g = im2col_geo(c, in.sizes, 1, 2, 3, 4, 5);
  const double padv = c.arg_double(6);
  const int64_t rows = g.N * g.C * g.kh * g.kw;
  const int64_t L = g.OH * g.OW;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* col = static_cast<T*>(out.data);
    const T pad = static_cast<T>(padv);
    parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, L)),
                 [&](int64_t b, int64_t e) { im2col_rows<T>(x, col, g, pad, b, e); });
  });
}

template <class T>
TSR_CPU_MULTIVERSION void col2im_planes(const T* col, T* x, const Geometry& g, int64_t p0, int64_t p1) {
  using CT = compute_t<T>;
  const int64_t K = g.kh * g.kw, L = g.OH * g.OW, HW = g.H * g.W;
  std::vector<CT> acc(static_cast<size_t>(HW));
  for (int64_t p = p0; p < p1; ++p) {  // p = n*C + c
    std::fill(acc.begin(), acc.end(), CT(0));
    for (int64_t k = 0; k < K; ++k) {
      const int64_t ki = k / g.kw, kj = k % g.kw;
      const T* crow = col + (p * K + k) * L;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        CT* arow = acc.data() + ih * g.W;
        const T* src = crow + oh * g.OW;
        const int64_t off = kj * g.dw - g.pw;
        if (g.sw == 1) {
          const int64_t lo = std::clamp<int64_t>(-off, 0, g.OW), hi = std::clamp<int64_t>(g.W - off, lo, g.OW);
          for (int64_t ow = lo; ow < hi; ++ow) arow[ow + off] += CT(src[ow]);
        } else {
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t iw = ow * g.sw + off;
            if (iw >= 0 && iw < g.W) arow[iw] += CT(src[ow]);
          }
        }
      }
    }
    T* dst = x + p * HW;
    for (int64_t i = 0; i < HW; ++i) dst[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
  }
}

void col2im_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const auto& out = c.output(0);
  TSR_CHECK(out.ndim == 4 && in.ndim == 3, TSR_INTERNAL, c.op_name(), ": expected [N, C*K, L] -> [N, C, H, W]");
  // args: cols, in_hw, kernel, dilation, padding, stride, out_hw
  Geometry g = im2col_geo(c, out.sizes, 2, 3, 4, 5, 6);
  TSR_CHECK(in.sizes[1] == g.C * g.kh * g.kw && in.sizes[2] == g.OH * g.OW, TSR_INTERNAL, c.op_name(),
            ": columns do not match the geometry");
  const int64_t planes = g.N * g.C;
  const int64_t work = std::max<int64_t>(1, g.kh * g.kw * g.OH * g.OW);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* col = static_cast<const T*>(in.data);
    T* x = static_cast<T*>(out.data);
    parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / work),
                 [&](int64_t b, int64_t e) { col2im_planes<T>(col, x, g, b, e); });
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_im2col) {
  r.kernel("_nn_im2col", "cpu::nn_im2col", device_type, kFloatingMask, TSR_KERNEL(im2col_kernel));
  r.kernel("_nn_col2im", "cpu::nn_col2im", device_type, kFloatingMask, TSR_KERNEL(col2im_kernel));
}

}  // namespace tsr::cpu
