// _nn_layer_norm and _nn_layer_norm_backward on CUDA (layer_norm / rms_norm over the last
// normalized_numel elements of contiguous rows; see core/ops/nn/nn_norm.cpp). As the CPU kernel
// (backends/cpu/nn_fused.cpp): mean (0 for rms), variance about the mean in two passes, rstd =
// 1/sqrt(var + eps), f16/bf16 computed in float. The forward returns only y (the op's schema
// has one output); the backward recomputes the row statistics.
//  - rows of up to 1024 elements: a warp per row; longer rows: a 512-thread block per row;
//  - dweight/dbias: column sums over rows, split over row chunks into scratch partials that a
//    second kernel adds in chunk order (deterministic).
#include <algorithm>
#include <memory>

#include "reduce_common.cuh"
#include "tessera/kernels/nn_fused_args.hpp"

namespace tsr::cuda {
namespace {

using red::C;

// Row statistics; every thread of the group gets them.
template <class T, int THREADS>
__device__ __forceinline__ void row_stats(const T* xr, int64_t M, double eps, bool rms, C<T>* smem, C<T>& mean,
                                          C<T>& rstd) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  mean = CT(0);
  if (!rms) {
    CT s = 0;
    for (int64_t j = G::lane(); j < M; j += THREADS) s += CT(xr[j]);
    mean = G::allreduce(s, red::SumOp{}, smem) / CT(M);
  }
  CT v = 0;
  for (int64_t j = G::lane(); j < M; j += THREADS) {
    const CT d = CT(xr[j]) - mean;
    v += d * d;
  }
  const CT var = G::allreduce(v, red::SumOp{}, smem) / CT(M);
  rstd = CT(1) / red::sqrt_c<CT>(var + CT(eps));
}

template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS == 32 ? red::kRowBlock : THREADS)
    layer_norm_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
                      int64_t rows, int64_t M, double eps, bool rms) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  __shared__ CT smem[G::kWarps];
  const int64_t row = G::row_in_grid(blockIdx.x);
  if (row >= rows) return;
  const T* xr = x + row * M;
  T* yr = y + row * M;
  CT mean, rstd;
  row_stats<T, THREADS>(xr, M, eps, rms, smem, mean, rstd);
  for (int64_t j = G::lane(); j < M; j += THREADS) {
    CT v = (CT(xr[j]) - mean) * rstd;
    if (w) v = v * CT(w[j]);
    if (b) v = v + CT(b[j]);
    yr[j] = static_cast<T>(v);
  }
}

// dx of each row; the row's mean and rstd go to stats[2 * row], stats[2 * row + 1].
template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS == 32 ? red::kRowBlock : THREADS)
    layer_norm_backward_rows_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ g,
                                    T* __restrict__ dx, C<T>* __restrict__ stats, int64_t rows, int64_t M, double eps,
                                    bool rms) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  __shared__ CT smem[G::kWarps];
  const int64_t row = G::row_in_grid(blockIdx.x);
  if (row >= rows) return;
  const T* xr = x + row * M;
  const T* gr = g + row * M;
  T* dr = dx + row * M;
  CT mean, rstd;
  row_stats<T, THREADS>(xr, M, eps, rms, smem, mean, rstd);
  CT sa = 0, sb = 0;  // sums of dxhat and dxhat * xhat
  for (int64_t j = G::lane(); j < M; j += THREADS) {
    const CT xh = (CT(xr[j]) - mean) * rstd;
    const CT dxh = w ? CT(gr[j]) * CT(w[j]) : CT(gr[j]);
    sa += dxh;
    sb += dxh * xh;
  }
  sa = G::allreduce(sa, red::SumOp{}, smem);
  sb = G::allreduce(sb, red::SumOp{}, smem);
  const CT ma = rms ? CT(0) : sa / CT(M), mb = sb / CT(M);
  for (int64_t j = G::lane(); j < M; j += THREADS) {
    const CT xh = (CT(xr[j]) - mean) * rstd;
    const CT dxh = w ? CT(gr[j]) * CT(w[j]) : CT(gr[j]);
    dr[j] = static_cast<T>(rstd * (dxh - ma - xh * mb));
  }
  if (G::lane() == 0) {
    stats[2 * row] = mean;
    stats[2 * row + 1] = rstd;
  }
}

