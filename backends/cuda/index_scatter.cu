// scatter_reduce on CUDA (also runs scatter with reduce "assign" and scatter_add with "sum"),
// with the CPU kernel's contract (backends/cpu/index.cpp): index and src strided [O, K, I]
// around `dim` (src has the index's shape; stride 0 for expanded operands), out already holds
// self; an index in [-size, size) wraps once, anything else is reported through the device's
// error record and its update is skipped.
//
// One thread per index element updates its target atomically:
//  - sum: native atomicAdd for float, double, int32, int64 (integers wrap, as on the CPU); CAS
//    loops for the other types. float/double sums of duplicate targets are therefore NOT
//    deterministic (the order of the additions varies); integer results are exact.
//  - f16/bf16 (every reduction): CAS loop computing in float and rounding back to the 16-bit
//    type after each update, exactly the CPU kernel's per-update rounding (only the order of
//    duplicate updates differs).
//  - prod, amax, amin: CAS loops (amax/amin propagate NaN as the CPU kernel); native
//    atomicMax/Min for int32/int64.
//  - mean: the sum as above plus a per-element count (int32 scratch over out), then a pass that
//    divides every touched element by count (+1 with include_self); integers floor-divide.
//  - assign (scatter): plain stores; with duplicate targets one of the values wins, which one is
//    unspecified (as in PyTorch on CUDA).
//  - include_self=false: a first pass writes the reduction's identity into every target.
#include <limits>
#include <string>

#include <cuda_fp16.h>

#include "index_common.cuh"
#include "tessera/kernels/scatter_reduce.hpp"

namespace tsr::cuda {
namespace {

using idx::ErrorSink;
using idx::Geo;

// The reduce argument, identities and combine steps are the CPU kernel's
// (tessera/kernels/scatter_reduce.hpp), the mean's division too.
using Reduce = kernels::ScatterReduce;

template <class T>
using Math = kernels::ScatterReduceMath<T>;

// Applies one update of reduction R to *p.
template <Reduce R, class T>
__device__ __forceinline__ void apply(T* p, T v) {
  using M = Math<T>;
  using C = typename M::C;
  if constexpr (R == Reduce::Assign) {
    *p = v;
  } else if constexpr ((R == Reduce::Sum || R == Reduce::Mean) &&
                       (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                        std::is_same<T, int32_t>::value)) {
    atomicAdd(p, v);
  } else if constexpr ((R == Reduce::Sum || R == Reduce::Mean) && std::is_same<T, int64_t>::value) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (R == Reduce::Amax && std::is_same<T, int32_t>::value) {
    atomicMax(p, v);
  } else if constexpr (R == Reduce::Amin && std::is_same<T, int32_t>::value) {
    atomicMin(p, v);
  } else if constexpr (R == Reduce::Amax && std::is_same<T, int64_t>::value) {
    atomicMax(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  } else if constexpr (R == Reduce::Amin && std::is_same<T, int64_t>::value) {
    atomicMin(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  } else {
    const C cv = C(v);
    idx::atomic_update(p, [cv](T old) { return static_cast<T>(M::combine(R, C(old), cv)); });
  }
}

// Geometry of one call: g iterates the index's shape; st[0] index, st[1] src, st[2] out
// strides. out_dense[d] are out's row-major strides (for the mean's count array).
struct ScatterArgs {
  Geo g;
  int64_t out_dense[TSR_MAX_DIMS];
  int32_t dim;
  int64_t S;  // out.sizes[dim]
};

// Target of index element n: false (after reporting) when its index is out of range.
__device__ __forceinline__ bool target(const ScatterArgs& a, const int64_t* index, int64_t n, int64_t& src_off,
                                       int64_t& out_off, int64_t* out_lin, const ErrorSink& err) {
  int64_t off[3], coords[TSR_MAX_DIMS];
  idx::geo_offsets(a.g, n, off, coords);
  const int64_t raw = index[off[0]];
  int64_t t = raw;
  if (!wrap_index(t, a.S)) {
    err.report(raw, a.S, a.dim);
    return false;
  }
  src_off = off[1];
  out_off = off[2] + (t - coords[a.dim]) * a.g.st[2][a.dim];
  if (out_lin) {
    int64_t l = 0;
    for (int d = 0; d < a.g.nd; ++d) l += (d == a.dim ? t : coords[d]) * a.out_dense[d];
    *out_lin = l;
  }
  return true;
}

template <class T>
__global__ void fill_identity_k(const int64_t* __restrict__ index, T* out, int64_t total, ScatterArgs a, T ident,
                                ErrorSink err) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    int64_t so, oo;
    if (target(a, index, n, so, oo, nullptr, err)) out[oo] = ident;
  }
}

template <Reduce R, class T>
__global__ void scatter_k(const int64_t* __restrict__ index, const T* __restrict__ src, T* out, int32_t* count,
                          int64_t total, ScatterArgs a, ErrorSink err) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    int64_t so, oo, lin = 0;
    if (!target(a, index, n, so, oo, count ? &lin : nullptr, err)) continue;
    apply<R>(out + oo, src[so]);
    if (count) atomicAdd(count + lin, 1);
  }
}

