// Unary floating-point math and activations: every op against a float64 std:: reference on
// random inputs in its domain, in every floating dtype, on integer/bool inputs (promoted to
// float32 or refused, as in PyTorch), non-contiguous and empty/odd shapes, in-place and out=,
// and a float64 gradcheck.
#include <cmath>

#include "unary_test_util.hpp"

namespace tsr::optest {
namespace {

using unary::Invoke;
using unary::map_ref;
using unary::op_named;

struct FloatOp {
  std::string name;
  std::function<double(double)> ref;
  double lo, hi;  // input domain for the random tests
  Invoke invoke;
  bool ints_promote = true;  // integer/bool inputs compute in float32 (else refused)
  bool has_inplace = true;
  double int_lo = -3, int_hi = 4;  // integer test range [lo, hi)
  double tol_scale = 1;
};

std::vector<FloatOp> float_ops() {
  using namespace unary;
  std::vector<FloatOp> v;
  auto add = [&](std::string name, std::function<double(double)> ref, double lo, double hi, Invoke inv = no_args()) {
    v.push_back(FloatOp{std::move(name), std::move(ref), lo, hi, std::move(inv)});
    return &v.back();
  };
  add(
      "exp", [](double x) { return std::exp(x); }, -5, 5);
  add(
      "exp2", [](double x) { return std::exp2(x); }, -5, 5);
  add(
      "expm1", [](double x) { return std::expm1(x); }, -3, 3);
  add(
      "log", [](double x) { return std::log(x); }, 0.05, 5)
      ->int_lo = 1;
  add(
      "log2", [](double x) { return std::log2(x); }, 0.05, 5)
      ->int_lo = 1;
  add(
      "log10", [](double x) { return std::log10(x); }, 0.05, 5)
      ->int_lo = 1;
  add(
      "log1p", [](double x) { return std::log1p(x); }, -0.9, 5)
      ->int_lo = 0;
  add(
      "sqrt", [](double x) { return std::sqrt(x); }, 0.05, 5)
      ->int_lo = 0;
  add(
      "rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.05, 5)
      ->int_lo = 1;
  add(
      "reciprocal", [](double x) { return 1 / x; }, 0.2, 3)
      ->int_lo = 1;
  add(
      "sin", [](double x) { return std::sin(x); }, -6, 6);
  add(
      "cos", [](double x) { return std::cos(x); }, -6, 6);
  add(
      "tan", [](double x) { return std::tan(x); }, -1.3, 1.3)
      ->int_hi = 2;
  add(
      "asin", [](double x) { return std::asin(x); }, -0.95, 0.95)
      ->int_lo = -1;
  v.back().int_hi = 2;
  add(
      "acos", [](double x) { return std::acos(x); }, -0.95, 0.95)
      ->int_lo = -1;
  v.back().int_hi = 2;
  add(
      "atan", [](double x) { return std::atan(x); }, -4, 4);
  add(
      "sinh", [](double x) { return std::sinh(x); }, -4, 4);
  add(
      "cosh", [](double x) { return std::cosh(x); }, -4, 4);
  add(
      "tanh", [](double x) { return std::tanh(x); }, -4, 4);
  add(
      "asinh", [](double x) { return std::asinh(x); }, -4, 4);
  add(
      "acosh", [](double x) { return std::acosh(x); }, 1.1, 5)
      ->int_lo = 1;
  add(
      "atanh", [](double x) { return std::atanh(x); }, -0.95, 0.95)
      ->int_lo = 0;
  v.back().int_hi = 1;
  add(
      "erf", [](double x) { return std::erf(x); }, -3, 3);
  add(
      "erfc", [](double x) { return std::erfc(x); }, -3, 3);
  add(
      "erfinv", [](double x) { return ref_erfinv(x); }, -0.98, 0.98)
      ->int_lo = -1;
  v.back().int_hi = 2;
  add("sigmoid", ref_sigmoid, -6, 6);
  add(
      "logit", [](double x) { return std::log(x / (1 - x)); }, 0.05, 0.95)
      ->int_lo = 0;
  v.back().int_hi = 2;
  add(
      "logit", [](double x) { return std::log(ref_clamp(x, 0.2, 0.8) / (1 - ref_clamp(x, 0.2, 0.8))); }, 0.02, 0.98,
      with_double(0.2))
      ->int_lo = 0;
  v.back().int_hi = 2;
  add(
      "silu", [](double x) { return x * ref_sigmoid(x); }, -6, 6);
  add(
      "gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -5, 5);
  add(
      "gelu", [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, -5,
      5, with_str("tanh"));
  // PyTorch has no integer kernels for these activations: integer inputs are refused.
  auto act = [&](std::string name, std::function<double(double)> ref, double lo, double hi, Invoke inv = no_args()) {
    FloatOp* o = add(std::move(name), std::move(ref), lo, hi, std::move(inv));
    o->ints_promote = false;
    return o;
  };
  act(
      "frac", [](double x) { return x - std::trunc(x); }, -5, 5);
  act(
      "leaky_relu", [](double x) { return x > 0 ? x : 0.01 * x; }, -3, 3);
  act(
      "leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }, -3, 3, with_double(0.2));
  act(
      "elu", [](double x) { return ref_elu(x, 1, 1, 1); }, -3, 3);
  act(
      "elu", [](double x) { return ref_elu(x, 1.5, 0.5, 2); }, -3, 3, with_doubles(1.5, 0.5, 2.0));
  act(
      "selu", [](double x) { return ref_elu(x, 1.6732632423543772848, 1.0507009873554804934, 1); }, -3, 3);
  act(
      "celu", [](double x) { return ref_elu(x, 0.7, 1, 1 / 0.7); }, -3, 3, with_double(0.7));
  act(
      "mish", [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }, -5, 5);
  act(
      "softplus", [](double x) { return ref_softplus(x, 1, 20); }, -5, 5);
  act(
      "softplus", [](double x) { return ref_softplus(x, 2, 3); }, -3, 3, with_doubles(2.0, 3.0));
  act(
      "hardswish", [](double x) { return x * ref_clamp(x + 3, 0, 6) / 6; }, -5, 5);
  act(
      "hardsigmoid", [](double x) { return ref_clamp(x + 3, 0, 6) / 6; }, -5, 5);
  return v;
}

std::string label(const FloatOp& o, size_t i) { return o.name + "#" + std::to_string(i); }

// The random test input in the op's domain, as dtype dt.
Tensor input_for(const FloatOp& o, const Shape& shape, uint64_t seed, tsr_dtype_t dt = TSR_F64) {
  return randu(shape, seed, o.lo, o.hi, dt);
}

std::vector<double> reference(const FloatOp& o, const Tensor& x) { return map_ref(values(x), o.ref); }

TEST(UnaryOps, FloatOpsMatchReferenceInEveryFloatDtype) {
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    const Op& op = op_named(o.name);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
      for (const Shape& shape : std::vector<Shape>{{7, 5}, {13}, {}, {1}, {3, 1, 2}}) {
        Tensor x = input_for(o, shape, 100 + i, dt);
        Tensor y = o.invoke(op, x, {});
        ASSERT_EQ(y.dtype(), dt) << label(o, i);
        auto tol = default_tol(dt);
        EXPECT_TRUE(close(y, reference(o, x), shape, tol.first * o.tol_scale, tol.second * o.tol_scale))
            << label(o, i) << " " << dtype_name(dt);
      }
    }
  }
}

TEST(UnaryOps, FloatOpsLargeContiguousAndStridedF32) {
  // Large enough for the parallel, multiversioned path and its remainder handling.
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    Tensor x = input_for(o, {40009}, 7 + i, TSR_F32);
    EXPECT_TRUE(close(o.invoke(op_named(o.name), x, {}), reference(o, x), {40009}, 1e-5, 1e-6)) << label(o, i);
    Tensor xs = noncontig(input_for(o, {131, 67}, 9 + i, TSR_F32));
    ASSERT_FALSE(xs.is_contiguous());
    EXPECT_TRUE(close(o.invoke(op_named(o.name), xs, {}), reference(o, xs), {131, 67}, 1e-5, 1e-6)) << label(o, i);
  }
}

TEST(UnaryOps, FloatOpsNonContiguousAndEmpty) {
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    const Op& op = op_named(o.name);
    Tensor x = noncontig(input_for(o, {5, 3, 4}, 30 + i));
    EXPECT_TRUE(close(o.invoke(op, x, {}), reference(o, x), {5, 3, 4}, 1e-10, 1e-12)) << label(o, i);
    Tensor x1 = noncontig(input_for(o, {11}, 31 + i));
    EXPECT_TRUE(close(o.invoke(op, x1, {}), reference(o, x1), {11}, 1e-10, 1e-12)) << label(o, i);
    for (const Shape& s : std::vector<Shape>{{0}, {3, 0}, {0, 2, 5}}) {
      Tensor e = empty(s, TSR_F32);
      Tensor y = o.invoke(op, e, {});
      EXPECT_EQ(y.sizes(), s) << label(o, i);
      EXPECT_EQ(y.dtype(), TSR_F32) << label(o, i);
    }
  }
}

TEST(UnaryOps, FloatOpsOnIntegersAndBool) {
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    const Op& op = op_named(o.name);
    for (tsr_dtype_t dt : {TSR_I64, TSR_I32, TSR_I16, TSR_I8, TSR_U8, TSR_BOOL}) {
      Tensor x = dt == TSR_BOOL ? randmask({4, 3}, 40 + i)
                                : randint({4, 3}, 40 + i,
                                          dt == TSR_U8 ? std::max<int64_t>(0, int64_t(o.int_lo)) : int64_t(o.int_lo),
                                          int64_t(o.int_hi), dt);
      if (!o.ints_promote) {
        EXPECT_TRUE(throws_with([&] { o.invoke(op, x, {}); }, {o.name + ":", "floating point", dtype_name(dt)}))
            << label(o, i);
        continue;
      }
      Tensor y = o.invoke(op, x, {});
      EXPECT_EQ(y.dtype(), TSR_F32) << label(o, i) << " " << dtype_name(dt);
      EXPECT_TRUE(close(y, reference(o, x), {4, 3}, 1e-5, 1e-6)) << label(o, i) << " " << dtype_name(dt);
    }
  }
}

TEST(UnaryOps, FloatOpsInplaceAndOut) {
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    const Op& op = op_named(o.name);
    for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_BF16}) {
      Tensor x = input_for(o, {6, 5}, 50 + i, dt);
      Tensor expected = o.invoke(op, x, {});
      // In-place, also on a non-contiguous view.
      Tensor xi = x.clone();
      Tensor r = o.invoke(op_named(o.name + "_"), xi, {xi});
      EXPECT_TRUE(r.shares_storage(xi)) << label(o, i);
      EXPECT_TRUE(close(xi, values(expected), {6, 5}, 0, 0)) << label(o, i);
      Tensor xt = x.t().contiguous().t();
      o.invoke(op_named(o.name + "_"), xt, {xt});
      EXPECT_TRUE(close(xt, values(expected), {6, 5}, 0, 0)) << label(o, i) << " strided in-place";
      // out=, contiguous and strided.
      Tensor out = empty({6, 5}, dt);
      Tensor r2 = o.invoke(op, x, {out});
      EXPECT_TRUE(r2.shares_storage(out));
      EXPECT_TRUE(close(out, values(expected), {6, 5}, 0, 0)) << label(o, i) << " out=";
      Tensor out_t = empty({5, 6}, dt).t();
      o.invoke(op, x, {out_t});
      EXPECT_TRUE(close(out_t, values(expected), {6, 5}, 0, 0)) << label(o, i) << " strided out=";
    }
    if (o.ints_promote) {
      // Integer self cannot hold the float result: refused, self untouched.
      Tensor xi = randint({3}, 5, 1, 2);
      EXPECT_TRUE(
          throws_with([&] { o.invoke(op_named(o.name + "_"), xi, {xi}); }, {o.name + "_", "can't be cast", "int64"}))
          << label(o, i);
      EXPECT_EQ(values(xi), std::vector<double>(3, 1.0));
      // An int out= for a float result is refused before any write.
      Tensor x = input_for(o, {3}, 5);
      Tensor bad = full({3}, 7, TSR_I64);
      EXPECT_TRUE(throws_with([&] { o.invoke(op, x, {bad}); }, {o.name})) << label(o, i);
      EXPECT_EQ(values(bad), std::vector<double>(3, 7.0)) << label(o, i);
    }
  }
}

