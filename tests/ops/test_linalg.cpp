// Matrix products (mm, bmm, matmul formulas; addmm & co; dot, outer, linear, tensordot) against
// float64 references computed here, gradchecks, and bad-input statuses.
#include "linalg_test.hpp"

namespace {

using namespace tsr;
using namespace tsr::optest;

TEST(LinalgOps, MmBmmGrad) {
  Tensor a = randu({3, 4}, 1), b = randu({4, 5}, 2);
  Tensor ba = randu({2, 3, 4}, 3), bb = randu({2, 4, 2}, 4);
  Tensor e = randu({0, 4}, 5);
  Tensor ea = e.clone().requires_grad_();
  Tensor bl = b.clone().requires_grad_();
  auto g = autograd::grad({mm(ea, bl)}, {bl}, {zeros({0, 5}, TSR_F64)});
  EXPECT_TRUE(close(g[0], zeros({4, 5}, TSR_F64)));
  GRADCHECK([](const std::vector<Tensor>& x) { return mm(x[0], x[1]); }, {a, b});
  GRADCHECK([](const std::vector<Tensor>& x) { return mm(x[0], x[1]); }, {noncontig(a), b});
  GRADCHECK([](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); }, {ba, bb});
}

// A size-0 batch dim broadcast against size 1 stays 0 (it once became 1 and read out of bounds).
TEST(LinalgOps, MatmulEmptyBatchBroadcast) {
  Tensor a = randu({0, 3, 4}, 1), b = randu({4, 5}, 2);
  EXPECT_EQ(matmul(a, b).sizes(), (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(matmul(randu({2, 1, 3, 4}, 3), randu({0, 4, 5}, 4)).sizes(), (std::vector<int64_t>{2, 0, 3, 5}));
  EXPECT_EQ(matmul(randu({3, 0}, 5), randu({0, 5}, 6)).sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(close(matmul(randu({3, 0}, 5), randu({0, 5}, 6)), zeros({3, 5}, TSR_F64)));
  Tensor ar = a.clone().requires_grad_(), br = b.clone().requires_grad_();
  sum(matmul(ar, br)).backward();
  EXPECT_TRUE(close(br.grad(), zeros({4, 5}, TSR_F64)));
}

TEST(LinalgOps, MatmulEveryRankGrad) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{3}, {3}},
                                                      {{2, 3}, {3}},
                                                      {{3}, {3, 4}},
                                                      {{2, 3}, {3, 4}},
                                                      {{3}, {2, 3, 4}},
                                                      {{2, 2, 3}, {3}},
                                                      {{2, 1, 2, 3}, {4, 3, 2}},
                                                      {{1, 3}, {2, 3, 1}},
                                                      {{2, 2, 3}, {1, 3, 2}}};
  uint64_t seed = 10;
  for (const auto& c : cases) {
    Tensor a = randu(c.first, ++seed), b = randu(c.second, ++seed);
    GRADCHECK([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); }, {a, b});
  }
}

TEST(LinalgOps, MatmulDoubleBackward) {
  // The gradient computed with create_graph is itself differentiable (in both inputs).
  Tensor cot = randu({2, 2, 4}, 99);
  auto grad_of = [cot](const std::vector<Tensor>& x) {
    // gradcheck's finite differences run under no_grad on plain tensors: differentiate fresh
    // leaves there (first order only).
    const bool outer = x[0].requires_grad();
    EnableGradGuard eg;
    Tensor a = outer ? x[0] : x[0].detach().requires_grad_();
    Tensor b = outer ? x[1] : x[1].detach().requires_grad_();
    Tensor y = matmul(a, b);
    auto g = autograd::grad({y}, {a, b}, {cot}, true, outer);
    return add(mul(g[0], g[0]), sum(mul(g[1], g[1])));
  };
  GRADCHECK(grad_of, {randu({2, 2, 3}, 7), randu({3, 4}, 8)});
}

TEST(LinalgOps, MatmulValuesBatchBroadcast) {
  Tensor a = randu({2, 1, 3, 5}, 21), b = randu({4, 5, 2}, 22);
  Tensor r = matmul(a, b);
  std::vector<double> av = values(a), bv = values(b), exp;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      std::vector<double> x(av.begin() + i * 15, av.begin() + i * 15 + 15),
          y(bv.begin() + j * 10, bv.begin() + j * 10 + 10);
      auto c = ref_mm(x, y, 3, 5, 2);
      exp.insert(exp.end(), c.begin(), c.end());
    }
  EXPECT_TRUE(close(r, exp, {2, 4, 3, 2}, 1e-12, 1e-12));
}

