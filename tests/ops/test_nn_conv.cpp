// nn family: conv1d/conv2d/conv_transpose2d, pooling, interpolation, attention.
#include <cmath>
#include <limits>

#include "op_test.hpp"

namespace tsr {
namespace {

using namespace tsr::optest;

// Static: tsr::Op caches its handle by address.
static const Op op_max_pool2d_with_indices("max_pool2d_with_indices");
using V = std::vector<int64_t>;

// Direct float64 convolution: x [N, Ci, H, W], w [Co, Ci/G, kh, kw].
std::vector<double> conv2d_ref(const Tensor& xt, const Tensor& wt, const std::vector<double>* bias, V s, V p, V d,
                               int64_t G, Shape* out_shape) {
  auto x = values(xt), w = values(wt);
  auto xs = xt.sizes(), ws = wt.sizes();
  int64_t N = xs[0], Ci = xs[1], H = xs[2], W = xs[3], Co = ws[0], kh = ws[2], kw = ws[3];
  int64_t OH = (H + 2 * p[0] - d[0] * (kh - 1) - 1) / s[0] + 1, OW = (W + 2 * p[1] - d[1] * (kw - 1) - 1) / s[1] + 1;
  *out_shape = {N, Co, OH, OW};
  std::vector<double> out(static_cast<size_t>(N * Co * OH * OW));
  int64_t cig = Ci / G, cog = Co / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[co] : 0.0;
          int64_t g = co / cog;
          for (int64_t ci = 0; ci < cig; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ih = oh * s[0] - p[0] + i * d[0], iw = ow * s[1] - p[1] + j * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[((n * Ci + g * cig + ci) * H + ih) * W + iw] * w[((co * cig + ci) * kh + i) * kw + j];
              }
          out[((n * Co + co) * OH + oh) * OW + ow] = acc;
        }
  return out;
}

TEST(NNOpsConv, Conv2dValues) {
  struct Case {
    Shape x, w;
    V s, p, d;
    int64_t g;
  } cases[] = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {0, 1}, {1, 2}, 2},
      {{2, 2, 5, 5}, {2, 1, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 2},
      {{1, 3, 5, 7}, {5, 3, 5, 7}, {1, 1}, {0, 0}, {1, 1}, 1},
  };
  int seed = 0;
  for (const Case& c : cases) {
    Tensor x = randu(c.x, ++seed), w = randu(c.w, ++seed), b = randu({c.w[0]}, ++seed);
    auto bv = values(b);
    Shape os;
    auto ref = conv2d_ref(x, w, &bv, c.s, c.p, c.d, c.g, &os);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
      auto tol = default_tol(dt);
      Tensor y = call("conv2d", {noncontig(x.to(dt)), w.to(dt), b.to(dt), c.s, c.p, c.d, c.g});
      EXPECT_TRUE(close(y, ref, os, tol.first * 10, tol.second * 10));
    }
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return call("conv2d", {in[0], in[1], in[2], c.s, c.p, c.d, c.g});
        },
        {x, w, b}));
  }
  // unbatched, no bias
  Tensor x = randu({3, 5, 5}, 50), w = randu({2, 3, 3, 3}, 51);
  Shape os;
  auto ref = conv2d_ref(x.unsqueeze(0), w, nullptr, {1, 1}, {0, 0}, {1, 1}, 1, &os);
  EXPECT_TRUE(close(call("conv2d", {x, w}), ref, {2, 3, 3}, 1e-10, 1e-10));
  // empty batch
  EXPECT_EQ(call("conv2d", {randu({0, 3, 5, 5}, 1), w, none, 1, 1}).sizes(), (Shape{0, 2, 5, 5}));
  EXPECT_EQ(call("conv_transpose2d", {randu({0, 2, 4, 4}, 1), randu({2, 3, 3, 3}, 2)}).sizes(), (Shape{0, 3, 6, 6}));
  EXPECT_EQ(call("max_pool2d", {randu({0, 3, 4, 4}, 1), 2}).sizes(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(call("adaptive_avg_pool2d", {randu({0, 3, 4, 4}, 1), V{2, 2}}).sizes(), (Shape{0, 3, 2, 2}));
  // bad input
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv2d", {randu({1, 4, 5, 5}, 1), randu({2, 3, 3, 3}, 2)});
      },
      {"conv2d", "[1, 4, 5, 5]", "[2, 3, 3, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv2d", {randu({1, 3, 2, 2}, 1), randu({2, 3, 3, 3}, 2)});
      },
      {"conv2d", "larger than the padded input"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv2d", {randu({1, 4, 5, 5}, 1), randu({3, 2, 3, 3}, 2), none, 1, 0, 1, 2});
      },
      {"conv2d", "groups=2"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv2d", {randu({1, 3, 5, 5}, 1), randu({2, 3, 3, 3}, 2), randu({3}, 3)});
      },
      {"conv2d", "bias", "[3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv2d", {randu({1, 3, 5, 5}, 1), randu({2, 3, 3, 3}, 2, -1, 1, TSR_F32)});
      },
      {"conv2d", "float64", "float32"}));
}

