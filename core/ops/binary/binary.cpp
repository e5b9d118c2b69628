// The binary family's primitive ops, each with its own kernel, and their backward formulas: the
// foundation ops (add, sub, mul, div, maximum, minimum, pow, the comparisons, clamp, where) and
// div_mode (torch.div with rounding_mode), remainder, fmod, atan2, hypot, copysign, xlogy,
// logaddexp(2), fmax, fmin, lerp, logical_* and bitwise_* (incl. shifts). Promotion follows
// PyTorch (wrapped scalars weigh less, see result_type). Formulas are written with SDK ops, so they
// run on every backend and are recorded under create_graph; gradients of the broadcast shape are
// summed to the inputs' shapes by the engine. Composites of the family: binary_composite.cpp.
#include <string>

#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "autograd/autograd.hpp"

namespace tsr::core {
namespace {

using Rule = ElementwiseRule;

std::string both(CallCtx& ctx, Tensor* a, Tensor* b) { return describe(ctx.rt, a) + " and " + describe(ctx.rt, b); }

tsr_status_t div_mode_impl(CallCtx& ctx) {
  std::string mode = ctx.args[2].u.str ? ctx.args[2].u.str : "";
  if (mode != "trunc" && mode != "floor")
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + mode + "'");
  return elementwise_op(ctx, Rule::NoBool, 2);
}

// Ops PyTorch defines for floating dtypes only (no int -> float promotion).
tsr_status_t float_only_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  tsr_dtype_t common = result_type(in, 2);
  if (!is_floating(common))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("not implemented for ") + dtype_name(common) + " (inputs " +
                                               both(ctx, in[0], in[1]) + ")");
  return run_elementwise(ctx, in, 2, common, common, nullptr);
}

tsr_status_t logical_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  tsr_dtype_t common = result_type(in, 2);
  return run_elementwise(ctx, in, 2, common, TSR_BOOL, nullptr);
}

tsr_status_t logical_not_impl(CallCtx& ctx) {
  Tensor* in[1] = {ctx.tensor(0)};
  return run_elementwise(ctx, in, 1, in[0]->dtype, TSR_BOOL, nullptr);
}

// bitwise ops take integers and bool; shifts (allow_bool false) integers only.
template <bool AllowBool>
tsr_status_t bitwise_impl(CallCtx& ctx) {
  int n = ctx.nargs >= 2 && ctx.tensor(1) ? 2 : 1;
  Tensor* in[2] = {ctx.tensor(0), n == 2 ? ctx.tensor(1) : nullptr};
  tsr_dtype_t common = result_type(in, n);
  if (is_floating(common) || (!AllowBool && common == TSR_BOOL)) {
    std::string got = n == 2 ? both(ctx, in[0], in[1]) : describe(ctx.rt, in[0]);
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("only integer") + (AllowBool ? " and bool" : "") +
                                               " tensors are supported, got " + got);
  }
  return run_elementwise(ctx, in, n, common, common, nullptr);
}

// lerp(self, end, weight): floating; self and end share a dtype; weight too unless it is a
// wrapped number (lerp_scalar passes its weight so).
tsr_status_t lerp_impl(CallCtx& ctx) {
  Tensor* in[3] = {ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)};
  tsr_dtype_t dt = in[0]->dtype;
  if (!is_floating(dt))
    return ctx.error(TSR_INVALID_ARGUMENT, "expected a floating point self, got " + describe(ctx.rt, in[0]));
  if (in[1]->dtype != dt)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected dtype ") + dtype_name(dt) +
                                               " for `end` but got dtype " + dtype_name(in[1]->dtype));
  if (in[2]->dtype != dt && !(in[2]->wrapped_number && is_floating(in[2]->dtype)))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected dtype ") + dtype_name(dt) +
                                               " for `weight` but got dtype " + dtype_name(in[2]->dtype));
  return run_elementwise(ctx, in, 3, dt, dt, nullptr);
}

// ---- foundation ops (the first op set) ----

tsr_status_t check_alpha(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  if (ctx.args[2].tag == TSR_VALUE_DOUBLE && !is_floating(result_type(in, 2)))
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "for integral input tensors, argument alpha must not be a floating point number");
  return nullptr;
}

tsr_status_t add_impl(CallCtx& ctx) {
  TSR_RETURN_IF_ERROR(check_alpha(ctx));
  return elementwise_impl<Rule::Promote, 2>(ctx);
}

tsr_status_t sub_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  if (in[0]->dtype == TSR_BOOL || in[1]->dtype == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "subtraction with a bool tensor is not supported; use logical_xor or ~ instead");
  TSR_RETURN_IF_ERROR(check_alpha(ctx));
  return elementwise_impl<Rule::Promote, 2>(ctx);
}

// A wrapped integer exponent is a Python scalar: pow(Tensor, Scalar) in PyTorch refuses a
// negative one for integer (and bool) bases, whose exact result would not be an integer.
tsr_status_t pow_impl(CallCtx& ctx) {
  Tensor* base = ctx.tensor(0);
  Tensor* e = ctx.tensor(1);
  if (e->wrapped_number && e->dtype == TSR_I64 && e->device.type == TSR_DEVICE_TYPE_CPU && !is_floating(base->dtype) &&
      *static_cast<const int64_t*>(e->data()) < 0)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "Integers to negative integer powers are not allowed (base " + describe(ctx.rt, base) + ")");
  return elementwise_impl<Rule::NoBool, 2>(ctx);
}

