// Tessera SDK: _nn_max_pool2d's geometry and window walk, shared by the CPU and CUDA backends
// (header-only; the walk runs on the host and on the CUDA device), so that both pick the same
// maximum with the same tie and NaN rules: values and indices match exactly.
#pragma once

#include <cstdint>
#include <limits>

#include "tessera/dtype.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

// Input plane H x W, output plane OH x OW, kernel, stride, padding, dilation.
struct PoolGeo {
  int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
};

// args: self, kernel, stride, padding, dilation, output_hw (in_sizes: the [N, C, H, W] input's).
inline PoolGeo pool_geo(const KernelCall& c, const int64_t* in_sizes) {
  auto k = c.arg_ints(1), s = c.arg_ints(2), p = c.arg_ints(3), d = c.arg_ints(4), o = c.arg_ints(5);
  TSR_CHECK(k.size() == 2 && s.size() == 2 && p.size() == 2 && d.size() == 2 && o.size() == 2, TSR_INTERNAL,
            c.op_name(), ": expected 2-element pooling parameters");
  return PoolGeo{in_sizes[2], in_sizes[3], o[0], o[1], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
}

// Output element (oh, ow) of plane xp: stores the window's first maximum in *best and returns
// its flat index in the plane. A NaN wins over numbers (the first NaN); a window without any
// input element gives -inf and index -1.
template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE int64_t max_pool_window(const T* xp, const PoolGeo& g, int64_t oh, int64_t ow,
                                                          compute_t<T>* best_out) {
  using CT = compute_t<T>;
  CT best = -std::numeric_limits<CT>::infinity();
  int64_t bi = -1;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t iw = ow * g.sw - g.pw + j * g.dw;
      if (iw < 0 || iw >= g.W) continue;
      const CT v = CT(xp[ih * g.W + iw]);
      if (bi < 0 || v > best || (v != v && best == best)) {
        best = v;
        bi = ih * g.W + iw;
      }
    }
  }
  *best_out = best;
  return bi;
}

}  // namespace tsr::kernels