TEST(NNOpsConv, Conv1dAndSamePadding) {
  Tensor x = randu({2, 4, 9}, 60), w = randu({6, 2, 3}, 61), b = randu({6}, 62);
  Shape os;
  auto bv = values(b);
  auto ref = conv2d_ref(x.unsqueeze(2), w.unsqueeze(2), &bv, {1, 2}, {0, 1}, {1, 2}, 2, &os);
  EXPECT_TRUE(close(call("conv1d", {x, w, b, 2, 1, 2, 2}), ref, {os[0], os[1], os[3]}, 1e-10, 1e-10));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("conv1d", {in[0], in[1], in[2], 1, 1, 1, 2});
      },
      {x, w, b}));
  // 'same' with an even kernel: PyTorch pads total d*(k-1) = 3 as 1 left, 2 right
  Tensor x2 = randu({1, 2, 6, 5}, 63), w2 = randu({3, 2, 4, 3}, 64);
  Tensor same = call("conv2d_padding", {x2, w2, none, 1, "same"});
  EXPECT_EQ(same.sizes(), (Shape{1, 3, 6, 5}));
  // reference: pad 2 symmetric then drop the first row == pad (1 left, 2 right)
  auto full = conv2d_ref(x2, w2, nullptr, {1, 1}, {2, 1}, {1, 1}, 1, &os);  // [1, 3, 7, 5]
  std::vector<double> expect;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t h = 1; h < 7; ++h)
      for (int64_t ww = 0; ww < 5; ++ww) expect.push_back(full[(c * 7 + h) * 5 + ww]);
  EXPECT_TRUE(close(same, expect, {1, 3, 6, 5}, 1e-10, 1e-10));
  EXPECT_EQ(call("conv1d_padding", {x, w, b, 1, "valid", 1, 2}).sizes(), (Shape{2, 6, 7}));
  EXPECT_EQ(call("conv1d_padding", {x, w, b, 1, "same", 2, 2}).sizes(), (Shape{2, 6, 9}));
  EXPECT_TRUE(throws_with([&] { call("conv2d_padding", {x2, w2, none, 2, "same"}); }, {"conv2d_padding", "strided"}));
  EXPECT_TRUE(throws_with([&] { call("conv2d_padding", {x2, w2, none, 1, "full"}); }, {"conv2d_padding", "full"}));
}

TEST(NNOpsConv, ConvTranspose2d) {
  // conv_transpose2d is the adjoint of conv2d: <convT(y, w), x> == <y, conv2d(x, w)>
  Tensor x = randu({2, 4, 7, 6}, 70), w = randu({4, 3, 3, 2}, 71);
  V s{2, 1}, p{1, 0}, d{1, 2};
  int64_t G = 2;  // conv weight [Co=4, Ci/G=... ] viewed as transpose weight [Cin=4, Cout/G, kh, kw]
  Tensor wc = randu({4, 3, 3, 2}, 72);  // conv2d: Co = 4, Ci/G = 3, so Ci = 6
  Tensor xc = randu({2, 6, 7, 6}, 73);
  Tensor y = call("conv2d", {xc, wc, none, s, p, d, G});
  Tensor yt = randu(y.sizes(), 74);
  Tensor back = call("conv_transpose2d", {yt, wc, none, s, p, V{0, 0}, G, d});
  ASSERT_EQ(back.sizes(), (Shape{2, 6, 7, 6}));
  auto a1 = values(back), a2 = values(xc), b1 = values(y), b2 = values(yt);
  double l = 0, r = 0;
  for (size_t i = 0; i < a1.size(); ++i) l += a1[i] * a2[i];
  for (size_t i = 0; i < b1.size(); ++i) r += b1[i] * b2[i];
  EXPECT_NEAR(l, r, 1e-9 * std::fabs(r) + 1e-9);
  Tensor b = randu({6}, 75);
  EXPECT_EQ(call("conv_transpose2d", {x, w, randu({6}, 76), V{2, 2}, V{1, 1}, V{1, 1}, 2}).sizes(),
            (Shape{2, 6, 14, 11}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("conv_transpose2d", {in[0], in[1], in[2], V{2, 1}, V{1, 0}, V{1, 0}, 2, V{1, 1}});
      },
      {randu({1, 4, 3, 4}, 77), randu({4, 3, 2, 3}, 78), b}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv_transpose2d", {x, w, none, 1, 0, 1});
      },
      {"conv_transpose2d", "output_padding"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("conv_transpose2d", {x, randu({3, 3, 3, 3}, 1)});
      },
      {"conv_transpose2d", "[3, 3, 3, 3]"}));
}

