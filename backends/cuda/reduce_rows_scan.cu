// Scans along contiguous rows on CUDA: _cumulative_rows (kind 0 cumsum, 1 cumprod,
// 2 logcumsumexp) and _cumextreme_rows (cummax / cummin with indices); see
// core/ops/reduce/reduce_rows.cpp. A warp per row scans tiles with shuffles and carries the running
// value from tile to tile. Semantics as backends/cpu/reduce_rows.cpp:
//  - floating scans accumulate in double (f16/bf16/f32 too), integer scans wrap;
//  - cummax/cummin: ties move the index to the latest occurrence, a NaN sticks (a later NaN
//    moves the index to itself).
#include "reduce_common.cuh"
#include "tessera/kernels/row_geometry.hpp"

namespace tsr::cuda {
namespace {

using red::C;
using red::Elem;

constexpr int kRowsPerBlock = red::kRowBlock / 32;

__device__ __forceinline__ double log_add_exp(double a, double b) {
  if (a != a || b != b) return __longlong_as_double(0x7ff8000000000000LL);
  const double m = a > b ? a : b;
  if (isinf(m)) return m;  // both -inf, or one +inf
  return m + log1p(exp(-fabs(a - b)));
}

template <class T, int KIND>
__global__ void __launch_bounds__(red::kRowBlock)
    cumulative_rows_kernel_impl(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n) {
  using A = std::conditional_t<is_float_type<T>::value, double, unsigned long long>;
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= rows) return;  // uniform over the warp
  const int lane = threadIdx.x;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  auto op = [](A a, A b) -> A {
    if constexpr (KIND == 0)
      return a + b;
    else if constexpr (KIND == 1)
      return a * b;
    else
      return log_add_exp(a, b);
  };
  A identity;
  if constexpr (KIND == 0)
    identity = A(0);
  else if constexpr (KIND == 1)
    identity = A(1);
  else
    identity = -std::numeric_limits<double>::infinity();
  // Each lane scans kItems consecutive elements serially, the warp scans the lane totals, and
  // the running total carries to the next tile of 32 * kItems elements.
  constexpr int kItems = 4;
  A carry = identity;
  for (int64_t base = 0; base < n; base += 32 * kItems) {
    const int64_t j0 = base + int64_t(lane) * kItems;
    A loc[kItems];
    A run = identity;
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const int64_t j = j0 + q;
      A v = identity;
      if (j < n) {
        if constexpr (is_float_type<T>::value)
          v = double(C<T>(xr[j]));
        else
          v = static_cast<unsigned long long>(static_cast<long long>(xr[j]));
      }
      run = q == 0 ? v : op(run, v);
      loc[q] = run;
    }
    A tot = run;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const A u = red::shfl_up(tot, off);
      if (lane >= off) tot = op(u, tot);
    }
    const A excl = red::shfl_up(tot, 1);  // the lanes before this one
    const A prefix = lane == 0 ? carry : op(carry, excl);
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const int64_t j = j0 + q;
      if (j < n) {
        const A v = op(prefix, loc[q]);
        if constexpr (is_float_type<T>::value)
          yr[j] = static_cast<T>(static_cast<C<T>>(v));
        else
          yr[j] = static_cast<T>(v);  // wraps modulo 2^bits
      }
    }
    carry = op(carry, red::shfl_idx(tot, 31));
  }
}

template <class CT, bool MAX>
__device__ __forceinline__ void cumextreme_combine(CT& av, int64_t& ai, CT bv, int64_t bi) {
  // (a) precedes (b): b wins when it is NaN, or when a is not NaN and b ties or beats a.
  const bool take = red::is_nan(bv) || (!red::is_nan(av) && (MAX ? bv >= av : bv <= av));
  if (take) {
    av = bv;
    ai = bi;
  }
}

template <class T, bool MAX>
__global__ void __launch_bounds__(red::kRowBlock)
    cumextreme_rows_kernel_impl(const T* __restrict__ x, T* __restrict__ y, int64_t* __restrict__ ix, int64_t rows,
                                int64_t n) {
  using CT = C<T>;
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= rows) return;
  const int lane = threadIdx.x;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  int64_t* ir = ix + row * n;
  CT cv = CT(0);
  int64_t ci = -1;  // no carry before the first chunk
  for (int64_t base = 0; base < n; base += 32) {
    const int64_t j = base + lane;
    CT v = j < n ? CT(xr[j]) : CT(0);
    int64_t i = j;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const CT uv = red::shfl_up(v, off);
      const int64_t ui = red::shfl_up(i, off);
      if (lane >= off) {
        // (u) precedes (v): combine u then v.
        CT av = uv;
        int64_t ai = ui;
        cumextreme_combine<CT, MAX>(av, ai, v, i);
        v = av;
        i = ai;
      }
    }
    if (ci >= 0) {
      CT av = cv;
      int64_t ai = ci;
      cumextreme_combine<CT, MAX>(av, ai, v, i);
      v = av;
      i = ai;
    }
    if (j < n) {
      yr[j] = static_cast<T>(v);
      ir[j] = i;
    }
    cv = red::shfl_idx(v, 31);
    ci = red::shfl_idx(i, 31);
  }
}

using kernels::Rows;
using kernels::rows_of;

void cumulative_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const int64_t kind = kernels::cumulative_kind(c);
  const Rows r = rows_of(in);
  if (kind < 0 || kind > 2) fail(TSR_INVALID_ARGUMENT, c.op_name(), ": unknown scan kind ", kind);
  if (r.rows == 0 || r.n == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  const unsigned grid = red::row_grid(r.rows, kRowsPerBlock);
  const dim3 block(32, kRowsPerBlock);
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    if (kind == 0) {
      cumulative_rows_kernel_impl<T, 0><<<grid, block, 0, stream>>>(x, y, r.rows, r.n);
    } else if (kind == 1) {
      cumulative_rows_kernel_impl<T, 1><<<grid, block, 0, stream>>>(x, y, r.rows, r.n);
    } else {
      if constexpr (is_float_type<T>::value)
        cumulative_rows_kernel_impl<T, 2><<<grid, block, 0, stream>>>(x, y, r.rows, r.n);
    }
    after_launch(c);
  });
}

void cumextreme_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool is_max = c.arg_bool(1);
  const Rows r = rows_of(in);
  if (r.rows == 0 || r.n == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  const unsigned grid = red::row_grid(r.rows, kRowsPerBlock);
  const dim3 block(32, kRowsPerBlock);
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    if (is_max)
      cumextreme_rows_kernel_impl<T, true><<<grid, block, 0, stream>>>(x, y, ix, r.rows, r.n);
    else
      cumextreme_rows_kernel_impl<T, false><<<grid, block, 0, stream>>>(x, y, ix, r.rows, r.n);
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(reduce_rows_scan) {
  r.kernel("_cumulative_rows", "cuda::cumulative_rows", device_type, kNumericMask, TSR_KERNEL(cumulative_rows_kernel));
  r.kernel("_cumextreme_rows", "cuda::cumextreme_rows", device_type, kAllMask, TSR_KERNEL(cumextreme_rows_kernel));
}

}  // namespace tsr::cuda
