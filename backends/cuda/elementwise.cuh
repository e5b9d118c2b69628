// Internal to the CUDA backend: elementwise launches over tsr_iter_t (nvcc only).
//
//   launch_elementwise<Out, Ins...>(c, op)   out = op(in...) over c.iter() on stream_of(c)
//   CudaRun                                  the Run of tessera/kernels/family.hpp, so the
//                                            shared kernels (kernels::register_family) run here
//   for_each_offset<N>(c, it, f)             f(char* const ptrs[N]) for each element (byte
//                                            offsets applied), for kernels that are not out = op(in)
//
// Paths, chosen per call on the host:
//  - flat: the output is dense and every input is either dense in the same order or a single
//    element (stride 0 everywhere: 0-dim tensors, scalars). Grid-stride over the elements; when
//    every non-scalar pointer is aligned to its vector size, VEC elements per thread with one
//    16-byte access for the widest operand (narrower ones use VEC-element accesses), the tail
//    handled separately.
//  - strided: the offset of each operand computed from the linear index (dims fastest first,
//    byte strides), in int32 when numel and every operand's byte extent fit, else int64.
// The kernel arguments are small structs copied by value (only ndim dims are filled in).
// Ops are functors with TSR_HOST_DEVICE operator() (tessera/kernels/*_ops.hpp), copied into the
// kernel's parameters: they must be trivially copyable.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "cuda_common.hpp"
#include "device_error.cuh"
#include "tessera/kernels/family.hpp"

namespace tsr::cuda {

// Internals (a namespace of their own: other kernel files define helpers in tsr::cuda).
namespace ewd {

// ---- argument structs ----------------------------------------------------------------------

template <int N, class index_t>
struct OffsetCalc {
  int32_t ndim;
  index_t sizes[TSR_MAX_DIMS];
  index_t strides[TSR_MAX_DIMS][N];  // bytes

  __device__ __forceinline__ void get(index_t linear, index_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < TSR_MAX_DIMS; ++d) {
      if (d == ndim) break;
      const index_t sz = sizes[d];
      const index_t i = linear % sz;
      linear /= sz;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[d][k];
    }
  }
};

template <int N, class index_t>
struct StridedArgs {
  char* data[N];
  OffsetCalc<N, index_t> calc;
};

// Flat path: operand 0 written densely, inputs dense or single elements (scalar_mask bit k-1).
template <int N>
struct FlatArgs {
  char* data[N];
  uint32_t scalar_mask;
};

template <class T, int VEC>
struct alignas(sizeof(T) * VEC) VecOf {
  T v[VEC];
};

// A tuple of per-input vectors (std::tuple is not usable in device code).
template <size_t I, class T, int VEC>
struct VecLeaf {
  VecOf<T, VEC> x;
};
template <int VEC, class Seq, class... Ts>
struct VecTuple;
template <int VEC, size_t... I, class... Ts>
struct VecTuple<VEC, std::index_sequence<I...>, Ts...> : VecLeaf<I, Ts, VEC>... {};

template <size_t I, class T, int VEC, class Tuple>
__device__ __forceinline__ VecOf<T, VEC>& leaf(Tuple& t) {
  return static_cast<VecLeaf<I, T, VEC>&>(t).x;
}

template <class T>
__device__ __forceinline__ T load_at(const char* p, int64_t i) {
  return reinterpret_cast<const T*>(p)[i];
}

// Vector v of a dense input, or its single element repeated (scalar operand).
template <int VEC, class T>
__device__ __forceinline__ void load_vec(VecOf<T, VEC>& dst, const char* p, bool scalar, int64_t v) {
  if (scalar) {
    const T x = load_at<T>(p, 0);
#pragma unroll
    for (int j = 0; j < VEC; ++j) dst.v[j] = x;
  } else {
    dst = reinterpret_cast<const VecOf<T, VEC>*>(p)[v];
  }
}

// ---- kernels -------------------------------------------------------------------------------

template <int VEC, class Op, class Out, class... Ins, size_t... I>
__device__ __forceinline__ void flat_body(const Op& op, const FlatArgs<1 + sizeof...(Ins)>& a, int64_t n,
                                          std::index_sequence<I...>) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = int64_t(gridDim.x) * blockDim.x;
  Out* out = reinterpret_cast<Out*>(a.data[0]);
  int64_t done = 0;
  if constexpr (VEC > 1) {
    const int64_t nvec = n / VEC;
    for (int64_t v = tid; v < nvec; v += nthreads) {
      VecTuple<VEC, std::index_sequence<I...>, Ins...> in;
      (load_vec<VEC, Ins>(leaf<I, Ins, VEC>(in), a.data[I + 1], ((a.scalar_mask >> I) & 1u) != 0, v), ...);
      VecOf<Out, VEC> o;
#pragma unroll
      for (int j = 0; j < VEC; ++j) o.v[j] = op(leaf<I, Ins, VEC>(in).v[j]...);
      reinterpret_cast<VecOf<Out, VEC>*>(out)[v] = o;
    }
    done = nvec * VEC;
  }
  for (int64_t i = done + tid; i < n; i += nthreads)
    out[i] = op(load_at<Ins>(a.data[I + 1], ((a.scalar_mask >> I) & 1u) ? 0 : i)...);
}

