// OpInfos of the unary family: odd, empty, 0-dim and strided-friendly shapes; inputs drawn from
// each op's domain (away from kinks and poles so that float64 gradchecks are meaningful); out=
// for every op with an out= form.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using Gen = std::function<tsr::Tensor(const Shape&, uint64_t)>;

const std::vector<tsr_dtype_t>& floats() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  return d;
}
const std::vector<tsr_dtype_t>& numeric() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64, TSR_I32, TSR_I16, TSR_I8};
  return d;
}

Gen uniform(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return random_f64(s, seed, lo, hi); };
}
Gen away(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return random_f64_away_from_zero(s, seed, lo, hi); };
}

// A long-lived handle per op name (tsr::Op caches by address).
const tsr::Op& op_of(const std::string& name) {
  static std::vector<std::pair<std::unique_ptr<std::string>, std::unique_ptr<tsr::Op>>> ops;
  for (const auto& o : ops)
    if (*o.first == name) return *o.second;
  auto n = std::make_unique<std::string>(name);
  auto op = std::make_unique<tsr::Op>(n->c_str());
  ops.emplace_back(std::move(n), std::move(op));
  return *ops.back().second;
}

// Extra (non-tensor) arguments after self, as plain values re-boxed at each call.
struct Extra {
  // I1F: an int argument passed only for floating inputs (round's decimals).
  enum Kind { None, D1, D2, D3, I1F, S1 } kind = None;
  double a = 0, b = 0, c = 0;
  int64_t i = 0;
  const char* s = nullptr;
};

std::vector<tsr::Tensor> invoke(const tsr::Op& op, const tsr::Tensor& x, const Extra& e,
                                std::vector<tsr::Tensor> outs) {
  switch (e.kind) {
    case Extra::D1:
      return tsr::call_multi(op, {x, e.a}, std::move(outs));
    case Extra::D2:
      return tsr::call_multi(op, {x, e.a, e.b}, std::move(outs));
    case Extra::D3:
      return tsr::call_multi(op, {x, e.a, e.b, e.c}, std::move(outs));
    case Extra::I1F:
      if (!tsr::is_floating(x.dtype())) return tsr::call_multi(op, {x}, std::move(outs));
      return tsr::call_multi(op, {x, e.i}, std::move(outs));
    case Extra::S1:
      return tsr::call_multi(op, {x, e.s}, std::move(outs));
    default:
      return tsr::call_multi(op, {x}, std::move(outs));
  }
}

// One OpInfo per op: `extra` binds the op's other arguments; `alt`, when set, is used for every
// other sample instead (two modes of one op, e.g. gelu's approximations).
OpInfo unary_info(const std::string& name, Gen gen, std::vector<tsr_dtype_t> dtypes, bool differentiable,
                  Extra extra = {}, bool has_out = true, double tol_scale = 1,
                  std::optional<Extra> alt = std::nullopt) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol_scale;
  o.samples = [name, gen, extra, has_out, alt](uint64_t seed) {
    const std::vector<Shape> shapes = {{3, 5}, {7}, {2, 1, 3}, {0, 3}, {}, {1}, {13, 11}, {2, 3}};
    std::vector<Sample> out;
    for (size_t k = 0; k < shapes.size(); ++k) {
      const Shape& sh = shapes[k];
      const Extra extra_k = alt && k % 2 == 1 ? *alt : extra;
      Sample s;
      s.desc = describe(tsr::empty(sh));
      s.inputs = {gen(sh, seed++)};
      s.run = [name, extra_k](const Tensors& in) { return Tensors{invoke(op_of(name), in[0], extra_k, {})[0]}; };
      if (has_out)
        s.run_out = [name, extra_k](const Tensors& in, Tensors& outs) { invoke(op_of(name), in[0], extra_k, outs); };
      out.push_back(std::move(s));
    }
    return out;
  };
  return o;
}

Extra d1(double a) {
  Extra e;
  e.kind = Extra::D1;
  e.a = a;
  return e;
}
Extra d2(double a, double b) {
  Extra e;
  e.kind = Extra::D2;
  e.a = a;
  e.b = b;
  return e;
}
Extra d3(double a, double b, double c) {
  Extra e;
  e.kind = Extra::D3;
  e.a = a;
  e.b = b;
  e.c = c;
  return e;
}
Extra i1f(int64_t i) {
  Extra e;
  e.kind = Extra::I1F;
  e.i = i;
  return e;
}
Extra s1(const char* s) {
  Extra e;
  e.kind = Extra::S1;
  e.s = s;
  return e;
}

}  // namespace

