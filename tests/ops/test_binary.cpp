// Binary family, floating point: the foundation ops' backward formulas, then each floating op
// against float64 references (shapes, broadcasting, dtypes, layouts, out=) and gradchecks.
#include <cmath>
#include <limits>

#include "binary_test_util.hpp"

using namespace tsr;
using namespace tsr::optest;
using namespace tsr::binarytest;

namespace {

double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Gradients of out (cotangent of ones: no reduction op needed) with respect to xs.
std::vector<Tensor> grads(const Tensor& out, const std::vector<Tensor>& xs, bool create_graph = false) {
  return autograd::grad({out}, xs, {full(out.sizes(), 1.0, out.dtype())}, false, create_graph, true);
}
std::vector<double> grad_of(const Tensor& out, const Tensor& x) {
  std::vector<Tensor> g = grads(out, {x});
  return g[0].defined() ? values(g[0]) : std::vector<double>();
}

}  // namespace

// ---- formulas of the foundation ops ------------------------------------------------------------

TEST(BinaryOps, AddSubGradWithAlphaAndBroadcast) {
  grad_binary([](const Tensor& a, const Tensor& b) { return add(a, b, 2.5); }, uniform(-2, 2), uniform(-2, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return sub(a, b, -1.5); }, uniform(-2, 2), uniform(-2, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return a + b - a; }, uniform(-2, 2), uniform(-2, 2));
}

TEST(BinaryOps, MulDivGrad) {
  grad_binary([](const Tensor& a, const Tensor& b) { return mul(a, b); }, uniform(-2, 2), uniform(-2, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return div(a, b); }, uniform(-2, 2), away(0.5, 2));
  // A wrapped scalar operand gets no gradient but scales the other's.
  Tensor x = randu({5}, 3).requires_grad_(true);
  std::vector<double> g = grad_of(mul(x, 3.0) / 2, x);
  for (double v : g) EXPECT_DOUBLE_EQ(v, 1.5);
}

TEST(BinaryOps, MaximumMinimumGradSplitsTies) {
  Tensor a = from_vector<double>({1, 2, 3, 4}).requires_grad_(true);
  Tensor b = from_vector<double>({1, 3, 2, 4}).requires_grad_(true);
  auto ga = grads(maximum(a, b), {a, b});
  EXPECT_EQ(values(ga[0]), (std::vector<double>{0.5, 0, 1, 0.5}));
  EXPECT_EQ(values(ga[1]), (std::vector<double>{0.5, 1, 0, 0.5}));
  auto gi = grads(minimum(a, b), {a, b});
  EXPECT_EQ(values(gi[0]), (std::vector<double>{0.5, 1, 0, 0.5}));
  EXPECT_EQ(values(gi[1]), (std::vector<double>{0.5, 0, 1, 0.5}));
  grad_binary([](const Tensor& x, const Tensor& y) { return maximum(x, y); }, uniform(-2, 2), uniform(-2, 2));
  grad_binary([](const Tensor& x, const Tensor& y) { return minimum(x, y); }, uniform(-2, 2), uniform(-2, 2));
}

TEST(BinaryOps, PowGradBothSidesAndZeroToZero) {
  grad_binary([](const Tensor& a, const Tensor& b) { return pow(a, b); }, uniform(0.5, 2), uniform(-2, 2));
  grad_binary([](const Tensor& a, const Tensor&) { return pow(a, 3); }, uniform(-2, 2), uniform(-2, 2));
  grad_binary([](const Tensor&, const Tensor& b) { return pow(2.5, b); }, uniform(-2, 2), uniform(-2, 2));
  // 0^0 = 1 with zero gradients on both sides; 0^2 has zero gradients; 0^0.5 has none for b.
  Tensor a = from_vector<double>({0, 0, 0, 2}).requires_grad_(true);
  Tensor b = from_vector<double>({0, 2, 0.5, 0}).requires_grad_(true);
  auto g = grads(pow(a, b), {a, b});
  std::vector<double> ga = values(g[0]), gb = values(g[1]);
  EXPECT_EQ(ga[0], 0);
  EXPECT_EQ(ga[1], 0);
  EXPECT_TRUE(std::isinf(ga[2]));
  EXPECT_EQ(ga[3], 0);
  EXPECT_EQ(gb[0], 0);
  EXPECT_EQ(gb[1], 0);
  EXPECT_EQ(gb[2], 0);
  EXPECT_DOUBLE_EQ(gb[3], std::log(2.0));
}

