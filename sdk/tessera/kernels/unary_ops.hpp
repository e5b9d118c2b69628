// Tessera SDK: the unary elementwise ops (per-element functors and their backend-neutral
// kernels, see tessera/kernels/family.hpp), shared by the CPU and CUDA backends.
//
// Functor conventions:
//  - "float" functors (FloatUnary<...>'s F): `template <class X> X operator()(X x) const` on the
//    compute type X (float for f16/bf16/f32, double for f64); FloatUnary<T, F> reads T, computes
//    in compute_t<T> and rounds once.
//  - the other functors take and return storage types (bool as uint8_t bytes).
// Families: UnaryFamily (neg abs relu exp log sqrt rsqrt tanh sigmoid silu gelu _gelu_backward
// _threshold_backward),
// UnaryMathFamily (float-only math; sin and cos are separate: sin_kernel/cos_kernel, because
// the CPU backend has its own float32 path for them), UnaryExactFamily (sign sgn square floor
// ceil trunc round hardtanh nan_to_num isnan isinf isposinf isneginf isfinite signbit).
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/kernels/family.hpp"
#include "tessera/kernels/math.hpp"

namespace tsr::kernels {

// ---- functors --------------------------------------------------------------------------------

template <class T, class F>
struct FloatUnary {
  F f;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const { return static_cast<T>(f(static_cast<compute_t<T>>(a))); }
};
// grad * F(x) (fused backward of an activation).
template <class T, class F>
struct FloatGrad {
  F f;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T g, T x) const {
    using X = compute_t<T>;
    return static_cast<T>(X(g) * f(X(x)));
  }
};

struct NegOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    if constexpr (std::is_integral<T>::value)
      return wrap_sub(T(0), a);
    else if constexpr (is_reduced_float<T>::value)
      return T::from_raw(static_cast<uint16_t>(a.x ^ 0x8000u));
    else
      return -a;
  }
};
struct AbsOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    if constexpr (std::is_integral<T>::value && std::is_unsigned<T>::value)
      return a;
    else if constexpr (std::is_integral<T>::value)
      return a < 0 ? wrap_sub(T(0), a) : a;
    else if constexpr (is_reduced_float<T>::value)
      return T::from_raw(static_cast<uint16_t>(a.x & 0x7fffu));
    else
      return libm::fabs(a);
  }
};
// bool (as a byte) -> bool: any nonzero byte is true.
struct NonzeroOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(uint8_t a) const { return a != 0; }
};
struct IdentityOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    return a;
  }
};
struct ReluOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    if constexpr (std::is_integral<T>::value && std::is_unsigned<T>::value) {
      return a;
    } else {
      using X = compute_t<T>;
      return X(a) < X(0) ? T(0) : a;  // NaN < 0 is false: NaN stays NaN
    }
  }
};

#define TSR_K_FLOAT_FN(Name, body)                              \
  struct Name {                                                 \
    static Name make(const KernelCall&) { return Name{}; }      \
    template <class X>                                          \
    TSR_HOST_DEVICE TSR_ALWAYS_INLINE X operator()(X x) const { \
      body                                                      \
    }                                                           \
  };