template <int VEC, class Op, class Out, class... Ins>
__global__ void __launch_bounds__(kBlock) flat_kernel(Op op, FlatArgs<1 + sizeof...(Ins)> a, int64_t n) {
  flat_body<VEC, Op, Out, Ins...>(op, a, n, std::index_sequence_for<Ins...>{});
}

template <int N, class index_t, class F>
__global__ void __launch_bounds__(kBlock) strided_kernel(F f, StridedArgs<N, index_t> a, index_t n) {
  const index_t nthreads = index_t(gridDim.x) * index_t(blockDim.x);
  for (index_t i = index_t(blockIdx.x) * index_t(blockDim.x) + index_t(threadIdx.x); i < n; i += nthreads) {
    index_t off[N];
    a.calc.get(i, off);
    char* p[N];
#pragma unroll
    for (int k = 0; k < N; ++k) p[k] = a.data[k] + off[k];
    f(p);
  }
}

// out = op(in...) at the given element pointers.
template <class Out, class Op, class... Ins>
struct ApplyAt {
  Op op;
  template <size_t... I>
  __device__ __forceinline__ void run(char* const* p, std::index_sequence<I...>) const {
    *reinterpret_cast<Out*>(p[0]) = op(*reinterpret_cast<const Ins*>(p[I + 1])...);
  }
  __device__ __forceinline__ void operator()(char* const* p) const { run(p, std::index_sequence_for<Ins...>{}); }
};

// ---- host side -----------------------------------------------------------------------------

// Operand k dense in iteration order (element size esize)?
inline bool operand_dense(const tsr_iter_t& it, int k, int64_t esize) {
  int64_t expect = esize;
  for (int d = 0; d < it.ndim; ++d) {
    if (it.sizes[d] != 1 && it.strides[k][d] != expect) return false;
    expect *= it.sizes[d];
  }
  return true;
}
inline bool operand_scalar(const tsr_iter_t& it, int k) {
  for (int d = 0; d < it.ndim; ++d)
    if (it.sizes[d] != 1 && it.strides[k][d] != 0) return false;
  return true;
}

// Whether every operand's byte offsets (and numel, with grid-stride headroom) fit in int32.
inline bool fits_int32(const tsr_iter_t& it, int nops) {
  constexpr int64_t kLimit = int64_t(INT32_MAX) / 2;
  if (it.numel > kLimit) return false;
  for (int k = 0; k < nops; ++k) {
    int64_t extent = 0;
    for (int d = 0; d < it.ndim; ++d) {
      const int64_t s = it.strides[k][d] < 0 ? -it.strides[k][d] : it.strides[k][d];
      extent += (it.sizes[d] - 1) * s;
    }
    if (extent > kLimit) return false;
  }
  return true;
}

template <int N, class index_t>
StridedArgs<N, index_t> make_strided_args(const tsr_iter_t& it) {
  StridedArgs<N, index_t> a;
  for (int k = 0; k < N; ++k) a.data[k] = it.data[k];
  a.calc.ndim = it.ndim;
  for (int d = 0; d < it.ndim; ++d) {
    a.calc.sizes[d] = static_cast<index_t>(it.sizes[d]);
    for (int k = 0; k < N; ++k) a.calc.strides[d][k] = static_cast<index_t>(it.strides[k][d]);
  }
  return a;
}

}  // namespace ewd

// f(char* const ptrs[N]) for each element of `it` (operands 0..N-1), on c's stream.
template <int N, class F>
void for_each_offset(const KernelCall& c, const tsr_iter_t& it, const F& f) {
  if (it.numel <= 0) return;
  const cudaStream_t s = stream_of(c);
  if (ewd::fits_int32(it, N)) {
    ewd::strided_kernel<N, int32_t, F><<<grid_for(it.numel, kBlock, 4), kBlock, 0, s>>>(
        f, ewd::make_strided_args<N, int32_t>(it), static_cast<int32_t>(it.numel));
  } else {
    ewd::strided_kernel<N, int64_t, F>
        <<<grid_for(it.numel, kBlock, 4), kBlock, 0, s>>>(f, ewd::make_strided_args<N, int64_t>(it), it.numel);
  }
  after_launch(c);
}

namespace ewd {
template <class T>
constexpr size_t max_size_of() {
  return sizeof(T);
}
template <class T, class U, class... Rest>
constexpr size_t max_size_of() {
  return sizeof(T) > max_size_of<U, Rest...>() ? sizeof(T) : max_size_of<U, Rest...>();
}
}  // namespace ewd

