// Linear, Bilinear, Embedding, Dropout and activation modules: forward against float64
// references computed here from each layer's own parameters, PyTorch's names, shapes and default
// init, gradients to every parameter, and errors naming the layer and the shapes.
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

std::vector<std::string> names(const std::vector<std::pair<std::string, tsr::Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& kv : v) out.push_back(kv.first);
  return out;
}

// y[n, o] = sum_i x[n, i] w[o, i] + b[o] in float64.
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                               int64_t n, int64_t in, int64_t out) {
  std::vector<double> y(static_cast<size_t>(n * out));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

TEST(NnLinear, ForwardMatchesLoopsOnAnyLeadingShape) {
  tsr::manual_seed(1);
  tsr::nn::Linear lin(5, 3);
  EXPECT_EQ(names(lin.named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(lin.weight.sizes(), (Shape{3, 5}));
  EXPECT_EQ(lin.bias.sizes(), (Shape{3}));
  EXPECT_EQ(lin.extra_repr(), "in_features=5, out_features=3, bias=true");
  EXPECT_EQ(lin.repr(), "Linear(in_features=5, out_features=3, bias=true)");
  for (Shape s : {Shape{4, 5}, Shape{2, 3, 5}, Shape{5}, Shape{0, 5}}) {
    tsr::Tensor x = randu(s, 7, -2, 2, TSR_F32);
    int64_t n = x.numel() / 5;
    Shape ys = s;
    ys.back() = 3;
    EXPECT_TRUE(close(lin(x), linear_ref(values(x), values(lin.weight), values(lin.bias), n, 5, 3), ys, 1e-5, 1e-5));
  }
  tsr::nn::Linear nb(4, 2, false);
  EXPECT_FALSE(nb.bias.defined());
  EXPECT_EQ(names(nb.named_parameters()), (std::vector<std::string>{"weight"}));
  tsr::Tensor x = randu({3, 4}, 8, -2, 2, TSR_F32);
  EXPECT_TRUE(close(nb(x), linear_ref(values(x), values(nb.weight), {}, 3, 4, 2), {3, 2}, 1e-5, 1e-5));
}

TEST(NnLinear, DefaultInitBoundsAndSeedReproducibility) {
  tsr::manual_seed(3);
  tsr::nn::Linear a(400, 300);
  double bound = 1.0 / 20.0;
  auto w = values(a.weight), b = values(a.bias);
  double mx = 0, s2 = 0;
  for (double v : w) {
    mx = std::max(mx, std::fabs(v));
    s2 += v * v;
  }
  EXPECT_LE(mx, bound);
  EXPECT_GT(mx, 0.99 * bound);
  EXPECT_NEAR(std::sqrt(s2 / w.size()), bound / std::sqrt(3.0), 0.01 * bound);
  for (double v : b) EXPECT_LE(std::fabs(v), bound);
  tsr::manual_seed(3);
  tsr::nn::Linear c(400, 300);
  EXPECT_EQ(values(c.weight), w);
  EXPECT_EQ(values(c.bias), b);
}

TEST(NnLinear, GradientsReachWeightAndBias) {
  tsr::manual_seed(4);
  tsr::nn::Linear lin(3, 2);
  tsr::Tensor x = randu({4, 3}, 9, -1, 1, TSR_F32);
  tsr::sum(lin(x)).backward();
  // d/dW sum(xW^T+b) = column sums of x for every output row; d/db = batch size.
  auto xv = values(x);
  std::vector<double> gw(6), gb(2, 4.0);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int n = 0; n < 4; ++n) gw[o * 3 + i] += xv[n * 3 + i];
  EXPECT_TRUE(close(lin.weight.grad(), gw, {2, 3}, 1e-5, 1e-6));
  EXPECT_TRUE(close(lin.bias.grad(), gb, {2}, 1e-6, 1e-6));
}

TEST(NnLinear, BadShapesNameTheLayerAndShapes) {
  tsr::nn::Linear lin(5, 3);
  EXPECT_TRUE(throws_with([&] { lin(tsr::zeros({2, 4})); }, {"Linear(in_features=5", "[2, 4]", "in_features=5"}));
  EXPECT_TRUE(throws_with([&] { lin(tsr::zeros({})); }, {"Linear", "[]"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::Linear(-1, 3); }, {"Linear", "-1"}));
}

TEST(NnBilinear, ForwardMatchesLoopsAndGradchecksInFloat64) {
  tsr::manual_seed(5);
  tsr::nn::Bilinear bl(3, 4, 2);
  EXPECT_EQ(bl.weight.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(bl.extra_repr(), "in1_features=3, in2_features=4, out_features=2, bias=true");
  for (double v : values(bl.weight)) EXPECT_LE(std::fabs(v), 1.0 / std::sqrt(3.0));
  tsr::Tensor x1 = randu({2, 5, 3}, 1, -2, 2, TSR_F32), x2 = randu({2, 5, 4}, 2, -2, 2, TSR_F32);
  auto a = values(x1), b = values(x2), w = values(bl.weight), bias = values(bl.bias);
  std::vector<double> ref(20);
  for (int n = 0; n < 10; ++n)
    for (int o = 0; o < 2; ++o) {
      double s = bias[o];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) s += a[n * 3 + i] * w[(o * 3 + i) * 4 + j] * b[n * 4 + j];
      ref[n * 2 + o] = s;
    }
  EXPECT_TRUE(close(bl(x1, x2), ref, {2, 5, 2}, 1e-5, 1e-5));
  EXPECT_TRUE(throws_with([&] { bl(x1, x1); }, {"Bilinear", "[2, 5, 3]", "in2_features"}));
  EXPECT_TRUE(throws_with([&] { bl.forward(x1); }, {"Bilinear", "two inputs"}));

  // Gradcheck through the module's composite math: inputs, weight and bias in float64.
  bl.to(TSR_F64);
  auto fn = [&](const std::vector<tsr::Tensor>& in) {
    bl.weight = in[2];
    bl.bias = in[3];
    return bl(in[0], in[1]);
  };
  EXPECT_TRUE(tsr::optest::gradcheck(fn, {randu({3, 3}, 3), randu({3, 4}, 4), randu({2, 3, 4}, 5), randu({2}, 6)}));
}

TEST(NnEmbedding, LookupInitPaddingAndGradients) {
  tsr::manual_seed(6);
  tsr::nn::Embedding big(1000, 64);
  auto wv = values(big.weight);
  double s = 0, s2 = 0;
  for (double v : wv) s += v, s2 += v * v;
  EXPECT_NEAR(s / wv.size(), 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(s2 / wv.size()), 1.0, 0.02);

  tsr::nn::Embedding emb(10, 3, -1);  // padding_idx = 9
  ASSERT_TRUE(emb.padding_idx.has_value());
  EXPECT_EQ(*emb.padding_idx, 9);
  EXPECT_EQ(emb.extra_repr(), "10, 3, padding_idx=9");
  auto w = values(emb.weight);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(w[27 + d], 0.0);
  std::vector<int64_t> idx{0, 9, 4, 4, 7, 1};
  tsr::Tensor ix = tsr::from_vector(idx, {2, 3});
  tsr::Tensor y = emb(ix);
  std::vector<double> ref;
  for (int64_t i : idx)
    for (int d = 0; d < 3; ++d) ref.push_back(w[i * 3 + d]);
  EXPECT_TRUE(close(y, ref, {2, 3, 3}, 0, 0));
  tsr::sum(y).backward();
  auto g = values(emb.weight.grad());
  std::vector<double> gref(30, 0.0);
  for (int64_t i : idx)
    if (i != 9)
      for (int d = 0; d < 3; ++d) gref[i * 3 + d] += 1;
  EXPECT_EQ(g, gref);
  EXPECT_TRUE(emb(tsr::from_vector(std::vector<int32_t>{1, 2}, {2})).defined());  // int32 indices
  EXPECT_TRUE(throws_with([&] { emb(tsr::zeros({2})); }, {"Embedding(10, 3", "integer", "float32"}));
  EXPECT_THROW(emb(tsr::from_vector(std::vector<int64_t>{10}, {1})), tsr::Error);
  EXPECT_TRUE(throws_with([&] { tsr::nn::Embedding(5, 2, 5); }, {"Embedding", "padding_idx=5", "num_embeddings=5"}));

  auto pre = tsr::nn::Embedding::from_pretrained(tsr::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}));
  EXPECT_FALSE(pre->weight.requires_grad());
  EXPECT_EQ(values((*pre)(tsr::from_vector(std::vector<int64_t>{1}, {1}))), (std::vector<double>{3, 4}));
  EXPECT_EQ(pre->state_dict().keys(), (std::vector<std::string>{"weight"}));
}

