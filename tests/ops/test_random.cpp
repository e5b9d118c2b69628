// Random ops: determinism under a seed, moments of large samples, ranges, and argument errors.
#include <algorithm>
#include <set>

#include "linalg_test.hpp"

namespace {

using namespace tsr;
using namespace tsr::optest;

struct Moments {
  double mean, var;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = values(t);
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return {m, s / double(v.size())};
}

TEST(RandomOps, DeterministicUnderSeed) {
  manual_seed(1234);
  Tensor a = randint(0, 1000, {64}), b = normal(1.0, 2.0, {33}), c = randperm(50), d = bernoulli_p(zeros({40}), 0.5);
  manual_seed(1234);
  EXPECT_TRUE(close(randint(0, 1000, {64}), a, 0, 0));
  EXPECT_TRUE(close(normal(1.0, 2.0, {33}), b, 0, 0));
  EXPECT_TRUE(close(randperm(50), c, 0, 0));
  EXPECT_TRUE(close(bernoulli_p(zeros({40}), 0.5), d, 0, 0));
  // The stream advances: the next draw differs.
  EXPECT_NE(values(randint(0, 1000, {64})), values(a));
  // An explicit (seed, offset) is a fixed position, whatever the runtime's state.
  Tensor e = randperm(30, TSR_I64, {}, 99, 5);
  manual_seed(7);
  EXPECT_TRUE(close(randperm(30, TSR_I64, {}, 99, 5), e, 0, 0));
  EXPECT_NE(values(randperm(30, TSR_I64, {}, 98, 5)), values(e));
  // Composites follow rand/randn's stream exactly.
  Tensor u = rand({10}, TSR_F64, {}), n = randn({10}, TSR_F32, {});
  (void)u;
  (void)n;
  Tensor z = normal(0.0, 1.0, {10}, TSR_F32, {}, 42, 3);
  EXPECT_TRUE(
      close(z, call("randn", {std::vector<int64_t>{10}, TSR_F32, Device::cpu(), int64_t{42}, int64_t{3}}), 0, 0));
}

TEST(RandomOps, Bernoulli) {
  manual_seed(1);
  Tensor p = full({20000}, 0.3, TSR_F64);
  Tensor r = bernoulli(p);
  EXPECT_EQ(r.dtype(), TSR_F64);
  auto vs = values(r);
  EXPECT_TRUE(std::all_of(vs.begin(), vs.end(), [](double x) { return x == 0 || x == 1; }));
  EXPECT_NEAR(moments(r).mean, 0.3, 0.015);
  EXPECT_NEAR(moments(bernoulli_p(zeros({20000}, TSR_F32), 0.8)).mean, 0.8, 0.015);
  // Per-element probabilities: 0 and 1 are exact.
  std::vector<double> pv;
  for (int i = 0; i < 300; ++i) pv.push_back(i % 3 == 0 ? 0.0 : i % 3 == 1 ? 1.0 : 0.5);
  auto rv = values(bernoulli(from_vector(pv, {300}).to(TSR_F32)));
  for (int i = 0; i < 300; ++i)
    if (i % 3 != 2) {
      EXPECT_EQ(rv[i], pv[i]) << i;
    }
  EXPECT_EQ(bernoulli_p(zeros({3}, TSR_I32), 0.5).dtype(), TSR_I32);
  EXPECT_EQ(bernoulli(zeros({0, 4}, TSR_F32)).sizes(), (Shape{0, 4}));
  EXPECT_TRUE(throws_with([] { bernoulli(full({3}, 1.5, TSR_F32)); }, {"bernoulli", "[0, 1]", "1.5"}));
  EXPECT_TRUE(throws_with([] { bernoulli(full({3}, std::nan(""), TSR_F32)); }, {"bernoulli", "[0, 1]"}));
  EXPECT_TRUE(throws_with([] { bernoulli_p(zeros({3}), -0.25); }, {"bernoulli_p", "-0.25"}));
  EXPECT_TRUE(throws_with([] { bernoulli(zeros({3}, TSR_I64)); }, {"bernoulli", "int64"}));
}

TEST(RandomOps, Randint) {
  manual_seed(2);
  Tensor r = randint(-3, 7, {30000});
  EXPECT_EQ(r.dtype(), TSR_I64);
  auto v = values(r);
  std::set<double> seen(v.begin(), v.end());
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(*seen.begin(), -3);
  EXPECT_EQ(*seen.rbegin(), 6);
  Moments m = moments(r);
  EXPECT_NEAR(m.mean, 1.5, 0.06);
  EXPECT_NEAR(m.var, (100.0 - 1) / 12, 0.3);
  Tensor big = randint(0, int64_t(1) << 40, {1000});
  auto bv = values(big);
  EXPECT_TRUE(std::all_of(bv.begin(), bv.end(), [](double x) { return x >= 0 && x < double(int64_t(1) << 40); }));
  EXPECT_GT(moments(big).mean, 0.4 * double(int64_t(1) << 40));
  Tensor u8 = randint(250, 256, {200}, TSR_U8);
  EXPECT_EQ(u8.dtype(), TSR_U8);
  auto uv = values(u8);
  EXPECT_TRUE(std::all_of(uv.begin(), uv.end(), [](double x) { return x >= 250 && x <= 255; }));
  EXPECT_EQ(randint(0, 2, {0}).numel(), 0);
  EXPECT_TRUE(throws_with([] { randint(5, 5, {3}); }, {"randint", "from=5", "to=5"}));
  EXPECT_TRUE(throws_with([] { randint(0, 300, {3}, TSR_U8); }, {"randint", "300", "uint8"}));
  EXPECT_TRUE(throws_with([] { randint(0, 3, {-1}); }, {"randint"}));
}

TEST(RandomOps, NormalAndUniform) {
  manual_seed(3);
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_BF16}) {
    Moments m = moments(normal(2.0, 3.0, {40000}, dt));
    EXPECT_NEAR(m.mean, 2.0, 0.06) << dtype_name(dt);
    EXPECT_NEAR(std::sqrt(m.var), 3.0, 0.06) << dtype_name(dt);
  }
  Tensor t = zeros({200, 100}, TSR_F64);
  uint32_t v0 = t.version();
  normal_(t, -1.0, 0.5);
  EXPECT_GT(t.version(), v0);
  Moments m = moments(t);
  EXPECT_NEAR(m.mean, -1.0, 0.02);
  EXPECT_NEAR(std::sqrt(m.var), 0.5, 0.02);
  Tensor u = zeros({20000}, TSR_F32);
  uniform_(u, -2.0, 4.0);
  auto uv = values(u);
  EXPECT_TRUE(std::all_of(uv.begin(), uv.end(), [](double x) { return x >= -2.0 && x <= 4.0; }));
  Moments mu = moments(u);
  EXPECT_NEAR(mu.mean, 1.0, 0.05);
  EXPECT_NEAR(mu.var, 3.0, 0.1);
  // In place on a non-contiguous view writes only the view.
  Tensor base = zeros({4, 6}, TSR_F64);
  Tensor view = base.slice(1, 0, 6, 2);
  uniform_(view, 5.0, 6.0);
  auto bv = values(base);
  for (int i = 0; i < 24; ++i) EXPECT_TRUE(i % 2 == 0 ? (bv[i] >= 5 && bv[i] <= 6) : bv[i] == 0) << i;
  Tensor nm = normal(full({3, 1}, 10.0, TSR_F64), full({1, 4}, 0.0, TSR_F64));
  EXPECT_TRUE(close(nm, full({3, 4}, 10.0, TSR_F64), 0, 0));
  Moments mt = moments(normal(zeros({20000}, TSR_F64), full({20000}, 2.0, TSR_F64)));
  EXPECT_NEAR(std::sqrt(mt.var), 2.0, 0.06);
  EXPECT_EQ(rand_like(zeros({2, 3}, TSR_F64)).dtype(), TSR_F64);
  EXPECT_NEAR(moments(randn_like(zeros({20000}))).mean, 0.0, 0.04);
  EXPECT_TRUE(throws_with([] { normal(0.0, -1.0, {3}); }, {"normal", "std", "-1"}));
  EXPECT_TRUE(throws_with([] { normal(zeros({3}), full({3}, -2.0)); }, {"normal_tensor", "-2"}));
  EXPECT_TRUE(throws_with([&] { uniform_(u, 3.0, 2.0); }, {"uniform_", "from=3", "to=2"}));
  Tensor it = zeros({3}, TSR_I64);
  EXPECT_TRUE(throws_with([&] { normal_(it); }, {"normal_", "int64"}));
  // Differentiable in mean and std with a fixed draw.
  GRADCHECK([](const std::vector<Tensor>& x) { return normal(x[0], x[1], 11, 0); },
            {randu({3, 2}, 1), randu({2}, 2, 0.5, 2)});
}