// Windows that lie inside the plane (no padding; the CPU's branch-free walks: fixed 2x2 and 3x3
// windows, dilated too, and any other size) against a loop over
// each window, for every float dtype: small integer values make ties (the first maximum's index
// wins) and NaNs win over numbers (the first NaN), kernel/stride/dilation differ per axis, and
// ceil_mode adds a window that leaves the plane (the generic walk).
TEST(NNOpsPool, MaxPool2dWindowsInsideThePlane) {
  const int64_t H = 9, W = 11;
  Tensor base = randint({2, 3, H, W}, 81, 0, 4).to(TSR_F64);
  std::vector<double> bv = values(base);
  for (size_t i : {size_t(5), size_t(40), size_t(41), size_t(300), size_t(500)}) bv[i] = std::nan("");
  base = from_vector(bv, {2, 3, H, W});
  struct Cfg {
    V k, s, d;
    bool ceil;
  };
  for (const Cfg& c : {Cfg{{2, 2}, {2, 2}, {1, 1}, false}, Cfg{{3, 3}, {1, 1}, {1, 1}, false},
                       Cfg{{3, 2}, {2, 3}, {2, 1}, false}, Cfg{{2, 2}, {2, 2}, {1, 1}, true},
                       Cfg{{1, 1}, {1, 2}, {1, 1}, false}, Cfg{{3, 3}, {2, 2}, {2, 2}, false}})
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " k " + std::to_string(c.k[0]) + "x" + std::to_string(c.k[1]) +
                   " s " + std::to_string(c.s[0]) + "x" + std::to_string(c.s[1]) + (c.ceil ? " ceil" : ""));
      auto r = call_multi(op_max_pool2d_with_indices, {base.to(dt), c.k, c.s, V{0, 0}, c.d, c.ceil});
      const std::vector<double> out = values(r[0]), idx = values(r[1]);
      const int64_t OH = r[0].size(2), OW = r[0].size(3);
      for (int64_t pl = 0; pl < 6; ++pl)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double best = -std::numeric_limits<double>::infinity();
            int64_t bi = -1;
            for (int64_t i = 0; i < c.k[0]; ++i)
              for (int64_t j = 0; j < c.k[1]; ++j) {
                const int64_t ih = oh * c.s[0] + i * c.d[0], iw = ow * c.s[1] + j * c.d[1];
                if (ih >= H || iw >= W) continue;
                const double v = bv[size_t(pl * H * W + ih * W + iw)];
                if (bi < 0 || v > best || (std::isnan(v) && !std::isnan(best))) best = v, bi = ih * W + iw;
              }
            const size_t o = size_t((pl * OH + oh) * OW + ow);
            ASSERT_EQ(idx[o], bi) << "plane " << pl << " (" << oh << ", " << ow << ")";
            if (std::isnan(best))
              ASSERT_TRUE(std::isnan(out[o]));
            else
              ASSERT_EQ(out[o], best);
          }
    }
}

