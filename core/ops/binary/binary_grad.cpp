// Backward formulas of the binary family, for the foundation ops (add, sub, mul, div, maximum,
// minimum, pow, where, clamp) and the family's kernel ops. Written with SDK ops, so they run on
// every backend and are recorded under create_graph. Gradients of the broadcast shape are
// summed to the inputs' shapes by the engine.
#include "autograd/autograd.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

Tensor zero(const GradCtx& g) { return tsr::scalar_tensor(0.0, TSR_DTYPE_UNDEFINED, true, g.runtime()); }
// grad where mask holds, else 0.
Tensor keep(const GradCtx& g, const Tensor& mask, const Tensor& grad) { return tsr::where(mask, grad, zero(g)); }
Tensor zeros_for(const GradCtx& g, size_t i) {
  return tsr::zeros(g.input_sizes(i), g.input_dtype(i), g.grad().device());
}

// The alpha argument is a Scalar: multiply only when it is not 1 (keeps the graph small).
Tensor times_alpha(const Tensor& grad, double alpha) { return alpha == 1 ? grad : tsr::mul(grad, alpha); }

void add_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  if (g.needs(0)) g.set(0, gr);
  if (g.needs(1)) g.set(1, times_alpha(gr, g.double_arg(2)));
}

void sub_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  if (g.needs(0)) g.set(0, gr);
  if (g.needs(1)) g.set(1, times_alpha(tsr::neg(gr), g.double_arg(2)));
}

void mul_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  if (g.needs(0)) g.set(0, tsr::mul(gr, g.input(1)));
  if (g.needs(1)) g.set(1, tsr::mul(gr, g.input(0)));
}

void div_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  if (g.needs(0)) g.set(0, tsr::div(gr, b));
  if (g.needs(1)) g.set(1, tsr::neg(tsr::mul(gr, tsr::div(tsr::div(a, b), b))));
}

// Ties split the gradient in half; a NaN operand passes it to both (as PyTorch).
template <bool MAX>
void maxmin_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  Tensor shared = tsr::where(tsr::eq(a, b), tsr::div(gr, 2), gr);
  if (g.needs(0)) g.set(0, keep(g, tsr::logical_not(MAX ? tsr::lt(a, b) : tsr::gt(a, b)), shared));
  if (g.needs(1)) g.set(1, keep(g, tsr::logical_not(MAX ? tsr::gt(a, b) : tsr::lt(a, b)), shared));
}

// d/da a^b = b a^(b-1) (0 where b == 0, so 0^0 has gradient 0); d/db = a^b log a (0 where
// a == 0 and b >= 0).
void pow_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  if (g.needs(0)) {
    Tensor d = tsr::mul(tsr::mul(gr, b), tsr::pow(a, tsr::sub(b, 1)));
    g.set(0, tsr::where(tsr::eq(b, 0), zero(g), d));
  }
  if (g.needs(1)) {
    Tensor d = tsr::mul(tsr::mul(gr, g.output()), tsr::log(a));
    g.set(1, tsr::where(tsr::logical_and(tsr::eq(a, 0), tsr::ge(b, 0)), zero(g), d));
  }
}

void where_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& c = g.input(0);
  if (g.needs(1)) g.set(1, tsr::where(c, gr, zero(g)));
  if (g.needs(2)) g.set(2, tsr::where(c, zero(g), gr));
}

// The gradient passes where min <= x <= max (bounds included, as PyTorch).
void clamp_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined() || !g.needs(0)) return;
  const Tensor& x = g.input(0);
  Tensor mask;
  if (!g.is_none(1)) mask = tsr::ge(x, g.double_arg(1));
  if (!g.is_none(2)) {
    Tensor hi = tsr::le(x, g.double_arg(2));
    mask = mask.defined() ? tsr::logical_and(mask, hi) : hi;
  }
  g.set(0, keep(g, mask, gr));
}

// Rounded division is piecewise constant.
void div_mode_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  for (size_t i = 0; i < 2; ++i)
    if (g.needs(i)) g.set(i, zeros_for(g, i));
}

// d/db (a - q b) = -q with q = a / b rounded (floor for remainder, trunc for fmod).
template <bool FLOOR>
void mod_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  if (g.needs(0)) g.set(0, gr);
  if (g.needs(1)) g.set(1, tsr::neg(tsr::mul(gr, tsr::div(g.input(0), g.input(1), FLOOR ? "floor" : "trunc"))));
}

