// Device helpers shared by the CUDA reduce family (reduce*.cu, softmax.cu, nn_fused_*.cu).
// Private to the backend: included only from .cu files.
//
// Conventions: elements are loaded as the SDK types (tsr::Half / tsr::BFloat16 convert through
// float) and computed in compute_t<T> (float for 16-bit floats, T otherwise), as the CPU
// backend does; bool is handled as uint8_t wherever ordering or arithmetic is needed.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cuda_common.hpp"
#include "tessera/dtype.hpp"

namespace tsr::cuda::red {

template <class T>
using C = compute_t<T>;

// bool is one byte: order and arithmetic on it as uint8_t.
template <class T0>
using Elem = std::conditional_t<std::is_same<T0, bool>::value, uint8_t, T0>;

template <class CT>
__host__ __device__ __forceinline__ bool is_nan(CT v) {
  if constexpr (std::is_floating_point<CT>::value)
    return v != v;
  else
    return false;
}

// NaN-propagating max/min (as the CPU's max_nan/min_nan).
template <class CT>
__device__ __forceinline__ CT max_nan(CT a, CT b) {
  return (b > a || is_nan(b)) ? b : a;
}
template <class CT>
__device__ __forceinline__ CT min_nan(CT a, CT b) {
  return (b < a || is_nan(b)) ? b : a;
}

template <class CT>
__host__ __device__ constexpr CT lowest_or_neg_inf() {
  if constexpr (std::is_floating_point<CT>::value)
    return -std::numeric_limits<CT>::infinity();
  else
    return std::numeric_limits<CT>::lowest();
}
template <class CT>
__host__ __device__ constexpr CT highest_or_inf() {
  if constexpr (std::is_floating_point<CT>::value)
    return std::numeric_limits<CT>::infinity();
  else
    return std::numeric_limits<CT>::max();
}

// Math in the compute type (float or double) with CUDA's accurate library functions.
template <class CT>
__device__ __forceinline__ CT exp_c(CT x) {
  if constexpr (std::is_same<CT, float>::value)
    return expf(x);
  else
    return ::exp(x);
}
template <class CT>
__device__ __forceinline__ CT log_c(CT x) {
  if constexpr (std::is_same<CT, float>::value)
    return logf(x);
  else
    return ::log(x);
}
template <class CT>
__device__ __forceinline__ CT sqrt_c(CT x) {
  if constexpr (std::is_same<CT, float>::value)
    return sqrtf(x);
  else
    return ::sqrt(x);
}

// Warp shuffles of any trivially copyable scalar up to 8 bytes (small integers go through int).
template <class V>
__device__ __forceinline__ V shfl_down(V v, int delta, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_same<V, float>::value || std::is_same<V, double>::value || std::is_same<V, int>::value ||
                std::is_same<V, unsigned>::value || std::is_same<V, long long>::value ||
                std::is_same<V, unsigned long long>::value) {
    return __shfl_down_sync(mask, v, delta);
  } else if constexpr (sizeof(V) == 8) {
    long long x;
    memcpy(&x, &v, 8);
    x = __shfl_down_sync(mask, x, delta);
    V r;
    memcpy(&r, &x, 8);
    return r;
  } else {
    static_assert(std::is_integral<V>::value, "shfl_down: unsupported type");
    return static_cast<V>(__shfl_down_sync(mask, static_cast<int>(v), delta));
  }
}
template <class V>
__device__ __forceinline__ V shfl_up(V v, int delta, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_same<V, float>::value || std::is_same<V, double>::value || std::is_same<V, int>::value ||
                std::is_same<V, unsigned>::value || std::is_same<V, long long>::value ||
                std::is_same<V, unsigned long long>::value) {
    return __shfl_up_sync(mask, v, delta);
  } else if constexpr (sizeof(V) == 8) {
    long long x;
    memcpy(&x, &v, 8);
    x = __shfl_up_sync(mask, x, delta);
    V r;
    memcpy(&r, &x, 8);
    return r;
  } else {
    static_assert(std::is_integral<V>::value, "shfl_up: unsupported type");
    return static_cast<V>(__shfl_up_sync(mask, static_cast<int>(v), delta));
  }
}
template <class V>
__device__ __forceinline__ V shfl_idx(V v, int lane, unsigned mask = 0xffffffffu) {
  if constexpr (std::is_same<V, float>::value || std::is_same<V, double>::value || std::is_same<V, int>::value ||
                std::is_same<V, unsigned>::value || std::is_same<V, long long>::value ||
                std::is_same<V, unsigned long long>::value) {
    return __shfl_sync(mask, v, lane);
  } else if constexpr (sizeof(V) == 8) {
    long long x;
    memcpy(&x, &v, 8);
    x = __shfl_sync(mask, x, lane);
    V r;
    memcpy(&r, &x, 8);
    return r;
  } else {
    static_assert(std::is_integral<V>::value, "shfl_idx: unsupported type");
    return static_cast<V>(__shfl_sync(mask, static_cast<int>(v), lane));
  }
}

// ---- row groups: THREADS threads (a warp, or a whole block) working on one row ----------------
// Launch shape: blockDim = (THREADS, kRowBlock / THREADS) for THREADS == 32 (one row per warp,
// several rows per block), (THREADS, 1) otherwise. Every thread of a group must call the group
// reductions (they synchronize the block when THREADS > 32).

constexpr int kRowBlock = 256;

template <int THREADS>
struct RowGroup {
  static_assert(THREADS == 32 || (THREADS % 32 == 0 && THREADS <= 1024), "RowGroup: bad size");
  static constexpr int kRowsPerBlock = THREADS == 32 ? kRowBlock / 32 : 1;
  static constexpr int kWarps = THREADS / 32;

  __device__ static int lane() { return threadIdx.x; }
  __device__ static int64_t row_in_grid(int64_t block) { return block * kRowsPerBlock + threadIdx.y; }

  // Sum / max over the group; every thread gets the result. `smem` holds kWarps values of V
  // (unused for a warp) and must not be in use by another reduction at the same time.
  template <class V, class Op>
  __device__ static V allreduce(V v, Op op, V* smem) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = op(v, shfl_down(v, off));
    if constexpr (THREADS == 32) {
      return shfl_idx(v, 0);
    } else {
      const int w = threadIdx.x / 32, l = threadIdx.x % 32;
      __syncthreads();  // smem may still be read from a previous reduction
      if (l == 0) smem[w] = v;
      __syncthreads();
      V r = smem[0];
      for (int i = 1; i < kWarps; ++i) r = op(r, smem[i]);
      return r;
    }
  }
};

struct SumOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};
struct MaxNanOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return max_nan(a, b);
  }
};

// Launches a row kernel: rows split in groups of THREADS threads. Picks a warp per row for rows
// up to kWarpRowMax elements, a block of 512 threads per row otherwise.
constexpr int64_t kWarpRowMax = 1024;
inline unsigned row_grid(int64_t rows, int rows_per_block) {
  int64_t g = (rows + rows_per_block - 1) / rows_per_block;
  if (g < 1) g = 1;
  if (g > 0x7fffffffLL) g = 0x7fffffffLL;
  return static_cast<unsigned>(g);
}

// Device-side error record and op id for this call (see device_error.cuh).
inline DeviceErrorRecord* error_record_of(const KernelCall& c) { return device_error_record(c.device().index); }

}  // namespace tsr::cuda::red
