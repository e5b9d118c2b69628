// LayerNorm, RMSNorm and GroupNorm against float64 references computed from the layer's own
// (perturbed, so they matter) parameters; names, shapes, defaults, gradients and errors.
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

// Replaces a parameter's values in place (the registered slot stays the same tensor).
void perturb(tsr::Tensor& p, uint64_t seed) {
  tsr::NoGradGuard ng;
  p.copy_(randu(p.sizes(), seed, 0.5, 1.5, p.dtype()));
}

TEST(NnLayerNorm, NormalizesTrailingDimsWithAffine) {
  tsr::nn::LayerNorm ln({2, 3});
  EXPECT_EQ(ln.weight.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(ln.weight), std::vector<double>(6, 1.0));
  EXPECT_EQ(values(ln.bias), std::vector<double>(6, 0.0));
  EXPECT_EQ(ln.repr(), "LayerNorm((2, 3), eps=1e-05, elementwise_affine=true)");
  perturb(ln.weight, 1);
  perturb(ln.bias, 2);
  tsr::Tensor x = randu({4, 2, 3}, 3, -3, 3, TSR_F32);
  auto xv = values(x), w = values(ln.weight), b = values(ln.bias);
  std::vector<double> ref(24);
  for (int r = 0; r < 4; ++r) {
    double m = 0, v = 0;
    for (int i = 0; i < 6; ++i) m += xv[r * 6 + i] / 6;
    for (int i = 0; i < 6; ++i) v += (xv[r * 6 + i] - m) * (xv[r * 6 + i] - m) / 6;
    for (int i = 0; i < 6; ++i) ref[r * 6 + i] = (xv[r * 6 + i] - m) / std::sqrt(v + 1e-5) * w[i] + b[i];
  }
  tsr::Tensor y = ln(x);
  EXPECT_TRUE(close(y, ref, {4, 2, 3}, 1e-5, 1e-5));
  tsr::sum(y * y).backward();
  EXPECT_TRUE(ln.weight.grad().defined());
  EXPECT_TRUE(ln.bias.grad().defined());

  tsr::nn::LayerNorm plain({6}, 1e-3, false);
  EXPECT_TRUE(plain.named_parameters().empty());
  EXPECT_EQ(plain.normalized_shape, (Shape{6}));
  EXPECT_EQ(plain(tsr::zeros({0, 6})).sizes(), (Shape{0, 6}));
  EXPECT_TRUE(throws_with([&] { ln(tsr::zeros({4, 3, 2})); }, {"LayerNorm((2, 3)", "[4, 3, 2]", "[2, 3]"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::LayerNorm(std::vector<int64_t>{}); }, {"LayerNorm", "empty"}));
}

TEST(NnRMSNorm, ScalesByRootMeanSquare) {
  tsr::nn::RMSNorm rn({5}, 1e-6);
  EXPECT_EQ(rn.extra_repr(), "(5,), eps=1e-06, elementwise_affine=true");
  EXPECT_EQ(values(rn.weight), std::vector<double>(5, 1.0));
  perturb(rn.weight, 4);
  tsr::Tensor x = randu({3, 5}, 5, -2, 2, TSR_F32);
  auto xv = values(x), w = values(rn.weight);
  std::vector<double> ref(15);
  for (int r = 0; r < 3; ++r) {
    double ms = 0;
    for (int i = 0; i < 5; ++i) ms += xv[r * 5 + i] * xv[r * 5 + i] / 5;
    for (int i = 0; i < 5; ++i) ref[r * 5 + i] = xv[r * 5 + i] / std::sqrt(ms + 1e-6) * w[i];
  }
  tsr::Tensor y = rn(x);
  EXPECT_TRUE(close(y, ref, {3, 5}, 1e-5, 1e-5));
  tsr::sum(y).backward();
  EXPECT_TRUE(rn.weight.grad().defined());
  tsr::nn::RMSNorm dflt(5);
  EXPECT_EQ(dflt.extra_repr(), "(5,), eps=None, elementwise_affine=true");
  EXPECT_TRUE(throws_with([&] { rn(tsr::zeros({3, 4})); }, {"RMSNorm((5,)", "[3, 4]"}));
}

TEST(NnGroupNorm, NormalizesChannelGroups) {
  tsr::nn::GroupNorm gn(2, 4);
  EXPECT_EQ(gn.repr(), "GroupNorm(2, 4, eps=1e-05, affine=true)");
  perturb(gn.weight, 6);
  perturb(gn.bias, 7);
  tsr::Tensor x = randu({2, 4, 3}, 8, -2, 2, TSR_F64);
  auto xv = values(x), w = values(gn.weight), b = values(gn.bias);
  gn.to(TSR_F64);
  std::vector<double> ref(24);
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 2; ++g) {
      int base = n * 12 + g * 6;
      double m = 0, v = 0;
      for (int i = 0; i < 6; ++i) m += xv[base + i] / 6;
      for (int i = 0; i < 6; ++i) v += (xv[base + i] - m) * (xv[base + i] - m) / 6;
      for (int i = 0; i < 6; ++i) {
        int c = g * 2 + i / 3;
        ref[base + i] = (xv[base + i] - m) / std::sqrt(v + 1e-5) * w[c] + b[c];
      }
    }
  EXPECT_TRUE(close(gn(x), ref, {2, 4, 3}, 1e-6, 1e-6));
  EXPECT_TRUE(throws_with([] { tsr::nn::GroupNorm(3, 4); }, {"GroupNorm", "num_channels=4", "num_groups=3"}));
  EXPECT_TRUE(throws_with([&] { gn(tsr::zeros({2, 5, 3}, TSR_F64)); }, {"GroupNorm(2, 4", "[2, 5, 3]"}));
}

}  // namespace
