// nn::init: bounds and moments of every initializer over large tensors, PyTorch's gains and
// fans, manual_seed reproducibility, and argument errors.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"
#include "tessera/nn.hpp"

namespace {

using tsr::optest::throws_with;
using tsr::optest::values;

struct Moments {
  double mean, std, min, max;
};
Moments moments(const tsr::Tensor& t) {
  std::vector<double> v = values(t);
  double s = 0, ss = 0, lo = v[0], hi = v[0];
  for (double x : v) {
    s += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double mean = s / v.size();
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / (v.size() - 1)), lo, hi};
}

TEST(NnInit, KaimingUniformMatchesPyTorchBound) {
  tsr::manual_seed(11);
  tsr::Tensor w = tsr::empty({256, 128, 3});  // fan_in = 384
  tsr::nn::init::kaiming_uniform_(w, std::sqrt(5.0));
  double bound = 1.0 / std::sqrt(384.0);
  Moments m = moments(w);
  EXPECT_GE(m.min, -bound);
  EXPECT_LE(m.max, bound);
  EXPECT_GT(m.max, 0.99 * bound);  // the whole interval is used
  EXPECT_NEAR(m.mean, 0.0, 0.01 * bound);
  EXPECT_NEAR(m.std, bound / std::sqrt(3.0), 0.01 * bound);
  // relu, fan_out: bound = sqrt(2) * sqrt(3 / fan_out)
  tsr::nn::init::kaiming_uniform_(w, 0.0, "fan_out", "relu");
  double b2 = std::sqrt(2.0) * std::sqrt(3.0 / (256 * 3));
  EXPECT_NEAR(moments(w).std, b2 / std::sqrt(3.0), 0.01 * b2);
  EXPECT_LE(moments(w).max, b2);
}

TEST(NnInit, KaimingNormalXavierNormalUniformMoments) {
  tsr::manual_seed(12);
  tsr::Tensor w = tsr::empty({400, 250});
  tsr::nn::init::kaiming_normal_(w, 0.0, "fan_in", "relu");
  EXPECT_NEAR(moments(w).std, std::sqrt(2.0 / 250), 0.02 * std::sqrt(2.0 / 250));
  EXPECT_NEAR(moments(w).mean, 0.0, 0.003);

  tsr::nn::init::xavier_normal_(w, 2.0);
  double sd = 2.0 * std::sqrt(2.0 / 650);
  EXPECT_NEAR(moments(w).std, sd, 0.02 * sd);

  tsr::nn::init::xavier_uniform_(w);
  double a = std::sqrt(6.0 / 650);
  Moments m = moments(w);
  EXPECT_GE(m.min, -a);
  EXPECT_LE(m.max, a);
  EXPECT_NEAR(m.std, a / std::sqrt(3.0), 0.02 * a);

  tsr::nn::init::normal_(w, 2.0, 3.0);
  m = moments(w);
  EXPECT_NEAR(m.mean, 2.0, 0.03);
  EXPECT_NEAR(m.std, 3.0, 0.03);

  tsr::nn::init::uniform_(w, -1.0, 3.0);
  m = moments(w);
  EXPECT_GE(m.min, -1.0);
  EXPECT_LE(m.max, 3.0);
  EXPECT_NEAR(m.mean, 1.0, 0.02);

  tsr::nn::init::trunc_normal_(w, 0.5, 1.0, -1.0, 1.5);
  m = moments(w);
  EXPECT_GE(m.min, -1.0);
  EXPECT_LE(m.max, 1.5);
  EXPECT_LT(m.std, 1.0);  // truncation narrows it

  tsr::nn::init::constant_(w, 0.25);
  m = moments(w);
  EXPECT_EQ(m.min, 0.25);
  EXPECT_EQ(m.max, 0.25);
  tsr::nn::init::zeros_(w);
  EXPECT_EQ(moments(w).max, 0.0);
  tsr::nn::init::ones_(w);
  EXPECT_EQ(moments(w).min, 1.0);
}

TEST(NnInit, GainsAndFansArePyTorchs) {
  using tsr::nn::init::calculate_gain;
  EXPECT_DOUBLE_EQ(calculate_gain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain("conv2d"), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.0001)));
  EXPECT_DOUBLE_EQ(calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(2.0 / 6.0));
  EXPECT_DOUBLE_EQ(calculate_gain("selu"), 0.75);
  auto f = tsr::nn::init::calculate_fan_in_and_fan_out(tsr::empty({8, 3, 5, 7}));
  EXPECT_EQ(f.first, 3 * 35);
  EXPECT_EQ(f.second, 8 * 35);
}

TEST(NnInit, ManualSeedReproducesAndLeavesNoAutogradHistory) {
  tsr::Tensor a = tsr::zeros({50, 40}), b = tsr::zeros({50, 40});
  a.requires_grad_(true);
  tsr::manual_seed(5);
  tsr::nn::init::kaiming_uniform_(a, std::sqrt(5.0));
  tsr::manual_seed(5);
  tsr::nn::init::kaiming_uniform_(b, std::sqrt(5.0));
  EXPECT_EQ(values(a), values(b));
  EXPECT_TRUE(a.is_leaf());
  EXPECT_TRUE(a.requires_grad());
  tsr::manual_seed(6);
  tsr::nn::init::kaiming_uniform_(b, std::sqrt(5.0));
  EXPECT_NE(values(a), values(b));
}

TEST(NnInit, ErrorsNameTheFunctionAndShape) {
  tsr::Tensor v = tsr::empty({5});
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::kaiming_uniform_(v); }, {"kaiming_uniform_", "at least 2 dims", "[5]"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::xavier_normal_(v); }, {"xavier_normal_", "[5]"}));
  tsr::Tensor w = tsr::empty({4, 4});
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::kaiming_normal_(w, 0, "fan_avg"); }, {"kaiming_normal_", "fan_avg"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::calculate_gain("swish"); }, {"calculate_gain", "swish"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::normal_(w, 0, -1); }, {"normal_", "std"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::uniform_(w, 2, 1); }, {"uniform_", "a <= b"}));
  tsr::Tensor i = tsr::zeros({4, 4}, TSR_I64);
  EXPECT_TRUE(throws_with([&] { tsr::nn::init::normal_(i); }, {"normal_", "floating", "int64"}));
}

TEST(NnInit, ZeroElementTensorsAreLeftAlone) {
  tsr::Tensor w = tsr::empty({0, 7});
  EXPECT_NO_THROW(tsr::nn::init::kaiming_uniform_(w, std::sqrt(5.0)));
  EXPECT_NO_THROW(tsr::nn::init::xavier_uniform_(w));
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{0, 7}));
}

}  // namespace
