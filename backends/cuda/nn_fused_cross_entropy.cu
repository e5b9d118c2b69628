// _nn_cross_entropy_rows and _nn_cross_entropy_rows_backward on CUDA: class-index targets over
// contiguous [N, C] logits, with ignore_index, optional class weights and label smoothing, as
// the CPU kernels (backends/cpu/nn_fused.cpp). f16/bf16 compute in float.
//  - A warp per row for C <= 1024, a 512-thread block per row otherwise.
//  - Forward: a target outside [0, C) (and not ignore_index) is reported through the device's
//    error record (report_index_error), so the next synchronizing call fails naming the op; the
//    row's loss and weight are written as 0. The CPU kernel throws at once instead.
//  - Backward: rows with ignore_index get a zero gradient; an invalid target is reported through
//    the error record as in the forward (its row's gradient written as 0), as the CPU kernel
//    refuses it: reached through op_find, the backward must not pass a bad target silently.
#include "device_error.cuh"
#include "reduce_common.cuh"
#include "tessera/kernels/nn_fused_args.hpp"

namespace tsr::cuda {
namespace {

using red::C;

// max and log-sum-exp of a row; every thread gets them.
template <class T, int THREADS>
__device__ __forceinline__ void row_lse(const T* xr, int64_t n, C<T>* smem, C<T>& mx, C<T>& sum) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  CT m = -std::numeric_limits<CT>::infinity();
  for (int64_t j = G::lane(); j < n; j += THREADS) m = red::max_nan(m, CT(xr[j]));
  mx = G::allreduce(m, red::MaxNanOp{}, smem);
  CT s = 0;
  for (int64_t j = G::lane(); j < n; j += THREADS) s += red::exp_c<CT>(CT(xr[j]) - mx);
  sum = G::allreduce(s, red::SumOp{}, smem);
}

template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS == 32 ? red::kRowBlock : THREADS)
    ce_kernel(const T* __restrict__ x, const int64_t* __restrict__ t, const T* __restrict__ w, T* __restrict__ loss,
              T* __restrict__ wsum, int64_t N, int64_t Cn, int64_t ignore, double ls, DeviceErrorRecord* rec,
              int32_t op_id) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  __shared__ CT smem[G::kWarps];
  const int64_t row = G::row_in_grid(blockIdx.x);
  if (row >= N) return;
  const int64_t tr = t[row];
  if (tr == ignore || tr < 0 || tr >= Cn) {
    if (G::lane() == 0) {
      if (tr != ignore) report_index_error(rec, op_id, tr, Cn, 1);
      loss[row] = T(0);
      wsum[row] = T(0);
    }
    return;
  }
  const T* xr = x + row * Cn;
  CT mx, s;
  row_lse<T, THREADS>(xr, Cn, smem, mx, s);
  const CT lse = mx + red::log_c<CT>(s);
  const CT wt = w ? CT(w[tr]) : CT(1);
  CT l = wt * (lse - CT(xr[tr]));
  if (ls > 0) {
    CT sm = 0;
    for (int64_t k = G::lane(); k < Cn; k += THREADS) sm += (w ? CT(w[k]) : CT(1)) * (lse - CT(xr[k]));
    sm = G::allreduce(sm, red::SumOp{}, smem);
    l = CT(1 - ls) * l + CT(ls / double(Cn)) * sm;
  }
  if (G::lane() == 0) {
    loss[row] = static_cast<T>(l);
    wsum[row] = static_cast<T>(wt);
  }
}

