// Unary math and activation ops (the foundation ops neg, abs, relu, exp, log, sqrt, rsqrt, tanh,
// sigmoid, silu, gelu among them): schemas, PyTorch dtype rules, argument checks and backward
// formulas. Kernels do the math (backends/*/unary*.cpp). Formulas are written with SDK ops so they
// run on any backend and are recorded under create_graph; those that can use the result (exp,
// tanh, sigmoid, sqrt, ...) save only the output. Dtype rules:
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
#include <limits>
#include <optional>
#include <string>

#include "ops/composite.hpp"
#include "tensor/dtype.hpp"
#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "ops/nn/nn_kernel_op.hpp"
#include "autograd/engine.hpp"
#include "tessera/tessera.hpp"

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

// ---- foundation ops (the first op set) ----

tsr_status_t gelu_impl(CallCtx& ctx) {
  std::string approx = ctx.args[1].u.str;
  if (approx != "none" && approx != "tanh")
    return ctx.error(TSR_INVALID_ARGUMENT, "approximate must be 'none' or 'tanh', got '" + approx + "'");
  return elementwise_impl<Rule::IntToFloat, 1>(ctx);
}

// grad * gelu'(self): the fused form of gelu's backward (gelu_bw below) for backends
// that register a kernel.
tsr_status_t gelu_backward_impl(CallCtx& ctx) {
  std::string approx = ctx.args[2].u.str;
  if (approx != "none" && approx != "tanh")
    return ctx.error(TSR_INVALID_ARGUMENT, "approximate must be 'none' or 'tanh', got '" + approx + "'");
  return elementwise_impl<Rule::IntToFloat, 2>(ctx);
}

tsr_status_t abs_impl(CallCtx& ctx) { return elementwise_impl<Rule::Promote, 1>(ctx); }

// ---- backward formulas ----

using tsr::Tensor;

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

Tensor zero_like_scalar(const Tensor& g) { return tsr::wrap_scalar(0.0, g.runtime()); }
// g where cond, else 0 (never NaN from 0 * inf in the masked-out part).
Tensor masked(const Tensor& cond, const Tensor& g) { return tsr::where(cond, g, zero_like_scalar(g)); }
Tensor zeros_of(GradCtx& c) {
  const Tensor& g = c.grad(0);
  return tsr::zeros(c.input_sizes(0), g.dtype(), g.device());
}

using nn::fused_backward;

#define TSR_UNARY_BW(name) void name##_bw(GradCtx& c)
#define X c.input(0)
#define Y c.output(0)
#define G c.grad(0)
#define SET(expr)                            \
  do {                                       \
    if (!c.needs(0) || !G.defined()) return; \
    c.set(0, (expr));                        \
  } while (0)