TEST(BinaryOps, WhereGrad) {
  Tensor c = randmask({3, 4}, 5);
  for (const Shape& sb : {Shape{3, 4}, Shape{4}, Shape{}}) {
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& x) { return where(c, x[0], x[1]); },
                          {randu({3, 1}, 6), randu(sb, 7)}));
  }
}

TEST(BinaryOps, ClampGradIncludesBounds) {
  Tensor x = from_vector<double>({-1, 0, 0.5, 1, 2}).requires_grad_(true);
  EXPECT_EQ(grad_of(clamp(x, 0.0, 1.0), x), (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(grad_of(clamp(x, 0.5, std::nullopt), x), (std::vector<double>{0, 0, 1, 1, 1}));
  EXPECT_EQ(grad_of(clamp_max(x, 0.5), x), (std::vector<double>{1, 1, 1, 0, 0}));
  EXPECT_EQ(grad_of(clamp_min(x, 0.5), x), (std::vector<double>{0, 0, 1, 1, 1}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& v) { return clamp(v[0], -0.5, 0.7); }, {randu({4, 5}, 8)}));
}

TEST(BinaryOps, SecondOrderThroughMulAndPow) {
  Tensor x = from_vector<double>({0.5, 1.5, -2}).requires_grad_(true);
  Tensor y = mul(pow(x, 3), x);  // x^4
  Tensor g = grads(y, {x}, true)[0];
  std::vector<double> h = values(grads(g, {x})[0]);
  std::vector<double> xs = {0.5, 1.5, -2};
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(h[i], 12 * xs[i] * xs[i], 1e-12);
}

// ---- floating ops: values --------------------------------------------------------------------

TEST(BinaryOps, Atan2HypotCopysign) {
  check_binary(
      "atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); },
      [](double a, double b) { return std::atan2(a, b); }, float_dtypes(), uniform(-2, 2), uniform(-2, 2));
  check_binary(
      "hypot", [](const Tensor& a, const Tensor& b) { return hypot(a, b); },
      [](double a, double b) { return std::hypot(a, b); }, float_dtypes(), uniform(-2, 2), uniform(-2, 2));
  check_binary(
      "copysign", [](const Tensor& a, const Tensor& b) { return copysign(a, b); },
      [](double a, double b) { return std::copysign(a, b); }, float_dtypes(), uniform(-2, 2), uniform(-2, 2));
  // Integers promote to float32 (atan2, copysign); hypot is floating only.
  Tensor i = randint({4}, 1, -5, 5);
  EXPECT_EQ(atan2(i, i).dtype(), TSR_F32);
  EXPECT_EQ(copysign(i, -1).dtype(), TSR_F32);
  EXPECT_TRUE(throws_with([&] { hypot(i, i); }, {"hypot", "int64"}));
  // copysign sees the sign of -0.0.
  EXPECT_EQ(values(copysign(from_vector<double>({2.0}), from_vector<double>({-0.0})))[0], -2.0);
}

TEST(BinaryOps, XlogyLogaddexp) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  check_binary(
      "xlogy", [](const Tensor& a, const Tensor& b) { return xlogy(a, b); },
      [](double a, double b) { return a * std::log(b); }, float_dtypes(), uniform(-2, 2), uniform(0.1, 3));
  check_binary(
      "logaddexp", [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); },
      [](double a, double b) { return std::log(std::exp(a) + std::exp(b)); }, float_dtypes(), uniform(-5, 5),
      uniform(-5, 5));
  check_binary(
      "logaddexp2", [](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); },
      [](double a, double b) { return std::log2(std::exp2(a) + std::exp2(b)); }, float_dtypes(), uniform(-5, 5),
      uniform(-5, 5));
  // xlogy(0, y) = 0 unless y is NaN; logaddexp of equal infinities and large arguments.
  Tensor x = from_vector<double>({0, 0, 0, 1}), y = from_vector<double>({0, -1, nan, 0});
  std::vector<double> r = values(xlogy(x, y));
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 0);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], -inf);
  EXPECT_TRUE(close(logaddexp(from_vector<double>({inf, -inf, 1000, -inf}), from_vector<double>({inf, -inf, 1000, 3})),
                    {inf, -inf, 1000 + std::log(2.0), 3}, {4}, 1e-12, 0));
  EXPECT_TRUE(close(logaddexp2(from_vector<double>({inf, 1000}), from_vector<double>({inf, 1000})), {inf, 1001}, {2},
                    1e-12, 0));
  EXPECT_TRUE(throws_with([] { logaddexp(randint({2}, 1, 0, 3), randint({2}, 2, 0, 3)); }, {"logaddexp", "int64"}));
}