TSR_K_FLOAT_FN(ExpOp, return exp_c<X>(x);)
TSR_K_FLOAT_FN(LogOp, return log_c<X>(x);)
TSR_K_FLOAT_FN(SqrtOp, return libm::sqrt(x);)
TSR_K_FLOAT_FN(RsqrtOp, return X(1) / libm::sqrt(x);)
TSR_K_FLOAT_FN(TanhOp, return tanh_c<X>(x);)
TSR_K_FLOAT_FN(SigmoidOp, return sigmoid_c<X>(x);)
TSR_K_FLOAT_FN(SiluOp, return x * sigmoid_c<X>(x);)
TSR_K_FLOAT_FN(GeluErfOp, return gelu_erf_fast_c<X>(x);)
TSR_K_FLOAT_FN(GeluTanhOp, return gelu_tanh_fast_c<X>(x);)
TSR_K_FLOAT_FN(GeluErfGradOp, return gelu_erf_grad_c<X>(x);)
TSR_K_FLOAT_FN(GeluTanhGradOp, return gelu_tanh_grad_c<X>(x);)
TSR_K_FLOAT_FN(Exp2Op, return libm::exp2(x);)
TSR_K_FLOAT_FN(Expm1Op, return expm1_c<X>(x);)
TSR_K_FLOAT_FN(Log2Op, return libm::log2(x);)
TSR_K_FLOAT_FN(Log10Op, return libm::log10(x);)
TSR_K_FLOAT_FN(Log1pOp, return log1p_c<X>(x);)
TSR_K_FLOAT_FN(ReciprocalOp, return X(1) / x;)
TSR_K_FLOAT_FN(SinOp, return libm::sin(x);)
TSR_K_FLOAT_FN(CosOp, return libm::cos(x);)
TSR_K_FLOAT_FN(TanOp, return libm::tan(x);)
TSR_K_FLOAT_FN(AsinOp, return libm::asin(x);)
TSR_K_FLOAT_FN(AcosOp, return libm::acos(x);)
TSR_K_FLOAT_FN(AtanOp, return libm::atan(x);)
TSR_K_FLOAT_FN(SinhOp, return libm::sinh(x);)
TSR_K_FLOAT_FN(CoshOp, return libm::cosh(x);)
TSR_K_FLOAT_FN(AsinhOp, return libm::asinh(x);)
TSR_K_FLOAT_FN(AcoshOp, return libm::acosh(x);)
TSR_K_FLOAT_FN(AtanhOp, return libm::atanh(x);)
TSR_K_FLOAT_FN(ErfOp, return erf_c<X>(x);)
TSR_K_FLOAT_FN(ErfcOp, return erfc_c<X>(x);)
TSR_K_FLOAT_FN(ErfinvOp, return static_cast<X>(erfinv_f64(static_cast<double>(x)));)
TSR_K_FLOAT_FN(FracOp, return x - libm::trunc(x);)
TSR_K_FLOAT_FN(MishOp, return mish_c<X>(x);)
TSR_K_FLOAT_FN(HardswishOp, {
  X r = x + X(3);
  r = r < X(0) ? X(0) : r;
  r = r > X(6) ? X(6) : r;
  return x * r / X(6);
})
TSR_K_FLOAT_FN(HardsigmoidOp, {
  X r = x + X(3);
  r = r < X(0) ? X(0) : r;
  r = r > X(6) ? X(6) : r;
  return r / X(6);
})
#undef TSR_K_FLOAT_FN

// float32 sin/cos as the CPU backend computes them (polynomial, libm beyond kSinCosFastMax).
template <bool COS>
struct SinCosF32Op {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float operator()(float x) const { return sincos_full_f32<COS>(x); }
};

struct LogitOp {
  double eps;  // < 0: no clamping
  static LogitOp make(const KernelCall& c) { return LogitOp{c.arg_is_none(1) ? -1.0 : c.arg_double(1)}; }
  template <class X>
  TSR_HOST_DEVICE X operator()(X x) const {
    if (eps >= 0) {
      const X lo = X(eps), hi = X(1) - X(eps);
      x = x < lo ? lo : (x > hi ? hi : x);
    }
    return libm::log(x / (X(1) - x));
  }
};
struct LeakyReluOp {
  double slope;
  static LeakyReluOp make(const KernelCall& c) { return LeakyReluOp{c.arg_double(1)}; }
  template <class X>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE X operator()(X x) const {
    return x > X(0) ? x : x * X(slope);
  }
};
struct EluOp {
  double alpha, scale, input_scale;
  static EluOp make(const KernelCall& c) { return EluOp{c.arg_double(1), c.arg_double(2), c.arg_double(3)}; }
  template <class X>
  TSR_HOST_DEVICE X operator()(X x) const {
    // + X(0): elu(-0) is +0 in PyTorch (its exp(x) - 1), where expm1(-0) keeps the sign.
    return x <= X(0) ? (expm1_c<X>(x * X(input_scale)) + X(0)) * X(alpha) * X(scale) : x * X(scale);
  }
};
struct SoftplusOp {
  double beta, threshold;
  static SoftplusOp make(const KernelCall& c) { return SoftplusOp{c.arg_double(1), c.arg_double(2)}; }
  template <class X>
  TSR_HOST_DEVICE X operator()(X x) const {
    const X bx = x * X(beta);
    return bx > X(threshold) ? x : log1p_c<X>(exp_c<X>(bx)) / X(beta);
  }
};

