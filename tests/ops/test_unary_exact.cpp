// Unary ops that keep integer dtypes or answer bool (abs, neg, sign, sgn, square, floor, ceil,
// trunc, round, relu, hardtanh, relu6, nan_to_num, positive, isnan..signbit), the family's
// argument errors, and autograd behaviour beyond gradchecks.
#include <cmath>
#include <limits>

#include "unary_test_util.hpp"

namespace tsr::optest {
namespace {

using unary::Invoke;
using unary::map_ref;
using unary::op_named;

struct ExactOp {
  std::string name;
  std::function<double(double)> ref;
  Invoke invoke;
  bool differentiable = true;
};

double round_half_even(double x) { return std::nearbyint(x); }

std::vector<ExactOp> exact_ops() {
  using namespace unary;
  std::vector<ExactOp> v;
  v.push_back({"abs", [](double x) { return std::fabs(x); }, no_args()});
  v.push_back({"neg", [](double x) { return -x; }, no_args()});
  v.push_back({"sign", [](double x) { return double((0 < x) - (x < 0)); }, no_args()});
  v.push_back({"sgn", [](double x) { return double((0 < x) - (x < 0)); }, no_args()});
  v.push_back({"square", [](double x) { return x * x; }, no_args()});
  v.push_back({"floor", [](double x) { return std::floor(x); }, no_args()});
  v.push_back({"ceil", [](double x) { return std::ceil(x); }, no_args()});
  v.push_back({"trunc", [](double x) { return std::trunc(x); }, no_args()});
  v.push_back({"round", round_half_even, no_args()});
  v.push_back({"relu", [](double x) { return x > 0 ? x : 0; }, no_args()});
  v.push_back({"hardtanh", [](double x) { return ref_clamp(x, -1, 1); }, no_args()});
  v.push_back({"hardtanh", [](double x) { return ref_clamp(x, -2, 3); }, with_doubles(-2, 3)});
  v.push_back({"relu6", [](double x) { return ref_clamp(x, 0, 6); }, no_args()});
  v.push_back({"nan_to_num", [](double x) { return x; }, no_args()});
  v.push_back({"positive", [](double x) { return x; }, no_args()});
  return v;
}

std::string label(const ExactOp& o, size_t i) { return o.name + "#" + std::to_string(i); }

TEST(UnaryOps, ExactOpsOnFloats) {
  auto ops = exact_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExactOp& o = ops[i];
    const Op& op = op_named(o.name);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
      // Values on both sides of every breakpoint (0, +-1, 3, 6) and half-integers for round.
      Tensor x = randu({9, 7}, 70 + i, -8, 8, dt);
      Tensor y = o.invoke(op, x, {});
      EXPECT_EQ(y.dtype(), dt) << label(o, i);
      auto tol = default_tol(dt);
      EXPECT_TRUE(close(y, map_ref(values(x), o.ref), {9, 7}, tol.first, tol.second)) << label(o, i) << dtype_name(dt);
      Tensor xs = noncontig(x);
      EXPECT_TRUE(close(o.invoke(op, xs, {}), map_ref(values(xs), o.ref), {9, 7}, tol.first, tol.second))
          << label(o, i);
    }
    Tensor e = o.invoke(op, empty({0, 4}, TSR_F32), {});
    EXPECT_EQ(e.sizes(), (Shape{0, 4})) << label(o, i);
  }
}

TEST(UnaryOps, ExactOpsKeepIntegerDtypes) {
  auto ops = exact_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExactOp& o = ops[i];
    const Op& op = op_named(o.name);
    for (tsr_dtype_t dt : {TSR_I64, TSR_I32, TSR_I16, TSR_I8, TSR_U8}) {
      int64_t lo = dt == TSR_U8 ? 0 : -9;
      Tensor x = randint({5, 3}, 80 + i, lo, 10, dt);
      if (o.name == "neg" && dt == TSR_U8) continue;  // wraps; checked below
      Tensor y = o.invoke(op, x, {});
      EXPECT_EQ(y.dtype(), dt) << label(o, i) << " " << dtype_name(dt);
      EXPECT_TRUE(close(y, map_ref(values(x), o.ref), {5, 3}, 0, 0)) << label(o, i) << " " << dtype_name(dt);
      Tensor xs = noncontig(x);
      EXPECT_TRUE(close(o.invoke(op, xs, {}), map_ref(values(xs), o.ref), {5, 3}, 0, 0)) << label(o, i);
    }
  }
  // Wrapping like PyTorch's integer arithmetic.
  Tensor u = from_vector(std::vector<uint8_t>{1, 200}, {2});
  EXPECT_EQ(values(neg(u)), (std::vector<double>{255, 56}));
  Tensor i8 = from_vector(std::vector<int8_t>{-128, 12, 16}, {3});
  EXPECT_EQ(values(abs(i8)), (std::vector<double>{-128, 12, 16}));
  EXPECT_EQ(values(square(i8)), (std::vector<double>{0, -112, 0}));  // 144 and 256 wrap
}