TEST(BinaryOps, FmaxFminIgnoreNaN) {
  check_binary(
      "fmax", [](const Tensor& a, const Tensor& b) { return fmax(a, b); },
      [](double a, double b) { return std::fmax(a, b); }, float_dtypes(), uniform(-2, 2), uniform(-2, 2));
  check_binary(
      "fmin", [](const Tensor& a, const Tensor& b) { return fmin(a, b); },
      [](double a, double b) { return std::fmin(a, b); }, float_dtypes(), uniform(-2, 2), uniform(-2, 2));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from_vector<double>({nan, 1, nan}), b = from_vector<double>({2, nan, nan});
  std::vector<double> mx = values(fmax(a, b)), mn = values(fmin(a, b)), m = values(maximum(a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_EQ(mx[1], 1);
  EXPECT_TRUE(std::isnan(mx[2]));
  EXPECT_EQ(mn[0], 2);
  EXPECT_EQ(mn[1], 1);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(values(fmax(randint({3}, 1, -5, 5, TSR_I16), 0)), values(maximum(randint({3}, 1, -5, 5, TSR_I16), 0)));
  EXPECT_EQ(fmax(randint({3}, 1, -5, 5, TSR_I16), 0).dtype(), TSR_I16);
}

TEST(BinaryOps, RemainderFmodDivModeFloats) {
  check_binary(
      "remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); }, py_mod, float_dtypes(),
      uniform(-5, 5), away(0.5, 2), 4);
  check_binary(
      "fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); },
      [](double a, double b) { return std::fmod(a, b); }, float_dtypes(), uniform(-5, 5), away(0.5, 2), 4);
  check_binary(
      "floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); },
      [](double a, double b) { return std::floor(a / b); }, float_dtypes(), uniform(-5, 5), away(0.5, 2));
  check_binary(
      "true_divide", [](const Tensor& a, const Tensor& b) { return true_divide(a, b); },
      [](double a, double b) { return a / b; }, float_dtypes(), uniform(-5, 5), away(0.5, 2));
  check_binary(
      "div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, [](double a, double b) { return a / b; },
      float_dtypes(), uniform(-5, 5), away(0.5, 2));
  Tensor a = randu({6}, 4, -9, 9), b = rand_away({6}, 5, 0.5, 3);
  std::vector<double> av = values(a), bv = values(b), t = values(div(a, b, "trunc"));
  for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(t[i], std::trunc(av[i] / bv[i]));
  // Division by a floating zero follows IEEE (no error); a floored quotient keeps its sign.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> z = values(floor_divide(from_vector<double>({1, -1, 0}), from_vector<double>({0, 0, -2})));
  EXPECT_EQ(z[0], inf);
  EXPECT_EQ(z[1], -inf);
  EXPECT_TRUE(z[2] == 0 && std::signbit(z[2]));
  EXPECT_TRUE(std::isnan(values(remainder(from_vector<double>({1}), from_vector<double>({0})))[0]));
  EXPECT_TRUE(throws_with([&] { div(a, b, "round"); }, {"div_mode", "rounding_mode", "round"}));
}

TEST(BinaryOps, FloatPowerIsFloat64) {
  Tensor a = randu({3, 4}, 1, 0.5, 2, TSR_F32), b = randu({4}, 2, -2, 2, TSR_F16);
  Tensor r = float_power(a, b);
  EXPECT_EQ(r.dtype(), TSR_F64);
  Shape s;
  std::vector<double> e = ref_nary(
      {a, b}, [](const std::vector<double>& x) { return std::pow(x[0], x[1]); }, &s);
  EXPECT_TRUE(close(r, e, s, 1e-12, 1e-12));
  EXPECT_EQ(float_power(randint({3}, 1, 1, 4), 2).dtype(), TSR_F64);
  grad_binary([](const Tensor& x, const Tensor& y) { return float_power(x, y); }, uniform(0.5, 2), uniform(-1, 1));
}

TEST(BinaryOps, LerpTensorAndScalarWeight) {
  for (tsr_dtype_t dt : float_dtypes()) {
    Tensor s = randu({3, 4}, 1).to(dt), e = randu({4}, 2).to(dt), w = randu({3, 1}, 3, -0.5, 1.5).to(dt);
    Shape shape;
    std::vector<double> exp3 = ref_nary(
        {s, e, w}, [](const std::vector<double>& x) { return x[0] + x[2] * (x[1] - x[0]); }, &shape);
    auto tol = default_tol(dt);
    EXPECT_TRUE(close(lerp(s, e, w), exp3, shape, tol.first * 4, tol.second * 4));
    EXPECT_TRUE(close(lerp(noncontig(s), e, noncontig(w)), exp3, shape, tol.first * 4, tol.second * 4));
    std::vector<double> exp1 = ref_nary(
        {s, e}, [](const std::vector<double>& x) { return x[0] + 0.75 * (x[1] - x[0]); }, &shape);
    EXPECT_TRUE(close(lerp(s, e, 0.75), exp1, shape, tol.first * 4, tol.second * 4));
    EXPECT_EQ(lerp(s, e, 0.75).dtype(), dt);
  }
  // Exact at the ends.
  Tensor s = randu({5}, 4), e = randu({5}, 5);
  EXPECT_EQ(values(lerp(s, e, 1.0)), values(e));
  EXPECT_EQ(values(lerp(s, e, 0.0)), values(s));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return lerp(x[0], x[1], x[2]); },
                        {randu({3, 1}, 6), randu({4}, 7), randu({3, 4}, 8)}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& x) { return lerp(x[0], x[1], 0.3); }, {randu({3, 4}, 6), randu({4}, 7)}));
  EXPECT_TRUE(throws_with([] { lerp(randu({2}, 1, -1, 1, TSR_F32), randu({2}, 2), 0.5); }, {"lerp", "end", "float64"}));
  EXPECT_TRUE(throws_with([] { lerp(randint({2}, 1, 0, 3), randint({2}, 2, 0, 3), 0.5); }, {"lerp", "int64"}));
}