TEST(NNOpsPool, MaxPool2d) {
  Tensor x = randu({2, 3, 7, 6}, 80);
  auto xv = values(x);
  for (bool ceil : {false, true}) {
    V k{3, 2}, s{2, 2}, p{1, 1}, d{1, 2};
    auto r = call_multi(op_max_pool2d_with_indices, {noncontig(x), k, s, p, d, ceil});
    auto out = values(r[0]), idx = values(r[1]);
    auto os = r[0].sizes();
    int64_t OH = os[2], OW = os[3];
    EXPECT_EQ(OH, 4);
    EXPECT_EQ(OW, ceil ? 4 : 3);
    for (int64_t pl = 0; pl < 6; ++pl)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t bi = -1;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 2; ++j) {
              int64_t ih = oh * 2 - 1 + i, iw = ow * 2 - 1 + 2 * j;
              if (ih < 0 || ih >= 7 || iw < 0 || iw >= 6) continue;
              double v = xv[pl * 42 + ih * 6 + iw];
              if (v > best) best = v, bi = ih * 6 + iw;
            }
          size_t o = (pl * OH + oh) * OW + ow;
          EXPECT_EQ(out[o], best);
          EXPECT_EQ(idx[o], bi);
        }
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return call("max_pool2d", {in[0], k, s, p, d, ceil});
        },
        {x}));
  }
  EXPECT_EQ(call("max_pool2d", {x.to(TSR_F32), 2}).sizes(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(call("max_pool2d", {randu({3, 4, 4}, 1), 2}).sizes(), (Shape{3, 2, 2}));
  EXPECT_TRUE(throws_with([&] { call("max_pool2d", {x, 2, 2, 2}); }, {"max_pool2d", "half of the effective kernel"}));
  EXPECT_TRUE(throws_with([&] { call("max_pool2d", {x, 8}); }, {"max_pool2d", "too small", "[2, 3, 7, 6]"}));
}

TEST(NNOpsPool, AvgAndAdaptivePool2d) {
  Tensor x = randu({1, 2, 5, 6}, 90);
  auto xv = values(x);
  for (bool include : {true, false})
    for (bool ceil : {false, true}) {
      Tensor y = call("avg_pool2d", {x, V{3, 3}, V{2, 2}, V{1, 1}, ceil, include});
      auto os = y.sizes();
      std::vector<double> ref;
      for (int64_t pl = 0; pl < 2; ++pl)
        for (int64_t oh = 0; oh < os[2]; ++oh)
          for (int64_t ow = 0; ow < os[3]; ++ow) {
            int64_t h0 = oh * 2 - 1, w0 = ow * 2 - 1;
            int64_t h1 = std::min<int64_t>(h0 + 3, 5 + 1), w1 = std::min<int64_t>(w0 + 3, 6 + 1);
            double pool = static_cast<double>((h1 - h0) * (w1 - w0)), s = 0;
            int64_t cnt = 0;
            for (int64_t h = std::max<int64_t>(h0, 0); h < std::min<int64_t>(h1, 5); ++h)
              for (int64_t w = std::max<int64_t>(w0, 0); w < std::min<int64_t>(w1, 6); ++w)
                s += xv[pl * 30 + h * 6 + w], ++cnt;
            ref.push_back(s / (include ? pool : static_cast<double>(cnt)));
          }
      EXPECT_TRUE(close(y, ref, os, 1e-12, 1e-12)) << include << ceil;
      EXPECT_TRUE(gradcheck(
          [&](const std::vector<Tensor>& in) {
            return call("avg_pool2d", {in[0], V{3, 3}, V{2, 2}, V{1, 1}, ceil, include});
          },
          {x}));
    }
  EXPECT_TRUE(close(call("avg_pool2d", {x, 2, none, 0, false, true, 3}).slice(3, 0, 1).slice(2, 0, 1).reshape({2}),
                    {(xv[0] + xv[1] + xv[6] + xv[7]) / 3, (xv[30] + xv[31] + xv[36] + xv[37]) / 3}, {2}, 1e-12, 1e-12));
  // adaptive: 5 -> 3 windows [0,2) [1,4) [3,5)
  Tensor ya = call("adaptive_avg_pool2d", {x, V{3, 1}});
  std::vector<double> aref;
  int64_t hs[3][2] = {{0, 2}, {1, 4}, {3, 5}};
  for (int64_t pl = 0; pl < 2; ++pl)
    for (auto& hw : hs) {
      double s = 0;
      for (int64_t h = hw[0]; h < hw[1]; ++h)
        for (int64_t w = 0; w < 6; ++w) s += xv[pl * 30 + h * 6 + w];
      aref.push_back(s / static_cast<double>((hw[1] - hw[0]) * 6));
    }
  EXPECT_TRUE(close(ya, aref, {1, 2, 3, 1}, 1e-12, 1e-12));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("adaptive_avg_pool2d", {in[0], V{4, 3}});
      },
      {x}));
  EXPECT_TRUE(throws_with([&] { call("avg_pool2d", {randmask({1, 1, 4, 4}, 1), 2}); }, {"avg_pool2d", "bool"}));
  // Output sizes whose host matrices cannot exist are refused (in * out wrapped and the matrix
  // was under-allocated: a segfault in upsample_bilinear2d, INTERNAL in adaptive_avg_pool2d).
  const int64_t huge = int64_t{1} << 62;
  EXPECT_TRUE(throws_with([&] { call("adaptive_avg_pool2d", {x, V{huge, 1}}); }, {"adaptive_avg_pool2d", "too large"}));
  EXPECT_TRUE(throws_with([&] { call("adaptive_avg_pool2d", {x, V{INT64_MAX, 1}}); }, {"adaptive_avg_pool2d"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("upsample_bilinear2d", {x, V{huge}, false, 0.0, none});
      },
      {"upsample_bilinear2d", "too large"}));
  EXPECT_TRUE(throws_with([&] { call("upsample_nearest2d", {x, V{3, huge}}); }, {"upsample_nearest2d", "too large"}));
}

