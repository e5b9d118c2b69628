// Tessera SDK: host wrappers of the binary op family (included by tessera/tessera.hpp).
// PyTorch overloads map to distinct op names (the registry has no overloads):
//   div(rounding_mode=...)        -> div_mode          pow.Tensor_Scalar -> pow_tensor_scalar
//   pow.Scalar (scalar base)      -> pow_scalar        lerp.Scalar       -> lerp_scalar
//   clamp.Tensor                  -> clamp_tensor
// Scalar operands of the Tensor-Tensor ops travel as wrapped numbers (Python scalar promotion).
#pragma once

#include <optional>

#include "tessera/tessera.hpp"

namespace tsr {

// Wrappers (macros of tessera/tessera.hpp): Tensor and scalar operands in either place.
TSR_SDK_BINARY_SCALAR_FIRST(true_divide)
TSR_SDK_BINARY_SCALAR_FIRST(floor_divide)
TSR_SDK_BINARY_SCALAR_FIRST(remainder)
TSR_SDK_BINARY_SCALAR_FIRST(fmod)
TSR_SDK_BINARY_SCALAR_FIRST(atan2)
TSR_SDK_BINARY_SCALAR_FIRST(hypot)
TSR_SDK_BINARY_SCALAR_FIRST(copysign)
TSR_SDK_BINARY_SCALAR_FIRST(xlogy)
TSR_SDK_BINARY_SCALAR_FIRST(logaddexp)
TSR_SDK_BINARY_SCALAR_FIRST(logaddexp2)
TSR_SDK_BINARY_SCALAR_FIRST(fmax)
TSR_SDK_BINARY_SCALAR_FIRST(fmin)
TSR_SDK_BINARY_SCALAR_FIRST(float_power)
TSR_SDK_BINARY_SCALAR_FIRST(logical_and)
TSR_SDK_BINARY_SCALAR_FIRST(logical_or)
TSR_SDK_BINARY_SCALAR_FIRST(logical_xor)
TSR_SDK_BINARY_SCALAR_FIRST(bitwise_and)
TSR_SDK_BINARY_SCALAR_FIRST(bitwise_or)
TSR_SDK_BINARY_SCALAR_FIRST(bitwise_xor)
TSR_SDK_BINARY_SCALAR_FIRST(bitwise_left_shift)
TSR_SDK_BINARY_SCALAR_FIRST(bitwise_right_shift)
TSR_SDK_UNARY(logical_not)
TSR_SDK_UNARY(bitwise_not)
// The wrapper macros of tessera/tessera.hpp end here.
#undef TSR_SDK_UNARY
#undef TSR_SDK_BINARY
#undef TSR_SDK_BINARY_SCALAR_FIRST

// torch.div(a, b, rounding_mode="trunc" | "floor").
inline Tensor div(const Tensor& a, const Tensor& b, const char* rounding_mode) {
  static const Op op("div_mode");
  return call(op, {a, b, rounding_mode});
}
// pow(Tensor, Scalar) keeping the scalar a Scalar argument (int^negative int is refused).
inline Tensor pow_tensor_scalar(const Tensor& a, double exponent) {
  static const Op op("pow_tensor_scalar");
  return call(op, {a, detail::scalar_arg(exponent)});
}
inline Tensor pow(double base, const Tensor& exponent) {
  static const Op op("pow_scalar");
  return call(op, {detail::scalar_arg(base), exponent});
}
inline Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  static const Op op("lerp");
  return call(op, {self, end, weight});
}
inline Tensor lerp(const Tensor& self, const Tensor& end, double weight) {
  static const Op op("lerp_scalar");
  return call(op, {self, end, weight});
}
inline Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1) {
  static const Op op("addcmul");
  return call(op, {self, t1, t2, detail::scalar_arg(value)});
}
inline Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1) {
  static const Op op("addcdiv");
  return call(op, {self, t1, t2, detail::scalar_arg(value)});
}
inline Tensor clamp(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  static const Op op("clamp_tensor");
  return call(op, {a, detail::opt_tensor_arg(lo), detail::opt_tensor_arg(hi)});
}
inline Tensor clamp_min(const Tensor& a, double lo) {
  static const Op op("clamp_min");
  return call(op, {a, detail::scalar_arg(lo)});
}
inline Tensor clamp_max(const Tensor& a, double hi) {
  static const Op op("clamp_max");
  return call(op, {a, detail::scalar_arg(hi)});
}
inline Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
                      bool equal_nan = false) {
  static const Op op("isclose");
  return call(op, {a, b, rtol, atol, equal_nan});
}

// where with a scalar branch (a wrapped number: the tensor branch decides the dtype).
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor where(const Tensor& c, const Tensor& a, S b) {
  return where(c, a, wrap_scalar(b, a.runtime()));
}
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor where(const Tensor& c, S a, const Tensor& b) {
  return where(c, wrap_scalar(a, b.runtime()), b);
}

// In-place forms (self is written; its dtype must be able to hold the result).
#define TSR_BINARY_INPLACE(fn, opname)                                   \
  inline Tensor& fn(Tensor& self, const Tensor& other) {                 \
    static const Op op(opname);                                          \
    call(op, {self, other});                                             \
    return self;                                                         \
  }                                                                      \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  inline Tensor& fn(Tensor& self, S other) {                             \
    return fn(self, wrap_scalar(other, self.runtime()));                 \
  }