TEST(UnaryOps, FloatOpsOutWrongShapeLeavesOutUntouched) {
  Tensor x = randu({4}, 1, 0.5, 1.5, TSR_F32);
  for (const char* name : {"sin", "erfinv", "mish", "exp", "gelu"}) {
    Tensor out = full({5}, 3.0, TSR_F32);
    EXPECT_TRUE(throws_with([&] { call_multi(op_named(name), {x}, {out}); }, {name, "[5]", "[4]"})) << name;
    EXPECT_EQ(values(out), std::vector<double>(5, 3.0)) << name;
  }
}

TEST(UnaryOps, FloatOpsGradcheck) {
  auto ops = float_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const FloatOp& o = ops[i];
    const Op& op = op_named(o.name);
    Tensor x = input_for(o, {2, 3}, 60 + i);
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return o.invoke(op, in[0], {}); }, {x})) << label(o, i);
    // Through the in-place variant of a non-leaf.
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          Tensor y = in[0].clone();
          o.invoke(op_named(o.name + "_"), y, {y});
          return y;
        },
        {x}))
        << label(o, i) << " in-place";
  }
}

TEST(UnaryOps, SpecialValues) {
  auto at = [](const Tensor& t, int64_t i) { return values(t)[static_cast<size_t>(i)]; };
  Tensor s = from_vector(std::vector<double>{0.0, -1.0, 1.0, 2.0, INFINITY, -INFINITY, NAN}, {7});
  Tensor inv = erfinv(s);
  EXPECT_EQ(at(inv, 0), 0.0);
  EXPECT_EQ(at(inv, 1), -INFINITY);
  EXPECT_EQ(at(inv, 2), INFINITY);
  EXPECT_TRUE(std::isnan(at(inv, 3)));
  EXPECT_TRUE(std::isnan(at(inv, 6)));
  Tensor lg = log(s.to(TSR_F32));
  EXPECT_EQ(at(lg, 0), -INFINITY);
  EXPECT_TRUE(std::isnan(at(lg, 1)));
  EXPECT_EQ(at(lg, 4), INFINITY);
  // Saturating activations at the extremes.
  Tensor big = from_vector(std::vector<float>{100.f, -100.f, 30.f}, {3});
  std::vector<double> sp = values(softplus(big));
  EXPECT_EQ(sp[0], 100.0);
  EXPECT_TRUE(sp[1] >= 0.0 && sp[1] < 1e-30);
  EXPECT_EQ(sp[2], 30.0);
  EXPECT_EQ(values(mish(big))[0], 100.0);
  EXPECT_EQ(values(sigmoid(big))[1], 0.0);
  // sin/cos beyond the f32 polynomial's range go through libm; out= may be the input itself.
  for (const char* name : {"sin", "cos"}) {
    Tensor x =
        from_vector(std::vector<float>{1e6f, -3e7f, 1e20f, 12345.6f, 0.5f, -INFINITY, NAN, 99999.f, 100001.f}, {9});
    std::vector<double> expected;
    for (double v : values(x)) expected.push_back(name[0] == 's' ? std::sin(v) : std::cos(v));
    EXPECT_TRUE(close(call(op_named(name), {x}), expected, {9}, 1e-5, 1e-6)) << name;
    call_multi(op_named(name), {x}, {x});
    EXPECT_TRUE(close(x, expected, {9}, 1e-5, 1e-6)) << name << " out= aliasing the input";
  }
  Tensor sg = sigmoid(from_vector(std::vector<float>{NAN}, {1}));
  EXPECT_TRUE(std::isnan(values(sg)[0]));
}