// sign/sgn: NaN gives 0, as in PyTorch ((0 < x) - (x < 0)); bool (bytes) -> 0/1.
struct SignOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    using X = compute_t<T>;
    const X x = X(a);
    if constexpr (std::is_unsigned<X>::value)
      return static_cast<T>(x != X(0));  // no x < 0 test
    else
      return static_cast<T>(X(X(0) < x) - X(x < X(0)));
  }
};
struct BoolByteOp {  // byte -> 0/1 byte
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t operator()(uint8_t a) const { return uint8_t(a != 0); }
};
struct SquareOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    if constexpr (std::is_integral<T>::value) {
      return wrap_mul(a, a);
    } else {
      using X = compute_t<T>;
      return static_cast<T>(X(a) * X(a));
    }
  }
};
enum class Rnd { Floor, Ceil, Trunc };
template <Rnd R>
struct RoundingOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    if constexpr (std::is_integral<T>::value) {
      return a;
    } else {
      const compute_t<T> x = compute_t<T>(a);
      if constexpr (R == Rnd::Floor)
        return static_cast<T>(libm::floor(x));
      else if constexpr (R == Rnd::Ceil)
        return static_cast<T>(libm::ceil(x));
      else
        return static_cast<T>(libm::trunc(x));
    }
  }
};
// Half to even (the default rounding mode), as PyTorch's nearbyint.
struct RoundOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    return static_cast<T>(libm::nearbyint(compute_t<T>(a)));
  }
};
// round with decimals: scaled by a power of ten first (multiplying for decimals > 0 and dividing
// for < 0, as PyTorch does).
template <class CT>
struct RoundDecimalsOp {
  bool neg;
  CT ten_pow;
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    const CT x = CT(a);
    return static_cast<T>(neg ? libm::nearbyint(x / ten_pow) * ten_pow : libm::nearbyint(x * ten_pow) / ten_pow);
  }
};
// min first, then max (so lo > hi gives hi); NaN compares false and stays NaN.
template <class CT>
struct ClampOp {
  CT lo, hi;
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    CT v = CT(a);
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    return static_cast<T>(v);
  }
};
template <class CT>
struct NanToNumOp {
  CT nan, pinf, ninf;
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    const CT inf = std::numeric_limits<CT>::infinity();
    const CT x = CT(a);
    CT r = x != x ? nan : x;
    r = x == inf ? pinf : r;
    r = x == -inf ? ninf : r;
    return static_cast<T>(r);
  }
};

enum class Pred { IsNan, IsInf, IsPosInf, IsNegInf, IsFinite, SignBit };
// T is the dtype's C++ type; E = Elem<T> the element read.
template <Pred P, class T>
struct PredicateOp {
  using E = Elem<T>;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(E a) const {
    if constexpr (is_float_type<T>::value) {
      using X = compute_t<T>;
      const X x = X(a);
      const X inf = std::numeric_limits<X>::infinity();
      switch (P) {
        case Pred::IsNan:
          return x != x;
        case Pred::IsInf:
          return x == inf || x == -inf;
        case Pred::IsPosInf:
          return x == inf;
        case Pred::IsNegInf:
          return x == -inf;
        case Pred::IsFinite:
          return x == x && x != inf && x != -inf;
        default:
          // Raw bits (GCC 12 ICEs vectorizing std::signbit on f16/bf16).
          if constexpr (is_reduced_float<T>::value)
            return (a.x >> 15) != 0;
          else if constexpr (std::is_same<X, float>::value)
            return (::tsr::detail::f32_to_bits(x) >> 31) != 0;
          else
            return d64_bits(x) < 0;
      }
    } else {
      switch (P) {
        case Pred::IsFinite:
          return true;
        case Pred::SignBit:
          if constexpr (std::is_signed<E>::value)
            return a < 0;
          else
            return false;
        default:
          return false;
      }
    }
    return false;
  }
};

// ---- kernels ---------------------------------------------------------------------------------

template <class Run>
void neg(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T>(run, NegOp{});
  });
}

template <class Run>
void abs(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value)
      ew<bool, uint8_t>(run, NonzeroOp{});
    else
      ew<T, T>(run, AbsOp{});
  });
}

template <class Run>
void relu(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T>(run, ReluOp{});
  });
}

// out = F(x) in the compute type, F built from the call's scalar arguments (F::make).
template <class F, class Run>
void float_unary(KernelCall& c, const Run& run) {
  const F f = F::make(c);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T>(run, FloatUnary<T, F>{f}, kMath);
  });
}

// sin (COS = false) / cos: float32 through SinCosF32Op, other dtypes through libm.
template <bool COS, class Run>
void sincos(KernelCall& c, const Run& run) {
  if (c.dtype() == TSR_F32) {
    ew<float, float>(run, SinCosF32Op<COS>{}, kMath);
    return;
  }
  float_unary<std::conditional_t<COS, CosOp, SinOp>>(c, run);
}