TSR_BINARY_INPLACE(mul_, "mul_")
TSR_BINARY_INPLACE(div_, "div_")
TSR_BINARY_INPLACE(pow_, "pow_")
TSR_BINARY_INPLACE(remainder_, "remainder_")
TSR_BINARY_INPLACE(fmod_, "fmod_")
TSR_BINARY_INPLACE(atan2_, "atan2_")
TSR_BINARY_INPLACE(hypot_, "hypot_")
TSR_BINARY_INPLACE(copysign_, "copysign_")
TSR_BINARY_INPLACE(xlogy_, "xlogy_")
TSR_BINARY_INPLACE(floor_divide_, "floor_divide_")
TSR_BINARY_INPLACE(float_power_, "float_power_")
TSR_BINARY_INPLACE(logical_and_, "logical_and_")
TSR_BINARY_INPLACE(logical_or_, "logical_or_")
TSR_BINARY_INPLACE(logical_xor_, "logical_xor_")
TSR_BINARY_INPLACE(bitwise_and_, "bitwise_and_")
TSR_BINARY_INPLACE(bitwise_or_, "bitwise_or_")
TSR_BINARY_INPLACE(bitwise_xor_, "bitwise_xor_")
TSR_BINARY_INPLACE(bitwise_left_shift_, "bitwise_left_shift_")
TSR_BINARY_INPLACE(bitwise_right_shift_, "bitwise_right_shift_")
TSR_BINARY_INPLACE(true_divide_, "true_divide_")
// Comparisons in place: self becomes 1/0 in its own dtype (torch.Tensor.eq_ and friends).
TSR_BINARY_INPLACE(eq_, "eq_")
TSR_BINARY_INPLACE(ne_, "ne_")
TSR_BINARY_INPLACE(lt_, "lt_")
TSR_BINARY_INPLACE(le_, "le_")
TSR_BINARY_INPLACE(gt_, "gt_")
TSR_BINARY_INPLACE(ge_, "ge_")
#undef TSR_BINARY_INPLACE

inline Tensor& bitwise_not_(Tensor& self) {
  static const Op op("bitwise_not_");
  call(op, {self});
  return self;
}
inline Tensor& logical_not_(Tensor& self) {
  static const Op op("logical_not_");
  call(op, {self});
  return self;
}
inline Tensor& clamp_min_(Tensor& self, double lo) {
  static const Op op("clamp_min_");
  call(op, {self, lo});
  return self;
}
inline Tensor& clamp_max_(Tensor& self, double hi) {
  static const Op op("clamp_max_");
  call(op, {self, hi});
  return self;
}
inline Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight) {
  static const Op op("lerp_");
  call(op, {self, end, weight});
  return self;
}

inline Tensor& add_(Tensor& self, const Tensor& other, double alpha = 1) {
  static const Op op("add_");
  call(op, {self, other, detail::scalar_arg(alpha)});
  return self;
}
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor& add_(Tensor& self, S other) {
  return add_(self, wrap_scalar(other, self.runtime()));
}
inline Tensor& sub_(Tensor& self, const Tensor& other, double alpha = 1) {
  static const Op op("sub_");
  call(op, {self, other, detail::scalar_arg(alpha)});
  return self;
}
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor& sub_(Tensor& self, S other) {
  return sub_(self, wrap_scalar(other, self.runtime()));
}
inline Tensor& clamp_(Tensor& self, std::optional<double> lo, std::optional<double> hi = std::nullopt) {
  static const Op op("clamp_");
  call(op, {self, lo ? detail::scalar_arg(*lo) : Arg(none), hi ? detail::scalar_arg(*hi) : Arg(none)});
  return self;
}
inline Tensor& lerp_(Tensor& self, const Tensor& end, double weight) {
  static const Op op("lerp_scalar_");
  call(op, {self, end, weight});
  return self;
}
inline Tensor& addcmul_(Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1) {
  static const Op op("addcmul_");
  call(op, {self, t1, t2, detail::scalar_arg(value)});
  return self;
}
inline Tensor& addcdiv_(Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1) {
  static const Op op("addcdiv_");
  call(op, {self, t1, t2, detail::scalar_arg(value)});
  return self;
}

// Operators (elementwise, broadcasting; comparisons give bool tensors).
#define TSR_BINARY_OPERATOR(sym, fn)                                                \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); } \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>            \
  inline Tensor operator sym(const Tensor& a, S b) {                                \
    return fn(a, wrap_scalar(b, a.runtime()));                                      \
  }                                                                                 \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>            \
  inline Tensor operator sym(S a, const Tensor& b) {                                \
    return fn(wrap_scalar(a, b.runtime()), b);                                      \
  }
TSR_BINARY_OPERATOR(==, eq)
TSR_BINARY_OPERATOR(!=, ne)
TSR_BINARY_OPERATOR(<, lt)
TSR_BINARY_OPERATOR(<=, le)
TSR_BINARY_OPERATOR(>, gt)
TSR_BINARY_OPERATOR(>=, ge)
TSR_BINARY_OPERATOR(%, remainder)
TSR_BINARY_OPERATOR(&, bitwise_and)
TSR_BINARY_OPERATOR(|, bitwise_or)
TSR_BINARY_OPERATOR(^, bitwise_xor)
TSR_BINARY_OPERATOR(<<, bitwise_left_shift)
TSR_BINARY_OPERATOR(>>, bitwise_right_shift)
#undef TSR_BINARY_OPERATOR
inline Tensor operator~(const Tensor& a) { return bitwise_not(a); }

}  // namespace tsr
