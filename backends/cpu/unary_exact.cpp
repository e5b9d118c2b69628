// Unary ops of the unary family that keep integer dtypes or answer bool: sign, sgn, square,
// floor, ceil, trunc, round (with decimals), hardtanh, nan_to_num, and the predicates isnan,
// isinf, isposinf, isneginf, isfinite, signbit.
#include <cmath>
#include <limits>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;
// bool elements are read and written as bytes (0/1).
template <class T>
using Elem = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;

void sign_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<uint8_t, uint8_t>(it, [](uint8_t a) { return uint8_t(a != 0); });
    } else {
      // NaN gives 0, as in PyTorch ((0 < x) - (x < 0)).
      elementwise<T, T>(it, [](T a) {
        const C<T> x = C<T>(a);
        return static_cast<T>(C<T>(C<T>(0) < x) - C<T>(x < C<T>(0)));
      });
    }
  });
}

void square_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      elementwise<T, T>(it, [](T a) { return wrap_mul(a, a); });
    } else {
      elementwise<T, T>(it, [](T a) { return static_cast<T>(C<T>(a) * C<T>(a)); });
    }
  });
}

enum class Rnd { Floor, Ceil, Trunc };

template <Rnd R>
void rounding_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      elementwise<T, T>(it, [](T a) { return a; });
    } else {
      elementwise<T, T>(it, [](T a) {
        const C<T> x = C<T>(a);
        if constexpr (R == Rnd::Floor) return static_cast<T>(std::floor(x));
        else if constexpr (R == Rnd::Ceil) return static_cast<T>(std::ceil(x));
        else return static_cast<T>(std::trunc(x));
      });
    }
  });
}

// Half to even (the default rounding mode), as PyTorch's nearbyint; with decimals, scaled by a
// power of ten first (multiplying for decimals > 0 and dividing for < 0, as PyTorch does).
void round_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  const int64_t decimals = c.arg_is_none(1) ? 0 : c.arg_int(1);
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      elementwise<T, T>(it, [](T a) { return a; });
    } else {
      using CT = C<T>;
      if (decimals == 0) {
        elementwise<T, T>(it, [](T a) { return static_cast<T>(std::nearbyint(CT(a))); });
        return;
      }
      const bool neg = decimals < 0;
      const CT ten_pow = static_cast<CT>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
      elementwise<T, T>(it, [neg, ten_pow](T a) {
        const CT x = CT(a);
        return static_cast<T>(neg ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow);
      });
    }
  });
}

void hardtanh_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = C<T>;
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
    elementwise<T, T>(it, [lo, hi](T a) {
      CT v = CT(a);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      return static_cast<T>(v);
    });
  });
}

void nan_to_num_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_type<T>::value) {
      using E = Elem<T>;
      elementwise<E, E>(it, [](E a) { return a; });
    } else {
      using CT = C<T>;
      // Replacements are rounded to T (a posinf beyond f16's range becomes inf, as in PyTorch).
      const CT nan = c.arg_is_none(1) ? CT(0) : CT(T(c.arg_double(1)));
      const CT pinf = c.arg_is_none(2) ? CT(std::numeric_limits<T>::max()) : CT(T(c.arg_double(2)));
      const CT ninf = c.arg_is_none(3) ? CT(std::numeric_limits<T>::lowest()) : CT(T(c.arg_double(3)));
      const CT inf = std::numeric_limits<CT>::infinity();
      elementwise<T, T>(it, [=](T a) {
        const CT x = CT(a);
        CT r = x != x ? nan : x;
        r = x == inf ? pinf : r;
        r = x == -inf ? ninf : r;
        return static_cast<T>(r);
      });
    }
  });
}

enum class Pred { IsNan, IsInf, IsPosInf, IsNegInf, IsFinite, SignBit };

template <Pred P>
void predicate_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = Elem<T>;
    elementwise<bool, E>(it, [](E a) -> bool {
      if constexpr (is_float_type<T>::value) {
        const C<T> x = C<T>(a);
        const C<T> inf = std::numeric_limits<C<T>>::infinity();
        switch (P) {
          case Pred::IsNan: return x != x;
          case Pred::IsInf: return x == inf || x == -inf;
          case Pred::IsPosInf: return x == inf;
          case Pred::IsNegInf: return x == -inf;
          case Pred::IsFinite: return x == x && x != inf && x != -inf;
          default:
            // Raw bits for f16/bf16 (GCC 12 ICEs vectorizing std::signbit on them).
            if constexpr (is_reduced_float<T>::value) return (a.x >> 15) != 0;
            else return std::signbit(x);
        }
      } else {
        switch (P) {
          case Pred::IsFinite: return true;
          case Pred::SignBit:
            if constexpr (std::is_signed<E>::value) return a < 0;
            else return false;
          default: return false;
        }
      }
      return false;
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(unary_exact) {
  const int32_t dt = device_type;
  r.kernel("sign", "cpu::sign", dt, kAllMask, TSR_KERNEL(sign_kernel));
  r.kernel("sgn", "cpu::sgn", dt, kAllMask, TSR_KERNEL(sign_kernel));
  r.kernel("square", "cpu::square", dt, kNumericMask, TSR_KERNEL(square_kernel));
  r.kernel("floor", "cpu::floor", dt, kNumericMask, TSR_KERNEL(rounding_kernel<Rnd::Floor>));
  r.kernel("ceil", "cpu::ceil", dt, kNumericMask, TSR_KERNEL(rounding_kernel<Rnd::Ceil>));
  r.kernel("trunc", "cpu::trunc", dt, kNumericMask, TSR_KERNEL(rounding_kernel<Rnd::Trunc>));
  r.kernel("round", "cpu::round", dt, kNumericMask, TSR_KERNEL(round_kernel));
  r.kernel("hardtanh", "cpu::hardtanh", dt, kNumericMask, TSR_KERNEL(hardtanh_kernel));
  r.kernel("nan_to_num", "cpu::nan_to_num", dt, kAllMask, TSR_KERNEL(nan_to_num_kernel));
  r.kernel("isnan", "cpu::isnan", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::IsNan>));
  r.kernel("isinf", "cpu::isinf", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::IsInf>));
  r.kernel("isposinf", "cpu::isposinf", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::IsPosInf>));
  r.kernel("isneginf", "cpu::isneginf", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::IsNegInf>));
  r.kernel("isfinite", "cpu::isfinite", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::IsFinite>));
  r.kernel("signbit", "cpu::signbit", dt, kAllMask, TSR_KERNEL(predicate_kernel<Pred::SignBit>));
}

}  // namespace tsr::cpu
