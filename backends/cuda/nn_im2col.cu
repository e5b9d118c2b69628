// _nn_im2col / _nn_col2im on CUDA (the patch gather behind convolution and pooling, and its
// adjoint), with the CPU kernels' contracts (backends/cpu/nn_im2col.cpp): dense
// [N, C, H, W] <-> [N, C*kh*kw, OH*OW]; the output grid (OH, OW) is explicit so ceil-mode
// windows may run past the padded input (they read pad_value).
//
// im2col: one thread per column element. col2im: one thread per image element GATHERING its
// contributions (for each tap k at most one window position hits it), summed in tap order in
// compute_t<T> and rounded once: the CPU kernel's order and precision, so results match it
// exactly and no atomics are needed (deterministic).
#include "index_common.cuh"
#include "tessera/kernels/im2col_geometry.hpp"

namespace tsr::cuda {
namespace {

using Geometry = kernels::Im2colGeo;

// The shared geometry, and (this backend's own check) a positive stride.
Geometry geometry(const KernelCall& c, const int64_t* in_sizes, size_t a_kernel, size_t a_dil, size_t a_pad,
                  size_t a_stride, size_t a_out) {
  const Geometry g = kernels::im2col_geo(c, in_sizes, a_kernel, a_dil, a_pad, a_stride, a_out);
  TSR_CHECK(g.sh > 0 && g.sw > 0, TSR_INVALID_ARGUMENT, c.op_name(), ": stride must be positive, got [", g.sh, ", ",
            g.sw, "]");
  return g;
}

// col[(nc*K + k), oh*OW + ow] = x[nc, ih, iw] or pad.
template <class T>
__global__ void im2col_k(const T* __restrict__ x, T* __restrict__ col, int64_t total, Geometry g, T pad) {
  const int64_t K = g.kh * g.kw, L = g.OH * g.OW;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = n % L, r = n / L;
    const int64_t k = r % K, nc = r / K;
    const int64_t oh = l / g.OW, ow = l % g.OW;
    const int64_t ih = oh * g.sh - g.ph + (k / g.kw) * g.dh;
    const int64_t iw = ow * g.sw - g.pw + (k % g.kw) * g.dw;
    col[n] = (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) ? x[(nc * g.H + ih) * g.W + iw] : pad;
  }
}

void im2col_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const auto& out = c.output(0);
  TSR_CHECK(in.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected a 4-D input");
  const Geometry g = geometry(c, in.sizes, 1, 2, 3, 4, 5);
  const double padv = c.arg_double(6);
  const int64_t total = g.N * g.C * g.kh * g.kw * g.OH * g.OW;
  if (total == 0) return;
  DeviceGuard guard(c.device().index);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    im2col_k<T><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(
        static_cast<const T*>(in.data), static_cast<T*>(out.data), total, g, static_cast<T>(padv));
  });
  after_launch(c);
}

// x[p, ih, iw] = sum over taps k (in order) of the column entry whose window puts tap k there.
template <class T>
__global__ void col2im_k(const T* __restrict__ col, T* __restrict__ x, int64_t total, Geometry g) {
  using CT = compute_t<T>;
  const int64_t K = g.kh * g.kw, L = g.OH * g.OW;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t iw = n % g.W;
    const int64_t ih = (n / g.W) % g.H;
    const int64_t p = n / (g.W * g.H);
    const T* cp = col + p * K * L;
    CT acc = CT(0);
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t th = ih + g.ph - ki * g.dh;  // = oh * sh
      if (th < 0 || th % g.sh != 0) continue;
      const int64_t oh = th / g.sh;
      if (oh >= g.OH) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t tw = iw + g.pw - kj * g.dw;  // = ow * sw
        if (tw < 0 || tw % g.sw != 0) continue;
        const int64_t ow = tw / g.sw;
        if (ow >= g.OW) continue;
        acc += CT(cp[(ki * g.kw + kj) * L + oh * g.OW + ow]);
      }
    }
    x[n] = static_cast<T>(acc);
  }
}

void col2im_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const auto& out = c.output(0);
  TSR_CHECK(out.ndim == 4 && in.ndim == 3, TSR_INTERNAL, c.op_name(), ": expected [N, C*K, L] -> [N, C, H, W]");
  // args: cols, in_hw, kernel, dilation, padding, stride, out_hw
  const Geometry g = geometry(c, out.sizes, 2, 3, 4, 5, 6);
  TSR_CHECK(in.sizes[1] == g.C * g.kh * g.kw && in.sizes[2] == g.OH * g.OW, TSR_INTERNAL, c.op_name(),
            ": columns do not match the geometry");
  const int64_t total = g.N * g.C * g.H * g.W;
  if (total == 0) return;
  DeviceGuard guard(c.device().index);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    col2im_k<T><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(static_cast<const T*>(in.data),
                                                                     static_cast<T*>(out.data), total, g);
  });
  after_launch(c);
}

}  // namespace

TSR_CUDA_KERNELS(nn_im2col) {
  r.kernel("_nn_im2col", "cuda::nn_im2col", device_type, kFloatingMask, TSR_KERNEL(im2col_kernel));
  r.kernel("_nn_col2im", "cuda::nn_col2im", device_type, kFloatingMask, TSR_KERNEL(col2im_kernel));
}

}  // namespace tsr::cuda
