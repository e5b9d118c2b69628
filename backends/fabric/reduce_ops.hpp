// Elementwise reductions shared by the engines: the in-process engine's loops, the reduce
// functions the Gloo engine hands to gloo and the MPI engine's user-defined ops (one per dtype
// and op, over every dtype).
//
// Floating values accumulate in a wider type (float for f16/bf16, double for f32) and round once;
// integers wrap around like the tensors' own arithmetic; bool SUM/AVG/MAX are "or", MIN/PROD
// "and"; MAX and MIN propagate NaN.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/ext_collectives.h"

namespace fabric {

template <class T>
using acc_t = std::conditional_t<tsr::is_reduced_float<T>::value, float,
                                 std::conditional_t<std::is_floating_point_v<T>, double, T>>;

template <class T>
acc_t<T> load(const char* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return static_cast<acc_t<T>>(v);
}

template <class T>
T combine(T a, T b, tsr_reduce_op_t op) {
  if constexpr (std::is_same_v<T, bool>) {
    return (op == TSR_REDUCE_MIN || op == TSR_REDUCE_PROD) ? (a && b) : (a || b);
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case TSR_REDUCE_MAX:
        return std::isnan(a) || std::isnan(b) ? static_cast<T>(NAN) : (a > b ? a : b);
      case TSR_REDUCE_MIN:
        return std::isnan(a) || std::isnan(b) ? static_cast<T>(NAN) : (a < b ? a : b);
      case TSR_REDUCE_PROD:
        return a * b;
      default:
        return a + b;
    }
  } else {  // integers: wrap around, as the tensors' own arithmetic does
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case TSR_REDUCE_MAX:
        return a > b ? a : b;
      case TSR_REDUCE_MIN:
        return a < b ? a : b;
      case TSR_REDUCE_PROD:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      default:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
  }
}

// combine() with the op fixed at compile time, so that the loops below vectorize.
template <class T, tsr_reduce_op_t OP>
TSR_ALWAYS_INLINE T combine_op(T a, T b) {
  return combine<T>(a, b, OP);
}

// Calls f(std::integral_constant<tsr_reduce_op_t, OP>) for the run-time op (AVG reduces as SUM).
template <class F>
void with_op(tsr_reduce_op_t op, F&& f) {
  switch (op) {
    case TSR_REDUCE_MAX:
      return f(std::integral_constant<tsr_reduce_op_t, TSR_REDUCE_MAX>{});
    case TSR_REDUCE_MIN:
      return f(std::integral_constant<tsr_reduce_op_t, TSR_REDUCE_MIN>{});
    case TSR_REDUCE_PROD:
      return f(std::integral_constant<tsr_reduce_op_t, TSR_REDUCE_PROD>{});
    default:
      return f(std::integral_constant<tsr_reduce_op_t, TSR_REDUCE_SUM>{});
  }
}

// Divides n elements at p by `count` in place (AVG after a SUM): floats in the accumulator type,
// integers truncated toward zero, bool unchanged.
template <class T>
void divide(char* p, int64_t n, int64_t count) {
  if constexpr (!std::is_same_v<T, bool>) {
    for (int64_t j = 0; j < n; ++j) {
      acc_t<T> v = load<T>(p, j);
      T r = static_cast<T>(v / static_cast<acc_t<T>>(count));
      std::memcpy(p + j * static_cast<int64_t>(sizeof(T)), &r, sizeof(T));
    }
  }
}

inline void divide_dispatch(int32_t dtype, void* p, int64_t n, int64_t count) {
  tsr::dispatch_all(dtype, "fabric avg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    divide<T>(static_cast<char*>(p), n, count);
  });
}

// out[j] = a[j] OP b[j] for n elements (out may alias a or b), each combined in the accumulator
// type and rounded once: what gloo's reduce functions and the MPI engine's user-defined ops run.
template <class T, tsr_reduce_op_t OP>
void combine_arrays(void* out, const void* a, const void* b, size_t n) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  for (size_t j = 0; j < n; ++j)
    po[j] = static_cast<T>(combine_op<acc_t<T>, OP>(static_cast<acc_t<T>>(pa[j]), static_cast<acc_t<T>>(pb[j])));
}

// combine_arrays for a run-time dtype and op: gloo's reduce function type. AVG reduces as SUM
// (the engine divides afterwards).
inline std::function<void(void*, const void*, const void*, size_t)> pairwise(int32_t dtype, tsr_reduce_op_t op) {
  std::function<void(void*, const void*, const void*, size_t)> fn;
  tsr::dispatch_all(dtype, "fabric reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_op(op, [&](auto o) { fn = &combine_arrays<T, decltype(o)::value>; });
  });
  return fn;
}

}  // namespace fabric
