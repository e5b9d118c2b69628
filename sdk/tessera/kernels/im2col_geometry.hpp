// Tessera SDK: the geometry of _nn_im2col / _nn_col2im (the patch gather behind convolution and
// pooling, and its adjoint), shared by the CPU and CUDA kernels: dense [N, C, H, W] <->
// [N, C*kh*kw, OH*OW] with the output grid (OH, OW) passed explicitly. The struct is plain data
// (CUDA kernels take it by value); im2col_geo runs on the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/plugin.hpp"

namespace tsr::kernels {

struct Im2colGeo {
  int64_t N, C, H, W, kh, kw, dh, dw, ph, pw, sh, sw, OH, OW;
};

// in_sizes: the image's [N, C, H, W]; a_*: the argument indices of the kernel, dilation,
// padding, stride and output-size lists (each of 2 elements).
inline Im2colGeo im2col_geo(const KernelCall& c, const int64_t* in_sizes, size_t a_kernel, size_t a_dil, size_t a_pad,
                            size_t a_stride, size_t a_out) {
  auto k = c.arg_ints(a_kernel), d = c.arg_ints(a_dil), p = c.arg_ints(a_pad), s = c.arg_ints(a_stride),
       o = c.arg_ints(a_out);
  TSR_CHECK(k.size() == 2 && d.size() == 2 && p.size() == 2 && s.size() == 2 && o.size() == 2, TSR_INTERNAL,
            c.op_name(), ": expected 2-element kernel/dilation/padding/stride/output lists");
  return Im2colGeo{in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3], k[0], k[1], d[0],
                   d[1],        p[0],        p[1],        s[0],        s[1], o[0], o[1]};
}

}  // namespace tsr::kernels
