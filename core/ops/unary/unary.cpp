// Unary math and activation ops: schemas, PyTorch dtype rules, argument checks. Kernels do the
// math (backends/*/unary*.cpp); formulas live in ops/unary/unary_grad.cpp. Dtype rules:
//   - transcendental math (exp2, log1p, sin, erf, sigmoid, logit, ...): ints/bool -> float32;
//   - sign/sgn/abs/square/nan_to_num: dtype kept (square on bool -> int64, like pow(bool, 2));
//   - floor/ceil/trunc/round: integer dtypes kept (identity), bool rejected;
//   - activations (leaky_relu, elu, selu, celu, softplus, mish, hardswish, hardsigmoid) and
//     frac: floating only (PyTorch has no integer kernels for them);
//   - hardtanh/relu6: clamp rules (ints keep dtype, bool rejected);
//   - isnan/isinf/isposinf/isneginf/isfinite/signbit: any dtype -> bool.
// PyTorch overloads map to one name each: round(x) and round(x, decimals=d) are both
// round(Tensor self, *, int decimals=0).
#include <cmath>
#include <string>

#include "ops/composite.hpp"
#include "tensor/dtype.hpp"
#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {
namespace {

using Rule = ElementwiseRule;

tsr_status_t float_only_impl(CallCtx& ctx) {
  Tensor* x = ctx.tensor(0);
  if (!is_floating(x->dtype))
    return ctx.error(TSR_INVALID_ARGUMENT, "expected a floating point tensor, got " + describe(ctx.rt, x));
  return run_elementwise(ctx, &x, 1, x->dtype, x->dtype, nullptr);
}

// floor/ceil/trunc: integers are already integral (kernels copy), bool has no meaning here.
tsr_status_t keep_int_impl(CallCtx& ctx) {
  Tensor* x = ctx.tensor(0);
  if (x->dtype == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors (got " + describe(ctx.rt, x) + ")");
  return run_elementwise(ctx, &x, 1, x->dtype, x->dtype, nullptr);
}

tsr_status_t round_impl(CallCtx& ctx) {
  Tensor* x = ctx.tensor(0);
  int64_t decimals = ctx.int_arg(1);
  if (!is_floating(x->dtype) && decimals != 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "decimals=" + std::to_string(decimals) +
                                               " is only supported for floating point tensors, got " +
                                               describe(ctx.rt, x));
  if (decimals > 300 || decimals < -300)
    return ctx.error(TSR_INVALID_ARGUMENT, "decimals=" + std::to_string(decimals) + " is out of range [-300, 300]");
  return keep_int_impl(ctx);
}

tsr_status_t same_dtype_impl(CallCtx& ctx) {  // sign, sgn, nan_to_num: any dtype, kept
  Tensor* x = ctx.tensor(0);
  return run_elementwise(ctx, &x, 1, x->dtype, x->dtype, nullptr);
}

tsr_status_t square_impl(CallCtx& ctx) {
  Tensor* x = ctx.tensor(0);
  tsr_dtype_t dt = x->dtype == TSR_BOOL ? TSR_I64 : x->dtype;
  return run_elementwise(ctx, &x, 1, dt, dt, nullptr);
}

tsr_status_t predicate_impl(CallCtx& ctx) {  // isnan, isinf, ..., signbit: bool out
  Tensor* x = ctx.tensor(0);
  return run_elementwise(ctx, &x, 1, x->dtype, TSR_BOOL, nullptr);
}

tsr_status_t logit_impl(CallCtx& ctx) {
  if (!ctx.is_none(1)) {
    double eps = ctx.double_arg(1);
    if (!(eps >= 0.0 && eps <= 0.5) && !std::isnan(eps))
      return ctx.error(TSR_INVALID_ARGUMENT, "eps must be in [0, 0.5], got " + std::to_string(eps));
  }
  return elementwise_impl<Rule::IntToFloat, 1>(ctx);
}

tsr_status_t hardtanh_impl(CallCtx& ctx) {
  Tensor* x = ctx.tensor(0);
  if (x->dtype == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT, "bool inputs are not supported (got " + describe(ctx.rt, x) + ")");
  double lo = ctx.double_arg(1), hi = ctx.double_arg(2);
  if (lo > hi)
    return ctx.error(TSR_INVALID_ARGUMENT, "min_val cannot be greater than max_val (got " + std::to_string(lo) + " > " +
                                               std::to_string(hi) + ")");
  return run_elementwise(ctx, &x, 1, x->dtype, x->dtype, nullptr);
}

tsr_status_t softplus_impl(CallCtx& ctx) {
  if (ctx.double_arg(1) == 0.0) return ctx.error(TSR_INVALID_ARGUMENT, "beta must be nonzero");
  return float_only_impl(ctx);
}

// ---- composites --------------------------------------------------------------------------

tsr::Tensor positive_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0);
  if (x.dtype() == TSR_BOOL)
    a.fail(TSR_INVALID_ARGUMENT, "the '+' operator on a bool tensor is not supported (got " + tsr::describe(x) + ")");
  return x;
}