// Partial column sums of g * xhat and g over the rows of chunk blockIdx.y: part[(s * 2 + 0) * M
// + j] and part[(s * 2 + 1) * M + j]. Block (32, 8): 32 columns, 8 row lanes.
template <class T>
__global__ void __launch_bounds__(256)
    layer_norm_backward_cols_kernel(const T* __restrict__ x, const T* __restrict__ g, const C<T>* __restrict__ stats,
                                    C<T>* __restrict__ part, int64_t rows, int64_t M, int64_t chunk) {
  using CT = C<T>;
  __shared__ CT sw[8][32];
  __shared__ CT sb[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = int64_t(blockIdx.x) * 32 + tx;
  const int64_t s = blockIdx.y;
  const int64_t r0 = s * chunk;
  const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
  CT aw = 0, ab = 0;
  if (j < M) {
    for (int64_t r = r0 + ty; r < r1; r += 8) {
      const CT gv = CT(g[r * M + j]);
      const CT xh = (CT(x[r * M + j]) - stats[2 * r]) * stats[2 * r + 1];
      aw += gv * xh;
      ab += gv;
    }
  }
  sw[ty][tx] = aw;
  sb[ty][tx] = ab;
  __syncthreads();
#pragma unroll
  for (int h = 4; h > 0; h >>= 1) {
    if (ty < h) {
      sw[ty][tx] += sw[ty + h][tx];
      sb[ty][tx] += sb[ty + h][tx];
    }
    __syncthreads();
  }
  if (ty == 0 && j < M) {
    part[(s * 2) * M + j] = sw[0][tx];
    part[(s * 2 + 1) * M + j] = sb[0][tx];
  }
}

template <class T>
__global__ void layer_norm_backward_finish_kernel(const C<T>* __restrict__ part, T* __restrict__ dw, T* __restrict__ db,
                                                  int64_t M, int64_t nsplit) {
  using CT = C<T>;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < M; j += int64_t(gridDim.x) * blockDim.x) {
    CT aw = 0, ab = 0;
    for (int64_t s = 0; s < nsplit; ++s) {
      aw += part[(s * 2) * M + j];
      ab += part[(s * 2 + 1) * M + j];
    }
    dw[j] = static_cast<T>(aw);
    db[j] = static_cast<T>(ab);
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// args: input, weight?, bias?, int M, float eps, bool rms
void layer_norm_fwd(KernelCall& c) {
  const auto& out = c.output(0);
  const kernels::LayerNormArgs a = kernels::layer_norm_args(c, false);
  const int64_t M = a.M;
  if (M <= 0 || a.total == 0) return;
  const int64_t rows = a.rows();
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(c.input(0).data);
    const T* w = static_cast<const T*>(a.weight);
    const T* b = static_cast<const T*>(a.bias);
    T* y = static_cast<T*>(out.data);
    if (M <= red::kWarpRowMax) {
      constexpr int rpb = red::RowGroup<32>::kRowsPerBlock;
      layer_norm_kernel<T, 32>
          <<<red::row_grid(rows, rpb), dim3(32, rpb), 0, stream>>>(x, w, b, y, rows, M, a.eps, a.rms);
    } else {
      layer_norm_kernel<T, 512><<<red::row_grid(rows, 1), 512, 0, stream>>>(x, w, b, y, rows, M, a.eps, a.rms);
    }
    after_launch(c);
  });
}

// args: input, weight?, grad, int M, float eps, bool rms -> (dx, dweight [M], dbias [M])
void layer_norm_bwd(KernelCall& c) {
  const kernels::LayerNormArgs a = kernels::layer_norm_args(c, true);
  const int64_t M = a.M;
  const auto& in = c.input(0);
  if (M <= 0) return;
  const int64_t rows = a.rows();
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = C<T>;
    const T* x = static_cast<const T*>(in.data);
    const T* w = static_cast<const T*>(a.weight);
    const T* g = static_cast<const T*>(a.grad);
    T* dx = static_cast<T*>(c.output(0).data);
    T* dw = static_cast<T*>(c.output(1).data);
    T* db = static_cast<T*>(c.output(2).data);
    // Row chunks for the column sums: enough blocks to fill the GPU, >= 64 rows per chunk.
    const int64_t col_blocks = ceil_div(M, 32);
    int64_t nsplit = std::max<int64_t>(1, std::min<int64_t>(ceil_div(rows, 64), ceil_div(1024, col_blocks)));
    nsplit = std::min<int64_t>(nsplit, 65535);
    const int64_t chunk = std::max<int64_t>(1, ceil_div(rows, nsplit));
    nsplit = std::max<int64_t>(1, ceil_div(rows, chunk));
    const size_t stats_bytes = (size_t(2 * rows) * sizeof(CT) + 255) / 256 * 256;
    Scratch scratch(c, stats_bytes + size_t(nsplit * 2 * M) * sizeof(CT));
    CT* stats = static_cast<CT*>(scratch.data());
    CT* part = reinterpret_cast<CT*>(static_cast<char*>(scratch.data()) + stats_bytes);
    if (rows > 0) {
      if (M <= red::kWarpRowMax) {
        constexpr int rpb = red::RowGroup<32>::kRowsPerBlock;
        layer_norm_backward_rows_kernel<T, 32>
            <<<red::row_grid(rows, rpb), dim3(32, rpb), 0, stream>>>(x, w, g, dx, stats, rows, M, a.eps, a.rms);
      } else {
        layer_norm_backward_rows_kernel<T, 512>
            <<<red::row_grid(rows, 1), 512, 0, stream>>>(x, w, g, dx, stats, rows, M, a.eps, a.rms);
      }
      after_launch(c);
    }
    const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(nsplit));
    layer_norm_backward_cols_kernel<T><<<grid, dim3(32, 8), 0, stream>>>(x, g, stats, part, rows, M, chunk);
    after_launch(c);
    layer_norm_backward_finish_kernel<T><<<grid_for(M), kBlock, 0, stream>>>(part, dw, db, M, nsplit);
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(nn_fused_layer_norm) {
  r.kernel("_nn_layer_norm", "cuda::nn_layer_norm", device_type, kFloatingMask, TSR_KERNEL(layer_norm_fwd));
  r.kernel("_nn_layer_norm_backward", "cuda::nn_layer_norm_backward", device_type, kFloatingMask,
           TSR_KERNEL(layer_norm_bwd));
}

}  // namespace tsr::cuda
