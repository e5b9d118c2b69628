// Float-only unary math of the unary family: exp2, expm1, log2, log10, log1p, reciprocal,
// trigonometric and hyperbolic functions and their inverses, erf, erfc, erfinv, logit, frac and
// the float activations (leaky_relu, elu, mish, softplus, hardswish, hardsigmoid). The core has
// already cast integer inputs to float32 (or rejected them); f16/bf16 compute in float.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "unary_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

// out = f(C(x)), f built once per call from the kernel's scalar arguments.
template <class F>
void float_kernel(KernelCall& c) {
  const F f = F::make(c);
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise_mv<T, T>(it, [f](T a) { return static_cast<T>(f(C<T>(a))); });
  });
}

// Stateless functors.
#define TSR_UNARY_FN(Name, body)                            \
  struct Name {                                             \
    static Name make(KernelCall&) { return Name{}; }        \
    template <class X>                                      \
    TSR_ALWAYS_INLINE X operator()(X x) const { body }      \
  };

TSR_UNARY_FN(Exp2Fn, return std::exp2(x);)
TSR_UNARY_FN(Expm1Fn, return expm1_c<X>(x);)
TSR_UNARY_FN(Log2Fn, return std::log2(x);)
TSR_UNARY_FN(Log10Fn, return std::log10(x);)
TSR_UNARY_FN(Log1pFn, return log1p_c<X>(x);)
TSR_UNARY_FN(ReciprocalFn, return X(1) / x;)
TSR_UNARY_FN(SinFn, return std::sin(x);)
TSR_UNARY_FN(CosFn, return std::cos(x);)
TSR_UNARY_FN(TanFn, return std::tan(x);)
TSR_UNARY_FN(AsinFn, return std::asin(x);)
TSR_UNARY_FN(AcosFn, return std::acos(x);)
TSR_UNARY_FN(AtanFn, return std::atan(x);)
TSR_UNARY_FN(SinhFn, return std::sinh(x);)
TSR_UNARY_FN(CoshFn, return std::cosh(x);)
TSR_UNARY_FN(AsinhFn, return std::asinh(x);)
TSR_UNARY_FN(AcoshFn, return std::acosh(x);)
TSR_UNARY_FN(AtanhFn, return std::atanh(x);)
TSR_UNARY_FN(ErfFn, return erf_c<X>(x);)
TSR_UNARY_FN(ErfcFn, return erfc_c<X>(x);)
TSR_UNARY_FN(ErfinvFn, return static_cast<X>(erfinv_f64(static_cast<double>(x)));)
TSR_UNARY_FN(FracFn, return x - std::trunc(x);)
TSR_UNARY_FN(MishFn, return mish_c<X>(x);)
TSR_UNARY_FN(HardswishFn, {
  X r = x + X(3);
  r = r < X(0) ? X(0) : r;
  r = r > X(6) ? X(6) : r;
  return x * r / X(6);
})
TSR_UNARY_FN(HardsigmoidFn, {
  X r = x + X(3);
  r = r < X(0) ? X(0) : r;
  r = r > X(6) ? X(6) : r;
  return r / X(6);
})
#undef TSR_UNARY_FN

// sin/cos: f32 goes through the vectorized polynomial, then arguments beyond its range (and
// only those) are recomputed with libm. Blocks are staged through a local copy of the input, so
// an out= tensor that is the input itself still sees the original arguments in the fix-up.
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
      for (int64_t i = 0; i < m; ++i) y[i] = sincos_f32(x[i], COS ? 1 : 0);
      for (int64_t i = 0; i < m; ++i)
        if (!(std::fabs(x[i]) <= kSinCosFastMax)) y[i] = COS ? std::cos(x[i]) : std::sin(x[i]);
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
    float_kernel<std::conditional_t<COS, CosFn, SinFn>>(c);
    return;
  }
  const tsr_iter_t& it = c.iter();
  if (it.numel < kParallelGrain) {
    sincos_f32_chunk<COS>(it, 0, it.numel);
    return;
  }
  parallel_for(0, it.numel, kParallelGrain, [&](int64_t b, int64_t e) { sincos_f32_chunk<COS>(it, b, e); }, 64);
}

struct LogitFn {
  double eps;  // < 0: no clamping
  static LogitFn make(KernelCall& c) { return LogitFn{c.arg_is_none(1) ? -1.0 : c.arg_double(1)}; }
  template <class X>
  X operator()(X x) const {
    if (eps >= 0) {
      const X lo = X(eps), hi = X(1) - X(eps);
      x = x < lo ? lo : (x > hi ? hi : x);
    }
    return std::log(x / (X(1) - x));
  }
};