// Mean: every element with updates divided by its count (+1 for self). g iterates out's shape
// (st[0] = out strides); count is row-major over it.
template <class T>
__global__ void mean_finish_k(T* out, const int32_t* __restrict__ count, int64_t total, Geo g, int32_t self_count) {
  using M = Math<T>;
  using C = typename M::C;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int32_t cnt = count[n];
    if (cnt == 0) continue;
    int64_t off[3];
    idx::geo_offsets(g, n, off);
    out[off[0]] = static_cast<T>(M::divide(C(out[off[0]]), int64_t(cnt) + self_count));
  }
}

template <class T>
void run_scatter(KernelCall& c, Reduce red, bool include_self, const ScatterArgs& a, int64_t total,
                 const tsr_tensor_view_t& index, const tsr_tensor_view_t& src, const tsr_tensor_view_t& out) {
  using M = Math<T>;
  const cudaStream_t s = stream_of(c);
  const ErrorSink err = idx::error_sink(c);
  const int64_t* ip = static_cast<const int64_t*>(index.data);
  const T* sp = static_cast<const T*>(src.data);
  T* op = static_cast<T*>(out.data);
  const unsigned blocks = idx::blocks_for(total);
  if (!include_self && red != Reduce::Assign) {
    const T ident = static_cast<T>(M::identity(red));
    fill_identity_k<T><<<blocks, kBlock, 0, s>>>(ip, op, total, a, ident, err);
    after_launch(c);
  }
  if (red == Reduce::Mean) {
    const int64_t out_n = idx::numel_of(out.sizes, out.ndim);
    Scratch counts(c, static_cast<size_t>(out_n) * sizeof(int32_t));
    auto* cnt = static_cast<int32_t*>(counts.data());
    TSR_CUDA_CHECK(cudaMemsetAsync(cnt, 0, static_cast<size_t>(out_n) * sizeof(int32_t), s), c.op_name(),
                   c.device().index);
    scatter_k<Reduce::Mean, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, cnt, total, a, err);
    after_launch(c);
    Geo og;
    og.nd = out.ndim;
    for (int d = 0; d < out.ndim; ++d) {
      og.sizes[d] = out.sizes[d];
      og.st[0][d] = out.strides[d];
    }
    mean_finish_k<T><<<idx::blocks_for(out_n), kBlock, 0, s>>>(op, cnt, out_n, og, include_self ? 1 : 0);
    after_launch(c);
    return;
  }
  switch (red) {
    case Reduce::Assign:
      scatter_k<Reduce::Assign, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, nullptr, total, a, err);
      break;
    case Reduce::Sum:
      scatter_k<Reduce::Sum, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, nullptr, total, a, err);
      break;
    case Reduce::Prod:
      scatter_k<Reduce::Prod, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, nullptr, total, a, err);
      break;
    case Reduce::Amax:
      scatter_k<Reduce::Amax, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, nullptr, total, a, err);
      break;
    default:
      scatter_k<Reduce::Amin, T><<<blocks, kBlock, 0, s>>>(ip, sp, op, nullptr, total, a, err);
      break;
  }
  after_launch(c);
}

void scatter_reduce_kernel(KernelCall& c) {
  const tsr_tensor_view_t& index = c.input(0);
  const tsr_tensor_view_t& src = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  const Reduce red = kernels::parse_scatter_reduce(c.arg_str(4));
  const bool include_self = c.arg_bool(5);
  const int nd = index.ndim;
  TSR_CHECK(nd == out.ndim && nd == src.ndim && dim >= 0 && dim < nd && nd <= TSR_MAX_DIMS, TSR_INTERNAL, c.op_name(),
            ": index rank ", nd, ", src rank ", src.ndim, ", self rank ", out.ndim, ", dim ", dim, " on cuda");
  if (red == Reduce::Mean && out.dtype == TSR_BOOL)
    fail(TSR_INVALID_ARGUMENT, c.op_name(), ": reduce='mean' is not supported for bool tensors");
  const int64_t total = idx::numel_of(index.sizes, nd);
  if (total == 0) return;
  TSR_CHECK(red != Reduce::Mean || total < (int64_t(1) << 31), TSR_UNIMPLEMENTED, c.op_name(),
            ": reduce='mean' counts need fewer than 2^31 updates on cuda");
  ScatterArgs a;
  a.g.nd = nd;
  a.dim = dim;
  a.S = out.sizes[dim];
  int64_t dense = 1;
  for (int d = nd - 1; d >= 0; --d) {
    a.g.sizes[d] = index.sizes[d];
    a.g.st[0][d] = index.strides[d];
    a.g.st[1][d] = src.strides[d];
    a.g.st[2][d] = out.strides[d];
    a.out_dense[d] = dense;
    dense *= out.sizes[d];
  }
  DeviceGuard guard(c.device().index);
  dispatch_all(out.dtype, c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_scatter<T>(c, red, include_self, a, total, index, src, out);
  });
}

}  // namespace

TSR_CUDA_KERNELS(index_scatter) {
  r.kernel("scatter_reduce", "cuda::scatter_reduce", device_type, kAllMask, TSR_KERNEL(scatter_reduce_kernel));
}

}  // namespace tsr::cuda