TEST(BinaryOps, AddcmulAddcdiv) {
  for (tsr_dtype_t dt : float_dtypes()) {
    Tensor s = randu({2, 3}, 1).to(dt), t1 = randu({3}, 2).to(dt), t2 = rand_away({2, 1}, 3).to(dt);
    Shape shape;
    auto tol = default_tol(dt);
    std::vector<double> em = ref_nary(
        {s, t1, t2}, [](const std::vector<double>& x) { return x[0] + 0.5 * x[1] * x[2]; }, &shape);
    EXPECT_TRUE(close(addcmul(s, t1, t2, 0.5), em, shape, tol.first * 4, tol.second * 4));
    std::vector<double> ed = ref_nary(
        {s, t1, t2}, [](const std::vector<double>& x) { return x[0] - 2 * x[1] / x[2]; }, &shape);
    EXPECT_TRUE(close(addcdiv(s, t1, t2, -2), ed, shape, tol.first * 8, tol.second * 8));
  }
  EXPECT_EQ(values(addcmul(randint({3}, 1, 0, 5), randint({3}, 2, 0, 5), randint({3}, 3, 0, 5), 2)).size(), 3u);
  EXPECT_TRUE(throws_with([] { addcdiv(randu({2}, 1), randint({2}, 2, 1, 5), randint({2}, 3, 1, 5)); },
                          {"addcdiv", "integer division"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return addcmul(x[0], x[1], x[2], 0.7); },
                        {randu({3, 1}, 4), randu({4}, 5), randu({3, 4}, 6)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return addcdiv(x[0], x[1], x[2], -1.3); },
                        {randu({3, 4}, 4), randu({4}, 5), rand_away({3, 1}, 6)}));
}