struct LeakyReluFn {
  double slope;
  static LeakyReluFn make(KernelCall& c) { return LeakyReluFn{c.arg_double(1)}; }
  template <class X>
  TSR_ALWAYS_INLINE X operator()(X x) const { return x > X(0) ? x : x * X(slope); }
};

struct EluFn {
  double alpha, scale, input_scale;
  static EluFn make(KernelCall& c) { return EluFn{c.arg_double(1), c.arg_double(2), c.arg_double(3)}; }
  template <class X>
  X operator()(X x) const {
    return x <= X(0) ? expm1_c<X>(x * X(input_scale)) * X(alpha) * X(scale) : x * X(scale);
  }
};

struct SoftplusFn {
  double beta, threshold;
  static SoftplusFn make(KernelCall& c) { return SoftplusFn{c.arg_double(1), c.arg_double(2)}; }
  template <class X>
  X operator()(X x) const {
    const X bx = x * X(beta);
    return bx > X(threshold) ? x : log1p_c<X>(exp_c<X>(bx)) / X(beta);
  }
};

}  // namespace

TSR_CPU_KERNELS(unary_math) {
  struct Entry {
    const char* op;
    const char* name;
    tsr_kernel_fn_t fn;
  };
  const Entry entries[] = {
      {"exp2", "cpu::exp2", TSR_KERNEL(float_kernel<Exp2Fn>)},
      {"expm1", "cpu::expm1", TSR_KERNEL(float_kernel<Expm1Fn>)},
      {"log2", "cpu::log2", TSR_KERNEL(float_kernel<Log2Fn>)},
      {"log10", "cpu::log10", TSR_KERNEL(float_kernel<Log10Fn>)},
      {"log1p", "cpu::log1p", TSR_KERNEL(float_kernel<Log1pFn>)},
      {"reciprocal", "cpu::reciprocal", TSR_KERNEL(float_kernel<ReciprocalFn>)},
      {"sin", "cpu::sin", TSR_KERNEL(sincos_kernel<false>)},
      {"cos", "cpu::cos", TSR_KERNEL(sincos_kernel<true>)},
      {"tan", "cpu::tan", TSR_KERNEL(float_kernel<TanFn>)},
      {"asin", "cpu::asin", TSR_KERNEL(float_kernel<AsinFn>)},
      {"acos", "cpu::acos", TSR_KERNEL(float_kernel<AcosFn>)},
      {"atan", "cpu::atan", TSR_KERNEL(float_kernel<AtanFn>)},
      {"sinh", "cpu::sinh", TSR_KERNEL(float_kernel<SinhFn>)},
      {"cosh", "cpu::cosh", TSR_KERNEL(float_kernel<CoshFn>)},
      {"asinh", "cpu::asinh", TSR_KERNEL(float_kernel<AsinhFn>)},
      {"acosh", "cpu::acosh", TSR_KERNEL(float_kernel<AcoshFn>)},
      {"atanh", "cpu::atanh", TSR_KERNEL(float_kernel<AtanhFn>)},
      {"erf", "cpu::erf", TSR_KERNEL(float_kernel<ErfFn>)},
      {"erfc", "cpu::erfc", TSR_KERNEL(float_kernel<ErfcFn>)},
      {"erfinv", "cpu::erfinv", TSR_KERNEL(float_kernel<ErfinvFn>)},
      {"frac", "cpu::frac", TSR_KERNEL(float_kernel<FracFn>)},
      {"mish", "cpu::mish", TSR_KERNEL(float_kernel<MishFn>)},
      {"hardswish", "cpu::hardswish", TSR_KERNEL(float_kernel<HardswishFn>)},
      {"hardsigmoid", "cpu::hardsigmoid", TSR_KERNEL(float_kernel<HardsigmoidFn>)},
      {"logit", "cpu::logit", TSR_KERNEL(float_kernel<LogitFn>)},
      {"leaky_relu", "cpu::leaky_relu", TSR_KERNEL(float_kernel<LeakyReluFn>)},
      {"elu", "cpu::elu", TSR_KERNEL(float_kernel<EluFn>)},
      {"softplus", "cpu::softplus", TSR_KERNEL(float_kernel<SoftplusFn>)},
  };
  for (const Entry& e : entries) r.kernel(e.op, e.name, device_type, kFloatingMask, e.fn);
}

}  // namespace tsr::cpu