TSR_UNARY_BW(neg) { SET(tsr::neg(G)); }
TSR_UNARY_BW(abs) { SET(G * tsr::sgn(X)); }
// G where Y > 0, else 0; a NaN Y passes G, as PyTorch's threshold_backward.
TSR_UNARY_BW(relu) {
  if (!c.needs(0) || !G.defined()) return;
  static const tsr::Op fused("_threshold_backward");
  auto r = fused_backward(fused, G, {G, Y, 0.0});
  c.set(0, r ? *r : tsr::where(tsr::le(Y, 0.0), zero_like_scalar(G), G));
}
TSR_UNARY_BW(exp) { SET(G * Y); }
TSR_UNARY_BW(exp2) { SET(G * Y * kLn2); }
TSR_UNARY_BW(expm1) { SET(G * (Y + 1.0)); }
TSR_UNARY_BW(log) { SET(G / X); }
TSR_UNARY_BW(log2) { SET(G / (X * kLn2)); }
TSR_UNARY_BW(log10) { SET(G / (X * kLn10)); }
TSR_UNARY_BW(log1p) { SET(G / (X + 1.0)); }
TSR_UNARY_BW(sqrt) { SET(G / (Y * 2.0)); }
TSR_UNARY_BW(rsqrt) { SET(G * (Y * Y * Y) * -0.5); }
TSR_UNARY_BW(reciprocal) { SET(G * (Y * Y) * -1.0); }
TSR_UNARY_BW(square) { SET(G * X * 2.0); }
TSR_UNARY_BW(sin) { SET(G * tsr::cos(X)); }
TSR_UNARY_BW(cos) { SET(G * tsr::sin(X) * -1.0); }
TSR_UNARY_BW(tan) { SET(G * (Y * Y + 1.0)); }
TSR_UNARY_BW(asin) { SET(G * tsr::rsqrt(1.0 - X * X)); }
TSR_UNARY_BW(acos) { SET(G * tsr::rsqrt(1.0 - X * X) * -1.0); }
TSR_UNARY_BW(atan) { SET(G / (X * X + 1.0)); }
TSR_UNARY_BW(sinh) { SET(G * tsr::cosh(X)); }
TSR_UNARY_BW(cosh) { SET(G * tsr::sinh(X)); }
TSR_UNARY_BW(tanh) { SET(G * (1.0 - Y * Y)); }
TSR_UNARY_BW(asinh) { SET(G * tsr::rsqrt(X * X + 1.0)); }
// + 0.0: at x = -1 the product is -0, whose rsqrt is -inf; PyTorch's rsqrt(x^2 - 1) gives +inf.
TSR_UNARY_BW(acosh) { SET(G * tsr::rsqrt((X - 1.0) * (X + 1.0) + 0.0)); }
TSR_UNARY_BW(atanh) { SET(G / (1.0 - X * X)); }
TSR_UNARY_BW(erf) { SET(G * tsr::exp(tsr::neg(X * X)) * kTwoOverSqrtPi); }
TSR_UNARY_BW(erfc) { SET(G * tsr::exp(tsr::neg(X * X)) * -kTwoOverSqrtPi); }
TSR_UNARY_BW(erfinv) { SET(G * tsr::exp(Y * Y) * kSqrtPiOverTwo); }
// Piecewise constant: the gradient is zero almost everywhere (as in PyTorch).
TSR_UNARY_BW(zero) { SET(zeros_of(c)); }
TSR_UNARY_BW(frac) { SET(G * 1.0); }
TSR_UNARY_BW(sigmoid) { SET(G * Y * (1.0 - Y)); }
TSR_UNARY_BW(silu) {
  if (!c.needs(0) || !G.defined()) return;
  Tensor s = tsr::sigmoid(X);
  c.set(0, G * s * (X * (1.0 - s) + 1.0));
}
TSR_UNARY_BW(gelu) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  static const tsr::Op fused("_gelu_backward");
  if (auto r = fused_backward(fused, G, {G, x, c.str(1)})) {
    c.set(0, *r);
    return;
  }
  if (c.str(1) == "tanh") {
    const double k = 0.79788456080286535588, a = 0.044715;
    Tensor x2 = x * x;
    Tensor t = tsr::tanh((x + x2 * x * a) * k);
    Tensor left = (t + 1.0) * 0.5;
    Tensor right = x * (1.0 - t * t) * (x2 * (3 * a) + 1.0) * (0.5 * k);
    c.set(0, G * (left + right));
  } else {
    Tensor cdf = (tsr::erf(x * kInvSqrt2) + 1.0) * 0.5;
    Tensor pdf = tsr::exp(x * x * -0.5) * kInvSqrt2Pi;
    c.set(0, G * (cdf + x * pdf));
  }
}
TSR_UNARY_BW(logit) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  Tensor d = G / (x * (1.0 - x));
  if (c.is_none(1)) {
    // Outside [0, 1] the forward is NaN, and so is the gradient (PyTorch's logit_backward).
    Tensor outside = tsr::logical_or(tsr::lt(x, 0.0), tsr::gt(x, 1.0));
    c.set(0, tsr::where(outside, std::numeric_limits<double>::quiet_NaN(), d));
  } else {
    // Clamped region: the forward is constant there.
    double eps = c.double_arg(1);
    c.set(0, masked(tsr::ge(x, eps) * tsr::le(x, 1.0 - eps), d));
  }
}
TSR_UNARY_BW(leaky_relu) {
  if (!c.needs(0) || !G.defined()) return;
  c.set(0, tsr::where(tsr::gt(X, 0.0), G, G * c.double_arg(1)));
}
TSR_UNARY_BW(elu) {
  if (!c.needs(0) || !G.defined()) return;
  const double alpha = c.double_arg(1), scale = c.double_arg(2), in_scale = c.double_arg(3);
  const Tensor& x = X;
  Tensor neg_part = G * tsr::exp(x * in_scale) * (alpha * scale * in_scale);
  c.set(0, tsr::where(tsr::gt(x, 0.0), G * scale, neg_part));
}
TSR_UNARY_BW(mish) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  Tensor t = tsr::tanh(tsr::softplus(x));
  c.set(0, G * (t + x * tsr::sigmoid(x) * (1.0 - t * t)));
}
TSR_UNARY_BW(softplus) {
  if (!c.needs(0) || !G.defined()) return;
  const double beta = c.double_arg(1), threshold = c.double_arg(2);
  const Tensor& x = X;
  Tensor linear = tsr::gt(x * beta, threshold);
  c.set(0, tsr::where(linear, G, G * tsr::sigmoid(x * beta)));
}
TSR_UNARY_BW(hardswish) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  Tensor mid = G * (x * (1.0 / 3.0) + 0.5);
  c.set(0, tsr::where(tsr::lt(x, -3.0), zero_like_scalar(G), tsr::where(tsr::le(x, 3.0), mid, G)));
}
TSR_UNARY_BW(hardsigmoid) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  c.set(0, masked(tsr::gt(x, -3.0) * tsr::lt(x, 3.0), G * (1.0 / 6.0)));
}
TSR_UNARY_BW(hardtanh) {
  if (!c.needs(0) || !G.defined()) return;
  const Tensor& x = X;
  c.set(0, masked(tsr::gt(x, c.double_arg(1)) * tsr::lt(x, c.double_arg(2)), G));
}
TSR_UNARY_BW(nan_to_num) { SET(masked(tsr::isfinite(X), G)); }

