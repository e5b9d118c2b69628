// Internal to the CPU backend: registration entry points of each kernel file, and small helpers.
// Includes only abi/ and sdk/ headers.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/iter.hpp"
#include "tessera/kernels/family.hpp"
#include "tessera/kernels/math.hpp"
#include "tessera/plugin.hpp"
#include "tessera/self_register.hpp"

namespace tsr::cpu {

// device.cpp: parses TESSERA_CPU_DEVICES, registers the "cpu" device type and the raw
// allocator; returns the device type id.
int32_t register_device(Registrar& r);

// Every kernel file registers its family itself; plugin.cpp's init runs them all
// (CpuFamilies::all(), sorted by family name). A family is named like its file:
//   TSR_CPU_KERNELS(softmax) { r.kernel(...); }   // in softmax.cpp; r: Registrar&, device_type: int32_t
struct CpuKernels {};  // this shared object's own FamilyList tag (see tessera/self_register.hpp)
using CpuFamilies = FamilyList<void (*)(Registrar& r, int32_t device_type), CpuKernels>;
#define TSR_CPU_KERNELS(family) \
  TSR_FAMILY(::tsr::cpu::CpuFamilies, family, (::tsr::Registrar & r, [[maybe_unused]] int32_t device_type))

// Integer helpers that wrap instead of overflowing (shared with the other backends).
using kernels::wrap_add;
using kernels::wrap_mul;
using kernels::wrap_sub;
using kernels::wrap_t;

// Function multiversioning for compute-bound loops: an x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) clone,
// an x86-64-v3 (AVX2, FMA, F16C) clone and the baseline, chosen once at load time (ifunc). No
// -march: the plugin runs on any x86-64. The v4 clone made softmax [4096,1024] f32 about 1.35x
// faster than v3 on an AVX-512 EPYC (7.5-8.2 -> 10.5-11.1 GB/s) and cross_entropy about 1.2x.
// `flatten` inlines every callee into each clone, so the whole loop gets the wider ISA. Use it
// on functions called per chunk *inside* parallel regions (OpenMP-outlined bodies themselves
// are compiled once for the baseline).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && __GNUC__ >= 11 && \
    !defined(TSR_CPU_NO_MULTIVERSION)
#define TSR_CPU_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define TSR_CPU_MULTIVERSION
#endif

// Prefetches p[0..n) into L1, one line at a time (for writing when WRITE): a row kernel asks for
// its next row before working on the current one from cache. Rows of 4 KiB are a page each, where
// the hardware prefetcher stops. A prefetch never faults, so p may run past the tensor's end.
// layer_norm's long rows issue it all at once (1.39 -> 1.17 ms on [4096, 1024] at 1 thread,
// memcpy's rate): its passes are lambdas over lane_sum and a plain write loop, and a prefetch
// inside either left GCC's loop scalar. row_exp_sum spreads its prefetches over its loop instead,
// 1.3x faster there. A burst is not always a gain: 16 rows of 64 ahead in layer_norm's short-row
// blocks (192 prefetches in a row) made its backward slower.
template <bool WRITE = false, class T>
TSR_ALWAYS_INLINE void prefetch_row(const T* p, int64_t n) {
  const char* c = reinterpret_cast<const char*>(p);
  for (int64_t b = 0; b < n * int64_t(sizeof(T)); b += 64) __builtin_prefetch(c + b, WRITE ? 1 : 0, 3);
}

// Software prefetch for compute-heavy loops over contiguous runs: pieces of kPrefetchPiece
// elements, each run after prefetching every operand's lines kPrefetchAhead elements
// ahead (the output, operand 0, with write intent). Why: a loop that spends ~80 cycles per
// vector (GELU's erfc + exp) issues its loads too slowly for the hardware prefetcher to run far
// ahead, and each miss to memory stalls it. Measured on the 2-core Xeon (GELU backward,
// [2816, 256] f32, operands evicted to memory as in a GPT training step): 1080 -> 870 us; with
// the output in cache 1000 -> 780 us; all in cache 777 -> 754 us. A streaming loop (add) gains
// nothing (its loads alone keep the hardware prefetcher ahead), so only these loops use it.
inline constexpr int64_t kPrefetchPiece = 64;
inline constexpr int64_t kPrefetchAhead = 512;
// Sets p[k] to element i of each operand and prefetches the piece kPrefetchAhead elements ahead.
template <int NOPS>
TSR_ALWAYS_INLINE void prefetch_piece(char* const* ptrs, const int64_t* sizes, int64_t i, char** p) {
  for (int k = 0; k < NOPS; ++k) {
    p[k] = ptrs[k] + i * sizes[k];
    const char* ahead = p[k] + kPrefetchAhead * sizes[k];
    if (k == 0)
      prefetch_row<true>(ahead, kPrefetchPiece * sizes[k]);
    else
      prefetch_row(ahead, kPrefetchPiece * sizes[k]);
  }
}

// elementwise<Out, In...> whose per-chunk loops are multiversioned (for compute-bound ops:
// transcendental math, f16/bf16 conversions). Same semantics as tsr::elementwise. Contiguous
// runs long enough to leave the cache are prefetched (prefetch_piece).
template <class Out, class... Ins, class Op>
TSR_CPU_MULTIVERSION void elementwise_chunk_mv(const tsr_iter_t& it, int64_t begin, int64_t end, const Op& op,
                                               bool stream) {
  static constexpr int NOPS = 1 + int(sizeof...(Ins));  // static: clang does not capture it implicitly
  static constexpr int64_t sizes[NOPS] = {int64_t(sizeof(Out)), int64_t(sizeof(Ins))...};
  auto body = [&op, stream](char* const* ptrs, const int64_t* strides, int64_t n) {
    bool contiguous = !stream && n >= 4 * kPrefetchPiece;
    for (int k = 0; k < NOPS; ++k) contiguous = contiguous && strides[k] == sizes[k];
    if (!contiguous) {
      tsr::detail::typed_run<Out, Ins...>(ptrs, strides, n, op, std::index_sequence_for<Ins...>{}, stream);
      return;
    }
    char* p[NOPS];
    int64_t i = 0;
    for (; i + kPrefetchPiece <= n; i += kPrefetchPiece) {
      prefetch_piece<NOPS>(ptrs, sizes, i, p);
      tsr::detail::typed_run<Out, Ins...>(p, sizes, kPrefetchPiece, op, std::index_sequence_for<Ins...>{});
    }
    for (int k = 0; k < NOPS; ++k) p[k] = ptrs[k] + i * sizes[k];
    if (i < n) tsr::detail::typed_run<Out, Ins...>(p, sizes, n - i, op, std::index_sequence_for<Ins...>{});
  };
  for_each_run<NOPS>(it, begin, end, body);
}

template <class Out, class... Ins, class Op>
void elementwise_mv(const tsr_iter_t& it, const Op& op, int64_t grain = kParallelGrain) {
  if (it.numel < grain) {
    elementwise_chunk_mv<Out, Ins...>(it, 0, it.numel, op, false);
    return;
  }
  const bool stream = it.contiguous && it.numel * int64_t(sizeof(Out)) >= stream_store_bytes();
  parallel_for(
      0, it.numel, grain, [&](int64_t b, int64_t e) { elementwise_chunk_mv<Out, Ins...>(it, b, e, op, stream); }, 64);
}

// The CPU backend's launcher for the shared elementwise kernels of tessera/kernels/
// (kernels::register_family<Family, CpuRun>): Path::Exact runs tsr::elementwise, Path::Math
// the multiversioned loops, Path::Reduced the multiversioned loops for f16/bf16 outputs only.
struct CpuRun {
  const tsr_iter_t& it;
  explicit CpuRun(const KernelCall& c) : it(c.iter()) {}

