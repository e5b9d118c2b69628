// Tessera SDK: scatter_reduce's reductions, shared by the CPU and CUDA backends (header-only;
// host and CUDA device): the reduce argument, and each reduction's identity and combine step in
// compute_t<T>. (scatter runs with reduce "assign", scatter_add with "sum".) The loops, and the
// mean's final division, stay in the backends.
#pragma once

#include <limits>
#include <string>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/kernels/math.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

enum class ScatterReduce : int { Assign, Sum, Prod, Mean, Amax, Amin };

inline ScatterReduce parse_scatter_reduce(const std::string& s) {
  if (s == "assign") return ScatterReduce::Assign;
  if (s == "sum") return ScatterReduce::Sum;
  if (s == "prod") return ScatterReduce::Prod;
  if (s == "mean") return ScatterReduce::Mean;
  if (s == "amax") return ScatterReduce::Amax;
  if (s == "amin") return ScatterReduce::Amin;
  fail(TSR_INVALID_ARGUMENT, "scatter_reduce: reduce argument must be one of sum, prod, mean, amax, amin, got '", s,
       "'");
}

// Integers wrap (sum, prod); amax/amin propagate NaN; bool: prod and amin are "and", the rest
// "or".
template <class T>
struct ScatterReduceMath {
  using C = compute_t<T>;
  TSR_HOST_DEVICE static C identity(ScatterReduce r) {
    switch (r) {
      case ScatterReduce::Prod:
        return C(1);
      case ScatterReduce::Amax:
        if constexpr (std::numeric_limits<C>::has_infinity)
          return -std::numeric_limits<C>::infinity();
        else
          return std::numeric_limits<C>::lowest();
      case ScatterReduce::Amin:
        if constexpr (std::numeric_limits<C>::has_infinity)
          return std::numeric_limits<C>::infinity();
        else
          return std::numeric_limits<C>::max();
      default:
        return C(0);
    }
  }
  TSR_HOST_DEVICE static C combine(ScatterReduce r, C a, C b) {
    if constexpr (std::is_same<T, bool>::value) {
      switch (r) {
        case ScatterReduce::Assign:
          return b;
        case ScatterReduce::Prod:
        case ScatterReduce::Amin:
          return a && b;
        default:
          return a || b;
      }
    } else {
      switch (r) {
        case ScatterReduce::Assign:
          return b;
        case ScatterReduce::Sum:
        case ScatterReduce::Mean:
          if constexpr (std::is_integral<C>::value)
            return wrap_add<C>(a, b);
          else
            return a + b;
        case ScatterReduce::Prod:
          if constexpr (std::is_integral<C>::value)
            return wrap_mul<C>(a, b);
          else
            return a * b;
        case ScatterReduce::Amax:
          if constexpr (std::is_floating_point<C>::value)
            return (a != a || b != b) ? a + b : (a > b ? a : b);
          else
            return a > b ? a : b;
        case ScatterReduce::Amin:
          if constexpr (std::is_floating_point<C>::value)
            return (a != a || b != b) ? a + b : (a < b ? a : b);
          else
            return a < b ? a : b;
      }
      return b;
    }
  }
  // The mean's division of the sum by the number of values n (updates, +1 with include_self).
  // Integers floor-divide (PyTorch's floor division) by the count converted to C, as PyTorch's
  // count tensor of self's dtype: in int8 256 updates wrap to 0, and a divisor of 0 leaves the
  // sum (PyTorch replaces a zero count by 1) instead of trapping.
  TSR_HOST_DEVICE static C divide(C s, int64_t n) {
    if constexpr (std::is_same<T, bool>::value) {
      return s;
    } else if constexpr (std::is_integral<C>::value) {
      const C d = static_cast<C>(n);
      if (d == C(0)) return s;
      C q = static_cast<C>(s / d);
      if constexpr (std::is_signed<C>::value)
        if ((s % d) != 0 && ((s < 0) != (d < 0))) q = static_cast<C>(q - 1);
      return q;
    } else {
      return s / static_cast<C>(n);
    }
  }
};

}  // namespace tsr::kernels
