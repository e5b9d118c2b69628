// Private to the index-family kernels of the CUDA backend (index_*.cu, nn_embedding.cu,
// nn_pool.cu, nn_im2col.cu, random_multinomial.cu, random_randperm.cu): strided offset geometry, element moves by
// item size, and atomic read-modify-write of any element type. Device code; include from .cu
// files only.
//
// Index checks: kernels validate every index they read ON THE DEVICE. An index out of range is
// recorded with report_index_error (device_error.cuh) — the first one per device wins — and the
// element it would have produced or updated is skipped; the next synchronizing call on the
// device turns the record into a status naming the op. Nothing here synchronizes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_common.hpp"
#include "device_error.cuh"
#include "tessera/dtype.hpp"
#include "tessera/kernels/item_size.hpp"

namespace tsr::cuda::idx {

// What a kernel needs to report an index error: the device's record and the op's id.
struct ErrorSink {
  DeviceErrorRecord* rec;
  int32_t op_id;
  __device__ void report(int64_t value, int64_t bound, int32_t dim) const {
    report_index_error(rec, op_id, value, bound, dim);
  }
};
inline ErrorSink error_sink(const KernelCall& c) {
  return ErrorSink{device_error_record(c.device().index), error_op_id(c.op_name())};
}

// Launch configuration for n threads of work (grid-stride loops cover what the cap leaves).
inline unsigned blocks_for(int64_t n) { return grid_for(n, kBlock); }

// Throws when the current CUDA launch failed, and records the op (after_launch).
inline void launched(const KernelCall& c) { after_launch(c); }

// ---- geometry -------------------------------------------------------------------------------

// Up to three strided operands iterated over one shape (row-major element numbering). Passed
// to kernels by value (a few hundred bytes of parameters).
struct Geo {
  int32_t nd = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t st[3][TSR_MAX_DIMS] = {};
};

// Offsets of element n (row-major over g.sizes) in the three operands; coords[d] optional.
__device__ inline void geo_offsets(const Geo& g, int64_t n, int64_t off[3], int64_t* coords = nullptr) {
  off[0] = off[1] = off[2] = 0;
  for (int d = g.nd - 1; d >= 0; --d) {
    const int64_t s = g.sizes[d];
    const int64_t c = n % s;
    n /= s;
    off[0] += c * g.st[0][d];
    off[1] += c * g.st[1][d];
    off[2] += c * g.st[2][d];
    if (coords) coords[d] = c;
  }
}

inline int64_t numel_of(const int64_t* sizes, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; ++d) n *= sizes[d];
  return n;
}
inline int64_t prod_range(const int64_t* sizes, int b, int e) {
  int64_t p = 1;
  for (int d = b; d < e; ++d) p *= sizes[d];
  return p;
}

// ---- element moves by size ------------------------------------------------------------------

template <size_t N>
struct UIntOf;
template <>
struct UIntOf<1> {
  using type = uint8_t;
};
template <>
struct UIntOf<2> {
  using type = uint16_t;
};
template <>
struct UIntOf<4> {
  using type = uint32_t;
};
template <>
struct UIntOf<8> {
  using type = unsigned long long;
};

// f(TypeTag<unsigned of that size>) for a dtype's item size: data moves need no dtype.
template <class F>
void by_itemsize(size_t size, const char* op, F&& f) {
  if (!kernels::with_uint_of_size<unsigned long long>(size, f))
    fail(TSR_UNIMPLEMENTED, op, ": unsupported item size ", size, " on cuda");
}

template <class To, class From>
__device__ __forceinline__ To bit_cast_dev(const From& v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast of different sizes");
  To r;
  memcpy(&r, &v, sizeof r);
  return r;
}

// ---- atomics --------------------------------------------------------------------------------

// *addr = f(*addr) atomically for any element type (CAS loop on the containing 32- or 64-bit
// word; 1- and 2-byte elements share their word with neighbours, which the loop preserves).
// f must be a pure function of the old value.
template <class T, class F>
__device__ inline void atomic_update(T* addr, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* a = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *reinterpret_cast<volatile unsigned long long*>(a), assumed;
    do {
      assumed = old;
      const T nv = f(bit_cast_dev<T>(assumed));
      old = atomicCAS(a, assumed, bit_cast_dev<unsigned long long>(nv));
    } while (old != assumed);
  } else if constexpr (sizeof(T) == 4) {
    auto* a = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(a), assumed;
    do {
      assumed = old;
      const T nv = f(bit_cast_dev<T>(assumed));
      old = atomicCAS(a, assumed, bit_cast_dev<unsigned int>(nv));
    } while (old != assumed);
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "atomic_update: unsupported size");
    using U = typename UIntOf<sizeof(T)>::type;
    const uintptr_t p = reinterpret_cast<uintptr_t>(addr);
    auto* word = reinterpret_cast<unsigned int*>(p & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(p & 3) * 8u;
    const unsigned int mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(word), assumed;
    do {
      assumed = old;
      const U cur = static_cast<U>((assumed & mask) >> shift);
      const T nv = f(bit_cast_dev<T>(cur));
      const unsigned int bits = static_cast<unsigned int>(bit_cast_dev<U>(nv)) << shift;
      old = atomicCAS(word, assumed, (assumed & ~mask) | bits);
    } while (old != assumed);
  }
}

}  // namespace tsr::cuda::idx
