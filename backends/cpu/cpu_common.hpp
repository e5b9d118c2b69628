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

namespace tsr::cpu {

// device.cpp: parses TESSERA_CPU_DEVICES, registers the "cpu" device type and the raw
// allocator; returns the device type id.
int32_t register_device(Registrar& r);

void register_binary_kernels(Registrar& r, int32_t device_type);               // elementwise_binary.cpp
void register_unary_kernels(Registrar& r, int32_t device_type);                // elementwise_unary.cpp
void register_compare_where_clamp_kernels(Registrar& r, int32_t device_type);  // compare_where_clamp.cpp
void register_copy_fill_arange_kernels(Registrar& r, int32_t device_type);     // copy_fill_arange.cpp
void register_reduce_kernels(Registrar& r, int32_t device_type);               // reduce.cpp
void register_softmax_kernels(Registrar& r, int32_t device_type);              // softmax.cpp
void register_matmul_kernels(Registrar& r, int32_t device_type);               // matmul.cpp
void register_random_kernels(Registrar& r, int32_t device_type);               // random.cpp

// Further kernel files register themselves (no edit elsewhere needed):
//   TSR_CPU_KERNELS(sort) { r.kernel(...); }   // r: Registrar&, device_type: int32_t
using KernelFamilyFn = void (*)(Registrar& r, int32_t device_type);
bool register_kernel_family(const char* name, KernelFamilyFn fn);
void register_kernel_families(Registrar& r, int32_t device_type);

#define TSR_CPU_KERNELS(family)                                                   \
  static void tsr_cpu_kernels_##family(::tsr::Registrar& r, int32_t device_type); \
  [[maybe_unused]] static const bool tsr_cpu_kernels_registered_##family =        \
      ::tsr::cpu::register_kernel_family(#family, tsr_cpu_kernels_##family);      \
  static void tsr_cpu_kernels_##family(::tsr::Registrar& r, [[maybe_unused]] int32_t device_type)

// Integer helpers that wrap instead of overflowing (shared with the other backends).
using kernels::wrap_add;
using kernels::wrap_mul;
using kernels::wrap_sub;
using kernels::wrap_t;

// Function multiversioning for compute-bound loops: an x86-64-v3 (AVX2, FMA, F16C) clone and
// the baseline, chosen once at load time (ifunc). No -march: the plugin runs on any x86-64.
// `flatten` inlines every callee into each clone, so the whole loop gets the wider ISA. Use it
// on functions called per chunk *inside* parallel regions (OpenMP-outlined bodies themselves
// are compiled once for the baseline).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && __GNUC__ >= 11 && \
    !defined(TSR_CPU_NO_MULTIVERSION)
#define TSR_CPU_MULTIVERSION __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define TSR_CPU_MULTIVERSION
#endif

// elementwise<Out, In...> whose per-chunk loops are multiversioned (for compute-bound ops:
// transcendental math, f16/bf16 conversions). Same semantics as tsr::elementwise.
template <class Out, class... Ins, class Op>
TSR_CPU_MULTIVERSION void elementwise_chunk_mv(const tsr_iter_t& it, int64_t begin, int64_t end, const Op& op,
                                               bool stream) {
  constexpr int NOPS = 1 + int(sizeof...(Ins));
  auto body = [&op, stream](char* const* ptrs, const int64_t* strides, int64_t n) {
    tsr::detail::typed_run<Out, Ins...>(ptrs, strides, n, op, std::index_sequence_for<Ins...>{}, stream);
  };
  for_each_run<NOPS>(it, begin, end, body);
}

template <class Out, class... Ins, class Op>
void elementwise_mv(const tsr_iter_t& it, const Op& op, int64_t grain = kParallelGrain) {
  if (it.numel < grain) {
    elementwise_chunk_mv<Out, Ins...>(it, 0, it.numel, op, false);
    return;
  }
  const bool stream = it.contiguous && it.numel * int64_t(sizeof(Out)) >= kStreamStoreBytes;
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

}  // namespace tsr::cpu