// Integer input (PyTorch's CPU kernel takes int64): exact window sums divided with truncation
// toward zero, for every integer dtype, negative values, ceil mode's partial windows, both
// padding rules, divisor_override, strided and unbatched input.
TEST(NNOpsPool, AvgPool2dOnIntegers) {
  const int64_t H = 5, W = 7;
  Tensor base = randint({2, 2, H, W}, 91, -50, 50);
  auto xv = values(base);
  for (tsr_dtype_t dt : {TSR_I64, TSR_I32, TSR_I16, TSR_I8})
    for (bool include : {true, false})
      for (bool ceil : {false, true})
        for (int64_t div : {int64_t{0}, int64_t{4}}) {
          Arg d = div ? Arg(div) : Arg(none);
          Tensor x = dt == TSR_I32 ? noncontig(base.to(dt)) : base.to(dt);
          Tensor y = call("avg_pool2d", {x, V{3, 2}, V{2, 3}, V{1, 1}, ceil, include, d});
          EXPECT_EQ(y.dtype(), dt);
          auto os = y.sizes();
          std::vector<double> ref;
          for (int64_t pl = 0; pl < 4; ++pl)
            for (int64_t oh = 0; oh < os[2]; ++oh)
              for (int64_t ow = 0; ow < os[3]; ++ow) {
                int64_t h0 = oh * 2 - 1, w0 = ow * 3 - 1;
                int64_t h1 = std::min<int64_t>(h0 + 3, H + 1), w1 = std::min<int64_t>(w0 + 2, W + 1);
                int64_t pool = (h1 - h0) * (w1 - w0), sum = 0, cnt = 0;
                for (int64_t h = std::max<int64_t>(h0, 0); h < std::min<int64_t>(h1, H); ++h)
                  for (int64_t w = std::max<int64_t>(w0, 0); w < std::min<int64_t>(w1, W); ++w)
                    sum += static_cast<int64_t>(xv[pl * H * W + h * W + w]), ++cnt;
                ref.push_back(static_cast<double>(sum / (div ? div : include ? pool : cnt)));
              }
          EXPECT_TRUE(close(y, ref, os, 0, 0)) << dtype_name(dt) << include << ceil << div;
        }
  Tensor u = call("avg_pool2d", {from_vector<int64_t>({-3, -4, 7, 2}, {1, 2, 2}), 2});
  EXPECT_TRUE(close(u, std::vector<double>{0}, {1, 1, 1}, 0, 0));  // (-3 - 4 + 7 + 2) / 4 = 0.5 -> 0
  Tensor v = call("avg_pool2d", {from_vector<int64_t>({-3, -4, -7, 2}, {1, 1, 2, 2}), 2});
  EXPECT_TRUE(close(v, std::vector<double>{-3}, {1, 1, 1, 1}, 0, 0));  // -12 / 4
  Tensor w = call("avg_pool2d", {from_vector<int64_t>({-3, -4, -6, 2}, {1, 1, 2, 2}), 2});
  EXPECT_TRUE(close(w, std::vector<double>{-2}, {1, 1, 1, 1}, 0, 0));  // -11 / 4 = -2.75 -> -2
}