TEST(LinalgOps, AddmmFamily) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16}) {
    Tensor s = randu({5}, 30, -2, 2, dt), m1 = randu({3, 4}, 31, -2, 2, dt), m2 = randu({4, 5}, 32, -2, 2, dt);
    auto exp = ref_mm(values(m1), values(m2), 3, 4, 5);
    auto sv = values(s);
    for (size_t i = 0; i < exp.size(); ++i) exp[i] = 0.5 * sv[i % 5] + 2.0 * exp[i];
    auto tol = default_tol(dt);
    EXPECT_TRUE(close(addmm(s, m1, m2, 0.5, 2.0), exp, {3, 5}, tol.first * 4, tol.second * 4)) << dtype_name(dt);
  }
  // beta = 0 ignores NaN in self.
  Tensor nan_self = full({3, 2}, std::nan(""), TSR_F64);
  Tensor m1 = randu({3, 4}, 33), m2 = randu({4, 2}, 34);
  EXPECT_TRUE(close(addmm(nan_self, m1, m2, 0.0, 1.0), ref_mm(values(m1), values(m2), 3, 4, 2), {3, 2}, 1e-12, 1e-12));
  // Integer product stays integral and exact.
  Tensor i1 = randint({2, 3}, 35, -5, 5), i2 = randint({3, 2}, 36, -5, 5), is = randint({2, 2}, 37, -5, 5);
  Tensor ir = addmm(is, i1, i2, 2, 3);
  EXPECT_EQ(ir.dtype(), TSR_I64);
  auto ie = ref_mm(values(i1), values(i2), 2, 3, 2);
  auto isv = values(is);
  for (size_t i = 0; i < ie.size(); ++i) ie[i] = 2 * isv[i] + 3 * ie[i];
  EXPECT_TRUE(close(ir, ie, {2, 2}, 0, 0));
  // addbmm values: sum over the batch.
  Tensor b1 = randu({3, 2, 3}, 50), b2 = randu({3, 3, 2}, 51), z = zeros({2, 2}, TSR_F64);
  std::vector<double> acc(4, 0.0), v1 = values(b1), v2 = values(b2);
  for (int b = 0; b < 3; ++b) {
    auto c = ref_mm(std::vector<double>(v1.begin() + b * 6, v1.begin() + b * 6 + 6),
                    std::vector<double>(v2.begin() + b * 6, v2.begin() + b * 6 + 6), 2, 3, 2);
    for (int i = 0; i < 4; ++i) acc[i] += c[i];
  }
  EXPECT_TRUE(close(addbmm(z, b1, b2), acc, {2, 2}, 1e-12, 1e-12));
  EXPECT_TRUE(throws_with([&] { addmm(is, i1, i2, 1, 0.5); }, {"addmm", "alpha", "floating point"}));
  EXPECT_TRUE(throws_with([&] { addmm(randu({4}, 1), m1, m2); }, {"addmm", "[4]", "[3, 2]"}));
  EXPECT_TRUE(throws_with([&] { addmm(randu({3, 2}, 1), m1, m1); }, {"addmm", "[3, 4]"}));
  EXPECT_TRUE(throws_with([&] { baddbmm(z, b1, randu({2, 3, 2}, 1)); }, {"baddbmm", "[3, 2, 3]", "[2, 3, 2]"}));
  GRADCHECK([](const std::vector<Tensor>& x) { return addmm(x[0], x[1], x[2], 0.5, -1.5); },
            {randu({1, 5}, 38), randu({3, 4}, 39), randu({4, 5}, 40)});
  GRADCHECK([](const std::vector<Tensor>& x) { return addmv(x[0], x[1], x[2], 2.0, 0.5); },
            {randu({3}, 41), randu({3, 4}, 42), noncontig(randu({4}, 43))});
  GRADCHECK([](const std::vector<Tensor>& x) { return baddbmm(x[0], x[1], x[2], 0.25, 3.0); },
            {randu({3, 1}, 44), randu({2, 3, 4}, 45), randu({2, 4, 2}, 46)});
  GRADCHECK([](const std::vector<Tensor>& x) { return addbmm(x[0], x[1], x[2], 1.0, 1.0); },
            {randu({3, 2}, 47), randu({2, 3, 4}, 48), randu({2, 4, 2}, 49)});
}

