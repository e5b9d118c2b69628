// Tessera SDK: comparisons, where, clamp, logical and bitwise ops (per-element functors and
// their backend-neutral kernels, see tessera/kernels/family.hpp), shared by the CPU and CUDA
// backends. bool operands are read as bytes (0/1); comparisons follow IEEE (NaN compares
// unequal and unordered).
// Families: CompareFamily (eq ne lt le gt ge where clamp) and BitwiseFamily (logical_and/or/xor/
// not, bitwise_and/or/xor/not, bitwise_left_shift/right_shift).
#pragma once

#include <climits>
#include <limits>
#include <type_traits>

#include "tessera/kernels/family.hpp"
#include "tessera/kernels/math.hpp"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::kernels {

// ---- functors --------------------------------------------------------------------------------

enum class Cmp { EQ, NE, LT, LE, GT, GE };
template <Cmp OP>
struct CompareOp {
  template <class S>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(S a, S b) const {
    using X = compute_t<S>;
    const X x = X(a), y = X(b);
    switch (OP) {
      case Cmp::EQ:
        return x == y;
      case Cmp::NE:
        return x != y;
      case Cmp::LT:
        return x < y;
      case Cmp::LE:
        return x <= y;
      case Cmp::GT:
        return x > y;
      default:
        return x >= y;
    }
  }
};
struct WhereOp {
  template <class S>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE S operator()(uint8_t cond, S a, S b) const {
    return cond ? a : b;
  }
};

enum class L { And, Or, Xor };
template <L OP>
struct LogicalOp {
  template <class S>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(S a, S b) const {
    using X = compute_t<S>;
    const bool x = X(a) != X(0), y = X(b) != X(0);
    return OP == L::And ? (x && y) : OP == L::Or ? (x || y) : (x != y);
  }
};
struct LogicalNotOp {
  template <class S>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(S a) const {
    using X = compute_t<S>;
    return X(a) == X(0);
  }
};
// Out is bool for bool operands (bytes in), S otherwise.
template <L OP, class Out>
struct BitwiseOp {
  template <class S>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Out operator()(S a, S b) const {
    return static_cast<Out>(OP == L::And ? (a & b) : OP == L::Or ? (a | b) : (a ^ b));
  }
};
struct BitwiseNotOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a) const {
    return static_cast<T>(~a);
  }
};
struct BoolNotOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE bool operator()(uint8_t a) const { return a == 0; }
};
// A shift count that is negative (as a signed value) or at least the bit width gives 0 for a
// left shift and the sign fill for a right shift, as PyTorch defines them.
struct LeftShiftOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    constexpr int64_t bits = int64_t(sizeof(T)) * CHAR_BIT;
    const int64_t n = static_cast<int64_t>(static_cast<std::make_signed_t<T>>(b));
    if (n < 0 || n >= bits) return T(0);
    return static_cast<T>(static_cast<wrap_t<T>>(static_cast<std::make_unsigned_t<T>>(a)) << n);
  }
};
struct RightShiftOp {
  template <class T>
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(T a, T b) const {
    constexpr int64_t max_shift = int64_t(sizeof(T)) * CHAR_BIT - (std::is_signed<T>::value ? 1 : 0);
    const int64_t n = static_cast<int64_t>(static_cast<std::make_signed_t<T>>(b));
    if (n < 0 || n >= max_shift) {
      if constexpr (std::is_signed<T>::value)
        return static_cast<T>(a < 0 ? T(-1) : T(0));
      else
        return T(0);
    }
    return static_cast<T>(a >> n);
  }
};

// ---- kernels ---------------------------------------------------------------------------------

template <Cmp OP, class Run>
void compare(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Elem<typename decltype(tag)::type>;
    ew<bool, S, S>(run, CompareOp<OP>{});
  });
}

template <class Run>
void where(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Elem<typename decltype(tag)::type>;
    ew<S, uint8_t, S, S>(run, WhereOp{});
  });
}

// clamp(x, min, max): either bound may be None.
template <class Run>
void clamp(KernelCall& c, const Run& run) {
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    const bool has_lo = !c.arg_is_none(1), has_hi = !c.arg_is_none(2);
    CT lo, hi;
    if constexpr (std::is_integral<CT>::value) {
      lo = has_lo ? c.arg_scalar<CT>(1) : std::numeric_limits<CT>::lowest();
      hi = has_hi ? c.arg_scalar<CT>(2) : std::numeric_limits<CT>::max();
    } else {
      // Bounds are rounded to T first, as PyTorch does for reduced-precision tensors.
      lo = has_lo ? CT(c.arg_scalar<T>(1)) : -std::numeric_limits<CT>::infinity();
      hi = has_hi ? CT(c.arg_scalar<T>(2)) : std::numeric_limits<CT>::infinity();
    }
    ew<T, T>(run, ClampOp<CT>{lo, hi});
  });
}

template <L OP, class Run>
void logical(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Elem<typename decltype(tag)::type>;
    ew<bool, S, S>(run, LogicalOp<OP>{});
  });
}

template <class Run>
void logical_not(KernelCall& c, const Run& run) {
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using S = Elem<typename decltype(tag)::type>;
    ew<bool, S>(run, LogicalNotOp{});
  });
}

template <L OP, class Run>
void bitwise(KernelCall& c, const Run& run) {
  dispatch_integral_and_bool(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = Elem<T>;
    using Out = std::conditional_t<std::is_same<T, bool>::value, bool, S>;
    ew<Out, S, S>(run, BitwiseOp<OP, Out>{});
  });
}

template <class Run>
void bitwise_not(KernelCall& c, const Run& run) {
  dispatch_integral_and_bool(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value)
      ew<bool, uint8_t>(run, BoolNotOp{});
    else
      ew<T, T>(run, BitwiseNotOp{});
  });
}

template <class Op, class Run>
void shift(KernelCall& c, const Run& run) {
  dispatch_integral(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ew<T, T, T>(run, Op{});
  });
}

// ---- families --------------------------------------------------------------------------------

struct CompareFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"eq", kAllMask, &compare<Cmp::EQ, Run>}, {"ne", kAllMask, &compare<Cmp::NE, Run>},
        {"lt", kAllMask, &compare<Cmp::LT, Run>}, {"le", kAllMask, &compare<Cmp::LE, Run>},
        {"gt", kAllMask, &compare<Cmp::GT, Run>}, {"ge", kAllMask, &compare<Cmp::GE, Run>},
        {"where", kAllMask, &where<Run>},         {"clamp", kNumericMask, &clamp<Run>},
    };
    return entries_array(list);
  }
};

struct BitwiseFamily {
  template <class Run>
  static constexpr auto ops() {
    constexpr OpEntry<Run> list[] = {
        {"logical_and", kAllMask, &logical<L::And, Run>},
        {"logical_or", kAllMask, &logical<L::Or, Run>},
        {"logical_xor", kAllMask, &logical<L::Xor, Run>},
        {"logical_not", kAllMask, &logical_not<Run>},
        {"bitwise_and", kIntegralMask | kBoolMask, &bitwise<L::And, Run>},
        {"bitwise_or", kIntegralMask | kBoolMask, &bitwise<L::Or, Run>},
        {"bitwise_xor", kIntegralMask | kBoolMask, &bitwise<L::Xor, Run>},
        {"bitwise_not", kIntegralMask | kBoolMask, &bitwise_not<Run>},
        {"bitwise_left_shift", kIntegralMask, &shift<LeftShiftOp, Run>},
        {"bitwise_right_shift", kIntegralMask, &shift<RightShiftOp, Run>},
    };
    return entries_array(list);
  }
};

}  // namespace tsr::kernels