TEST(NNOpsResample, NearestAndBilinear) {
  Tensor x = randu({1, 2, 3, 4}, 100);
  auto xv = values(x);
  Tensor n = call("interpolate", {x, V{6, 3}});
  std::vector<double> nref;
  for (int64_t pl = 0; pl < 2; ++pl)
    for (int64_t oh = 0; oh < 6; ++oh)
      for (int64_t ow = 0; ow < 3; ++ow) {
        int64_t ih = static_cast<int64_t>(std::floor(oh * 3.0 / 6)),
                iw = static_cast<int64_t>(std::floor(ow * 4.0 / 3));
        nref.push_back(xv[pl * 12 + ih * 4 + iw]);
      }
  EXPECT_TRUE(close(n, nref, {1, 2, 6, 3}, 0, 0));
  for (bool align : {false, true}) {
    Tensor b = call("interpolate", {x, V{5, 7}, none, "bilinear", align});
    std::vector<double> bref;
    auto src = [&](int64_t o, int64_t in, int64_t out) {
      if (align) return out > 1 ? o * double(in - 1) / double(out - 1) : 0.0;
      return std::max(0.0, (o + 0.5) * double(in) / double(out) - 0.5);
    };
    for (int64_t pl = 0; pl < 2; ++pl)
      for (int64_t oh = 0; oh < 5; ++oh)
        for (int64_t ow = 0; ow < 7; ++ow) {
          double sh = src(oh, 3, 5), sw = src(ow, 4, 7);
          int64_t h0 = std::min<int64_t>(int64_t(sh), 2), w0 = std::min<int64_t>(int64_t(sw), 3);
          int64_t h1 = std::min<int64_t>(h0 + 1, 2), w1 = std::min<int64_t>(w0 + 1, 3);
          double lh = sh - h0, lw = sw - w0;
          auto at = [&](int64_t h, int64_t w) { return xv[pl * 12 + h * 4 + w]; };
          bref.push_back((1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) +
                         lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1)));
        }
    EXPECT_TRUE(close(b, bref, {1, 2, 5, 7}, 1e-12, 1e-12)) << align;
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return call("upsample_bilinear2d", {in[0], V{5, 2}, align});
        },
        {x}));
  }
  EXPECT_EQ(call("interpolate", {x, none, 2.0}).sizes(), (Shape{1, 2, 6, 8}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("upsample_nearest2d", {in[0], V{4, 9}});
      },
      {x}));
  EXPECT_TRUE(throws_with([&] { call("interpolate", {x}); }, {"interpolate", "exactly one"}));
  EXPECT_TRUE(throws_with([&] { call("interpolate", {x, V{2, 2}, none, "bicubic"}); }, {"interpolate", "bicubic"}));
}