TEST(RandomOps, Randperm) {
  manual_seed(4);
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    Tensor p = randperm(n);
    ASSERT_EQ(p.sizes(), (Shape{n}));
    auto v = values(p);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(v[size_t(i)], double(i));
  }
  EXPECT_EQ(randperm(5, TSR_I32).dtype(), TSR_I32);
  EXPECT_EQ(randperm(5, TSR_F32).dtype(), TSR_F32);
  // Uniform over positions: element 0 lands at each of 4 places about equally often.
  std::vector<int> where(4, 0);
  for (int s = 0; s < 4000; ++s) {
    auto v = values(randperm(4, TSR_I64, {}, 77, s * 2));
    where[size_t(std::find(v.begin(), v.end(), 0.0) - v.begin())]++;
  }
  for (int c : where) EXPECT_NEAR(c, 1000, 120);
  EXPECT_TRUE(throws_with([] { randperm(-1); }, {"randperm", "-1"}));
  EXPECT_TRUE(throws_with([] { randperm(300, TSR_I8); }, {"randperm", "300", "int8"}));
}

TEST(RandomOps, Multinomial) {
  manual_seed(5);
  Tensor p = from_vector(std::vector<double>{0.1, 0.0, 0.6, 0.3}, {4});
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    Tensor s = multinomial(p.to(dt), 20000, true);
    EXPECT_EQ(s.dtype(), TSR_I64);
    std::vector<double> cnt(4, 0.0);
    for (double x : values(s)) cnt[size_t(x)] += 1;
    EXPECT_EQ(cnt[1], 0);
    EXPECT_NEAR(cnt[0] / 20000, 0.1, 0.015);
    EXPECT_NEAR(cnt[2] / 20000, 0.6, 0.015);
  }
  // Unnormalized weights, 2-D: without replacement every row is distinct and skips zeros; the
  // first pick follows the weights.
  std::vector<double> w;
  for (int r = 0; r < 3000; ++r) w.insert(w.end(), {2.0, 0.0, 1.0, 1.0});
  Tensor s2 = multinomial(from_vector(w, {3000, 4}), 3, false);
  ASSERT_EQ(s2.sizes(), (Shape{3000, 3}));
  auto v = values(s2);
  double first0 = 0;
  for (int r = 0; r < 3000; ++r) {
    std::set<double> row(v.begin() + r * 3, v.begin() + r * 3 + 3);
    EXPECT_EQ(row.size(), 3u);
    EXPECT_EQ(row.count(1.0), 0u);
    first0 += v[size_t(r * 3)] == 0;
  }
  EXPECT_NEAR(first0 / 3000, 0.5, 0.04);
  EXPECT_TRUE(close(multinomial(p, 5, true, 3, 9), multinomial(p, 5, true, 3, 9), 0, 0));
  EXPECT_TRUE(throws_with([&] { multinomial(p, 5, false); }, {"multinomial", "5", "4", "without replacement"}));
  EXPECT_TRUE(throws_with([&] { multinomial(p, 4, false); }, {"multinomial", "not enough non-zero"}));
  EXPECT_TRUE(throws_with(
      [&] {
        multinomial(from_vector(std::vector<double>{0.5, -0.1}), 1, true);
      },
      {"multinomial", "< 0", "-0.1"}));
  EXPECT_TRUE(throws_with([&] { multinomial(zeros({2}, TSR_F64), 1, true); }, {"multinomial", "sum"}));
  EXPECT_TRUE(throws_with([&] { multinomial(p, 0, true); }, {"multinomial", "0"}));
  EXPECT_TRUE(throws_with([&] { multinomial(zeros({2, 2, 2}), 1, true); }, {"multinomial", "[2, 2, 2]"}));
  EXPECT_TRUE(throws_with([&] { multinomial(zeros({3}, TSR_I64), 1, true); }, {"multinomial", "int64"}));
}

}  // namespace
