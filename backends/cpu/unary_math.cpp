// Float-only unary math of the unary family: exp2, expm1, log2, log10, log1p, reciprocal,
// trigonometric and hyperbolic functions and their inverses, erf, erfc, erfinv, logit, frac and
// the float activations (leaky_relu, elu, mish, softplus, hardswish, hardsigmoid): the shared
// kernels of tessera/kernels/unary_ops.hpp, plus the CPU's own float32 sin/cos loop. The core
// has already cast integer inputs to float32 (or rejected them); f16/bf16 compute in float.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu_common.hpp"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cpu {
namespace {

// sin/cos: f32 goes through the vectorized polynomial, then arguments beyond its range (and
// only those) are recomputed with libm (the per-element kernels::SinCosF32Op, which the CUDA
// backend uses, branches instead and would not vectorize). Blocks are staged through a local
// copy of the input, so an out= tensor that is the input itself still sees the original
// arguments in the fix-up.
template <bool COS>
TSR_CPU_MULTIVERSION void sincos_f32_chunk(const tsr_iter_t& it, int64_t begin, int64_t end) {
  for_each_run<2>(it, begin, end, [](char* const* ptrs, const int64_t* strides, int64_t n) {
    char* o = ptrs[0];
    const char* in = ptrs[1];
    constexpr int64_t kBlock = 256;
    float x[kBlock], y[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = n - b < kBlock ? n - b : kBlock;
      if (strides[1] == int64_t(sizeof(float))) {
        std::memcpy(x, in + b * sizeof(float), size_t(m) * sizeof(float));
      } else {
        for (int64_t i = 0; i < m; ++i) std::memcpy(&x[i], in + (b + i) * strides[1], sizeof(float));
      }
      for (int64_t i = 0; i < m; ++i) y[i] = kernels::sincos_f32(x[i], COS ? 1 : 0);
      for (int64_t i = 0; i < m; ++i)
        if (!(std::fabs(x[i]) <= kernels::kSinCosFastMax)) y[i] = COS ? std::cos(x[i]) : std::sin(x[i]);
      if (strides[0] == int64_t(sizeof(float))) {
        std::memcpy(o + b * sizeof(float), y, size_t(m) * sizeof(float));
      } else {
        for (int64_t i = 0; i < m; ++i) std::memcpy(o + (b + i) * strides[0], &y[i], sizeof(float));
      }
    }
  });
}

template <bool COS>
void sincos_kernel(KernelCall& c) {
  if (c.dtype() != TSR_F32) {
    kernels::sincos<COS>(c, CpuRun(c));
    return;
  }
  const tsr_iter_t& it = c.iter();
  if (it.numel < kParallelGrain) {
    sincos_f32_chunk<COS>(it, 0, it.numel);
    return;
  }
  parallel_for(
      0, it.numel, kParallelGrain, [&](int64_t b, int64_t e) { sincos_f32_chunk<COS>(it, b, e); }, 64);
}

}  // namespace

TSR_CPU_KERNELS(unary_math) {
  kernels::register_family<kernels::UnaryMathFamily, CpuRun>(r, device_type, "cpu");
  r.kernel("sin", "cpu::sin", device_type, kFloatingMask, TSR_KERNEL(sincos_kernel<false>));
  r.kernel("cos", "cpu::cos", device_type, kFloatingMask, TSR_KERNEL(sincos_kernel<true>));
}

}  // namespace tsr::cpu