TEST(BinaryOps, ClampTensorBounds) {
  Tensor x = randu({4, 5}, 1), lo = randu({5}, 2, -1, 0), hi = randu({4, 1}, 3, 0, 1);
  Shape shape;
  std::vector<double> e = ref_nary(
      {x, lo, hi}, [](const std::vector<double>& v) { return std::min(std::max(v[0], v[1]), v[2]); }, &shape);
  EXPECT_TRUE(close(clamp(x, lo, hi), e, shape, 0, 0));
  EXPECT_TRUE(close(clamp(x, std::nullopt, hi),
                    ref_nary(
                        {x, hi}, [](const std::vector<double>& v) { return std::min(v[0], v[1]); }, &shape),
                    shape, 0, 0));
  EXPECT_TRUE(
      throws_with([&] { clamp(x, std::optional<Tensor>(), std::optional<Tensor>()); }, {"clamp_tensor", "None"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& v) { return clamp(v[0], v[1], v[2]); }, {x, lo, hi}));
  // A NaN bound gives NaN, as PyTorch.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(values(clamp(from_vector<double>({1}), from_vector<double>({nan}), std::nullopt))[0]));
}

// ---- floating ops: gradients -------------------------------------------------------------------

TEST(BinaryOps, Gradchecks) {
  auto u = uniform(-2, 2);
  grad_binary([](const Tensor& a, const Tensor& b) { return atan2(a, b); }, away(0.3, 2), away(0.3, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return hypot(a, b); }, away(0.3, 2), away(0.3, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return copysign(a, b); }, away(0.3, 2), away(0.3, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return xlogy(a, b); }, u, uniform(0.3, 3));
  grad_binary([](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }, u, u);
  grad_binary([](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); }, u, u);
  grad_binary([](const Tensor& a, const Tensor& b) { return fmax(a, b); }, u, u);
  grad_binary([](const Tensor& a, const Tensor& b) { return fmin(a, b); }, u, u);
  grad_binary([](const Tensor& a, const Tensor& b) { return remainder(a, b); }, u, away(0.5, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return fmod(a, b); }, u, away(0.5, 2));
  grad_binary([](const Tensor& a, const Tensor& b) { return floor_divide(a, b); }, u, away(0.5, 2));
  // xlogy at x = 0: the gradient of x is log(y), 0 where y <= 0.
  Tensor x = from_vector<double>({0, 0}).requires_grad_(true);
  Tensor y = from_vector<double>({2, -1});
  std::vector<double> g = grad_of(xlogy(x, y), x);
  EXPECT_DOUBLE_EQ(g[0], std::log(2.0));
  EXPECT_EQ(g[1], 0);
}
