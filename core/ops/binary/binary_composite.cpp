// Binary family ops written with other ops (autograd comes from the ops they call):
// true_divide, floor_divide, pow_tensor_scalar, pow_scalar, float_power, lerp_scalar, addcmul,
// addcdiv, clamp_tensor, clamp_min, clamp_max, isclose; and the in-place "name_" variants of
// the family's ops.
#include <limits>
#include <string>

#include "ops/composite.hpp"
#include "tensor/dtype.hpp"

namespace tsr::core {
namespace {

tsr::Tensor true_divide_fn(CArgs& a) { return tsr::div(a.tensor(0), a.tensor(1)); }
tsr::Tensor floor_divide_fn(CArgs& a) { return tsr::div(a.tensor(0), a.tensor(1), "floor"); }

// pow.Tensor_Scalar: the scalar is a wrapped number, and pow refuses int^negative int.
tsr::Tensor pow_tensor_scalar_fn(CArgs& a) { return tsr::pow(a.tensor(0), a.scalar_tensor(1)); }
tsr::Tensor pow_scalar_fn(CArgs& a) { return tsr::pow(a.scalar_tensor(0), a.tensor(1)); }

// float_power computes in float64 whatever the inputs (complex is not supported).
tsr::Tensor float_power_fn(CArgs& a) { return tsr::pow(a.tensor(0).to(TSR_F64), a.tensor(1).to(TSR_F64)); }

// float_power_ computes in float64, so self must already be float64 (as PyTorch).
tsr::Tensor float_power_inplace_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  if (self.dtype() != TSR_F64)
    a.fail(TSR_INVALID_ARGUMENT, std::string("the base given to float_power_ has dtype ") +
                                     tsr::dtype_name(self.dtype()) +
                                     " but the operation's result requires dtype float64");
  return tsr::pow_(self, a.tensor(1).to(TSR_F64));
}

tsr::Tensor lerp_scalar_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  if (!tsr::is_floating(self.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, "expected a floating point self, got " + tsr::describe(self));
  tsr::Tensor w = tsr::scalar_tensor(a.double_arg(2), self.dtype(), true, a.runtime());
  static const tsr::Op lerp("lerp");
  return tsr::call(lerp, {self, a.tensor(1), w});
}

tsr::Tensor add_value(CArgs& a, const tsr::Tensor& self, const tsr::Tensor& t) {
  static const tsr::Op add("add");
  return tsr::call(add, {self, t, a.scalar(3)});
}

tsr::Tensor addcmul_fn(CArgs& a) { return add_value(a, a.tensor(0), tsr::mul(a.tensor(1), a.tensor(2))); }

tsr::Tensor addcdiv_fn(CArgs& a) {
  tsr::Tensor t1 = a.tensor(1), t2 = a.tensor(2);
  if (!tsr::is_floating(t1.dtype()) && !tsr::is_floating(t2.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, "integer division with addcdiv is not supported (tensor1 " + tsr::describe(t1) +
                                     ", tensor2 " + tsr::describe(t2) + "); use a floating point tensor");
  return add_value(a, a.tensor(0), tsr::div(t1, t2));
}

// clamp.Tensor as maximum/minimum: NaN bounds propagate like PyTorch's kernel; at ties with a
// bound the gradient is split (PyTorch gives it all to self).
tsr::Tensor clamp_tensor_fn(CArgs& a) {
  auto lo = a.opt_tensor(1), hi = a.opt_tensor(2);
  if (!lo && !hi) a.fail(TSR_INVALID_ARGUMENT, "at least one of 'min' or 'max' must not be None");
  tsr::Tensor r = a.tensor(0);
  if (r.dtype() == TSR_BOOL) a.fail(TSR_INVALID_ARGUMENT, "not supported for bool tensors");
  if (lo) r = tsr::maximum(r, *lo);
  if (hi) r = tsr::minimum(r, *hi);
  return r;
}

tsr::Tensor clamp_min_fn(CArgs& a) {
  static const tsr::Op clamp("clamp");
  return tsr::call(clamp, {a.tensor(0), a.scalar(1), tsr::none});
}
tsr::Tensor clamp_max_fn(CArgs& a) {
  static const tsr::Op clamp("clamp");
  return tsr::call(clamp, {a.tensor(0), tsr::none, a.scalar(1)});
}

// torch.isclose: |a - b| <= atol + |rtol * b| (finite), or equal (infinities), or both NaN
// with equal_nan.
tsr::Tensor isclose_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0), y = a.tensor(1);
  double rtol = a.double_arg(2), atol = a.double_arg(3);
  bool equal_nan = a.bool_arg(4);
  if (x.dtype() != y.dtype())
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected self and other to have the same dtype, got ") +
                                     tsr::describe(x) + " and " + tsr::describe(y));
  if (rtol < 0)
    a.fail(TSR_INVALID_ARGUMENT, "rtol must be greater than or equal to zero, but got " + std::to_string(rtol));
  if (atol < 0)
    a.fail(TSR_INVALID_ARGUMENT, "atol must be greater than or equal to zero, but got " + std::to_string(atol));
  tsr::Tensor close = tsr::eq(x, y);
  if (equal_nan && tsr::is_floating(x.dtype()))
    close = tsr::logical_or(close, tsr::logical_and(tsr::ne(x, x), tsr::ne(y, y)));
  if (rtol == 0 && atol == 0) return close;
  tsr::Tensor cx = x, cy = y;
  if (x.dtype() == TSR_BOOL) {
    cx = x.to(TSR_F32);
    cy = y.to(TSR_F32);
  }
  tsr::Tensor allowed = tsr::add(tsr::abs(tsr::mul(cy, rtol)), atol);
  tsr::Tensor actual = tsr::abs(tsr::sub(cx, cy));
  tsr::Tensor finite = tsr::lt(actual, std::numeric_limits<double>::infinity());
  return tsr::logical_or(close, tsr::logical_and(finite, tsr::le(actual, allowed)));
}

}  // namespace