TEST(UnaryOps, BoolRules) {
  Tensor b = from_bools({true, false, true}, {3});
  EXPECT_EQ(sign(b).dtype(), TSR_BOOL);
  EXPECT_EQ(values(sign(b)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(sgn(b).dtype(), TSR_BOOL);
  EXPECT_EQ(abs(b).dtype(), TSR_BOOL);
  EXPECT_EQ(square(b).dtype(), TSR_I64);  // pow(bool, 2) promotes to int64
  EXPECT_EQ(values(square(b)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(nan_to_num(b).dtype(), TSR_BOOL);
  EXPECT_EQ(values(nan_to_num(b)), (std::vector<double>{1, 0, 1}));
  for (const char* name : {"neg", "floor", "ceil", "trunc", "round", "relu", "hardtanh", "relu6", "positive"})
    EXPECT_TRUE(throws_with([&] { call(op_named(name), {b}); }, {name, "bool"})) << name;
}

TEST(UnaryOps, ExactOpsInplaceAndOut) {
  auto ops = exact_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExactOp& o = ops[i];
    if (o.name == "positive") continue;  // no in-place or out= form in PyTorch
    for (tsr_dtype_t dt : {TSR_F32, TSR_I32}) {
      Tensor x = dt == TSR_F32 ? randu({4, 5}, 90 + i, -8, 8, dt) : randint({4, 5}, 90 + i, -9, 10, dt);
      Tensor expected = o.invoke(op_named(o.name), x, {});
      Tensor xi = noncontig(x);
      o.invoke(op_named(o.name + "_"), xi, {xi});
      EXPECT_TRUE(close(xi, values(expected), {4, 5}, 0, 0)) << label(o, i);
      Tensor out = empty({4, 5}, dt);
      o.invoke(op_named(o.name), x, {out});
      EXPECT_TRUE(close(out, values(expected), {4, 5}, 0, 0)) << label(o, i);
    }
  }
}

TEST(UnaryOps, RoundDecimals) {
  Tensor x = from_vector(std::vector<double>{1.2345, -2.5, 0.5, 1.5, 1234.5678, -0.125, 2.675}, {7});
  EXPECT_EQ(values(round(x)), (std::vector<double>{1, -2, 0, 2, 1235, -0, 3}));
  std::vector<double> r2 = values(round(x, 2));
  std::vector<double> xv = values(x);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_DOUBLE_EQ(r2[i], std::nearbyint(xv[i] * 100) / 100) << i;
  std::vector<double> rm2 = values(round(x, -2));
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_DOUBLE_EQ(rm2[i], std::nearbyint(xv[i] / 100) * 100) << i;
  Tensor f = x.to(TSR_F32);
  round_(f, 1);
  std::vector<double> r1 = values(f);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_FLOAT_EQ(float(r1[i]), std::nearbyint(float(xv[i]) * 10.f) / 10.f) << i;
  Tensor ints = randint({4}, 3, -50, 50);
  EXPECT_EQ(values(round(ints)), values(ints));
  EXPECT_TRUE(throws_with([&] { round(ints, 2); }, {"round", "decimals=2", "int64"}));
  EXPECT_TRUE(throws_with([&] { round(x, 1000); }, {"round", "decimals=1000"}));
}

TEST(UnaryOps, Predicates) {
  const std::vector<double> v = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -2.0, 65504.0};
  struct P {
    const char* name;
    std::function<bool(double)> f;
  };
  const std::vector<P> preds = {
      {"isnan", [](double x) { return std::isnan(x); }},       {"isinf", [](double x) { return std::isinf(x); }},
      {"isposinf", [](double x) { return x == INFINITY; }},    {"isneginf", [](double x) { return x == -INFINITY; }},
      {"isfinite", [](double x) { return std::isfinite(x); }}, {"signbit", [](double x) { return std::signbit(x); }},
  };
  for (const P& p : preds) {
    std::vector<double> expected;
    for (double x : v) expected.push_back(p.f(x) ? 1 : 0);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
      Tensor x = from_vector(v, {8}).to(dt);
      std::vector<double> xe;
      for (double e : values(x)) xe.push_back(p.f(e) ? 1 : 0);  // bf16 rounds 65504 to 65536
      Tensor y = call(op_named(p.name), {x});
      EXPECT_EQ(y.dtype(), TSR_BOOL) << p.name;
      EXPECT_EQ(values(y), xe) << p.name << " " << dtype_name(dt);
      Tensor xs = noncontig(x);
      EXPECT_EQ(values(call(op_named(p.name), {xs})), xe) << p.name;
      Tensor out = empty({8}, TSR_BOOL);
      call_multi(op_named(p.name), {x}, {out});
      EXPECT_EQ(values(out), xe) << p.name;
    }
    for (tsr_dtype_t dt : {TSR_I64, TSR_I8, TSR_U8, TSR_BOOL}) {
      Tensor x = dt == TSR_BOOL ? randmask({6}, 3) : randint({6}, 4, dt == TSR_U8 ? 0 : -5, 5, dt);
      std::vector<double> expected2;
      for (double e : values(x)) expected2.push_back(p.f(e) ? 1 : 0);
      EXPECT_EQ(values(call(op_named(p.name), {x})), expected2) << p.name << " " << dtype_name(dt);
    }
    Tensor e = call(op_named(p.name), {empty({0, 3}, TSR_F32)});
    EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  }
}

TEST(UnaryOps, NanToNum) {
  const std::vector<double> v = {NAN, INFINITY, -INFINITY, 1.5, -2.0};
  EXPECT_EQ(
      values(nan_to_num(from_vector(v, {5}))),
      (std::vector<double>{0, std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), 1.5, -2}));
  EXPECT_EQ(values(nan_to_num(from_vector(v, {5}).to(TSR_F32))),
            (std::vector<double>{0, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1.5, -2}));
  EXPECT_EQ(values(nan_to_num(from_vector(v, {5}).to(TSR_F16))), (std::vector<double>{0, 65504, -65504, 1.5, -2}));
  EXPECT_EQ(values(nan_to_num(from_vector(v, {5}).to(TSR_F32), 7.0, 100.0, -50.0)),
            (std::vector<double>{7, 100, -50, 1.5, -2}));
  Tensor x = from_vector(v, {5}).to(TSR_F32);
  nan_to_num_(x, 1.0, 2.0, 3.0);
  EXPECT_EQ(values(x), (std::vector<double>{1, 2, 3, 1.5, -2}));
  Tensor ints = randint({4}, 2, -9, 9);
  EXPECT_EQ(values(nan_to_num(ints, 1.0)), values(ints));
}