void atan2_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  Tensor r = tsr::div(gr, tsr::add(tsr::mul(a, a), tsr::mul(b, b)));
  if (g.needs(0)) g.set(0, tsr::mul(r, b));
  if (g.needs(1)) g.set(1, tsr::neg(tsr::mul(r, a)));
}

void hypot_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  Tensor r = tsr::div(gr, g.output());
  if (g.needs(0)) g.set(0, tsr::mul(r, g.input(0)));
  if (g.needs(1)) g.set(1, tsr::mul(r, g.input(1)));
}

// d/da copysign(a, b) = sign(a) sign(result), 0 at a == 0; nothing flows to b.
void copysign_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  if (g.needs(0)) g.set(0, tsr::mul(gr, tsr::where(tsr::eq(a, 0), zero(g), tsr::div(g.output(), a))));
  if (g.needs(1)) g.set(1, zeros_for(g, 1));
}

void xlogy_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  if (g.needs(0)) {
    Tensor d = tsr::xlogy(gr, b);
    g.set(0, tsr::where(tsr::logical_and(tsr::eq(a, 0), tsr::le(b, 0)), zero(g), d));
  }
  if (g.needs(1)) g.set(1, tsr::div(tsr::mul(gr, a), b));
}

// d/da log(e^a + e^b) = 1 / (1 + e^(b - a)); base 2 likewise with 2^(b - a).
template <bool BASE2>
void logaddexp_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  auto part = [&](const Tensor& x, const Tensor& y) {
    Tensor d = tsr::sub(y, x);
    Tensor e = BASE2 ? tsr::pow(2.0, d) : tsr::exp(d);
    return tsr::div(gr, tsr::add(e, 1));
  };
  if (g.needs(0)) g.set(0, part(a, b));
  if (g.needs(1)) g.set(1, part(b, a));
}

// The gradient goes to the operand chosen: self when it wins or ties, or when other is NaN.
template <bool MAX>
void fmaxmin_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  Tensor self_wins = tsr::logical_or(MAX ? tsr::ge(a, b) : tsr::le(a, b), tsr::ne(b, b));
  if (g.needs(0)) g.set(0, keep(g, self_wins, gr));
  if (g.needs(1)) g.set(1, keep(g, tsr::logical_not(self_wins), gr));
}

void lerp_backward(GradCtx& g) {
  const Tensor& gr = g.grad();
  if (!gr.defined()) return;
  const Tensor& w = g.input(2);
  if (g.needs(0)) g.set(0, tsr::mul(gr, tsr::sub(tsr::wrap_scalar(1, g.runtime()), w)));
  if (g.needs(1)) g.set(1, tsr::mul(gr, w));
  if (g.needs(2)) g.set(2, tsr::mul(gr, tsr::sub(g.input(1), g.input(0))));
}

}  // namespace

TSR_CORE_BACKWARDS(binary) {
  b.push_back({"add", add_backward, kSaveNothing});
  b.push_back({"sub", sub_backward, kSaveNothing});
  b.push_back({"mul", mul_backward, kSaveInputs});
  b.push_back({"div", div_backward, kSaveInputs});
  b.push_back({"maximum", maxmin_backward<true>, kSaveInputs});
  b.push_back({"minimum", maxmin_backward<false>, kSaveInputs});
  b.push_back({"pow", pow_backward, kSaveAll});
  b.push_back({"where", where_backward, kSaveInputs});
  b.push_back({"clamp", clamp_backward, kSaveInputs});
  b.push_back({"div_mode", div_mode_backward, kSaveNothing});
  b.push_back({"remainder", mod_backward<true>, kSaveInputs});
  b.push_back({"fmod", mod_backward<false>, kSaveInputs});
  b.push_back({"atan2", atan2_backward, kSaveInputs});
  b.push_back({"hypot", hypot_backward, kSaveAll});
  b.push_back({"copysign", copysign_backward, kSaveAll});
  b.push_back({"xlogy", xlogy_backward, kSaveInputs});
  b.push_back({"logaddexp", logaddexp_backward<false>, kSaveInputs});
  b.push_back({"logaddexp2", logaddexp_backward<true>, kSaveInputs});
  b.push_back({"fmax", fmaxmin_backward<true>, kSaveInputs});
  b.push_back({"fmin", fmaxmin_backward<false>, kSaveInputs});
  b.push_back({"lerp", lerp_backward, kSaveInputs});
}

}  // namespace tsr::core
