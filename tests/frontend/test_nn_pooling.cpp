// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten, Unflatten against naive loops; a small CNN
// (Sequential of mixed layers with buffers) for gradients and a state_dict round trip.
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

// Generic 2-D window reduction over [P, H, W] planes (P = N*C); pad cells are skipped.
template <class F>
std::vector<double> pool_ref(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, int64_t k, int64_t s,
                             int64_t p, int64_t OH, int64_t OW, F reduce) {
  std::vector<double> out;
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xx = 0; xx < OW; ++xx) {
        std::vector<double> win;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) {
            int64_t iy = y * s - p + i, ix = xx * s - p + j;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W) win.push_back(x[(pl * H + iy) * W + ix]);
          }
        out.push_back(reduce(win));
      }
  return out;
}

TEST(NnPooling, MaxAndAvgMatchLoops) {
  tsr::Tensor x = randu({2, 3, 5, 7}, 1, -2, 2, TSR_F32);
  auto xv = values(x);
  tsr::nn::MaxPool2d mp({2});
  EXPECT_EQ(mp.stride, (Shape{2, 2}));
  EXPECT_EQ(mp.repr(),
            "MaxPool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=false)");
  auto mx = [](const std::vector<double>& w) { return *std::max_element(w.begin(), w.end()); };
  EXPECT_TRUE(close(mp(x), pool_ref(xv, 6, 5, 7, 2, 2, 0, 2, 3, mx), {2, 3, 2, 3}, 0, 0));
  auto [vals, idx] = mp.forward_with_indices(x);
  auto iv = values(idx);
  auto vv = values(vals);
  for (size_t i = 0; i < iv.size(); ++i) ASSERT_EQ(vv[i], xv[(i / 6) * 35 + static_cast<size_t>(iv[i])]);

  tsr::nn::MaxPool2d mp3({3}, Shape{2}, {1});
  EXPECT_TRUE(close(mp3(x), pool_ref(xv, 6, 5, 7, 3, 2, 1, 3, 4, mx), {2, 3, 3, 4}, 0, 0));
  // Unbatched [C, H, W].
  EXPECT_EQ(mp3(x.select(0, 0)).sizes(), (Shape{3, 3, 4}));

  // count_include_pad=true divides by the full window (k*k) even where it overlaps padding.
  tsr::nn::AvgPool2d ap({3}, Shape{2}, {1});
  auto avg9 = [](const std::vector<double>& w) {
    double s = 0;
    for (double v : w) s += v;
    return s / 9;
  };
  EXPECT_TRUE(close(ap(x), pool_ref(xv, 6, 5, 7, 3, 2, 1, 3, 4, avg9), {2, 3, 3, 4}, 1e-5, 1e-6));
  tsr::nn::AvgPool2d ap_ex({3}, Shape{2}, {1}, false, false);
  auto avgn = [](const std::vector<double>& w) {
    double s = 0;
    for (double v : w) s += v;
    return s / w.size();
  };
  EXPECT_TRUE(close(ap_ex(x), pool_ref(xv, 6, 5, 7, 3, 2, 1, 3, 4, avgn), {2, 3, 3, 4}, 1e-5, 1e-6));

  EXPECT_TRUE(throws_with([&] { mp(tsr::zeros({5, 7})); }, {"MaxPool2d(kernel_size=(2, 2)", "[5, 7]"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::MaxPool2d({0}); }, {"MaxPool2d", "kernel_size=(0, 0)"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::AvgPool2d({2}, Shape{1, 2, 3}); }, {"AvgPool2d", "stride", "[1, 2, 3]"}));
}

TEST(NnPooling, AdaptiveAvgUsesPyTorchBins) {
  tsr::Tensor x = randu({1, 2, 5, 7}, 2, -2, 2, TSR_F64);
  auto xv = values(x);
  tsr::nn::AdaptiveAvgPool2d aap({2, 3});
  EXPECT_EQ(aap.repr(), "AdaptiveAvgPool2d(output_size=(2, 3))");
  std::vector<double> ref;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        int y0 = (i * 5) / 2, y1 = ((i + 1) * 5 + 1) / 2, x0 = (j * 7) / 3, x1 = ((j + 1) * 7 + 2) / 3;
        double s = 0;
        for (int y = y0; y < y1; ++y)
          for (int xx = x0; xx < x1; ++xx) s += xv[(c * 5 + y) * 7 + xx];
        ref.push_back(s / ((y1 - y0) * (x1 - x0)));
      }
  EXPECT_TRUE(close(aap(x), ref, {1, 2, 2, 3}, 1e-12, 1e-12));
  EXPECT_EQ(tsr::nn::AdaptiveAvgPool2d({1})(x).sizes(), (Shape{1, 2, 1, 1}));
  EXPECT_TRUE(throws_with([] { tsr::nn::AdaptiveAvgPool2d({0, 2}); }, {"AdaptiveAvgPool2d", "output_size"}));
}

TEST(NnFlatten, FlattenAndUnflatten) {
  tsr::Tensor x = randu({2, 3, 4, 5}, 3, -1, 1, TSR_F32);
  tsr::nn::Flatten f;
  EXPECT_EQ(f.repr(), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(f(x).sizes(), (Shape{2, 60}));
  EXPECT_EQ(values(f(x)), values(x));
  EXPECT_EQ(tsr::nn::Flatten(0, 1)(x).sizes(), (Shape{6, 4, 5}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::Flatten(2, 1)(x); }, {"Flatten(start_dim=2, end_dim=1)", "[2, 3, 4, 5]"}));
  tsr::nn::Unflatten u(1, {3, -1});
  EXPECT_EQ(u(tsr::zeros({2, 12})).sizes(), (Shape{2, 3, 4}));
  EXPECT_TRUE(throws_with([&] { u(tsr::zeros({2, 10})); }, {"Unflatten", "[2, 10]", "[3, -1]"}));
}

TEST(NnPooling, SmallCnnTrainsGradientsAndRoundTripsStateDict) {
  using ModPtr = std::shared_ptr<tsr::nn::Module>;
  auto make = [] {
    return std::make_shared<tsr::nn::Sequential>(
        std::vector<ModPtr>{std::make_shared<tsr::nn::Conv2d>(1, 4, Shape{3}, Shape{1}, Shape{1}),
                            std::make_shared<tsr::nn::BatchNorm2d>(4), std::make_shared<tsr::nn::ReLU>(),
                            std::make_shared<tsr::nn::MaxPool2d>(Shape{2}), std::make_shared<tsr::nn::Flatten>(),
                            std::make_shared<tsr::nn::Linear>(4 * 3 * 3, 5)});
  };
  tsr::manual_seed(7);
  auto net = make();
  tsr::Tensor x = randu({4, 1, 6, 6}, 4, -1, 1, TSR_F32);
  tsr::Tensor y = (*net)(x);
  EXPECT_EQ(y.sizes(), (Shape{4, 5}));
  tsr::nn::cross_entropy(y, tsr::from_vector(std::vector<int64_t>{0, 1, 2, 3}, {4})).backward();
  for (auto& kv : net->named_parameters()) EXPECT_TRUE(kv.second.grad().defined()) << kv.first;
  EXPECT_EQ(net->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                      "1.num_batches_tracked", "5.weight", "5.bias"}));
  tsr::manual_seed(8);
  auto other = make();
  other->load_state_dict(net->state_dict());
  net->eval();
  other->eval();
  EXPECT_EQ(values((*other)(x)), values((*net)(x)));
  EXPECT_EQ(other->at<tsr::nn::BatchNorm2d>(1)->num_batches_tracked.item<int64_t>(), 1);
}

}  // namespace
