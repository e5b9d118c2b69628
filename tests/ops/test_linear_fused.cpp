// linear with a bias through the fused _linear_bias / _nn_linear (one GEMM whose epilogue adds
// the bias; on the cpu the GEMM accumulates onto bias rows). Checked against float64 references
// and the unfused composite (matmul + add) for every floating dtype, odd, empty and
// non-contiguous shapes, with gradients by formula, finite differences and double backward,
// and the cases that stay on the composite path.
#include <string>

#include "linalg_test.hpp"

namespace tsr::optest {
namespace {

// x [..., K] @ w[N, K]^T + b[N] in float64 from the CPU readbacks.
std::vector<double> ref_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t K = w.size(1), N = w.size(0);
  std::vector<int64_t> lead = x.sizes();
  lead.pop_back();
  int64_t rows = 1;
  for (int64_t s : lead) rows *= s;
  const auto xv = values(x), wv = values(w), bv = values(b);
  std::vector<double> e;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < N; ++o) {
      double s = bv[size_t(o)];
      for (int64_t i = 0; i < K; ++i) s += xv[size_t(r * K + i)] * wv[size_t(o * K + i)];
      e.push_back(s);
    }
  return e;
}

Shape out_shape(const Tensor& x, int64_t n) {
  Shape s = x.sizes();
  s.back() = n;
  return s;
}

struct Case {
  Shape x;
  int64_t n;
};

TEST(LinearFused, MatchesFloat64AndTheCompositeForEveryFloatingDtype) {
  const std::vector<Case> cases = {
      {{5, 7}, 3}, {{2, 3, 5}, 4}, {{7}, 6},    {{1, 1}, 1},    {{33, 17}, 65},
      {{0, 7}, 3}, {{4, 0}, 5},    {{4, 7}, 0}, {{2, 0, 3}, 2}, {{3, 2, 1, 9}, 1},
  };
  uint64_t seed = 500;
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
    auto [rtol, atol] = default_tol(dt);
    for (const Case& c : cases) {
      const int64_t K = c.x.back();
      Tensor x = randu(c.x, ++seed, -2, 2, dt), w = randu({c.n, K}, ++seed, -2, 2, dt),
             b = randu({c.n}, ++seed, -2, 2, dt);
      const std::string what = std::string(dtype_name(dt)) + " x " + describe(x) + " n=" + std::to_string(c.n);
      Tensor y = linear(x, w, b);
      EXPECT_EQ(y.dtype(), dt) << what;
      // float16/bfloat16: the fused GEMM rounds once, the reference is exact: the output's ulp
      // and K products in f32 bound the difference.
      EXPECT_TRUE(close(y, ref_linear(x, w, b), out_shape(x, c.n), rtol, atol * (1 + double(K) / 8))) << what;
      Tensor unfused = add(matmul(x, w.t()), b);
      EXPECT_TRUE(close(y, values(unfused), out_shape(x, c.n), 2 * rtol, 2 * atol * (1 + double(K) / 8))) << what;
    }
  }
}

// The fused op is what linear runs on the cpu (its kernel is registered for floating dtypes):
// the result is bit-identical to calling it directly, and autograd records it.
TEST(LinearFused, LinearUsesTheFusedOpWhereTheDeviceHasAKernel) {
  Tensor x = randu({6, 9}, 601, -2, 2, TSR_BF16), w = randu({5, 9}, 602, -2, 2, TSR_BF16),
         b = randu({5}, 603, -2, 2, TSR_BF16);
  EXPECT_EQ(values(linear(x, w, b)), values(call("_linear_bias", {x, w, b})));
  Tensor xg = randu({6, 9}, 604).requires_grad_(true);
  Tensor y = linear(xg, randu({5, 9}, 605), randu({5}, 606));
  ASSERT_NE(y.grad_fn_name(), nullptr);
  EXPECT_STREQ(y.grad_fn_name(), "Linear_biasBackward");
  // No bias, a 1-D weight, a broadcast bias or a bias of another dtype: the composite.
  Tensor y2 = linear(xg, randu({5, 9}, 607));
  EXPECT_STRNE(y2.grad_fn_name(), "Linear_biasBackward");
}

TEST(LinearFused, NonContiguousOperands) {
  Tensor x = randu({6, 9}, 610), w = randu({4, 9}, 611), b = randu({4}, 612);
  const auto want = ref_linear(x, w, b);
  EXPECT_TRUE(close(linear(noncontig(x), noncontig(w), noncontig(b)), want, {6, 4}, 1e-12, 1e-12));
  EXPECT_TRUE(close(linear(x, w, noncontig(b)), want, {6, 4}, 1e-12, 1e-12));
  // A weight stored transposed (as w.t() of a [K, N] parameter) and a sliced input.
  Tensor wt = randu({9, 4}, 613);
  Tensor big = randu({6, 12}, 614);
  Tensor xs = big.slice(1, 2, 11);
  EXPECT_TRUE(close(linear(xs, wt.t(), b), ref_linear(xs.contiguous(), wt.t().contiguous(), b), {6, 4}, 1e-12, 1e-12));
}