tsr::Tensor relu6_fn(CArgs& a) {
  static const tsr::Op hardtanh("hardtanh");
  return tsr::call(hardtanh, {a.tensor(0), int64_t(0), int64_t(6)});
}

tsr::Tensor selu_fn(CArgs& a) {
  static const tsr::Op elu("elu");
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  return tsr::call(elu, {a.tensor(0), alpha, scale, 1.0});
}

tsr::Tensor celu_fn(CArgs& a) {
  static const tsr::Op elu("elu");
  double alpha = a.double_arg(1);
  if (alpha == 0.0) a.fail(TSR_INVALID_ARGUMENT, "alpha must be nonzero (ZeroDivisionError in PyTorch), got 0");
  return tsr::call(elu, {a.tensor(0), alpha, 1.0, 1.0 / alpha});
}

// In-place forms of the composites forward to the primitive's in-place form (which keeps a
// copy of self for the formula; the generic inplace_op cannot see inside a composite). The
// call is forwarded at the C level so that self stays the result without an out= copy.
tsr_status_t forward_inplace(CallCtx& ctx, const char* target, const tsr_value_t* extra, size_t nextra) {
  auto it = ctx.rt->op_by_name.find(target);
  if (it == ctx.rt->op_by_name.end()) return ctx.error(TSR_INTERNAL, std::string("no op '") + target + "'");
  tsr_value_t args[kMaxArgs];
  args[0] = ctx.args[0];
  for (size_t i = 0; i < nextra; ++i) args[1 + i] = extra[i];
  tsr_status_t st = call_op(it->second, args, 1 + nextra, ctx.outs, ctx.nouts);
  return st ? prefix_status(st, ctx.name()) : nullptr;
}

tsr_value_t dbl(double d) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}

tsr_status_t relu6_inplace(CallCtx& ctx) {
  const tsr_value_t extra[2] = {dbl(0.0), dbl(6.0)};
  return forward_inplace(ctx, "hardtanh_", extra, 2);
}

tsr_status_t selu_inplace(CallCtx& ctx) {
  const tsr_value_t extra[3] = {dbl(1.6732632423543772848170429916717), dbl(1.0507009873554804934193349852946),
                                dbl(1.0)};
  return forward_inplace(ctx, "elu_", extra, 3);
}

tsr_status_t celu_inplace(CallCtx& ctx) {
  double alpha = ctx.double_arg(1);
  if (alpha == 0.0)
    return ctx.error(TSR_INVALID_ARGUMENT, "alpha must be nonzero (ZeroDivisionError in PyTorch), got 0");
  const tsr_value_t extra[3] = {dbl(alpha), dbl(1.0), dbl(1.0 / alpha)};
  return forward_inplace(ctx, "elu_", extra, 3);
}

}  // namespace