TEST(LinalgOps, MvDotOuter) {
  Tensor m = randu({4, 7}, 60), v = randu({7}, 61), w = randu({4}, 62);
  EXPECT_TRUE(close(mv(m, noncontig(v)), ref_mm(values(m), values(v), 4, 7, 1), {4}, 1e-12, 1e-12));
  EXPECT_TRUE(close(mv(randu({0, 7}, 1), v), std::vector<double>{}, {0}, 0, 0));
  Tensor d = dot(v, noncontig(v));
  EXPECT_EQ(d.dim(), 0);
  double s = 0;
  for (double x : values(v)) s += x * x;
  EXPECT_TRUE(close(d, {s}, {}, 1e-12, 1e-12));
  EXPECT_TRUE(close(vdot(v, v), {s}, {}, 1e-12, 1e-12));
  EXPECT_TRUE(close(dot(randu({0}, 1), randu({0}, 2)), {0.0}, {}, 0, 0));
  Tensor iv = randint({5}, 63, -9, 9);
  double is = 0;
  for (double x : values(iv)) is += x * x;
  EXPECT_EQ(dot(iv, iv).item<int64_t>(), static_cast<int64_t>(is));
  Tensor o = outer(w, v);
  std::vector<double> oe;
  for (double a : values(w))
    for (double b : values(v)) oe.push_back(a * b);
  EXPECT_TRUE(close(o, oe, {4, 7}, 1e-12, 1e-12));
  EXPECT_TRUE(throws_with([&] { mv(m, w); }, {"mv", "[4, 7]", "[4]"}));
  EXPECT_TRUE(throws_with([&] { dot(v, w); }, {"dot", "[7]", "[4]"}));
  EXPECT_TRUE(throws_with([&] { dot(m, m); }, {"dot", "[4, 7]"}));
  EXPECT_TRUE(throws_with([&] { dot(v, v.to(TSR_F32)); }, {"dot", "float64", "float32"}));
  EXPECT_TRUE(throws_with([&] { outer(m, v); }, {"outer", "[4, 7]"}));
  GRADCHECK([](const std::vector<Tensor>& x) { return mv(x[0], x[1]); }, {m, v});
  GRADCHECK([](const std::vector<Tensor>& x) { return dot(x[0], x[1]); }, {v, randu({7}, 64)});
  GRADCHECK([](const std::vector<Tensor>& x) { return outer(x[0], x[1]); }, {w, v});
}

TEST(LinalgOps, Linear) {
  Tensor x = randu({2, 3, 5}, 70), w = randu({4, 5}, 71), b = randu({4}, 72);
  Tensor y = linear(x, w, b);
  auto xv = values(x), wv = values(w), bv = values(b);
  std::vector<double> e;
  for (int r = 0; r < 6; ++r)
    for (int o = 0; o < 4; ++o) {
      double s = bv[o];
      for (int i = 0; i < 5; ++i) s += xv[r * 5 + i] * wv[o * 5 + i];
      e.push_back(s);
    }
  EXPECT_TRUE(close(y, e, {2, 3, 4}, 1e-12, 1e-12));
  EXPECT_EQ(linear(randu({5}, 1), w).sizes(), (Shape{4}));
  Tensor yf = linear(x.to(TSR_F32), w.to(TSR_F32), b.to(TSR_F32));
  EXPECT_TRUE(close(yf, e, {2, 3, 4}, 1e-5, 1e-5));
  EXPECT_TRUE(throws_with([&] { linear(x, randu({4, 6}, 1)); }, {"linear", "[2, 3, 5]", "[4, 6]"}));
  EXPECT_TRUE(throws_with([&] { linear(x, w, randu({3}, 1)); }, {"linear", "[3]"}));
  GRADCHECK([](const std::vector<Tensor>& t) { return linear(t[0], t[1], t[2]); }, {x, w, b});
  GRADCHECK([](const std::vector<Tensor>& t) { return linear(t[0], t[1]); }, {randu({3, 5}, 73), w});
}

TEST(LinalgOps, Tensordot) {
  Tensor a = randu({3, 4, 5}, 80), b = randu({5, 4, 2}, 81);
  Tensor r = tensordot(a, b, {1, 2}, {1, 0});
  auto av = values(a), bv = values(b);
  std::vector<double> e;
  for (int i = 0; i < 3; ++i)
    for (int n = 0; n < 2; ++n) {
      double s = 0;
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 5; ++k) s += av[(i * 4 + j) * 5 + k] * bv[(k * 4 + j) * 2 + n];
      e.push_back(s);
    }
  EXPECT_TRUE(close(r, e, {3, 2}, 1e-12, 1e-12));
  EXPECT_TRUE(throws_with([&] { tensordot(a, b, {0}, {0}); }, {"tensordot", "size 3", "size 5"}));
  GRADCHECK([](const std::vector<Tensor>& t) { return tensordot(t[0], t[1], {2}, {0}); }, {a, b});
}

TEST(LinalgOps, ErrorsNameTheOp) {
  Tensor a = randu({3, 4}, 1);
  EXPECT_TRUE(throws_with([&] { matmul(a, a); }, {"matmul", "[3, 4]"}));
  EXPECT_TRUE(throws_with([&] { mm(a, a); }, {"mm", "[3, 4]"}));
}

}  // namespace
