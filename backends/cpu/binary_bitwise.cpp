// Kernels of the binary family's logical and bitwise ops: logical_and/or/xor/not (any dtype,
// bool out), bitwise_and/or/xor/not (integers and bool), bitwise_left_shift/right_shift
// (integers; out-of-range shift counts behave as in PyTorch).
#include <climits>
#include <type_traits>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

// bool is read as its byte so that every value is 0 or 1 without conversions.
template <class T>
using Raw = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;

enum class L { And, Or, Xor };

template <L OP>
void logical_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Raw<typename decltype(tag)::type>;
    elementwise<bool, S, S>(it, [](S a, S b) {
      const bool x = C<S>(a) != C<S>(0), y = C<S>(b) != C<S>(0);
      return OP == L::And ? (x && y) : OP == L::Or ? (x || y) : (x != y);
    });
  });
}
void logical_and_kernel(KernelCall& c) { logical_kernel<L::And>(c); }
void logical_or_kernel(KernelCall& c) { logical_kernel<L::Or>(c); }
void logical_xor_kernel(KernelCall& c) { logical_kernel<L::Xor>(c); }

void logical_not_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Raw<typename decltype(tag)::type>;
    elementwise<bool, S>(it, [](S a) { return C<S>(a) == C<S>(0); });
  });
}

template <L OP>
void bitwise_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_integral_and_bool(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = Raw<T>;
    using Out = std::conditional_t<std::is_same<T, bool>::value, bool, S>;
    elementwise<Out, S, S>(it, [](S a, S b) {
      return static_cast<Out>(OP == L::And ? (a & b) : OP == L::Or ? (a | b) : (a ^ b));
    });
  });
}
void bitwise_and_kernel(KernelCall& c) { bitwise_kernel<L::And>(c); }
void bitwise_or_kernel(KernelCall& c) { bitwise_kernel<L::Or>(c); }
void bitwise_xor_kernel(KernelCall& c) { bitwise_kernel<L::Xor>(c); }

void bitwise_not_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_integral_and_bool(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<bool, uint8_t>(it, [](uint8_t a) { return a == 0; });
    } else {
      elementwise<T, T>(it, [](T a) { return static_cast<T>(~a); });
    }
  });
}

// A shift count that is negative (as a signed value) or at least the bit width gives 0 for a
// left shift and the sign fill for a right shift, as PyTorch defines them.
void lshift_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_integral(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise<T, T, T>(it, [](T a, T b) {
      constexpr int64_t bits = int64_t(sizeof(T)) * CHAR_BIT;
      const int64_t n = static_cast<int64_t>(static_cast<std::make_signed_t<T>>(b));
      if (n < 0 || n >= bits) return T(0);
      return static_cast<T>(static_cast<wrap_t<T>>(static_cast<std::make_unsigned_t<T>>(a)) << n);
    });
  });
}

void rshift_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_integral(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise<T, T, T>(it, [](T a, T b) {
      constexpr int64_t max_shift = int64_t(sizeof(T)) * CHAR_BIT - (std::is_signed<T>::value ? 1 : 0);
      const int64_t n = static_cast<int64_t>(static_cast<std::make_signed_t<T>>(b));
      if (n < 0 || n >= max_shift) {
        if constexpr (std::is_signed<T>::value) return static_cast<T>(a < 0 ? T(-1) : T(0));
        else return T(0);
      }
      return static_cast<T>(a >> n);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(binary_bitwise) {
  r.kernel("logical_and", "cpu::logical_and", device_type, kAllMask, TSR_KERNEL(logical_and_kernel));
  r.kernel("logical_or", "cpu::logical_or", device_type, kAllMask, TSR_KERNEL(logical_or_kernel));
  r.kernel("logical_xor", "cpu::logical_xor", device_type, kAllMask, TSR_KERNEL(logical_xor_kernel));
  r.kernel("logical_not", "cpu::logical_not", device_type, kAllMask, TSR_KERNEL(logical_not_kernel));
  r.kernel("bitwise_and", "cpu::bitwise_and", device_type, kIntegralMask | kBoolMask, TSR_KERNEL(bitwise_and_kernel));
  r.kernel("bitwise_or", "cpu::bitwise_or", device_type, kIntegralMask | kBoolMask, TSR_KERNEL(bitwise_or_kernel));
  r.kernel("bitwise_xor", "cpu::bitwise_xor", device_type, kIntegralMask | kBoolMask, TSR_KERNEL(bitwise_xor_kernel));
  r.kernel("bitwise_not", "cpu::bitwise_not", device_type, kIntegralMask | kBoolMask, TSR_KERNEL(bitwise_not_kernel));
  r.kernel("bitwise_left_shift", "cpu::bitwise_left_shift", device_type, kIntegralMask, TSR_KERNEL(lshift_kernel));
  r.kernel("bitwise_right_shift", "cpu::bitwise_right_shift", device_type, kIntegralMask, TSR_KERNEL(rshift_kernel));
}

}  // namespace tsr::cpu