// out = op(in...) over c.iter() (operands: out, in...). Enqueues on stream_of(c); throws on a
// launch error naming the op.
template <class Out, class... Ins, class Op>
void launch_elementwise(const KernelCall& c, const Op& op) {
  static_assert(std::is_trivially_copyable<Op>::value, "elementwise functors are copied to the device");
  constexpr int N = 1 + int(sizeof...(Ins));
  const tsr_iter_t& it = c.iter();
  if (it.numel <= 0) return;
  TSR_CHECK(it.noperands == N, TSR_INTERNAL, c.op_name(), ": cuda elementwise expects ", N, " operands, got ",
            it.noperands);
  const cudaStream_t s = stream_of(c);
  bool flat = ewd::operand_dense(it, 0, sizeof(Out));
  uint32_t scalar_mask = 0;
  {
    const size_t sizes[N] = {sizeof(Out), sizeof(Ins)...};
    for (int k = 1; k < N && flat; ++k) {
      if (ewd::operand_dense(it, k, int64_t(sizes[k]))) continue;
      if (ewd::operand_scalar(it, k))
        scalar_mask |= 1u << (k - 1);
      else
        flat = false;
    }
  }
  if (flat) {
    ewd::FlatArgs<N> a;
    for (int k = 0; k < N; ++k) a.data[k] = it.data[k];
    a.scalar_mask = scalar_mask;
    constexpr int kVec = int(16 / ewd::max_size_of<Out, Ins...>()) > 1 ? int(16 / ewd::max_size_of<Out, Ins...>()) : 1;
    bool aligned = kVec > 1 && it.numel >= kVec;
    {
      const size_t sizes[N] = {sizeof(Out), sizeof(Ins)...};
      for (int k = 0; k < N && aligned; ++k) {
        if (k > 0 && ((scalar_mask >> (k - 1)) & 1u)) continue;
        aligned = reinterpret_cast<uintptr_t>(it.data[k]) % (sizes[k] * kVec) == 0;
      }
    }
    if constexpr (kVec > 1) {
      if (aligned) {
        ewd::flat_kernel<kVec, Op, Out, Ins...><<<grid_for(it.numel, kBlock, kVec), kBlock, 0, s>>>(op, a, it.numel);
        after_launch(c);
        return;
      }
    }
    ewd::flat_kernel<1, Op, Out, Ins...><<<grid_for(it.numel, kBlock, 4), kBlock, 0, s>>>(op, a, it.numel);
    after_launch(c);
    return;
  }
  for_each_offset<N>(c, it, ewd::ApplyAt<Out, Op, Ins...>{op});
}

namespace ewd {
// A zero in operand `K` (of the N operands) of c.iter() is recorded as the device's error.
template <class T, int K>
struct ZeroDivisorCheckAt {
  DeviceErrorRecord* rec;
  int32_t op_id;
  __device__ __forceinline__ void operator()(char* const* p) const {
    if (*reinterpret_cast<const T*>(p[K]) == T(0)) report_device_error(rec, kDeviceErrorZeroDivisor, op_id, 0, 0, -1);
  }
};
}  // namespace ewd

// The Run of tessera/kernels/family.hpp for this backend. Makes the call's device current
// while alive (the stream belongs to it).
struct CudaRun {
  const KernelCall& c;
  DeviceGuard guard;
  explicit CudaRun(const KernelCall& call) : c(call), guard(call.device().index) {}

  template <class Out, class... Ins, class Op, kernels::Path P>
  void apply(const Op& op, kernels::PathTag<P>) const {
    launch_elementwise<Out, Ins...>(c, op);
  }

  // Integer division checks: a zero in operand 1 or 2 of a 3-operand iteration is reported
  // asynchronously, like a bad index: a check kernel records it in the device's error record and
  // the next synchronizing call fails with "<op>: ZeroDivisionError (...) (cuda:N)". Returns
  // false, so the division runs (a zero divisor gives an unspecified value on the device, no
  // trap). This keeps integer division free of a host round trip per call and capturable in a
  // graph; PyTorch's CUDA backend does not check at all.
  template <class T>
  bool any_zero(int operand) const {
    const tsr_iter_t& it = c.iter();
    if (it.numel <= 0) return false;
    TSR_CHECK(it.noperands == 3 && (operand == 1 || operand == 2), TSR_INTERNAL, c.op_name(),
              ": any_zero expects operand 1 or 2 of 3");
    DeviceErrorRecord* rec = device_error_record(c.device().index);
    const int32_t op_id = error_op_id(c.op_name());
    if (operand == 1)
      for_each_offset<3>(c, it, ewd::ZeroDivisorCheckAt<T, 1>{rec, op_id});
    else
      for_each_offset<3>(c, it, ewd::ZeroDivisorCheckAt<T, 2>{rec, op_id});
    return false;
  }
};

}  // namespace tsr::cuda