  template <class Out, class... Ins, class Op, kernels::Path P>
  void apply(const Op& op, kernels::PathTag<P>) const {
    if constexpr (P == kernels::Path::Math || (P == kernels::Path::Reduced && is_reduced_float<Out>::value))
      elementwise_mv<Out, Ins...>(it, op);
    else
      elementwise<Out, Ins...>(it, op);
  }

  // Whether operand `operand` (1 or 2: binary ops) holds a zero (integer division checks).
  template <class T>
  bool any_zero(int operand) const {
    std::atomic<bool> zero{false};
    parallel_for_each_element<3>(it, [&zero, operand](char* const* ptrs, const int64_t* strides, int64_t n) {
      const char* p = ptrs[operand];
      const int64_t s = strides[operand];
      bool z = false;
      for (int64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, p + i * s, sizeof(T));
        z |= v == T(0);
      }
      if (z) zero.store(true, std::memory_order_relaxed);
    });
    return zero.load();
  }
};

// Total elements of a view.
inline int64_t view_numel(const tsr_tensor_view_t& v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v.ndim; ++d) n *= v.sizes[d];
  return n;
}

// y[k] = f(k) for k in [0, n): with streaming stores when `stream` (an output too large to stay
// in cache, see stream_store_bytes), else plainly (the row kernels' writes).
template <class T, class F>
inline void write_row(T* y, int64_t n, bool stream, const F& f) {
  if (stream) {
    write_streaming(y, n, [&](T* dst, int64_t i0, int64_t len) {
      for (int64_t j = 0; j < len; ++j) dst[j] = f(i0 + j);
    });
  } else {
    for (int64_t k = 0; k < n; ++k) y[k] = f(k);
  }
}

}  // namespace tsr::cpu