inline bool gelu_tanh_mode(const KernelCall& c, size_t arg) {
  const char* approx = c.arg_is_none(arg) ? "none" : c.arg_str(arg);
  if (std::strcmp(approx, "tanh") == 0) return true;
  if (std::strcmp(approx, "none") == 0) return false;
  fail(TSR_INVALID_ARGUMENT, c.op_name(), ": approximate must be 'none' or 'tanh', got '", approx, "'");
}

template <class Run>
void gelu(KernelCall& c, const Run& run) {
  if (gelu_tanh_mode(c, 1))
    float_unary<GeluTanhOp>(c, run);
  else
    float_unary<GeluErfOp>(c, run);
}

// _gelu_backward(grad, self, approximate): grad * gelu'(self) in one pass.
template <class F, class Run>
void float_grad(KernelCall& c, const Run& run) {
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, FloatGrad<T, F>{F{}}, kMath);
  });
}
template <class Run>
void gelu_backward(KernelCall& c, const Run& run) {
  if (gelu_tanh_mode(c, 2))
    float_grad<GeluTanhGradOp>(c, run);
  else
    float_grad<GeluErfGradOp>(c, run);
}

// _threshold_backward(grad, self, threshold): grad where self > threshold, else 0 (relu's
// backward with threshold 0, over its saved result). A NaN self passes the gradient, as in
// PyTorch's threshold_backward. A select, not grad * mask: an infinite or NaN grad outside
// stays out.
struct ThresholdBackwardOp {
  double threshold;
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T g, T x) const {
    using X = compute_t<T>;
    return X(x) <= X(threshold) ? T(0) : g;
  }
};
template <class Run>
void threshold_backward(KernelCall& c, const Run& run) {
  const ThresholdBackwardOp op{c.arg_double(2)};
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, op, kReduced);
  });
}

template <class Run>
void sign(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value)
      ew<uint8_t, uint8_t>(run, BoolByteOp{});
    else
      ew<T, T>(run, SignOp{});
  });
}

template <class Run>
void square(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T>(run, SquareOp{});
  });
}

template <Rnd R, class Run>
void rounding(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T>(run, RoundingOp<R>{});
  });
}

template <class Run>
void round(KernelCall& c, const Run& run) {
  const int64_t decimals = c.arg_is_none(1) ? 0 : c.arg_int(1);
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      ew<T, T>(run, IdentityOp{});
    } else {
      using CT = compute_t<T>;
      if (decimals == 0) {
        ew<T, T>(run, RoundOp{});
        return;
      }
      const bool neg = decimals < 0;
      const CT ten_pow = static_cast<CT>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
      ew<T, T>(run, RoundDecimalsOp<CT>{neg, ten_pow});
    }
  });
}

template <class Run>
void hardtanh(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    CT lo, hi;
    if constexpr (std::is_integral<T>::value) {
      // Bounds outside T's range do not wrap: they clamp to the range (uint8 with min_val -1
      // keeps every value).
      const double lo_d = std::ceil(c.arg_double(1)), hi_d = std::floor(c.arg_double(2));
      const double tmin = double(std::numeric_limits<T>::lowest()), tmax = double(std::numeric_limits<T>::max());
      lo = lo_d <= tmin ? std::numeric_limits<T>::lowest() : lo_d >= tmax ? std::numeric_limits<T>::max() : T(lo_d);
      hi = hi_d <= tmin ? std::numeric_limits<T>::lowest() : hi_d >= tmax ? std::numeric_limits<T>::max() : T(hi_d);
    } else {
      // Bounds rounded to T first (as clamp does), so f16 results stay within them.
      lo = CT(c.arg_scalar<T>(1));
      hi = CT(c.arg_scalar<T>(2));
    }
    ew<T, T>(run, ClampOp<CT>{lo, hi});
  });
}

template <class Run>
void nan_to_num(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_type<T>::value) {
      using E = Elem<T>;
      ew<E, E>(run, IdentityOp{});
    } else {
      using CT = compute_t<T>;
      // Replacements are rounded to T (a posinf beyond f16's range becomes inf, as in PyTorch).
      const CT nan = c.arg_is_none(1) ? CT(0) : CT(T(c.arg_double(1)));
      const CT pinf = c.arg_is_none(2) ? CT(std::numeric_limits<T>::max()) : CT(T(c.arg_double(2)));
      const CT ninf = c.arg_is_none(3) ? CT(std::numeric_limits<T>::lowest()) : CT(T(c.arg_double(3)));
      ew<T, T>(run, NanToNumOp<CT>{nan, pinf, ninf});
    }
  });
}

template <Pred P, class Run>
void predicate(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<bool, Elem<T>>(run, PredicateOp<P, T>{});
  });
}