TEST(UnaryOps, Positive) {
  Tensor x = randu({3, 2}, 5);
  Tensor y = positive(x);
  EXPECT_TRUE(y.shares_storage(x));
  EXPECT_EQ(values(y), values(x));
  Tensor i = randint({3}, 5, -3, 3, TSR_I16);
  EXPECT_EQ(positive(i).dtype(), TSR_I16);
}

TEST(UnaryOps, ArgumentErrors) {
  Tensor x = randu({2, 3}, 1, 0.1, 0.9, TSR_F32);
  EXPECT_TRUE(throws_with([&] { logit(x, 0.7); }, {"logit", "eps", "0.7"}));
  EXPECT_TRUE(throws_with([&] { hardtanh(x, 2.0, 1.0); }, {"hardtanh", "min_val", "2", "1"}));
  EXPECT_TRUE(throws_with([&] { celu(x, 0.0); }, {"celu", "alpha"}));
  EXPECT_TRUE(throws_with([&] { softplus(x, 0.0); }, {"softplus", "beta"}));
  EXPECT_TRUE(throws_with([&] { gelu(x, "fast"); }, {"gelu", "fast"}));
  EXPECT_TRUE(throws_with([&] { frac(randint({3}, 1, 0, 5)); }, {"frac", "floating point", "int64"}));
  // In-place into a smaller dtype than the result: refused, no write.
  Tensor i = randint({3}, 2, 1, 5, TSR_I32);
  std::vector<double> before = values(i);
  EXPECT_TRUE(throws_with([&] { sqrt_(i); }, {"sqrt_", "float32", "int32"}));
  EXPECT_EQ(values(i), before);
  // out= with the wrong shape or dtype: refused, out untouched.
  Tensor out = full({4}, 9.0, TSR_I64);
  EXPECT_TRUE(throws_with([&] { call_multi(op_named("floor"), {randu({3}, 1)}, {out}); }, {"floor", "[4]", "[3]"}));
  EXPECT_TRUE(throws_with([&] { call_multi(op_named("isnan"), {randu({4}, 1)}, {out}); }, {"isnan", "bool", "int64"}));
  EXPECT_EQ(values(out), std::vector<double>(4, 9.0));
}