TSR_CORE_OPS(unary) {
  const auto ItoF = elementwise_impl<Rule::IntToFloat, 1>;
  for (const char* f : {"exp2", "expm1", "log2", "log10", "log1p", "reciprocal", "sin",   "cos", "tan",  "asin",
                        "acos", "atan",  "sinh", "cosh",  "asinh", "acosh",      "atanh", "erf", "erfc", "erfinv"})
    v.push_back({std::string(f) + "(Tensor self) -> Tensor", ItoF});
  v.push_back({"sign(Tensor self) -> Tensor", same_dtype_impl});
  v.push_back({"sgn(Tensor self) -> Tensor", same_dtype_impl});
  v.push_back({"square(Tensor self) -> Tensor", square_impl});
  for (const char* f : {"floor", "ceil", "trunc"})
    v.push_back({std::string(f) + "(Tensor self) -> Tensor", keep_int_impl});
  v.push_back({"round(Tensor self, *, int decimals=0) -> Tensor", round_impl});
  v.push_back({"frac(Tensor self) -> Tensor", float_only_impl});
  v.push_back({"logit(Tensor self, float? eps=None) -> Tensor", logit_impl});
  v.push_back({"leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", float_only_impl});
  v.push_back({"elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", float_only_impl});
  v.push_back({"mish(Tensor self) -> Tensor", float_only_impl});
  v.push_back({"softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", softplus_impl});
  v.push_back({"hardswish(Tensor self) -> Tensor", float_only_impl});
  v.push_back({"hardsigmoid(Tensor self) -> Tensor", float_only_impl});
  v.push_back({"hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", hardtanh_impl});
  for (const char* f : {"isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"})
    v.push_back({std::string(f) + "(Tensor self) -> Tensor", predicate_impl});
  v.push_back(
      {"nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", same_dtype_impl});
  v.push_back(composite_op("positive(Tensor self) -> Tensor", composite<positive_fn>));
  v.push_back(composite_op("relu6(Tensor self) -> Tensor", composite<relu6_fn>));
  v.push_back(composite_op("selu(Tensor self) -> Tensor", composite<selu_fn>));
  v.push_back(composite_op("celu(Tensor self, Scalar alpha=1.0) -> Tensor", composite<celu_fn>));

  // In-place variants (the foundation ops' included).
  for (const char* f :
       {"abs",   "neg",  "sign",  "sgn",        "exp",     "exp2",  "expm1", "log",  "log2",      "log10",
        "log1p", "sqrt", "rsqrt", "reciprocal", "square",  "sin",   "cos",   "tan",  "asin",      "acos",
        "atan",  "sinh", "cosh",  "tanh",       "asinh",   "acosh", "atanh", "erf",  "erfc",      "erfinv",
        "floor", "ceil", "trunc", "frac",       "sigmoid", "relu",  "silu",  "mish", "hardswish", "hardsigmoid"})
    v.push_back(inplace_op(std::string(f) + "_(Tensor(a!) self) -> Tensor(a!)"));
  v.push_back(inplace_op("round_(Tensor(a!) self, *, int decimals=0) -> Tensor(a!)"));
  v.push_back(inplace_op("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)"));
  v.push_back(inplace_op("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)"));
  v.push_back(inplace_op("elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)"));
  v.push_back(composite_op("relu6_(Tensor(a!) self) -> Tensor(a!)", relu6_inplace));
  v.push_back(composite_op("selu_(Tensor(a!) self) -> Tensor(a!)", selu_inplace));
  v.push_back(composite_op("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)", celu_inplace));
  v.push_back(inplace_op("softplus_(Tensor(a!) self, Scalar beta=1, Scalar threshold=20) -> Tensor(a!)"));
  v.push_back(inplace_op("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)"));
  v.push_back(inplace_op("gelu_(Tensor(a!) self, str approximate='none') -> Tensor(a!)"));
  v.push_back(inplace_op(
      "nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)"));
}

}  // namespace tsr::core
