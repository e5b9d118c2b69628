// Conv1d, Conv2d, ConvTranspose2d against naive float64 loops over the layer's own parameters
// (stride, padding, dilation, groups, unbatched input), PyTorch names/shapes/init/repr,
// gradients, and errors naming the layer and the shapes.
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

struct Geo {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, groups;
};

// out[n, o, y, x] = b[o] + sum_{c in group, i, j} in[n, c, y*s - p + i*d, x*s - p + j*d] w[o, c', i, j]
std::vector<double> conv2d_ref(const std::vector<double>& in, Shape is, const std::vector<double>& w,
                               const std::vector<double>& b, int64_t cout, Geo g, Shape* os) {
  int64_t N = is[0], C = is[1], H = is[2], W = is[3], cpg = C / g.groups, opg = cout / g.groups;
  int64_t OH = (H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1,
          OW = (W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  *os = {N, cout, OH, OW};
  std::vector<double> out(static_cast<size_t>(N * cout * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          double s = b.empty() ? 0 : b[o];
          int64_t grp = o / opg;
          for (int64_t c = 0; c < cpg; ++c)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                int64_t iy = y * g.sh - g.ph + i * g.dh, ix = x * g.sw - g.pw + j * g.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s += in[((n * C + grp * cpg + c) * H + iy) * W + ix] * w[((o * cpg + c) * g.kh + i) * g.kw + j];
              }
          out[((n * cout + o) * OH + y) * OW + x] = s;
        }
  return out;
}

TEST(NnConv2d, MatchesNaiveLoopsWithStridePaddingDilationGroups) {
  tsr::manual_seed(1);
  tsr::nn::Conv2d conv(4, 6, {3, 2}, {2, 1}, {1, 0}, {1, 2}, 2);
  EXPECT_EQ(conv.weight.sizes(), (Shape{6, 2, 3, 2}));
  EXPECT_EQ(conv.bias.sizes(), (Shape{6}));
  EXPECT_EQ(conv.repr(), "Conv2d(4, 6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)");
  tsr::Tensor x = randu({2, 4, 7, 8}, 2, -1, 1, TSR_F32);
  Shape os;
  auto ref =
      conv2d_ref(values(x), x.sizes(), values(conv.weight), values(conv.bias), 6, {3, 2, 2, 1, 1, 0, 1, 2, 2}, &os);
  EXPECT_TRUE(close(conv(x), ref, os, 1e-5, 1e-5));
  // Unbatched [C, H, W] input gives [C_out, OH, OW].
  tsr::Tensor y1 = conv(x.select(0, 1));
  EXPECT_TRUE(
      close(y1, std::vector<double>(ref.begin() + ref.size() / 2, ref.end()), {os[1], os[2], os[3]}, 1e-5, 1e-5));

  tsr::nn::Conv2d plain(3, 5, {3}, {1}, {0}, {1}, 1, false);
  EXPECT_EQ(plain.repr(), "Conv2d(3, 5, kernel_size=(3, 3), stride=(1, 1), bias=false)");
  EXPECT_TRUE(plain.named_parameters().size() == 1);
  tsr::Tensor x2 = randu({1, 3, 5, 6}, 3, -1, 1, TSR_F32);
  auto r2 = conv2d_ref(values(x2), x2.sizes(), values(plain.weight), {}, 5, {3, 3, 1, 1, 0, 0, 1, 1, 1}, &os);
  EXPECT_TRUE(close(plain(x2), r2, os, 1e-5, 1e-5));

  tsr::nn::Conv2d same(3, 2, {3, 5}, {1}, tsr::nn::ConvPadding::same);
  EXPECT_EQ(same.repr(), "Conv2d(3, 2, kernel_size=(3, 5), stride=(1, 1), padding='same')");
  auto r3 =
      conv2d_ref(values(x2), x2.sizes(), values(same.weight), values(same.bias), 2, {3, 5, 1, 1, 1, 2, 1, 1, 1}, &os);
  EXPECT_TRUE(close(same(x2), r3, os, 1e-5, 1e-5));
  EXPECT_EQ(os, (Shape{1, 2, 5, 6}));
}

TEST(NnConv2d, DefaultInitGradientsAndErrors) {
  tsr::manual_seed(2);
  tsr::nn::Conv2d conv(16, 32, {3});
  double bound = 1.0 / std::sqrt(16.0 * 9);
  double mx = 0;
  for (double v : values(conv.weight)) mx = std::max(mx, std::fabs(v));
  EXPECT_LE(mx, bound);
  EXPECT_GT(mx, 0.98 * bound);
  for (double v : values(conv.bias)) EXPECT_LE(std::fabs(v), bound);
  tsr::manual_seed(2);
  tsr::nn::Conv2d again(16, 32, {3});
  EXPECT_EQ(values(again.weight), values(conv.weight));

  tsr::nn::Conv2d small(2, 3, {2});
  tsr::sum(small(randu({2, 2, 4, 4}, 4, -1, 1, TSR_F32))).backward();
  ASSERT_TRUE(small.weight.grad().defined());
  EXPECT_EQ(values(small.bias.grad()), std::vector<double>(3, 2.0 * 9));  // N * OH * OW

  EXPECT_TRUE(throws_with(
      [&] {
        small(tsr::zeros({2, 3, 4, 4}));
      },
      {"Conv2d(2, 3, kernel_size=(2, 2)", "[2, 3, 4, 4]", "[N, 2, H, W]"}));
  EXPECT_TRUE(throws_with([&] { small(tsr::zeros({2, 4})); }, {"Conv2d", "[2, 4]"}));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::Conv2d(4, 6, {3}, {1}, {0}, {1}, 4); }, {"Conv2d", "out_channels=6", "groups=4"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::Conv2d(4, 6, {3, 3, 3}); }, {"Conv2d", "kernel_size", "[3, 3, 3]"}));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::Conv2d(4, 6, {3}, {2}, tsr::nn::ConvPadding::same); }, {"Conv2d", "'same'", "stride"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::Conv2d(4, 6, {0}); }, {"Conv2d", "kernel_size"}));
}

