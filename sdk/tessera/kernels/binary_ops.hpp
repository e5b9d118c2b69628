// Tessera SDK: the binary arithmetic ops (per-element functors and their backend-neutral
// kernels, see tessera/kernels/family.hpp), shared by the CPU and CUDA backends.
// Functors take and return storage types (bool as uint8_t bytes), computing in compute_t<T>.
// Families: BinaryFamily (add sub mul div maximum minimum pow) and BinaryArithFamily (div_mode
// remainder fmod atan2 hypot copysign xlogy logaddexp logaddexp2 fmax fmin lerp).
// Integer division by zero (div_mode, remainder, fmod) is reported as an INVALID_ARGUMENT error
// before anything is written (Run::any_zero checks the divisor first) on the CPU; the CUDA
// backend reports it at the next synchronizing call (see Run::any_zero in family.hpp).
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "tessera/kernels/family.hpp"
#include "tessera/kernels/math.hpp"

namespace tsr::kernels {

// ---- functors --------------------------------------------------------------------------------

// a + SIGN * b (integers wrap).
template <int SIGN>
struct AddOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return SIGN > 0 ? wrap_add(a, b) : wrap_sub(a, b);
    } else {
      using X = compute_t<T>;
      return static_cast<T>(SIGN > 0 ? X(a) + X(b) : X(a) - X(b));
    }
  }
};
// a + SIGN * alpha * b; A = wrap_t<T> for integers (wrapping), the compute type for floats.
template <int SIGN, class A>
struct AddAlphaOp {
  A alpha;
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      const A ab = alpha * static_cast<A>(b);
      return static_cast<T>(SIGN > 0 ? static_cast<A>(a) + ab : static_cast<A>(a) - ab);
    } else {
      using X = compute_t<T>;
      return static_cast<T>(SIGN > 0 ? X(a) + alpha * X(b) : X(a) - alpha * X(b));
    }
  }
};
// bool (bytes) ops.
struct BoolOrOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(uint8_t a, uint8_t b) const { return (a | b) != 0; }
};
struct BoolAndOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(uint8_t a, uint8_t b) const { return (a & b) != 0; }
};
struct BoolFirstOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(uint8_t a, uint8_t) const { return a != 0; }
};
struct MulOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return wrap_mul(a, b);
    } else {
      using X = compute_t<T>;
      return static_cast<T>(X(a) * X(b));
    }
  }
};
struct DivOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    using X = compute_t<T>;
    return static_cast<T>(X(a) / X(b));
  }
};
// maximum/minimum: NaN-propagating.
template <bool MAX>
struct MaxMinOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    using X = compute_t<T>;
    return static_cast<T>(MAX ? max_nan<X>(X(a), X(b)) : min_nan<X>(X(a), X(b)));
  }
};
struct PowOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return int_pow<T>(a, b);
    } else {
      using X = compute_t<T>;
      return static_cast<T>(libm::pow(X(a), X(b)));
    }
  }
};

// Integer division (b != 0): FLOOR rounds toward -inf (Python), else toward zero.
template <bool FLOOR>
struct IntDivOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    T q = int_quot(a, b);
    if constexpr (FLOOR && std::is_signed<T>::value) {
      if (((a < 0) != (b < 0)) && int_rem(a, b) != 0) q = static_cast<T>(q - 1);
    }
    return q;
  }
};
template <bool FLOOR>
struct FloatDivModeOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    using X = compute_t<T>;
    if constexpr (FLOOR)
      return static_cast<T>(floor_div_float<X>(X(a), X(b)));
    else
      return static_cast<T>(libm::trunc(X(a) / X(b)));
  }
};
// PYSIGN: remainder (result has the divisor's sign) else fmod (the dividend's sign). Integers:
// b != 0.
template <bool PYSIGN>
struct ModOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      T r = int_rem(a, b);
      if constexpr (PYSIGN && std::is_signed<T>::value) {
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(wrap_add<T>(r, b));
      }
      return r;
    } else {
      using X = compute_t<T>;
      X r = libm::fmod(X(a), X(b));
      if (PYSIGN && r != X(0) && ((r < X(0)) != (X(b) < X(0)))) r += X(b);
      return static_cast<T>(r);
    }
  }
};