tsr_status_t where_impl(CallCtx& ctx) {
  Tensor* cond = ctx.tensor(0);
  if (cond->dtype != TSR_BOOL && cond->dtype != TSR_U8)
    return ctx.error(TSR_INVALID_ARGUMENT, "condition must be a bool tensor, got " + describe(ctx.rt, cond));
  Tensor* ab[2] = {ctx.tensor(1), ctx.tensor(2)};
  tsr_dtype_t common = result_type(ab, 2);
  Tensor* cond_bool = nullptr;
  TSR_RETURN_IF_ERROR(cast_to(ctx.rt, cond, TSR_BOOL, ctx.name(), &cond_bool));
  Tensor* in[3] = {cond_bool, ab[0], ab[1]};
  const bool keep[3] = {true, false, false};
  tsr_status_t st = run_elementwise(ctx, in, 3, common, common, keep);
  cond_bool->release();
  return st;
}

tsr_status_t clamp_impl(CallCtx& ctx) {
  Tensor* in[1] = {ctx.tensor(0)};
  if (ctx.is_none(1) && ctx.is_none(2))
    return ctx.error(TSR_INVALID_ARGUMENT, "at least one of 'min' or 'max' must not be None");
  tsr_dtype_t dt = in[0]->dtype;
  if (dt == TSR_BOOL) return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors");
  // A float bound on an integer tensor promotes the result, as in PyTorch.
  ResultTypeState s;
  s.add(dt, in[0]->ndim, false);
  for (int i = 1; i <= 2; ++i)
    if (!ctx.is_none(i)) s.add(ctx.args[i].tag == TSR_VALUE_DOUBLE ? TSR_F64 : TSR_I64, 0, true);
  tsr_dtype_t common = s.result();
  return run_elementwise(ctx, in, 1, common, common, nullptr);
}

// ---- backward formulas ----

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

TSR_CORE_OPS(binary) {
  v.push_back(
      {"add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", add_impl, TSR_GRAD(add_backward), kSaveNothing});
  v.push_back(
      {"sub(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", sub_impl, TSR_GRAD(sub_backward), kSaveNothing});
  v.push_back({"mul(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>, TSR_GRAD(mul_backward),
               kSaveInputs});
  v.push_back({"div(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>,
               TSR_GRAD(div_backward), kSaveInputs});
  v.push_back({"maximum(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>,
               TSR_GRAD(maxmin_backward<true>), kSaveInputs});
  v.push_back({"minimum(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>,
               TSR_GRAD(maxmin_backward<false>), kSaveInputs});
  v.push_back({"pow(Tensor self, Tensor exponent) -> Tensor", pow_impl, TSR_GRAD(pow_backward), kSaveAll});
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"})
    v.push_back({std::string(cmp) + "(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Compare, 2>});
  v.push_back({"clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp_impl, TSR_GRAD(clamp_backward),
               kSaveInputs});
  v.push_back({"where(Tensor condition, Tensor self, Tensor other) -> Tensor", where_impl, TSR_GRAD(where_backward),
               kSaveInputs});
  v.push_back({"div_mode(Tensor self, Tensor other, str rounding_mode) -> Tensor", div_mode_impl,
               TSR_GRAD(div_mode_backward), kSaveNothing});
  v.push_back({"remainder(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::NoBool, 2>,
               TSR_GRAD(mod_backward<true>), kSaveInputs});
  v.push_back({"fmod(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::NoBool, 2>,
               TSR_GRAD(mod_backward<false>), kSaveInputs});
  v.push_back({"atan2(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>,
               TSR_GRAD(atan2_backward), kSaveInputs});
  v.push_back({"copysign(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>,
               TSR_GRAD(copysign_backward), kSaveAll});
  v.push_back({"xlogy(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>,
               TSR_GRAD(xlogy_backward), kSaveInputs});
  v.push_back({"hypot(Tensor self, Tensor other) -> Tensor", float_only_impl, TSR_GRAD(hypot_backward), kSaveAll});
  v.push_back({"logaddexp(Tensor self, Tensor other) -> Tensor", float_only_impl, TSR_GRAD(logaddexp_backward<false>),
               kSaveInputs});
  v.push_back({"logaddexp2(Tensor self, Tensor other) -> Tensor", float_only_impl, TSR_GRAD(logaddexp_backward<true>),
               kSaveInputs});
  v.push_back({"fmax(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>,
               TSR_GRAD(fmaxmin_backward<true>), kSaveInputs});
  v.push_back({"fmin(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>,
               TSR_GRAD(fmaxmin_backward<false>), kSaveInputs});
  v.push_back(
      {"lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", lerp_impl, TSR_GRAD(lerp_backward), kSaveInputs});
  for (const char* f : {"logical_and", "logical_or", "logical_xor"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", logical_impl});
  v.push_back({"logical_not(Tensor self) -> Tensor", logical_not_impl});
  for (const char* f : {"bitwise_and", "bitwise_or", "bitwise_xor"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", bitwise_impl<true>});
  v.push_back({"bitwise_not(Tensor self) -> Tensor", bitwise_impl<true>});
  for (const char* f : {"bitwise_left_shift", "bitwise_right_shift"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", bitwise_impl<false>});
}

}  // namespace tsr::core
