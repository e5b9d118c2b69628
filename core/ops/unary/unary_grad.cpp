// Backward formulas of the unary family, including the foundation ops neg, abs, relu, exp,
// log, sqrt, rsqrt, tanh, sigmoid, silu and gelu. Written with SDK ops so that they run on any
// backend and are recorded under create_graph. Formulas that can use the result (exp, tanh,
// sigmoid, sqrt, ...) save only the output: no copy of self is needed for in-place variants.
#include <cmath>

#include "autograd/engine.hpp"
#include "ops/op_table.hpp"
#include "tessera/tessera.hpp"

namespace tsr::core {
namespace {

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
TSR_UNARY_BW(relu) { SET(masked(tsr::gt(Y, 0.0), G)); }
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
TSR_UNARY_BW(acosh) { SET(G * tsr::rsqrt((X - 1.0) * (X + 1.0))); }
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
  if (!grad_mode()) {  // not recording (no create_graph): one fused pass when the backend has it
    try {
      static const tsr::Op op("_gelu_backward");
      c.set(0, tsr::call(op, {G, x, c.str(1)}));
      return;
    } catch (const tsr::Error& e) {
      if (e.code() != TSR_UNIMPLEMENTED) throw;
    }
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
    c.set(0, d);
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

TSR_CORE_BACKWARDS(unary) {
  b.push_back({"neg", neg_bw, kSaveNothing});
  b.push_back({"abs", abs_bw, kSaveInputs});
  b.push_back({"relu", relu_bw, kSaveOutputs});
  b.push_back({"exp", exp_bw, kSaveOutputs});
  b.push_back({"exp2", exp2_bw, kSaveOutputs});
  b.push_back({"expm1", expm1_bw, kSaveOutputs});
  b.push_back({"log", log_bw, kSaveInputs});
  b.push_back({"log2", log2_bw, kSaveInputs});
  b.push_back({"log10", log10_bw, kSaveInputs});
  b.push_back({"log1p", log1p_bw, kSaveInputs});
  b.push_back({"sqrt", sqrt_bw, kSaveOutputs});
  b.push_back({"rsqrt", rsqrt_bw, kSaveOutputs});
  b.push_back({"reciprocal", reciprocal_bw, kSaveOutputs});
  b.push_back({"square", square_bw, kSaveInputs});
  b.push_back({"sin", sin_bw, kSaveInputs});
  b.push_back({"cos", cos_bw, kSaveInputs});
  b.push_back({"tan", tan_bw, kSaveOutputs});
  b.push_back({"asin", asin_bw, kSaveInputs});
  b.push_back({"acos", acos_bw, kSaveInputs});
  b.push_back({"atan", atan_bw, kSaveInputs});
  b.push_back({"sinh", sinh_bw, kSaveInputs});
  b.push_back({"cosh", cosh_bw, kSaveInputs});
  b.push_back({"tanh", tanh_bw, kSaveOutputs});
  b.push_back({"asinh", asinh_bw, kSaveInputs});
  b.push_back({"acosh", acosh_bw, kSaveInputs});
  b.push_back({"atanh", atanh_bw, kSaveInputs});
  b.push_back({"erf", erf_bw, kSaveInputs});
  b.push_back({"erfc", erfc_bw, kSaveInputs});
  b.push_back({"erfinv", erfinv_bw, kSaveOutputs});
  for (const char* f : {"sign", "sgn", "floor", "ceil", "trunc", "round"}) b.push_back({f, zero_bw, kSaveNothing});
  b.push_back({"frac", frac_bw, kSaveNothing});
  b.push_back({"sigmoid", sigmoid_bw, kSaveOutputs});
  b.push_back({"silu", silu_bw, kSaveInputs});
  b.push_back({"gelu", gelu_bw, kSaveInputs});
  b.push_back({"logit", logit_bw, kSaveInputs});
  b.push_back({"leaky_relu", leaky_relu_bw, kSaveInputs});
  b.push_back({"elu", elu_bw, kSaveInputs});
  b.push_back({"mish", mish_bw, kSaveInputs});
  b.push_back({"softplus", softplus_bw, kSaveInputs});
  b.push_back({"hardswish", hardswish_bw, kSaveInputs});
  b.push_back({"hardsigmoid", hardsigmoid_bw, kSaveInputs});
  b.push_back({"hardtanh", hardtanh_bw, kSaveInputs});
  b.push_back({"nan_to_num", nan_to_num_bw, kSaveInputs});
}

}  // namespace tsr::core