TEST(NnConv1d, MatchesNaiveLoops) {
  tsr::manual_seed(3);
  tsr::nn::Conv1d conv(4, 2, 3, 2, 1, 2, 2);
  EXPECT_EQ(conv.weight.sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(conv.repr(), "Conv1d(4, 2, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2)");
  tsr::Tensor x = randu({3, 4, 9}, 5, -1, 1, TSR_F32);
  // A 1-D conv is a 2-D conv with H = 1.
  Shape os;
  auto ref =
      conv2d_ref(values(x), {3, 4, 1, 9}, values(conv.weight), values(conv.bias), 2, {1, 3, 1, 2, 0, 1, 1, 2, 2}, &os);
  EXPECT_TRUE(close(conv(x), ref, {3, 2, os[3]}, 1e-5, 1e-5));
  tsr::nn::Conv1d same(4, 3, 4, 1, tsr::nn::ConvPadding::same);
  EXPECT_EQ(same(x).sizes(), (Shape{3, 3, 9}));
  tsr::nn::Conv1d valid(4, 3, 4, 1, tsr::nn::ConvPadding::valid);
  EXPECT_EQ(valid(x).sizes(), (Shape{3, 3, 6}));
  EXPECT_TRUE(throws_with([&] { conv(tsr::zeros({3, 5, 9})); }, {"Conv1d", "[3, 5, 9]", "[N, 4, L]"}));
}

TEST(NnConvTranspose2d, MatchesScatterLoops) {
  tsr::manual_seed(4);
  tsr::nn::ConvTranspose2d ct(4, 6, {3, 2}, {2, 1}, {1, 0}, {1, 0}, 2);
  EXPECT_EQ(ct.weight.sizes(), (Shape{4, 3, 3, 2}));
  EXPECT_EQ(
      ct.repr(),
      "ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2)");
  double bound = 1.0 / std::sqrt(3.0 * 6);  // fan_in from weight dim 1: out/groups * k
  for (double v : values(ct.weight)) EXPECT_LE(std::fabs(v), bound);
  tsr::Tensor x = randu({2, 4, 3, 4}, 6, -1, 1, TSR_F32);
  int64_t N = 2, C = 4, H = 3, W = 4, O = 6, OH = (H - 1) * 2 - 2 + 3 + 1, OW = (W - 1) + 2;
  auto xv = values(x), w = values(ct.weight), b = values(ct.bias);
  std::vector<double> ref(static_cast<size_t>(N * O * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH * OW; ++i) ref[(n * O + o) * OH * OW + i] = b[o];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t xx = 0; xx < W; ++xx)
          for (int64_t ol = 0; ol < 3; ++ol)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 2; ++j) {
                int64_t oy = y * 2 - 1 + i, ox = xx + j, o = (c / 2) * 3 + ol;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                ref[((n * O + o) * OH + oy) * OW + ox] +=
                    xv[((n * C + c) * H + y) * W + xx] * w[((c * 3 + ol) * 3 + i) * 2 + j];
              }
  EXPECT_TRUE(close(ct(x), ref, {N, O, OH, OW}, 1e-5, 1e-5));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::ConvTranspose2d(4, 6, {3}, {1}, {0}, {1}); }, {"ConvTranspose2d", "output_padding"}));
}

TEST(NnConv2d, EmptyBatchesKeepTheirShape) {
  tsr::nn::Conv2d conv(2, 3, {3}, {1}, {1});
  EXPECT_EQ(conv(tsr::zeros({0, 2, 4, 5})).sizes(), (Shape{0, 3, 4, 5}));
  EXPECT_EQ(tsr::nn::Conv1d(2, 3, 3)(tsr::zeros({0, 2, 5})).sizes(), (Shape{0, 3, 3}));
  EXPECT_EQ(tsr::nn::ConvTranspose2d(2, 3, {3})(tsr::zeros({0, 2, 4, 4})).sizes(), (Shape{0, 3, 6, 6}));
  EXPECT_EQ(tsr::nn::MaxPool2d({2})(tsr::zeros({0, 2, 4, 4})).sizes(), (Shape{0, 2, 2, 2}));
  EXPECT_EQ(tsr::nn::AdaptiveAvgPool2d({3})(tsr::zeros({0, 2, 4, 4})).sizes(), (Shape{0, 2, 3, 3}));
  tsr::nn::BatchNorm2d bn(2);
  bn.eval();
  EXPECT_EQ(bn(tsr::zeros({0, 2, 3, 3})).sizes(), (Shape{0, 2, 3, 3}));
  EXPECT_EQ(tsr::nn::GroupNorm(1, 2)(tsr::zeros({0, 2, 3})).sizes(), (Shape{0, 2, 3}));
  EXPECT_EQ(tsr::nn::Embedding(4, 2)(tsr::zeros({0, 3}, TSR_I64)).sizes(), (Shape{0, 3, 2}));
  EXPECT_EQ(tsr::nn::Bilinear(2, 3, 4)(tsr::zeros({0, 2}), tsr::zeros({0, 3})).sizes(), (Shape{0, 4}));
  // Windows larger than the input are the op's error, naming the shapes.
  EXPECT_TRUE(throws_with([] { tsr::nn::Conv2d(1, 1, {5})(tsr::zeros({1, 1, 3, 3})); }, {"conv2d", "[1, 1, 3, 3]"}));
}

}  // namespace