#undef SET
#undef G
#undef Y
#undef X
#undef TSR_UNARY_BW

}  // namespace

TSR_CORE_OPS(unary) {
  v.push_back({"neg(Tensor self) -> Tensor", elementwise_impl<Rule::NoBool, 1>, TSR_GRAD(neg_bw), kSaveNothing});
  v.push_back({"abs(Tensor self) -> Tensor", abs_impl, TSR_GRAD(abs_bw), kSaveInputs});
  v.push_back({"relu(Tensor self) -> Tensor", elementwise_impl<Rule::NoBool, 1>, TSR_GRAD(relu_bw), kSaveOutputs});
  v.push_back({"exp(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(exp_bw), kSaveOutputs});
  v.push_back({"log(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(log_bw), kSaveInputs});
  v.push_back({"sqrt(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(sqrt_bw), kSaveOutputs});
  v.push_back(
      {"rsqrt(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(rsqrt_bw), kSaveOutputs});
  v.push_back({"tanh(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(tanh_bw), kSaveOutputs});
  v.push_back(
      {"sigmoid(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(sigmoid_bw), kSaveOutputs});
  v.push_back({"silu(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>, TSR_GRAD(silu_bw), kSaveInputs});
  v.push_back({"gelu(Tensor self, str approximate='none') -> Tensor", gelu_impl, TSR_GRAD(gelu_bw), kSaveInputs});
  v.push_back({"_gelu_backward(Tensor grad, Tensor self, str approximate='none') -> Tensor", gelu_backward_impl});
  v.push_back({"_threshold_backward(Tensor grad, Tensor self, Scalar threshold) -> Tensor",
               elementwise_impl<Rule::Promote, 2>});
  const auto ItoF = elementwise_impl<Rule::IntToFloat, 1>;
  v.push_back({"exp2(Tensor self) -> Tensor", ItoF, TSR_GRAD(exp2_bw), kSaveOutputs});
  v.push_back({"expm1(Tensor self) -> Tensor", ItoF, TSR_GRAD(expm1_bw), kSaveOutputs});
  v.push_back({"log2(Tensor self) -> Tensor", ItoF, TSR_GRAD(log2_bw), kSaveInputs});
  v.push_back({"log10(Tensor self) -> Tensor", ItoF, TSR_GRAD(log10_bw), kSaveInputs});
  v.push_back({"log1p(Tensor self) -> Tensor", ItoF, TSR_GRAD(log1p_bw), kSaveInputs});
  v.push_back({"reciprocal(Tensor self) -> Tensor", ItoF, TSR_GRAD(reciprocal_bw), kSaveOutputs});
  v.push_back({"sin(Tensor self) -> Tensor", ItoF, TSR_GRAD(sin_bw), kSaveInputs});
  v.push_back({"cos(Tensor self) -> Tensor", ItoF, TSR_GRAD(cos_bw), kSaveInputs});
  v.push_back({"tan(Tensor self) -> Tensor", ItoF, TSR_GRAD(tan_bw), kSaveOutputs});
  v.push_back({"asin(Tensor self) -> Tensor", ItoF, TSR_GRAD(asin_bw), kSaveInputs});
  v.push_back({"acos(Tensor self) -> Tensor", ItoF, TSR_GRAD(acos_bw), kSaveInputs});
  v.push_back({"atan(Tensor self) -> Tensor", ItoF, TSR_GRAD(atan_bw), kSaveInputs});
  v.push_back({"sinh(Tensor self) -> Tensor", ItoF, TSR_GRAD(sinh_bw), kSaveInputs});
  v.push_back({"cosh(Tensor self) -> Tensor", ItoF, TSR_GRAD(cosh_bw), kSaveInputs});
  v.push_back({"asinh(Tensor self) -> Tensor", ItoF, TSR_GRAD(asinh_bw), kSaveInputs});
  v.push_back({"acosh(Tensor self) -> Tensor", ItoF, TSR_GRAD(acosh_bw), kSaveInputs});
  v.push_back({"atanh(Tensor self) -> Tensor", ItoF, TSR_GRAD(atanh_bw), kSaveInputs});
  v.push_back({"erf(Tensor self) -> Tensor", ItoF, TSR_GRAD(erf_bw), kSaveInputs});
  v.push_back({"erfc(Tensor self) -> Tensor", ItoF, TSR_GRAD(erfc_bw), kSaveInputs});
  v.push_back({"erfinv(Tensor self) -> Tensor", ItoF, TSR_GRAD(erfinv_bw), kSaveOutputs});
  v.push_back({"sign(Tensor self) -> Tensor", same_dtype_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"sgn(Tensor self) -> Tensor", same_dtype_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"square(Tensor self) -> Tensor", square_impl, TSR_GRAD(square_bw), kSaveInputs});
  v.push_back({"floor(Tensor self) -> Tensor", keep_int_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"ceil(Tensor self) -> Tensor", keep_int_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"trunc(Tensor self) -> Tensor", keep_int_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"round(Tensor self, *, int decimals=0) -> Tensor", round_impl, TSR_GRAD(zero_bw), kSaveNothing});
  v.push_back({"frac(Tensor self) -> Tensor", float_only_impl, TSR_GRAD(frac_bw), kSaveNothing});
  v.push_back({"logit(Tensor self, float? eps=None) -> Tensor", logit_impl, TSR_GRAD(logit_bw), kSaveInputs});
  v.push_back({"leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", float_only_impl,
               TSR_GRAD(leaky_relu_bw), kSaveInputs});
  v.push_back({"elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", float_only_impl,
               TSR_GRAD(elu_bw), kSaveInputs});
  v.push_back({"mish(Tensor self) -> Tensor", float_only_impl, TSR_GRAD(mish_bw), kSaveInputs});
  v.push_back({"softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", softplus_impl,
               TSR_GRAD(softplus_bw), kSaveInputs});
  v.push_back({"hardswish(Tensor self) -> Tensor", float_only_impl, TSR_GRAD(hardswish_bw), kSaveInputs});
  v.push_back({"hardsigmoid(Tensor self) -> Tensor", float_only_impl, TSR_GRAD(hardsigmoid_bw), kSaveInputs});
  v.push_back({"hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", hardtanh_impl,
               TSR_GRAD(hardtanh_bw), kSaveInputs});
  for (const char* f : {"isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"})
    v.push_back({std::string(f) + "(Tensor self) -> Tensor", predicate_impl});
  v.push_back({"nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
               same_dtype_impl, TSR_GRAD(nan_to_num_bw), kSaveInputs});
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