TSR_CORE_OPS(binary_composite) {
  v.push_back(composite_op("true_divide(Tensor self, Tensor other) -> Tensor", composite<true_divide_fn>));
  v.push_back(composite_op("floor_divide(Tensor self, Tensor other) -> Tensor", composite<floor_divide_fn>));
  v.push_back(
      composite_op("pow_tensor_scalar(Tensor self, Scalar exponent) -> Tensor", composite<pow_tensor_scalar_fn>));
  v.push_back(composite_op("pow_scalar(Scalar self, Tensor exponent) -> Tensor", composite<pow_scalar_fn>));
  v.push_back(composite_op("float_power(Tensor self, Tensor exponent) -> Tensor", composite<float_power_fn>));
  v.push_back(composite_op("lerp_scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", composite<lerp_scalar_fn>));
  v.push_back(composite_op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor",
                           composite<addcmul_fn>));
  v.push_back(composite_op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor",
                           composite<addcdiv_fn>));
  v.push_back(composite_op("clamp_tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                           composite<clamp_tensor_fn>));
  v.push_back(composite_op("clamp_min(Tensor self, Scalar min) -> Tensor", composite<clamp_min_fn>));
  v.push_back(composite_op("clamp_max(Tensor self, Scalar max) -> Tensor", composite<clamp_max_fn>));
  v.push_back(composite_op(
      "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor",
      composite<isclose_fn>));

  // In-place variants: the functional result is cast into self (PyTorch's "result type can't
  // be cast to the desired output type" when it cannot).
  for (const char* f : {"add", "sub"})
    v.push_back(inplace_op(std::string(f) + "_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)"));
  for (const char* f : {"mul",
                        "div",
                        "true_divide",
                        "floor_divide",
                        "remainder",
                        "fmod",
                        "pow",
                        "atan2",
                        "hypot",
                        "copysign",
                        "xlogy",
                        "logical_and",
                        "logical_or",
                        "logical_xor",
                        "bitwise_and",
                        "bitwise_or",
                        "bitwise_xor",
                        "bitwise_left_shift",
                        "bitwise_right_shift",
                        "eq",
                        "ne",
                        "lt",
                        "le",
                        "gt",
                        "ge"})
    v.push_back(inplace_op(std::string(f) + "_(Tensor(a!) self, Tensor other) -> Tensor(a!)"));
  v.push_back(
      composite_op("float_power_(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", composite<float_power_inplace_fn>));
  v.push_back(inplace_op("div_mode_(Tensor(a!) self, Tensor other, str rounding_mode) -> Tensor(a!)"));
  v.push_back(inplace_op("pow_tensor_scalar_(Tensor(a!) self, Scalar exponent) -> Tensor(a!)"));
  v.push_back(inplace_op("logical_not_(Tensor(a!) self) -> Tensor(a!)"));
  v.push_back(inplace_op("bitwise_not_(Tensor(a!) self) -> Tensor(a!)"));
  v.push_back(inplace_op("lerp_(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)"));
  v.push_back(inplace_op("lerp_scalar_(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)"));
  v.push_back(inplace_op("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor(a!)"));
  v.push_back(inplace_op("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor(a!)"));
  v.push_back(inplace_op("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)"));
  v.push_back(inplace_op("clamp_tensor_(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)"));
  v.push_back(inplace_op("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)"));
  v.push_back(inplace_op("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)"));
}

}  // namespace tsr::core
