// BatchNorm1d/2d: batch-statistics normalization and running-stat updates against hand
// computation (momentum and cumulative average), eval with running stats, PyTorch's buffer
// names and dtypes, track_running_stats=false, gradients and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"
#include "tessera/nn.hpp"

namespace {

using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;
using Shape = std::vector<int64_t>;

// Per-channel mean and biased/unbiased variance of x [N, C, S] (S = spatial size).
struct Stats {
  std::vector<double> mean, var_b, var_u;
};
Stats stats(const std::vector<double>& x, int64_t N, int64_t C, int64_t S) {
  Stats st{std::vector<double>(C), std::vector<double>(C), std::vector<double>(C)};
  double m = static_cast<double>(N * S);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) s += x[(n * C + c) * S + i];
    double mean = s / m;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) ss += std::pow(x[(n * C + c) * S + i] - mean, 2);
    st.mean[c] = mean;
    st.var_b[c] = ss / m;
    st.var_u[c] = ss / (m - 1);
  }
  return st;
}
std::vector<double> normalize(const std::vector<double>& x, int64_t N, int64_t C, int64_t S,
                              const std::vector<double>& mean, const std::vector<double>& var,
                              const std::vector<double>& w, const std::vector<double>& b) {
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) {
        size_t k = static_cast<size_t>((n * C + c) * S + i);
        y[k] = (x[k] - mean[c]) / std::sqrt(var[c] + 1e-5) * w[c] + b[c];
      }
  return y;
}

TEST(NnBatchNorm, TrainUpdatesRunningStatsEvalUsesThem) {
  tsr::nn::BatchNorm1d bn(3);
  EXPECT_EQ(bn.state_dict().keys(),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn.num_batches_tracked.dtype(), TSR_I64);
  EXPECT_EQ(bn.num_batches_tracked.dim(), 0);
  EXPECT_EQ(bn.repr(), "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  {
    tsr::NoGradGuard ng;
    bn.weight.copy_(randu({3}, 1, 0.5, 1.5, TSR_F32));
    bn.bias.copy_(randu({3}, 2, -1, 1, TSR_F32));
  }
  auto w = values(bn.weight), b = values(bn.bias);
  std::vector<double> rm(3, 0.0), rv(3, 1.0);
  for (int step = 0; step < 2; ++step) {
    tsr::Tensor x = randu({6, 3, 4}, 10 + step, -2, 3, TSR_F32);  // [N, C, L]
    auto xv = values(x);
    Stats st = stats(xv, 6, 3, 4);
    EXPECT_TRUE(close(bn(x), normalize(xv, 6, 3, 4, st.mean, st.var_b, w, b), {6, 3, 4}, 1e-4, 1e-4));
    for (int c = 0; c < 3; ++c) {
      rm[c] = 0.9 * rm[c] + 0.1 * st.mean[c];
      rv[c] = 0.9 * rv[c] + 0.1 * st.var_u[c];
    }
    EXPECT_TRUE(close(bn.running_mean, rm, {3}, 1e-5, 1e-6));
    EXPECT_TRUE(close(bn.running_var, rv, {3}, 1e-5, 1e-6));
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), step + 1);
  }
  bn.eval();
  tsr::Tensor x = randu({5, 3}, 20, -2, 2, TSR_F32);
  auto xv = values(x);
  EXPECT_TRUE(close(bn(x), normalize(xv, 5, 3, 1, rm, rv, w, b), {5, 3}, 1e-5, 1e-5));
  EXPECT_TRUE(close(bn.running_mean, rm, {3}, 1e-5, 1e-6));  // eval leaves them
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  // A single sample per channel is fine in eval, an error in training.
  EXPECT_EQ(bn(tsr::ones({1, 3})).sizes(), (Shape{1, 3}));
  bn.train();
  EXPECT_TRUE(throws_with(
      [&] {
        bn(tsr::ones({1, 3}));
      },
      {"BatchNorm1d(3", "more than 1 value per channel", "[1, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        bn(tsr::ones({0, 3}));
      },
      {"BatchNorm1d(3", "more than 1 value per channel", "[0, 3]"}));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);  // failed calls counted nothing
  EXPECT_TRUE(throws_with([&] { bn(tsr::ones({4, 2})); }, {"BatchNorm1d(3", "[4, 2]", "C=3"}));
  EXPECT_TRUE(throws_with([&] { bn(tsr::ones({4, 3, 2, 2})); }, {"BatchNorm1d", "[4, 3, 2, 2]"}));
}

TEST(NnBatchNorm, CumulativeAverage2dAndGradients) {
  tsr::nn::BatchNorm2d bn(2, 1e-5, std::nullopt);
  EXPECT_EQ(bn.extra_repr(), "2, eps=1e-05, momentum=None, affine=true, track_running_stats=true");
  std::vector<double> sum_mean(2, 0.0), sum_var(2, 0.0);
  for (int step = 0; step < 3; ++step) {
    tsr::Tensor x = randu({3, 2, 2, 3}, 30 + step, -1, 2, TSR_F32).requires_grad_(true);
    Stats st = stats(values(x), 3, 2, 6);
    for (int c = 0; c < 2; ++c) sum_mean[c] += st.mean[c], sum_var[c] += st.var_u[c];
    tsr::Tensor y = bn(x);
    tsr::sum(y * y).backward();
    EXPECT_TRUE(x.grad().defined());
  }
  EXPECT_TRUE(close(bn.running_mean, {sum_mean[0] / 3, sum_mean[1] / 3}, {2}, 1e-5, 1e-6));
  // Starting value 1 is weighted away by 1/n on the first batch.
  EXPECT_TRUE(close(bn.running_var, {sum_var[0] / 3, sum_var[1] / 3}, {2}, 1e-5, 1e-6));
  EXPECT_TRUE(bn.weight.grad().defined());
  EXPECT_TRUE(bn.bias.grad().defined());
  bn.to(TSR_F64);
  EXPECT_EQ(bn.running_mean.dtype(), TSR_F64);
  EXPECT_EQ(bn.num_batches_tracked.dtype(), TSR_I64);  // integer buffers keep their dtype
  EXPECT_TRUE(throws_with([&] { bn(tsr::ones({3, 2, 4}, TSR_F64)); }, {"BatchNorm2d(2", "[3, 2, 4]", "[N, C, H, W]"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::BatchNorm2d(2, 1e-5, 1.5); }, {"BatchNorm2d", "momentum", "1.5"}));
}

TEST(NnBatchNorm, WithoutRunningStatsAlwaysUsesTheBatch) {
  tsr::nn::BatchNorm1d bn(2, 1e-5, 0.1, false, false);
  EXPECT_TRUE(bn.state_dict().keys().empty());
  bn.eval();
  tsr::Tensor x = randu({4, 2}, 40, -2, 2, TSR_F32);
  auto xv = values(x);
  Stats st = stats(xv, 4, 2, 1);
  EXPECT_TRUE(close(bn(x), normalize(xv, 4, 2, 1, st.mean, st.var_b, {1, 1}, {0, 0}), {4, 2}, 1e-4, 1e-4));
}

}  // namespace
