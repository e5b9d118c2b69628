// softmax, log_softmax on CUDA over one dim of a contiguous tensor viewed as [outer, D, inner]
// (the core makes the input contiguous; see core/ops/nn/nn_softmax.cpp). As the CPU backend: the max is
// subtracted first, a NaN anywhere in a slice makes the whole slice NaN, a slice of -inf gives
// NaN; f16/bf16 compute in float.
//  - inner == 1: a warp per row for D <= 1024, a 512-thread block per row otherwise (three
//    passes: max, sum of exp, write; a row of up to a few MB stays in L2 between them);
//  - inner > 1: a thread per (outer, column), reading D strided elements (coalesced across
//    threads along the contiguous inner dim).
#include "reduce_common.cuh"
#include "tessera/kernels/softmax_geometry.hpp"

namespace tsr::cuda {
namespace {

using red::C;

template <class T, bool LOG, int THREADS>
__global__ void __launch_bounds__(THREADS == 32 ? red::kRowBlock : THREADS)
    softmax_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t D) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  __shared__ CT smem[G::kWarps];
  const int64_t row = G::row_in_grid(blockIdx.x);
  if (row >= rows) return;  // uniform over the group
  const T* xr = x + row * D;
  T* yr = y + row * D;
  CT mx = -std::numeric_limits<CT>::infinity();
  for (int64_t j = G::lane(); j < D; j += THREADS) mx = red::max_nan(mx, CT(xr[j]));
  mx = G::allreduce(mx, red::MaxNanOp{}, smem);
  CT s = 0;
  for (int64_t j = G::lane(); j < D; j += THREADS) s += red::exp_c<CT>(CT(xr[j]) - mx);
  s = G::allreduce(s, red::SumOp{}, smem);
  if constexpr (LOG) {
    // (x - max) - log(sum): x - max is exact near the max, unlike x - (max + log(sum)).
    const CT ls = red::log_c<CT>(s);
    for (int64_t j = G::lane(); j < D; j += THREADS) yr[j] = static_cast<T>((CT(xr[j]) - mx) - ls);
  } else {
    const CT inv = CT(1) / s;
    for (int64_t j = G::lane(); j < D; j += THREADS) yr[j] = static_cast<T>(red::exp_c<CT>(CT(xr[j]) - mx) * inv);
  }
}

template <class T, bool LOG>
__global__ void softmax_cols_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t D,
                                    int64_t inner) {
  using CT = C<T>;
  const int64_t total = outer * inner;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = idx / inner, j = idx % inner;
    const T* xc = x + o * D * inner + j;
    T* yc = y + o * D * inner + j;
    CT mx = -std::numeric_limits<CT>::infinity();
    for (int64_t d = 0; d < D; ++d) mx = red::max_nan(mx, CT(xc[d * inner]));
    CT s = 0;
    for (int64_t d = 0; d < D; ++d) s += red::exp_c<CT>(CT(xc[d * inner]) - mx);
    if constexpr (LOG) {
      const CT ls = red::log_c<CT>(s);
      for (int64_t d = 0; d < D; ++d) yc[d * inner] = static_cast<T>((CT(xc[d * inner]) - mx) - ls);
    } else {
      const CT inv = CT(1) / s;
      for (int64_t d = 0; d < D; ++d) yc[d * inner] = static_cast<T>(red::exp_c<CT>(CT(xc[d * inner]) - mx) * inv);
    }
  }
}

template <bool LOG>
void softmax_impl(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const kernels::SoftmaxGeo g = kernels::softmax_geo(c, in);
  if (g.empty()) return;
  const int64_t outer = g.outer, D = g.D, inner = g.inner;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(out.data);
    if (inner == 1) {
      if (D <= red::kWarpRowMax) {
        using G = red::RowGroup<32>;
        softmax_rows_kernel<T, LOG, 32>
            <<<red::row_grid(outer, G::kRowsPerBlock), dim3(32, G::kRowsPerBlock), 0, stream>>>(x, y, outer, D);
      } else {
        softmax_rows_kernel<T, LOG, 512><<<red::row_grid(outer, 1), 512, 0, stream>>>(x, y, outer, D);
      }
    } else {
      softmax_cols_kernel<T, LOG><<<grid_for(outer * inner), kBlock, 0, stream>>>(x, y, outer, D, inner);
    }
    after_launch(c);
  });
}

void softmax_kernel(KernelCall& c) { softmax_impl<false>(c); }
void log_softmax_kernel(KernelCall& c) { softmax_impl<true>(c); }

}  // namespace

TSR_CUDA_KERNELS(softmax) {
  r.kernel("softmax", "cuda::softmax", device_type, kFloatingMask, TSR_KERNEL(softmax_kernel));
  r.kernel("log_softmax", "cuda::log_softmax", device_type, kFloatingMask, TSR_KERNEL(log_softmax_kernel));
}

}  // namespace tsr::cuda
