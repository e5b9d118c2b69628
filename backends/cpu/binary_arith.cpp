// Kernels of the binary family's arithmetic ops: div_mode (trunc/floor rounding), remainder,
// fmod, atan2, hypot, copysign, xlogy, logaddexp, logaddexp2, fmax, fmin, lerp.
// Integer division by zero is reported as an error before anything is written (a pre-scan of
// the divisor), so out= tensors are never partially written and nothing traps.
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

template <class T, class... Ins, class Op>
void ew(const tsr_iter_t& it, const Op& op) {
  if constexpr (is_reduced_float<T>::value) elementwise_mv<T, Ins...>(it, op);
  else elementwise<T, Ins...>(it, op);
}

// Integer divisors: fails (naming the op) when any element of input 1 is zero.
template <class T>
void check_no_zero_divisor(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  std::atomic<bool> zero{false};
  parallel_for_each_element<3>(it, [&zero](char* const* ptrs, const int64_t* strides, int64_t n) {
    const char* p = ptrs[2];
    bool z = false;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * strides[2], sizeof(T));
      z |= v == T(0);
    }
    if (z) zero.store(true, std::memory_order_relaxed);
  });
  if (zero.load()) fail(TSR_INVALID_ARGUMENT, c.op_name(), ": ZeroDivisionError (integer division by zero)");
}

// Signed integer quotient and remainder that never trap (INT_MIN / -1 wraps like two's
// complement hardware would if it did not fault); b != 0.
template <class T>
inline T int_quot(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return static_cast<T>(wrap_sub<T>(T(0), a));
  }
  return static_cast<T>(a / b);
}
template <class T>
inline T int_rem(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}

// Python floor division of floats, as PyTorch computes it (exact for representable quotients).
template <class CT>
inline CT floor_div_float(CT a, CT b) {
  if (b == CT(0)) return a / b;
  CT mod = std::fmod(a, b);
  CT div = (a - mod) / b;
  if (mod != CT(0) && ((b < CT(0)) != (mod < CT(0)))) div -= CT(1);
  if (div != CT(0)) {
    CT fl = std::floor(div);
    if (div - fl > CT(0.5)) fl += CT(1);
    return fl;
  }
  return std::copysign(CT(0), a / b);
}

void div_mode_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  const std::string mode = c.arg_str(2);
  const bool floor_mode = mode == "floor";
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      check_no_zero_divisor<T>(c);
      if (floor_mode) {
        elementwise<T, T, T>(it, [](T a, T b) {
          T q = int_quot(a, b);
          if constexpr (std::is_signed<T>::value) {
            if (((a < 0) != (b < 0)) && int_rem(a, b) != 0) q = static_cast<T>(q - 1);
          }
          return q;
        });
      } else {
        elementwise<T, T, T>(it, [](T a, T b) { return int_quot(a, b); });
      }
    } else {
      using CT = C<T>;
      if (floor_mode) ew<T, T, T>(it, [](T a, T b) { return static_cast<T>(floor_div_float<CT>(CT(a), CT(b))); });
      else ew<T, T, T>(it, [](T a, T b) { return static_cast<T>(std::trunc(CT(a) / CT(b))); });
    }
  });
}

// PYSIGN: remainder (result has the divisor's sign) else fmod (the dividend's sign).
template <bool PYSIGN>
void mod_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      check_no_zero_divisor<T>(c);
      elementwise<T, T, T>(it, [](T a, T b) {
        T r = int_rem(a, b);
        if constexpr (PYSIGN && std::is_signed<T>::value) {
          if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(wrap_add<T>(r, b));
        }
        return r;
      });
    } else {
      using CT = C<T>;
      ew<T, T, T>(it, [](T a, T b) {
        CT r = std::fmod(CT(a), CT(b));
        if (PYSIGN && r != CT(0) && ((r < CT(0)) != (CT(b) < CT(0)))) r += CT(b);
        return static_cast<T>(r);
      });
    }
  });
}
void remainder_kernel(KernelCall& c) { mod_kernel<true>(c); }
void fmod_kernel(KernelCall& c) { mod_kernel<false>(c); }

enum class F2 { Atan2, Hypot, Copysign, Xlogy, LogAddExp, LogAddExp2 };