TEST(NnDropout, IdentityInEvalScaledMaskInTrain) {
  tsr::nn::Dropout drop(0.25);
  EXPECT_EQ(drop.extra_repr(), "p=0.25");
  tsr::Tensor x = randu({100, 100}, 10, 0.5, 2.0, TSR_F32);
  auto xv = values(x);
  drop.eval();
  EXPECT_EQ(values(drop(x)), xv);
  drop.train();
  tsr::manual_seed(9);
  auto y = values(drop(x));
  size_t zeros = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] == 0) {
      ++zeros;
      continue;
    }
    ASSERT_NEAR(y[i], xv[i] / 0.75, 1e-5 * std::fabs(y[i]));
  }
  EXPECT_NEAR(static_cast<double>(zeros) / y.size(), 0.25, 0.02);
  tsr::manual_seed(9);
  EXPECT_EQ(values(drop(x)), y);
  EXPECT_EQ(values(tsr::nn::Dropout(0.0)(x)), xv);
  for (double v : values(tsr::nn::Dropout(1.0)(x))) ASSERT_EQ(v, 0.0);
  EXPECT_TRUE(throws_with([] { tsr::nn::Dropout(1.5); }, {"Dropout", "[0, 1]", "1.5"}));
}

TEST(NnActivation, EachMatchesItsFormula) {
  tsr::Tensor x = randu({3, 7}, 11, -4, 4, TSR_F64);
  auto xv = values(x);
  auto check = [&](tsr::nn::Module& m, double (*f)(double)) {
    std::vector<double> ref;
    for (double v : xv) ref.push_back(f(v));
    EXPECT_TRUE(close(m(x), ref, {3, 7}, 1e-10, 1e-12)) << m.repr();
  };
  tsr::nn::ReLU relu;
  check(relu, [](double v) { return v > 0 ? v : 0.0; });
  tsr::nn::GELU gelu;
  check(gelu, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  tsr::nn::GELU gelu_tanh("tanh");
  EXPECT_EQ(gelu_tanh.extra_repr(), "approximate='tanh'");
  check(gelu_tanh,
        [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); });
  tsr::nn::SiLU silu;
  check(silu, [](double v) { return v / (1 + std::exp(-v)); });
  tsr::nn::Tanh tanh_m;
  check(tanh_m, [](double v) { return std::tanh(v); });
  tsr::nn::Sigmoid sig;
  check(sig, [](double v) { return 1 / (1 + std::exp(-v)); });
  tsr::nn::ReLU6 relu6;
  check(relu6, [](double v) { return std::min(std::max(v, 0.0), 6.0); });
  tsr::nn::LeakyReLU leaky(0.2);
  check(leaky, [](double v) { return v > 0 ? v : 0.2 * v; });
  tsr::nn::LeakyReLU leaky_default;
  check(leaky_default, [](double v) { return v > 0 ? v : 0.01 * v; });
  tsr::nn::ELU elu;
  check(elu, [](double v) { return v > 0 ? v : std::expm1(v); });
  tsr::nn::Softplus softplus;
  check(softplus, [](double v) { return std::log1p(std::exp(v)); });
  tsr::nn::Hardtanh ht(-0.5, 2.0);
  check(ht, [](double v) { return std::min(std::max(v, -0.5), 2.0); });
  tsr::nn::Mish mish;
  check(mish, [](double v) { return v * std::tanh(std::log1p(std::exp(v))); });

  tsr::nn::Softmax sm(1);
  tsr::nn::LogSoftmax lsm(1);
  std::vector<double> ref(21), lref(21);
  for (int r = 0; r < 3; ++r) {
    double mx = -1e300, z = 0;
    for (int c = 0; c < 7; ++c) mx = std::max(mx, xv[r * 7 + c]);
    for (int c = 0; c < 7; ++c) z += std::exp(xv[r * 7 + c] - mx);
    for (int c = 0; c < 7; ++c) {
      ref[r * 7 + c] = std::exp(xv[r * 7 + c] - mx) / z;
      lref[r * 7 + c] = xv[r * 7 + c] - mx - std::log(z);
    }
  }
  EXPECT_TRUE(close(sm(x), ref, {3, 7}, 1e-10, 1e-12));
  EXPECT_TRUE(close(lsm(x), lref, {3, 7}, 1e-10, 1e-12));
  EXPECT_EQ(sm.repr(), "Softmax(dim=1)");
  EXPECT_TRUE(throws_with([] { tsr::nn::GELU("fast"); }, {"GELU", "'fast'"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::Hardtanh(1, -1); }, {"Hardtanh", "min_val"}));
}

}  // namespace