TEST(NNOpsAttention, ScaledDotProduct) {
  const int64_t B = 2, L = 3, S = 4, E = 5, Ev = 2;
  Tensor q = randu({B, L, E}, 110), k = randu({B, S, E}, 111), v = randu({B, S, Ev}, 112);
  Tensor mask = randmask({L, S}, 113, 0.7);
  auto qv = values(q), kv = values(k), vv = values(v), mv = values(mask);
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<double> ref;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double m = -1e300, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e) dot += qv[(b * L + i) * E + e] * kv[(b * S + j) * E + e];
          s[j] = dot / std::sqrt(double(E));
          bool keep = variant == 0 ? true : variant == 1 ? mv[i * S + j] != 0 : j <= i;
          if (!keep) s[j] = -INFINITY;
          m = std::max(m, s[j]);
        }
        for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - m);
        for (int64_t c = 0; c < Ev; ++c) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) o += std::exp(s[j] - m) / sum * vv[(b * S + j) * Ev + c];
          ref.push_back(o);
        }
      }
    Tensor out = variant == 0   ? call("scaled_dot_product_attention", {q, k, v})
                 : variant == 1 ? call("scaled_dot_product_attention", {q, k, v, mask})
                                : call("scaled_dot_product_attention", {q, k, v, none, 0.0, true});
    bool all_masked = false;
    if (variant == 1)
      for (int64_t i = 0; i < L; ++i) {
        bool any = false;
        for (int64_t j = 0; j < S; ++j) any |= mv[i * S + j] != 0;
        all_masked |= !any;
      }
    if (!all_masked) {
      EXPECT_TRUE(close(out, ref, {B, L, Ev}, 1e-10, 1e-12)) << variant;
    }
  }
  Tensor fmask = randu({L, S}, 114);
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("scaled_dot_product_attention", {in[0], in[1], in[2], in[3], 0.0, false, 0.7});
      },
      {q, k, v, fmask}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("scaled_dot_product_attention", {in[0], in[1], in[2], none, 0.0, true});
      },
      {q, k, v}));
  // dropout: same seed, same result; gradient consistent with that mask
  manual_seed(5);
  Tensor d1 = call("scaled_dot_product_attention", {q, k, v, none, 0.5});
  manual_seed(5);
  Tensor d2 = call("scaled_dot_product_attention", {q, k, v, none, 0.5});
  EXPECT_TRUE(close(d1, d2, 0, 0));
  EXPECT_TRUE(throws_with(
      [&] {
        call("scaled_dot_product_attention", {q, randu({B, S, 4}, 1), v});
      },
      {"scaled_dot_product_attention", "[2, 4, 4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("scaled_dot_product_attention", {q, k, v, mask, 0.0, true});
      },
      {"scaled_dot_product_attention", "is_causal"}));
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {
using namespace tsr::optest;

// Every floating dtype against the op's own float64 result (itself checked against references
// above), with per-dtype tolerances scaled for accumulation over windows / classes.
TEST(NNOpsDtypes, ReducedPrecisionMatchesFloat64) {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  struct Case {
    const char* name;
    std::vector<Tensor> inputs;
    Fn fn;
  };
  Tensor t = from_vector<int64_t>({2, 0, 1});
  std::vector<Case> cases = {
      {"conv2d",
       {randu({1, 2, 5, 5}, 1, -1, 1), randu({3, 2, 3, 3}, 2, -1, 1)},
       [](const std::vector<Tensor>& in) {
         return call("conv2d", {in[0], in[1], none, 1, 1});
       }},
      {"conv_transpose2d",
       {randu({1, 2, 3, 3}, 3, -1, 1), randu({2, 3, 2, 2}, 4, -1, 1)},
       [](const std::vector<Tensor>& in) {
         return call("conv_transpose2d", {in[0], in[1], none, 2});
       }},
      {"max_pool2d",
       {randu({1, 2, 5, 5}, 5)},
       [](const std::vector<Tensor>& in) {
         return call("max_pool2d", {in[0], 2, 1, 1});
       }},
      {"avg_pool2d",
       {randu({1, 2, 5, 5}, 6)},
       [](const std::vector<Tensor>& in) {
         return call("avg_pool2d", {in[0], 3, 2, 1});
       }},
      {"adaptive_avg_pool2d",
       {randu({1, 2, 5, 5}, 7)},
       [](const std::vector<Tensor>& in) {
         return call("adaptive_avg_pool2d", {in[0], std::vector<int64_t>{2, 3}});
       }},
      {"upsample_bilinear2d",
       {randu({1, 2, 3, 3}, 8)},
       [](const std::vector<Tensor>& in) {
         return call("upsample_bilinear2d", {in[0], std::vector<int64_t>{5, 4}, false});
       }},
      {"cross_entropy",
       {randu({3, 5}, 9)},
       [t](const std::vector<Tensor>& in) {
         return call("cross_entropy", {in[0], t, none, "none"});
       }},
      {"group_norm",
       {randu({2, 4, 3}, 10)},
       [](const std::vector<Tensor>& in) {
         return call("group_norm", {in[0], 2});
       }},
      {"scaled_dot_product_attention",
       {randu({2, 3, 4}, 11), randu({2, 5, 4}, 12), randu({2, 5, 3}, 13)},
       [](const std::vector<Tensor>& in) {
         return call("scaled_dot_product_attention", {in[0], in[1], in[2]});
       }},
  };
  for (const Case& c : cases) {
    for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16}) {
      std::vector<Tensor> in;
      for (const Tensor& x : c.inputs) in.push_back(x.to(dt));
      // inputs rounded to dt are the reference's inputs too
      std::vector<Tensor> back;
      for (const Tensor& x : in) back.push_back(x.to(TSR_F64));
      Tensor r = c.fn(in);
      EXPECT_EQ(r.dtype(), dt) << c.name;
      auto tol = default_tol(dt);
      EXPECT_TRUE(close(r, c.fn(back), tol.first * 8, tol.second * 8)) << c.name << " " << dtype_name(dt);
    }
  }
}

}  // namespace
}  // namespace tsr
