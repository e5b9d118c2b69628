// add, sub, mul, div, maximum, minimum, pow.
#include <cmath>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

// f16/bf16 ops are bound by the conversions: run them through the multiversioned loops.
template <class T, class... Ins, class Op>
void ew(const tsr_iter_t& it, const Op& op) {
  if constexpr (is_reduced_float<T>::value) elementwise_mv<T, Ins...>(it, op);
  else elementwise<T, Ins...>(it, op);
}

// out = a + sign*alpha*b
template <int SIGN>
void add_sub(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      if constexpr (SIGN < 0) {
        c.unsupported_dtype();
      } else {
        if (c.arg_scalar<bool>(2)) {
          elementwise<bool, uint8_t, uint8_t>(it, [](uint8_t a, uint8_t b) { return (a | b) != 0; });
        } else {
          elementwise<bool, uint8_t, uint8_t>(it, [](uint8_t a, uint8_t) { return a != 0; });
        }
      }
    } else if constexpr (std::is_integral<T>::value) {
      const wrap_t<T> alpha = static_cast<wrap_t<T>>(c.arg_scalar<T>(2));
      if (alpha == 1) {
        elementwise<T, T, T>(it, [](T a, T b) { return SIGN > 0 ? wrap_add(a, b) : wrap_sub(a, b); });
      } else {
        elementwise<T, T, T>(it, [alpha](T a, T b) {
          const wrap_t<T> ab = alpha * static_cast<wrap_t<T>>(b);
          return static_cast<T>(SIGN > 0 ? static_cast<wrap_t<T>>(a) + ab : static_cast<wrap_t<T>>(a) - ab);
        });
      }
    } else {
      using CT = C<T>;
      const CT alpha = static_cast<CT>(c.arg_scalar<double>(2));
      if (alpha == CT(1)) {
        ew<T, T, T>(it, [](T a, T b) {
          return static_cast<T>(SIGN > 0 ? CT(a) + CT(b) : CT(a) - CT(b));
        });
      } else {
        ew<T, T, T>(it, [alpha](T a, T b) {
          return static_cast<T>(SIGN > 0 ? CT(a) + alpha * CT(b) : CT(a) - alpha * CT(b));
        });
      }
    }
  });
}

void add_kernel(KernelCall& c) { add_sub<1>(c); }
void sub_kernel(KernelCall& c) { add_sub<-1>(c); }

void mul_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), "mul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<bool, uint8_t, uint8_t>(it, [](uint8_t a, uint8_t b) { return (a & b) != 0; });
    } else if constexpr (std::is_integral<T>::value) {
      elementwise<T, T, T>(it, [](T a, T b) { return wrap_mul(a, b); });
    } else {
      ew<T, T, T>(it, [](T a, T b) { return static_cast<T>(C<T>(a) * C<T>(b)); });
    }
  });
}

void div_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), "div", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(it, [](T a, T b) { return static_cast<T>(C<T>(a) / C<T>(b)); });
  });
}

template <bool MAX>
void max_min(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<bool, uint8_t, uint8_t>(
          it, [](uint8_t a, uint8_t b) { return MAX ? (a | b) != 0 : (a & b) != 0; });
    } else {
      ew<T, T, T>(it, [](T a, T b) {
        return static_cast<T>(MAX ? max_nan<C<T>>(C<T>(a), C<T>(b)) : min_nan<C<T>>(C<T>(a), C<T>(b)));
      });
    }
  });
}
void maximum_kernel(KernelCall& c) { max_min<true>(c); }
void minimum_kernel(KernelCall& c) { max_min<false>(c); }

// Exact integer power by squaring, wrapping on overflow.
template <class T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed<T>::value) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(base);
  uint64_t e = static_cast<uint64_t>(exp);
  while (e) {
    if (e & 1u) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(result);
}

void pow_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      elementwise<T, T, T>(it, [](T a, T b) { return int_pow<T>(a, b); });
    } else {
      elementwise<T, T, T>(it, [](T a, T b) { return static_cast<T>(std::pow(C<T>(a), C<T>(b))); });
    }
  });
}

}  // namespace

void register_binary_kernels(Registrar& r, int32_t dt) {
  r.kernel("add", "cpu::add", dt, kAllMask, TSR_KERNEL(add_kernel));
  r.kernel("sub", "cpu::sub", dt, kNumericMask, TSR_KERNEL(sub_kernel));
  r.kernel("mul", "cpu::mul", dt, kAllMask, TSR_KERNEL(mul_kernel));
  r.kernel("div", "cpu::div", dt, kFloatingMask, TSR_KERNEL(div_kernel));
  r.kernel("maximum", "cpu::maximum", dt, kAllMask, TSR_KERNEL(maximum_kernel));
  r.kernel("minimum", "cpu::minimum", dt, kAllMask, TSR_KERNEL(minimum_kernel));
  r.kernel("pow", "cpu::pow", dt, kNumericMask, TSR_KERNEL(pow_kernel));
}

}  // namespace tsr::cpu
