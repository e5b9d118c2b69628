// _nn_max_pool2d (values and flat per-plane indices of each window's first maximum, NaN
// propagating) and _nn_max_pool2d_backward on CUDA, with the CPU kernels' contracts
// (backends/cpu/nn_pool.cpp): dense [N, C, H, W] input, dense outputs.
//
// Forward: one thread per output element, the CPU kernel's window walk (shared:
// tessera/kernels/pool_geometry.hpp; same tie and NaN rules, so values and indices match it
// exactly).
// Backward: one thread per output gradient, atomicAdd into the input gradient — accumulated in
// float for f16/bf16 (an f32 scratch, rounded once at the end, as the CPU kernel's float
// accumulator) and in the output itself for f32/f64. With overlapping windows (stride <
// kernel) the order of the additions varies, so f32/f64/f16/bf16 results may differ from run
// to run in the last bits; with non-overlapping windows each input receives at most one value
// and the result is exact. Index -1 (a window without any input element) is skipped as on the
// CPU; any other index outside [0, H*W) is reported through the device's error record (the CPU
// kernel skips it silently) and skipped.
#include "index_common.cuh"
#include "tessera/kernels/pool_geometry.hpp"

namespace tsr::cuda {
namespace {

using idx::ErrorSink;

// The geometry and the window walk are the CPU kernel's (tessera/kernels/pool_geometry.hpp).
using kernels::pool_geo;
using kernels::PoolGeo;

template <class T>
__global__ void max_pool_k(const T* __restrict__ x, T* __restrict__ y, int64_t* __restrict__ ind, int64_t total,
                           PoolGeo g) {
  using CT = compute_t<T>;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = n % g.OW;
    const int64_t oh = (n / g.OW) % g.OH;
    const int64_t p = n / (g.OW * g.OH);
    const T* xp = x + p * g.H * g.W;
    CT best;
    const int64_t bi = kernels::max_pool_window(xp, g, oh, ow, &best);
    y[n] = static_cast<T>(best);
    ind[n] = bi;
  }
}

void max_pool_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  TSR_CHECK(in.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected a 4-D input");
  const PoolGeo g = pool_geo(c, in.sizes);
  const int64_t total = in.sizes[0] * in.sizes[1] * g.OH * g.OW;
  if (total == 0) return;
  DeviceGuard guard(c.device().index);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_k<T><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(
        static_cast<const T*>(in.data), static_cast<T*>(c.output(0).data), static_cast<int64_t*>(c.output(1).data),
        total, g);
  });
  after_launch(c);
}

// acc[p, idx[p, l]] += grad[p, l] (A = float for f16/bf16, T otherwise).
template <class T, class A>
__global__ void max_pool_backward_k(const T* __restrict__ g, const int64_t* __restrict__ ind, A* acc, int64_t total,
                                    int64_t L, int64_t HW, ErrorSink err) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = ind[n];
    if (i < 0 || i >= HW) {
      if (i != -1) err.report(i, HW, -1);
      continue;
    }
    atomicAdd(acc + (n / L) * HW + i, static_cast<A>(g[n]));
  }
}

template <class T>
__global__ void round_k(const float* __restrict__ acc, T* __restrict__ out, int64_t total) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x)
    out[n] = static_cast<T>(acc[n]);
}

// args: grad [N, C, OH, OW], indices [N, C, OH, OW], input_hw -> dx [N, C, H, W]
void max_pool_backward_kernel(KernelCall& c) {
  const auto& gv = c.input(0);
  const auto& out = c.output(0);
  TSR_CHECK(gv.ndim == 4 && out.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected 4-D gradients");
  const int64_t planes = out.sizes[0] * out.sizes[1], HW = out.sizes[2] * out.sizes[3];
  const int64_t L = gv.sizes[2] * gv.sizes[3];
  const int64_t n_out = planes * HW, n_grad = planes * L;
  if (n_out == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t s = stream_of(c);
  const ErrorSink err = idx::error_sink(c);
  const int64_t* ind = static_cast<const int64_t*>(c.input(1).data);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = static_cast<const T*>(gv.data);
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      T* dx = static_cast<T*>(out.data);
      TSR_CUDA_CHECK(cudaMemsetAsync(dx, 0, static_cast<size_t>(n_out) * sizeof(T), s), c.op_name(), c.device().index);
      if (n_grad == 0) return;
      max_pool_backward_k<T, T><<<idx::blocks_for(n_grad), kBlock, 0, s>>>(g, ind, dx, n_grad, L, HW, err);
      after_launch(c);
    } else {
      Scratch acc(c, static_cast<size_t>(n_out) * sizeof(float));
      float* a = static_cast<float*>(acc.data());
      TSR_CUDA_CHECK(cudaMemsetAsync(a, 0, static_cast<size_t>(n_out) * sizeof(float), s), c.op_name(),
                     c.device().index);
      if (n_grad > 0) {
        max_pool_backward_k<T, float><<<idx::blocks_for(n_grad), kBlock, 0, s>>>(g, ind, a, n_grad, L, HW, err);
        after_launch(c);
      }
      round_k<T><<<idx::blocks_for(n_out), kBlock, 0, s>>>(a, static_cast<T*>(out.data), n_out);
      after_launch(c);
    }
  });
}

}  // namespace

TSR_CUDA_KERNELS(nn_pool) {
  r.kernel("_nn_max_pool2d", "cuda::nn_max_pool2d", device_type, kFloatingMask, TSR_KERNEL(max_pool_kernel));
  r.kernel("_nn_max_pool2d_backward", "cuda::nn_max_pool2d_backward", device_type, kFloatingMask,
           TSR_KERNEL(max_pool_backward_kernel));
}

}  // namespace tsr::cuda