enum class F2 { Atan2, Hypot, Copysign, Xlogy, LogAddExp, LogAddExp2 };
template <F2 F, class X>
TSR_HOST_DEVICE inline X float2(X a, X b) {
  const X inf = std::numeric_limits<X>::infinity();
  switch (F) {
    case F2::Atan2:
      return libm::atan2(a, b);
    case F2::Hypot:
      return libm::hypot(a, b);
    case F2::Copysign:
      return libm::copysign(a, b);
    case F2::Xlogy:
      if (b != b) return b;
      if (a == X(0)) return X(0);
      return a * libm::log(b);
    case F2::LogAddExp: {
      if ((a == inf || a == -inf) && a == b) return a;  // inf - inf would give NaN
      X m = a > b ? a : b;
      if (m != m) return m;
      return m + libm::log1p(libm::exp(-libm::fabs(a - b)));
    }
    default: {
      if ((a == inf || a == -inf) && a == b) return a;
      X m = a > b ? a : b;
      if (m != m) return m;
      const X ln2 = X(0.69314718055994530942);
      return m + libm::log1p(libm::exp2(-libm::fabs(a - b))) / ln2;
    }
  }
}
template <F2 F>
struct Float2Op {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    using X = compute_t<T>;
    return static_cast<T>(float2<F, X>(X(a), X(b)));
  }
};
// fmax/fmin: a NaN operand is ignored unless both are NaN.
template <bool MAX>
struct FMaxMinOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    using X = compute_t<T>;
    X x = X(a), y = X(b);
    if (x != x) return static_cast<T>(y);
    if (y != y) return static_cast<T>(x);
    return static_cast<T>(MAX ? (x < y ? y : x) : (y < x ? y : x));
  }
};
// lerp: the two-sided formula PyTorch uses (exact at weight 0 and 1).
struct LerpOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T s, T e, T w) const {
    using X = compute_t<T>;
    X a = X(s), b = X(e), wt = X(w);
    X d = b - a;
    return static_cast<T>(libm::fabs(wt) < X(0.5) ? a + wt * d : b - d * (X(1) - wt));
  }
};

// ---- kernels ---------------------------------------------------------------------------------

// out = a + SIGN * alpha * b (args[2] = alpha).
template <int SIGN, class Run>
void add_sub(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      if constexpr (SIGN < 0) {
        c.unsupported_dtype();
      } else {
        if (c.arg_scalar<bool>(2))
          ew<bool, uint8_t, uint8_t>(run, BoolOrOp{});
        else
          ew<bool, uint8_t, uint8_t>(run, BoolFirstOp{});
      }
    } else if constexpr (std::is_integral<T>::value) {
      const wrap_t<T> alpha = static_cast<wrap_t<T>>(c.arg_scalar<T>(2));
      if (alpha == 1)
        ew<T, T, T>(run, AddOp<SIGN>{});
      else
        ew<T, T, T>(run, AddAlphaOp<SIGN, wrap_t<T>>{alpha});
    } else {
      using CT = compute_t<T>;
      const CT alpha = static_cast<CT>(c.arg_scalar<double>(2));
      if (alpha == CT(1))
        ew<T, T, T>(run, AddOp<SIGN>{}, kReduced);
      else
        ew<T, T, T>(run, AddAlphaOp<SIGN, CT>{alpha}, kReduced);
    }
  });
}

template <class Run>
void mul(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value)
      ew<bool, uint8_t, uint8_t>(run, BoolAndOp{});
    else
      ew<T, T, T>(run, MulOp{}, kReduced);
  });
}