// Signed zeros as IEEE and PyTorch have them: odd functions keep -0 (the float32 polynomials
// rounded it to +0), elu-family activations give +0 for -0 (PyTorch's exp(x) - 1), in every
// float dtype, contiguous and through a long strided run (the vectorized loops).
TEST(UnaryOps, SignedZeros) {
  auto sign_bits = [](const Tensor& t) {
    std::vector<bool> neg;
    for (double v : values(t)) neg.push_back(std::signbit(v));
    return neg;
  };
  std::vector<double> zs(67, -0.0);
  for (size_t i = 0; i < zs.size(); i += 2) zs[i] = 0.0;
  std::vector<bool> same;
  for (double z : zs) same.push_back(std::signbit(z));
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16}) {
    Tensor x = from_vector(zs, {67}).to(dt);
    Tensor strided = from_vector(std::vector<double>(134, 1.0), {134}).to(dt).slice(0, 0, 134, 2);
    strided.copy_(x);
    for (const char* name : {"expm1", "sin", "tanh", "sinh", "tan", "asin", "atan", "asinh", "atanh", "erf"}) {
      EXPECT_EQ(sign_bits(call(op_named(name), {x})), same) << name << " " << dtype_name(dt);
      EXPECT_EQ(sign_bits(call(op_named(name), {strided})), same) << name << " strided " << dtype_name(dt);
    }
    std::vector<bool> none(67, false);
    EXPECT_EQ(sign_bits(elu(x)), none) << dtype_name(dt);
    EXPECT_EQ(sign_bits(selu(strided)), none) << dtype_name(dt);
    EXPECT_EQ(sign_bits(celu(x, 0.5)), none) << dtype_name(dt);
  }
}