// ---- families --------------------------------------------------------------------------------

struct UnaryFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"neg", kNumericMask, &neg<Run>},
        {"abs", kAllMask, &abs<Run>},
        {"relu", kNumericMask, &relu<Run>},
        {"exp", kFloatingMask, &float_unary<ExpOp, Run>},
        {"log", kFloatingMask, &float_unary<LogOp, Run>},
        {"sqrt", kFloatingMask, &float_unary<SqrtOp, Run>},
        {"rsqrt", kFloatingMask, &float_unary<RsqrtOp, Run>},
        {"tanh", kFloatingMask, &float_unary<TanhOp, Run>},
        {"sigmoid", kFloatingMask, &float_unary<SigmoidOp, Run>},
        {"silu", kFloatingMask, &float_unary<SiluOp, Run>},
        {"gelu", kFloatingMask, &gelu<Run>},
        {"_gelu_backward", kFloatingMask, &gelu_backward<Run>},
        {"_threshold_backward", kFloatingMask, &threshold_backward<Run>},
    };
    return entries_array(list);
  }
};

// Without sin and cos (see sincos()).
struct UnaryMathFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"exp2", kFloatingMask, &float_unary<Exp2Op, Run>},
        {"expm1", kFloatingMask, &float_unary<Expm1Op, Run>},
        {"log2", kFloatingMask, &float_unary<Log2Op, Run>},
        {"log10", kFloatingMask, &float_unary<Log10Op, Run>},
        {"log1p", kFloatingMask, &float_unary<Log1pOp, Run>},
        {"reciprocal", kFloatingMask, &float_unary<ReciprocalOp, Run>},
        {"tan", kFloatingMask, &float_unary<TanOp, Run>},
        {"asin", kFloatingMask, &float_unary<AsinOp, Run>},
        {"acos", kFloatingMask, &float_unary<AcosOp, Run>},
        {"atan", kFloatingMask, &float_unary<AtanOp, Run>},
        {"sinh", kFloatingMask, &float_unary<SinhOp, Run>},
        {"cosh", kFloatingMask, &float_unary<CoshOp, Run>},
        {"asinh", kFloatingMask, &float_unary<AsinhOp, Run>},
        {"acosh", kFloatingMask, &float_unary<AcoshOp, Run>},
        {"atanh", kFloatingMask, &float_unary<AtanhOp, Run>},
        {"erf", kFloatingMask, &float_unary<ErfOp, Run>},
        {"erfc", kFloatingMask, &float_unary<ErfcOp, Run>},
        {"erfinv", kFloatingMask, &float_unary<ErfinvOp, Run>},
        {"frac", kFloatingMask, &float_unary<FracOp, Run>},
        {"mish", kFloatingMask, &float_unary<MishOp, Run>},
        {"hardswish", kFloatingMask, &float_unary<HardswishOp, Run>},
        {"hardsigmoid", kFloatingMask, &float_unary<HardsigmoidOp, Run>},
        {"logit", kFloatingMask, &float_unary<LogitOp, Run>},
        {"leaky_relu", kFloatingMask, &float_unary<LeakyReluOp, Run>},
        {"elu", kFloatingMask, &float_unary<EluOp, Run>},
        {"softplus", kFloatingMask, &float_unary<SoftplusOp, Run>},
    };
    return entries_array(list);
  }
};

struct UnaryExactFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"sign", kAllMask, &sign<Run>},
        {"sgn", kAllMask, &sign<Run>},
        {"square", kNumericMask, &square<Run>},
        {"floor", kNumericMask, &rounding<Rnd::Floor, Run>},
        {"ceil", kNumericMask, &rounding<Rnd::Ceil, Run>},
        {"trunc", kNumericMask, &rounding<Rnd::Trunc, Run>},
        {"round", kNumericMask, &round<Run>},
        {"hardtanh", kNumericMask, &hardtanh<Run>},
        {"nan_to_num", kAllMask, &nan_to_num<Run>},
        {"isnan", kAllMask, &predicate<Pred::IsNan, Run>},
        {"isinf", kAllMask, &predicate<Pred::IsInf, Run>},
        {"isposinf", kAllMask, &predicate<Pred::IsPosInf, Run>},
        {"isneginf", kAllMask, &predicate<Pred::IsNegInf, Run>},
        {"isfinite", kAllMask, &predicate<Pred::IsFinite, Run>},
        {"signbit", kAllMask, &predicate<Pred::SignBit, Run>},
    };
    return entries_array(list);
  }
};

}  // namespace tsr::kernels