TEST(LinearFused, CompositeCasesKeepTheirResults) {
  Tensor x = randu({3, 5}, 620), w = randu({4, 5}, 621);
  // A bias of shape [1, 4] broadcasts (composite path).
  Tensor b2 = randu({1, 4}, 622);
  EXPECT_TRUE(close(linear(x, w, b2), ref_linear(x, w, b2.reshape({4})), {3, 4}, 1e-12, 1e-12));
  // A float32 bias with float64 operands promotes as the add does.
  Tensor bf = randu({4}, 623, -2, 2, TSR_F32);
  Tensor y = linear(x, w, bf);
  EXPECT_EQ(y.dtype(), TSR_F64);
  EXPECT_TRUE(close(y, ref_linear(x, w, bf), {3, 4}, 1e-7, 1e-7));
  // Integer operands: exact, through mm + add.
  Tensor xi = randint({3, 5}, 624, -5, 5), wi = randint({4, 5}, 625, -5, 5), bi = randint({4}, 626, -5, 5);
  EXPECT_EQ(values(linear(xi, wi, bi)), ref_linear(xi, wi, bi));
  // Errors are linear's, unchanged.
  EXPECT_TRUE(throws_with([&] { linear(x, w, randu({3}, 627)); }, {"linear", "[3]"}));
  EXPECT_TRUE(throws_with([&] { linear(x, randu({4, 6}, 628), randu({4}, 629)); }, {"linear", "[3, 5]", "[4, 6]"}));
}

TEST(LinearFused, Gradients) {
  Tensor x = randu({2, 3, 5}, 630), w = randu({4, 5}, 631), b = randu({4}, 632);
  GRADCHECK([](const std::vector<Tensor>& t) { return linear(t[0], t[1], t[2]); }, {x, w, b});
  GRADCHECK([](const std::vector<Tensor>& t) { return linear(t[0], t[1], t[2]); },
            {randu({7}, 633), randu({3, 7}, 634), randu({3}, 635)});
  // Formula values against float64 references: dx = g w, dw = g^T x, db = sum of g's rows.
  Tensor xl = x.clone().requires_grad_(true), wl = w.clone().requires_grad_(true), bl = b.clone().requires_grad_(true);
  Tensor g = randu({2, 3, 4}, 636);
  linear(xl, wl, bl).backward(g);
  const auto gv = values(g), xv = values(x), wv = values(w);
  std::vector<double> dx(30, 0.0), dw(20, 0.0), db(4, 0.0);
  for (int r = 0; r < 6; ++r)
    for (int o = 0; o < 4; ++o) {
      const double go = gv[size_t(r * 4 + o)];
      db[size_t(o)] += go;
      for (int i = 0; i < 5; ++i) {
        dx[size_t(r * 5 + i)] += go * wv[size_t(o * 5 + i)];
        dw[size_t(o * 5 + i)] += go * xv[size_t(r * 5 + i)];
      }
    }
  EXPECT_TRUE(close(xl.grad(), dx, {2, 3, 5}, 1e-12, 1e-12));
  EXPECT_TRUE(close(wl.grad(), dw, {4, 5}, 1e-12, 1e-12));
  EXPECT_TRUE(close(bl.grad(), db, {4}, 1e-12, 1e-12));
}

// create_graph: the backward is written with differentiable ops, so second derivatives exist.
// d/dw of sum((dL/dx)^2) with L = sum(linear(x, w, b) * g): dL/dx = g w, so the second
// derivative is 2 g^T (g w).
TEST(LinearFused, DoubleBackward) {
  Tensor x = randu({3, 4}, 640).requires_grad_(true), w = randu({2, 4}, 641).requires_grad_(true);
  Tensor b = randu({2}, 642).requires_grad_(true);
  Tensor g = randu({3, 2}, 643);
  Tensor L = sum(mul(linear(x, w, b), g));
  std::vector<Tensor> gx = autograd::grad({L}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true);
  sum(mul(gx[0], gx[0])).backward();
  Tensor want = mul(matmul(g.t(), matmul(g, w.detach())), 2.0);
  EXPECT_TRUE(close(w.grad(), values(want), {2, 4}, 1e-12, 1e-12));
}

}  // namespace
}  // namespace tsr::optest