// Gradients where the forward leaves its domain match PyTorch: acosh at x = -1 is +inf (rsqrt
// of +0, where the factored (x - 1)(x + 1) gave -0 and -inf); logit without eps is NaN outside
// [0, 1] (it gave the finite grad / (x (1 - x))), and +-inf at 0 and 1.
TEST(UnaryOps, GradientsAtDomainEdges) {
  Tensor a = from_vector(std::vector<double>{-1.0, 1.0, 2.0}, {3}).requires_grad_(true);
  acosh(a).backward(tsr::ones({3}, TSR_F64));
  std::vector<double> ga = values(a.grad());
  EXPECT_EQ(ga[0], INFINITY);
  EXPECT_EQ(ga[1], INFINITY);
  EXPECT_NEAR(ga[2], 1 / std::sqrt(3.0), 1e-15);
  Tensor l = from_vector(std::vector<double>{-0.5, 0.0, 0.25, 1.0, 1.5}, {5}).requires_grad_(true);
  logit(l).backward(tsr::ones({5}, TSR_F64));
  std::vector<double> gl = values(l.grad());
  EXPECT_TRUE(std::isnan(gl[0]));
  EXPECT_EQ(gl[1], INFINITY);
  EXPECT_NEAR(gl[2], 1 / (0.25 * 0.75), 1e-12);
  EXPECT_EQ(gl[3], INFINITY);
  EXPECT_TRUE(std::isnan(gl[4]));
  // With eps the clamped region is constant: gradient 0 there, as before.
  Tensor e = from_vector(std::vector<double>{-0.5, 0.5, 1.5}, {3}).requires_grad_(true);
  logit(e, 0.1).backward(tsr::ones({3}, TSR_F64));
  EXPECT_TRUE(close(e.grad(), std::vector<double>{0, 4, 0}, {3}, 1e-12, 1e-12));
}

}  // namespace
}  // namespace tsr::optest