template <class Run>
void div(KernelCall& c, const Run& run) {
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, DivOp{}, kReduced);
  });
}

// maximum/minimum (MAX = false), and fmax/fmin (NAN_IGNORING).
template <bool MAX, bool NAN_IGNORING, class Run>
void max_min(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      if constexpr (MAX)
        ew<bool, uint8_t, uint8_t>(run, BoolOrOp{});
      else
        ew<bool, uint8_t, uint8_t>(run, BoolAndOp{});
    } else if constexpr (NAN_IGNORING) {
      ew<T, T, T>(run, FMaxMinOp<MAX>{}, kReduced);
    } else {
      ew<T, T, T>(run, MaxMinOp<MAX>{}, kReduced);
    }
  });
}

template <class Run>
void pow(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, PowOp{});
  });
}

template <class T, class Run>
void check_no_zero_divisor(KernelCall& c, const Run& run) {
  if (run.template any_zero<T>(2))
    fail(TSR_INVALID_ARGUMENT, c.op_name(), ": ZeroDivisionError (integer division by zero)");
}

// div_mode(a, b, rounding_mode): "trunc" or "floor".
template <class Run>
void div_mode(KernelCall& c, const Run& run) {
  const bool floor_mode = std::strcmp(c.arg_str(2), "floor") == 0;
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      check_no_zero_divisor<T>(c, run);
      if (floor_mode)
        ew<T, T, T>(run, IntDivOp<true>{});
      else
        ew<T, T, T>(run, IntDivOp<false>{});
    } else {
      if (floor_mode)
        ew<T, T, T>(run, FloatDivModeOp<true>{}, kReduced);
      else
        ew<T, T, T>(run, FloatDivModeOp<false>{}, kReduced);
    }
  });
}

template <bool PYSIGN, class Run>
void mod(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      check_no_zero_divisor<T>(c, run);
      ew<T, T, T>(run, ModOp<PYSIGN>{});
    } else {
      ew<T, T, T>(run, ModOp<PYSIGN>{}, kReduced);
    }
  });
}

template <F2 F, class Run>
void float2_op(KernelCall& c, const Run& run) {
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, Float2Op<F>{}, kReduced);
  });
}

template <class Run>
void lerp(KernelCall& c, const Run& run) {
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T, T>(run, LerpOp{}, kReduced);
  });
}

// ---- families --------------------------------------------------------------------------------

struct BinaryFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"add", kAllMask, &add_sub<1, Run>},
        {"sub", kNumericMask, &add_sub<-1, Run>},
        {"mul", kAllMask, &mul<Run>},
        {"div", kFloatingMask, &div<Run>},
        {"maximum", kAllMask, &max_min<true, false, Run>},
        {"minimum", kAllMask, &max_min<false, false, Run>},
        {"pow", kNumericMask, &pow<Run>},
    };
    return entries_array(list);
  }
};

struct BinaryArithFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"div_mode", kNumericMask, &div_mode<Run>},
        {"remainder", kNumericMask, &mod<true, Run>},
        {"fmod", kNumericMask, &mod<false, Run>},
        {"atan2", kFloatingMask, &float2_op<F2::Atan2, Run>},
        {"hypot", kFloatingMask, &float2_op<F2::Hypot, Run>},
        {"copysign", kFloatingMask, &float2_op<F2::Copysign, Run>},
        {"xlogy", kFloatingMask, &float2_op<F2::Xlogy, Run>},
        {"logaddexp", kFloatingMask, &float2_op<F2::LogAddExp, Run>},
        {"logaddexp2", kFloatingMask, &float2_op<F2::LogAddExp2, Run>},
        {"fmax", kAllMask, &max_min<true, true, Run>},
        {"fmin", kAllMask, &max_min<false, true, Run>},
        {"lerp", kFloatingMask, &lerp<Run>},
    };
    return entries_array(list);
  }
};

}  // namespace tsr::kernels