TSR_OPINFOS(unary) {
  // Floating math (integer inputs promote to float32; checked in tests/ops/test_unary.cpp).
  v.push_back(unary_info("exp", uniform(-4, 4), floats(), true));
  v.push_back(unary_info("exp2", uniform(-4, 4), floats(), true));
  v.push_back(unary_info("expm1", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("log", uniform(0.1, 4), floats(), true));
  v.push_back(unary_info("log2", uniform(0.1, 4), floats(), true));
  v.push_back(unary_info("log10", uniform(0.1, 4), floats(), true));
  v.push_back(unary_info("log1p", uniform(-0.8, 4), floats(), true));
  v.push_back(unary_info("sqrt", uniform(0.1, 4), floats(), true));
  v.push_back(unary_info("rsqrt", uniform(0.1, 4), floats(), true));
  v.push_back(unary_info("reciprocal", away(0.3, 3), floats(), true));
  v.push_back(unary_info("sin", uniform(-5, 5), floats(), true));
  v.push_back(unary_info("cos", uniform(-5, 5), floats(), true));
  v.push_back(unary_info("tan", uniform(-1.2, 1.2), floats(), true, {}, true, 2));
  v.push_back(unary_info("asin", uniform(-0.9, 0.9), floats(), true));
  v.push_back(unary_info("acos", uniform(-0.9, 0.9), floats(), true));
  v.push_back(unary_info("atan", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("sinh", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("cosh", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("tanh", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("asinh", uniform(-3, 3), floats(), true));
  v.push_back(unary_info("acosh", uniform(1.2, 4), floats(), true));
  v.push_back(unary_info("atanh", uniform(-0.9, 0.9), floats(), true));
  v.push_back(unary_info("erf", uniform(-2.5, 2.5), floats(), true));
  v.push_back(unary_info("erfc", uniform(-2.5, 2.5), floats(), true));
  v.push_back(unary_info("erfinv", uniform(-0.9, 0.9), floats(), true, {}, true, 2));
  v.push_back(unary_info("sigmoid", uniform(-5, 5), floats(), true));
  v.push_back(unary_info("logit", uniform(0.1, 0.9), floats(), true));
  v.push_back(unary_info("silu", uniform(-5, 5), floats(), true));
  v.push_back(unary_info("gelu", uniform(-4, 4), floats(), true, s1("none"), true, 1, s1("tanh")));
  // Activations (floating only).
  v.push_back(unary_info("frac", away(0.1, 0.9), floats(), true));
  v.push_back(unary_info("leaky_relu", away(0.1, 3), floats(), true, d1(0.2)));
  v.push_back(unary_info("elu", away(0.1, 3), floats(), true, d3(1.5, 0.5, 2.0)));
  v.push_back(unary_info("selu", away(0.1, 3), floats(), true, {}, false));
  v.push_back(unary_info("celu", away(0.1, 3), floats(), true, d1(0.7), false));
  v.push_back(unary_info("mish", uniform(-4, 4), floats(), true));
  v.push_back(unary_info("softplus", uniform(-4, 4), floats(), true, d2(2.0, 3.0)));
  v.push_back(unary_info("hardswish", away(0.1, 2.8), floats(), true));
  v.push_back(unary_info("hardsigmoid", away(0.1, 2.8), floats(), true));
  // Integer-preserving ops (the runner truncates the float64 samples for integer dtypes).
  v.push_back(unary_info("neg", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("abs", away(0.1, 5), numeric(), true));
  v.push_back(unary_info("relu", away(0.1, 5), numeric(), true));
  v.push_back(unary_info("square", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("sign", away(0.1, 5), numeric(), true));
  v.push_back(unary_info("sgn", away(0.1, 5), numeric(), true));
  v.push_back(unary_info("floor", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("ceil", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("trunc", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("round", uniform(-5, 5), numeric(), true, {}, true, 1, i1f(2)));
  v.push_back(unary_info("hardtanh", away(0.1, 3), numeric(), true, d2(-2.0, 2.5)));
  v.push_back(unary_info("relu6", uniform(-3, 9), numeric(), true, {}, false));
  v.push_back(unary_info("nan_to_num", uniform(-5, 5), numeric(), true));
  v.push_back(unary_info("positive", uniform(-5, 5), numeric(), true, {}, false));
  // Predicates (bool out, not differentiable).
  for (const char* p : {"isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"})
    v.push_back(unary_info(p, uniform(-5, 5), numeric(), false));
}

}  // namespace tsr::conformance