template <F2 F, class CT>
inline CT float2(CT a, CT b) {
  switch (F) {
    case F2::Atan2: return std::atan2(a, b);
    case F2::Hypot: return std::hypot(a, b);
    case F2::Copysign: return std::copysign(a, b);
    case F2::Xlogy:
      if (b != b) return b;
      if (a == CT(0)) return CT(0);
      return a * std::log(b);
    case F2::LogAddExp: {
      if (std::isinf(a) && a == b) return a;  // inf - inf would give NaN
      CT m = a > b ? a : b;
      if (m != m) return m;
      return m + std::log1p(std::exp(-std::fabs(a - b)));
    }
    default: {
      if (std::isinf(a) && a == b) return a;
      CT m = a > b ? a : b;
      if (m != m) return m;
      const CT ln2 = CT(0.69314718055994530942);
      return m + std::log1p(std::exp2(-std::fabs(a - b))) / ln2;
    }
  }
}

template <F2 F>
void float2_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(it, [](T a, T b) { return static_cast<T>(float2<F, C<T>>(C<T>(a), C<T>(b))); });
  });
}

// fmax/fmin: a NaN operand is ignored unless both are NaN.
template <bool MAX>
void fmaxmin_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<bool, uint8_t, uint8_t>(it, [](uint8_t a, uint8_t b) { return MAX ? (a | b) != 0 : (a & b) != 0; });
    } else {
      using CT = C<T>;
      ew<T, T, T>(it, [](T a, T b) {
        CT x = CT(a), y = CT(b);
        if (x != x) return static_cast<T>(y);
        if (y != y) return static_cast<T>(x);
        return static_cast<T>(MAX ? (x < y ? y : x) : (y < x ? y : x));
      });
    }
  });
}

// lerp: the two-sided formula PyTorch uses (exact at weight 0 and 1).
void lerp_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = C<T>;
    ew<T, T, T, T>(it, [](T s, T e, T w) {
      CT a = CT(s), b = CT(e), wt = CT(w);
      CT d = b - a;
      return static_cast<T>(std::fabs(wt) < CT(0.5) ? a + wt * d : b - d * (CT(1) - wt));
    });
  });
}

void atan2_kernel(KernelCall& c) { float2_kernel<F2::Atan2>(c); }
void hypot_kernel(KernelCall& c) { float2_kernel<F2::Hypot>(c); }
void copysign_kernel(KernelCall& c) { float2_kernel<F2::Copysign>(c); }
void xlogy_kernel(KernelCall& c) { float2_kernel<F2::Xlogy>(c); }
void logaddexp_kernel(KernelCall& c) { float2_kernel<F2::LogAddExp>(c); }
void logaddexp2_kernel(KernelCall& c) { float2_kernel<F2::LogAddExp2>(c); }
void fmax_kernel(KernelCall& c) { fmaxmin_kernel<true>(c); }
void fmin_kernel(KernelCall& c) { fmaxmin_kernel<false>(c); }

}  // namespace

TSR_CPU_KERNELS(binary_arith) {
  r.kernel("div_mode", "cpu::div_mode", device_type, kNumericMask, TSR_KERNEL(div_mode_kernel));
  r.kernel("remainder", "cpu::remainder", device_type, kNumericMask, TSR_KERNEL(remainder_kernel));
  r.kernel("fmod", "cpu::fmod", device_type, kNumericMask, TSR_KERNEL(fmod_kernel));
  r.kernel("atan2", "cpu::atan2", device_type, kFloatingMask, TSR_KERNEL(atan2_kernel));
  r.kernel("hypot", "cpu::hypot", device_type, kFloatingMask, TSR_KERNEL(hypot_kernel));
  r.kernel("copysign", "cpu::copysign", device_type, kFloatingMask, TSR_KERNEL(copysign_kernel));
  r.kernel("xlogy", "cpu::xlogy", device_type, kFloatingMask, TSR_KERNEL(xlogy_kernel));
  r.kernel("logaddexp", "cpu::logaddexp", device_type, kFloatingMask, TSR_KERNEL(logaddexp_kernel));
  r.kernel("logaddexp2", "cpu::logaddexp2", device_type, kFloatingMask, TSR_KERNEL(logaddexp2_kernel));
  r.kernel("fmax", "cpu::fmax", device_type, kAllMask, TSR_KERNEL(fmax_kernel));
  r.kernel("fmin", "cpu::fmin", device_type, kAllMask, TSR_KERNEL(fmin_kernel));
  r.kernel("lerp", "cpu::lerp", device_type, kFloatingMask, TSR_KERNEL(lerp_kernel));
}

}  // namespace tsr::cpu
