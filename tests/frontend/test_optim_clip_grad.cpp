// clip_grad_norm_ / clip_grad_value_: the total norm (L2, L1, inf) against sums written out
// here, the scaling of every grad, skipped params, non-finite totals and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;
namespace optim = tsr::optim;

struct Params {
  std::vector<Tensor> ps;
  std::vector<std::vector<double>> grads;
  std::vector<tsr::optest::Shape> shapes{{3, 4}, {5}, {0, 2}, {2, 3}};
  explicit Params(tsr_dtype_t dt, uint64_t seed = 1) {
    for (size_t k = 0; k < shapes.size(); ++k) {
      Tensor p = randu(shapes[k], seed + k, -1, 1, dt).clone();
      p.requires_grad_();
      if (k != 3) {  // the last param has no grad
        Tensor g = randu(shapes[k], seed + 100 + k, -3, 3, dt);
        p.set_grad(g);
        grads.push_back(values(g));
      }
      ps.push_back(p);
    }
  }
  double norm(double p) const {
    double acc = 0;
    for (const auto& g : grads)
      for (double x : g) acc = std::isinf(p) ? std::max(acc, std::fabs(x)) : acc + std::pow(std::fabs(x), p);
    return std::isinf(p) ? acc : std::pow(acc, 1 / p);
  }
};

TEST(OptimClipGrad, ScalesByMaxNormOverTotal) {
  const double inf = std::numeric_limits<double>::infinity();
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32})
    for (double p : {2.0, 1.0, inf, 3.0}) {
      Params P(dt, 7);
      const double total = P.norm(p), max_norm = total / 3;
      const double tol = dt == TSR_F64 ? 1e-12 : 1e-5;
      EXPECT_NEAR(optim::clip_grad_norm_(P.ps, max_norm, p), total, tol * total) << "p=" << p;
      const double coef = max_norm / (total + 1e-6);
      for (size_t k = 0; k < P.grads.size(); ++k) {
        std::vector<double> want = P.grads[k];
        for (double& x : want) x *= coef;
        EXPECT_TRUE(close(P.ps[k].grad(), want, P.shapes[k], tol, tol)) << "p=" << p << " param " << k;
      }
      EXPECT_FALSE(P.ps[3].grad().defined());
    }
}

TEST(OptimClipGrad, UnderTheLimitLeavesGradsAlone) {
  Params P(TSR_F32, 3);
  const double total = P.norm(2);
  EXPECT_NEAR(optim::clip_grad_norm_(P.ps, total * 2), total, 1e-5 * total);
  for (size_t k = 0; k < P.grads.size(); ++k) EXPECT_EQ(values(P.ps[k].grad()), P.grads[k]);
  EXPECT_EQ(optim::clip_grad_norm_({}, 1.0), 0.0);
  Tensor nog = tsr::zeros({3});
  nog.requires_grad_();
  EXPECT_EQ(optim::clip_grad_norm_({nog}, 1.0), 0.0);
}

TEST(OptimClipGrad, NonFiniteTotals) {
  Params P(TSR_F64, 5);
  Tensor g = P.ps[1].grad();
  std::vector<double> v = P.grads[1];
  v[2] = std::numeric_limits<double>::infinity();
  g.copy_(tsr::from_vector(v, {5}));
  EXPECT_TRUE(throws_with([&] { optim::clip_grad_norm_(P.ps, 1.0, 2.0, true); },
                          {"clip_grad_norm_", "total norm of order 2", "non-finite (inf)"}));
  EXPECT_EQ(values(P.ps[0].grad()), P.grads[0]);  // nothing scaled
  // Without the check, as torch: the coefficient is 0, so inf * 0 gives NaN and the rest 0.
  EXPECT_TRUE(std::isinf(optim::clip_grad_norm_(P.ps, 1.0)));
  std::vector<double> after = values(P.ps[1].grad());
  EXPECT_TRUE(std::isnan(after[2]));
  EXPECT_EQ(after[0], 0.0);
  v[2] = std::nan("");
  g.copy_(tsr::from_vector(v, {5}));
  EXPECT_TRUE(std::isnan(optim::clip_grad_norm_(P.ps, 1.0, std::numeric_limits<double>::infinity())));
}

TEST(OptimClipGrad, ClipValueAndErrors) {
  Params P(TSR_F64, 9);
  optim::clip_grad_value_(P.ps, 0.5);
  for (size_t k = 0; k < P.grads.size(); ++k) {
    std::vector<double> want = P.grads[k];
    for (double& x : want) x = std::min(0.5, std::max(-0.5, x));
    EXPECT_EQ(values(P.ps[k].grad()), want);
  }
  EXPECT_TRUE(
      throws_with([&] { optim::clip_grad_norm_(P.ps, -1.0); }, {"clip_grad_norm_: max_norm must be >= 0, got -1"}));
  EXPECT_TRUE(throws_with([&] { optim::clip_grad_norm_(P.ps, 1.0, 0.0); }, {"norm_type must be > 0 or inf, got 0"}));
  EXPECT_TRUE(throws_with([&] { optim::clip_grad_value_(P.ps, -1.0); }, {"clip_grad_value_: clip_value must be >= 0"}));
}

}  // namespace
