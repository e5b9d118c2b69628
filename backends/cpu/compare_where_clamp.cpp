// eq, ne, lt, le, gt, ge (bool out), where, clamp.
#include <limits>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

enum class Cmp { EQ, NE, LT, LE, GT, GE };

template <Cmp OP>
void compare(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // bool operands are read as bytes (0/1).
    using S = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;
    elementwise<bool, S, S>(it, [](S a, S b) {
      const C<S> x = C<S>(a), y = C<S>(b);
      switch (OP) {
        case Cmp::EQ: return x == y;
        case Cmp::NE: return x != y;
        case Cmp::LT: return x < y;
        case Cmp::LE: return x <= y;
        case Cmp::GT: return x > y;
        default: return x >= y;
      }
    });
  });
}

void eq_kernel(KernelCall& c) { compare<Cmp::EQ>(c); }
void ne_kernel(KernelCall& c) { compare<Cmp::NE>(c); }
void lt_kernel(KernelCall& c) { compare<Cmp::LT>(c); }
void le_kernel(KernelCall& c) { compare<Cmp::LE>(c); }
void gt_kernel(KernelCall& c) { compare<Cmp::GT>(c); }
void ge_kernel(KernelCall& c) { compare<Cmp::GE>(c); }

void where_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;
    elementwise<S, uint8_t, S, S>(it, [](uint8_t cond, S a, S b) { return cond ? a : b; });
  });
}

void clamp_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = C<T>;
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
    // min first, then max (so lo > hi gives hi); NaN compares false and stays NaN.
    elementwise<T, T>(it, [lo, hi](T a) {
      CT v = CT(a);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      return static_cast<T>(v);
    });
  });
}

}  // namespace

void register_compare_where_clamp_kernels(Registrar& r, int32_t dt) {
  r.kernel("eq", "cpu::eq", dt, kAllMask, TSR_KERNEL(eq_kernel));
  r.kernel("ne", "cpu::ne", dt, kAllMask, TSR_KERNEL(ne_kernel));
  r.kernel("lt", "cpu::lt", dt, kAllMask, TSR_KERNEL(lt_kernel));
  r.kernel("le", "cpu::le", dt, kAllMask, TSR_KERNEL(le_kernel));
  r.kernel("gt", "cpu::gt", dt, kAllMask, TSR_KERNEL(gt_kernel));
  r.kernel("ge", "cpu::ge", dt, kAllMask, TSR_KERNEL(ge_kernel));
  r.kernel("where", "cpu::where", dt, kAllMask, TSR_KERNEL(where_kernel));
  r.kernel("clamp", "cpu::clamp", dt, kNumericMask, TSR_KERNEL(clamp_kernel));
}

}  // namespace tsr::cpu