// dx[r, k] = (softmax[r, k] * sum_k q[r, k] - q[r, k]) * g[r], q the smoothed weighted one-hot.
template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS == 32 ? red::kRowBlock : THREADS)
    ce_backward_kernel(const T* __restrict__ x, const int64_t* __restrict__ t, const T* __restrict__ w,
                       const T* __restrict__ g, T* __restrict__ dx, int64_t N, int64_t Cn, int64_t ignore, double ls,
                       DeviceErrorRecord* rec, int32_t op_id) {
  using CT = C<T>;
  using G = red::RowGroup<THREADS>;
  __shared__ CT smem[G::kWarps];
  __shared__ double smem_d[G::kWarps];
  const int64_t row = G::row_in_grid(blockIdx.x);
  if (row >= N) return;
  const int64_t tr = t[row];
  T* dr = dx + row * Cn;
  if (tr == ignore || tr < 0 || tr >= Cn) {
    if (tr != ignore && G::lane() == 0) report_index_error(rec, op_id, tr, Cn, 1);
    for (int64_t k = G::lane(); k < Cn; k += THREADS) dr[k] = T(0);
    return;
  }
  const T* xr = x + row * Cn;
  CT mx, s;
  row_lse<T, THREADS>(xr, Cn, smem, mx, s);
  const CT inv = CT(1) / s;
  double wsum_all = double(Cn);
  if (w && ls > 0) {  // the sum of the class weights (in double, as the CPU)
    double a = 0;
    for (int64_t k = G::lane(); k < Cn; k += THREADS) a += double(CT(w[k]));
    wsum_all = G::allreduce(a, red::SumOp{}, smem_d);
  }
  const CT gr = CT(g[row]);
  const CT wt = w ? CT(w[tr]) : CT(1);
  const CT sum_q = CT(1 - ls) * wt + CT(ls / double(Cn) * wsum_all);
  const CT smooth = CT(ls / double(Cn));
  for (int64_t k = G::lane(); k < Cn; k += THREADS) {
    const CT q = smooth * (w ? CT(w[k]) : CT(1));
    T v = static_cast<T>((red::exp_c<CT>(CT(xr[k]) - mx) * inv * sum_q - q) * gr);
    if (k == tr) v = static_cast<T>(CT(v) - CT(1 - ls) * wt * gr);
    dr[k] = v;
  }
}

// args: input [N, C], target [N] int64, weight? [C], int ignore_index, float label_smoothing
void ce_fwd(KernelCall& c) {
  const auto& in = c.input(0);
  const kernels::CrossEntropyArgs a = kernels::cross_entropy_args(c, false);
  const int64_t N = a.N, Cn = a.C;
  if (N == 0) return;
  const int64_t* t = a.target;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  DeviceErrorRecord* rec = red::error_record_of(c);
  const int32_t op_id = error_op_id(c.op_name());
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    const T* w = static_cast<const T*>(a.weight);
    T* loss = static_cast<T*>(c.output(0).data);
    T* wsum = static_cast<T*>(c.output(1).data);
    if (Cn <= red::kWarpRowMax) {
      constexpr int rpb = red::RowGroup<32>::kRowsPerBlock;
      ce_kernel<T, 32><<<red::row_grid(N, rpb), dim3(32, rpb), 0, stream>>>(x, t, w, loss, wsum, N, Cn, a.ignore_index,
                                                                            a.label_smoothing, rec, op_id);
    } else {
      ce_kernel<T, 512><<<red::row_grid(N, 1), 512, 0, stream>>>(x, t, w, loss, wsum, N, Cn, a.ignore_index,
                                                                 a.label_smoothing, rec, op_id);
    }
    after_launch(c);
  });
}

// args: input [N, C], target [N], weight? [C], grad [N], int ignore_index, float label_smoothing
void ce_bwd(KernelCall& c) {
  const auto& in = c.input(0);
  const kernels::CrossEntropyArgs a = kernels::cross_entropy_args(c, true);
  const int64_t N = a.N, Cn = a.C;
  if (N == 0 || Cn == 0) return;
  const int64_t* t = a.target;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  DeviceErrorRecord* rec = red::error_record_of(c);
  const int32_t op_id = error_op_id(c.op_name());
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    const T* w = static_cast<const T*>(a.weight);
    const T* g = static_cast<const T*>(a.grad);
    T* dx = static_cast<T*>(c.output(0).data);
    if (Cn <= red::kWarpRowMax) {
      constexpr int rpb = red::RowGroup<32>::kRowsPerBlock;
      ce_backward_kernel<T, 32><<<red::row_grid(N, rpb), dim3(32, rpb), 0, stream>>>(x, t, w, g, dx, N, Cn,
                                                                                     a.ignore_index, a.label_smoothing,
                                                                                     rec, op_id);
    } else {
      ce_backward_kernel<T, 512>
          <<<red::row_grid(N, 1), 512, 0, stream>>>(x, t, w, g, dx, N, Cn, a.ignore_index, a.label_smoothing, rec,
                                                    op_id);
    }
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(nn_fused_cross_entropy) {
  r.kernel("_nn_cross_entropy_rows", "cuda::nn_cross_entropy_rows", device_type, kFloatingMask, TSR_KERNEL(ce_fwd));
  r.kernel("_nn_cross_entropy_rows_backward", "cuda::nn_cross_entropy_rows_backward", device_type, kFloatingMask,
           TSR_KERNEL(ce_bwd));
}

}  // namespace tsr::cuda
