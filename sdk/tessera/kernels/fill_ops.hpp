// Tessera SDK: per-element functors of _copy (dtype conversion), _fill and arange, shared by
// the CPU and CUDA backends (the copy loops themselves differ: memcpy / cudaMemcpyAsync for
// same-dtype dense copies).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/kernels/family.hpp"

namespace tsr::kernels {

// float4_e2m1fn_x2 holds two values per element: it copies to itself (bytes) and converts to
// nothing else (quantize_nvfp4 / dequantize_nvfp4 do that). Host only.
inline void check_packed_copy(int32_t out_dtype, int32_t src_dtype) {
  if (out_dtype != src_dtype)
    throw Error(TSR_UNIMPLEMENTED, std::string("_copy: no conversion between ") + dtype_name(src_dtype) + " and " +
                                       dtype_name(out_dtype) +
                                       " (float4_e2m1fn_x2 packs two values per element; use dequantize_nvfp4 / "
                                       "quantize_nvfp4)");
}

// Dtype conversion of _copy: From and To are the dtypes' C++ types (bool read and written as
// bytes; any nonzero byte is true, numbers convert to bool as x != 0, floats to integers
// truncate toward zero).
template <class To, class From>
struct CastOp {
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Elem<To> operator()(Elem<From> v) const {
    if constexpr (std::is_same<From, bool>::value)
      return convert<Elem<To>>(v != 0);
    else if constexpr (std::is_same<To, bool>::value)
      return static_cast<uint8_t>(convert<bool>(v));
    else if constexpr (std::is_same<To, From>::value)
      return v;
    else
      return convert<To>(v);
  }
};

// _fill: the value, already converted to the element type.
template <class E>
struct ConstantOp {
  E v;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE E operator()() const { return v; }
};

// arange element i: start + i * step, in double for floats (then rounded once), in wrapping
// 64-bit integer arithmetic for integers.
template <class T>
struct ArangeOp {
  std::conditional_t<is_float_type<T>::value, double, uint64_t> start, step;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE T operator()(int64_t i) const {
    if constexpr (is_float_type<T>::value)
      return static_cast<T>(start + double(i) * step);
    else
      return static_cast<T>(static_cast<int64_t>(start + static_cast<uint64_t>(i) * step));
  }
};
template <class T>
ArangeOp<T> make_arange_op(const KernelCall& c) {
  if constexpr (is_float_type<T>::value)
    return ArangeOp<T>{c.arg_double(0), c.arg_double(2)};
  else
    return ArangeOp<T>{static_cast<uint64_t>(c.arg_scalar<int64_t>(0)),
                       static_cast<uint64_t>(c.arg_scalar<int64_t>(2))};
}

}  // namespace tsr::kernels