TEST(UnaryOps, ExactOpsGradcheck) {
  auto ops = exact_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExactOp& o = ops[i];
    // Away from the breakpoints (0, +-1, 6, integers) where finite differences jump.
    Tensor x = from_vector(std::vector<double>{-7.3, -2.6, -1.7, -0.4, 0.3, 0.6, 1.4, 2.2, 5.3, 7.6}, {2, 5});
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return o.invoke(op_named(o.name), in[0], {}); }, {x}))
        << label(o, i);
  }
  // Piecewise-constant ops give zero gradients (PyTorch's convention).
  Tensor x = randu({4}, 3).clone();
  x.requires_grad_(true);
  for (const char* name : {"floor", "ceil", "trunc", "round", "sign", "sgn"}) {
    std::vector<Tensor> g = autograd::grad({call(op_named(name), {x})}, {x}, {full({4}, 1.0, TSR_F64)});
    EXPECT_EQ(values(g[0]), std::vector<double>(4, 0.0)) << name;
  }
  // nan_to_num passes gradients only through finite inputs.
  Tensor s = from_vector(std::vector<double>{NAN, 1.0, INFINITY}, {3});
  s.requires_grad_(true);
  std::vector<Tensor> g = autograd::grad({nan_to_num(s)}, {s}, {full({3}, 2.0, TSR_F64)});
  EXPECT_EQ(values(g[0]), (std::vector<double>{0, 2, 0}));
}

TEST(UnaryOps, ReluGradientAtZeroAndSavedOutputFormulas) {
  Tensor x = from_vector(std::vector<double>{-1.0, 0.0, 2.0}, {3});
  x.requires_grad_(true);
  std::vector<Tensor> g = autograd::grad({relu(x)}, {x}, {full({3}, 1.0, TSR_F64)});
  EXPECT_EQ(values(g[0]), (std::vector<double>{0, 0, 1}));
  // In-place on a non-leaf: exp_ keeps only its output, so no copy of self is needed.
  Tensor y = x.clone();
  exp_(y);
  std::vector<Tensor> ge = autograd::grad({y}, {x}, {full({3}, 1.0, TSR_F64)});
  EXPECT_TRUE(close(ge[0], exp(x.detach())));
  // A saved output changed afterwards is detected.
  Tensor z = x.clone();
  Tensor t = tanh(z);
  t.detach().fill_(0.0);  // shares the storage and its version counter
  EXPECT_TRUE(throws_with([&] { autograd::grad({t}, {x}, {full({3}, 1.0, TSR_F64)}); }, {"TanhBackward", "version"}));
}

TEST(UnaryOps, SecondDerivatives) {
  // Formulas are written with ops, so create_graph differentiates them again. They use the
  // binary family's formulas (mul, div, ...): skip while those are not merged yet.
  Tensor probe = randu({2}, 1).clone();
  probe.requires_grad_(true);
  try {
    autograd::grad({probe * probe}, {probe}, {full({2}, 1.0, TSR_F64)});
  } catch (const Error& e) {
    GTEST_SKIP() << "mul has no derivative yet: " << e.what();
  }
  for (const char* name : {"exp", "tanh", "sigmoid", "sin", "log", "silu", "erf"}) {
    Tensor x = randu({3}, 11, 0.2, 1.5);
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          // The numeric pass runs under no_grad on plain tensors: differentiate a leaf copy.
          EnableGradGuard eg;
          Tensor xi = in[0];
          if (!xi.requires_grad()) {
            xi = in[0].detach().clone();
            xi.requires_grad_(true);
          }
          Tensor y = call(op_named(name), {xi});
          return autograd::grad({y}, {xi}, {full({3}, 1.0, TSR_F64)}, true, true)[0];
        },
        {x}))
        << name;
  }
}

}  // namespace
}  // namespace tsr::optest
