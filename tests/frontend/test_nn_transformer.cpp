// nn::TransformerEncoderLayer (pre-norm and post-norm) against a float64 reference written here
// from the layer's own parameters; causal masking, PyTorch's state_dict names, gradients, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "op_test.hpp"
#include "seq_ref.hpp"
#include "tessera/nn.hpp"  // the umbrella must bring in the sequence layers

namespace {

using seqref::Vec;
using tsr::Tensor;
using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;

constexpr double kRtol = 2e-5, kAtol = 2e-5;
const double kInf = std::numeric_limits<double>::infinity();

std::vector<Tensor*> slots(tsr::nn::TransformerEncoderLayer& t) {
  return {&t.self_attn->in_proj_weight,
          &t.self_attn->in_proj_bias,
          &t.self_attn->out_proj->weight,
          &t.self_attn->out_proj->bias,
          &t.linear1->weight,
          &t.linear1->bias,
          &t.linear2->weight,
          &t.linear2->bias,
          &t.norm1->weight,
          &t.norm1->bias,
          &t.norm2->weight,
          &t.norm2->bias};
}

// Every parameter random (norms and biases included), so each placement matters.
void randomize(tsr::nn::TransformerEncoderLayer& t, uint64_t seed) {
  tsr::NoGradGuard g;
  for (Tensor* s : slots(t)) s->copy_(randu(s->sizes(), seed++, -0.6, 0.6, s->dtype()));
}

// x batch-major [N, L, E]; bias [N, H, L, S] or empty. Eval mode (no dropout).
Vec ref_layer(tsr::nn::TransformerEncoderLayer& t, const Vec& x, int64_t N, int64_t L, const Vec& bias, double eps) {
  const int64_t E = t.d_model, F = t.dim_feedforward, R = N * L;
  auto ln = [&](const tsr::nn::LayerNorm& n, const Vec& v) {
    return seqref::layer_norm(v, R, E, values(n.weight), values(n.bias), eps);
  };
  auto sa = [&](const Vec& v) { return seqref::mha(*t.self_attn, v, v, v, N, L, L, bias); };
  auto ff = [&](const Vec& v) {
    Vec h = seqref::linear(v, R, E, values(t.linear1->weight), values(t.linear1->bias), F);
    for (double& a : h) a = t.activation == "gelu" ? 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))) : std::max(a, 0.0);
    return seqref::linear(h, R, F, values(t.linear2->weight), values(t.linear2->bias), E);
  };
  auto add = [](Vec a, const Vec& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
  };
  if (t.norm_first) {
    Vec x1 = add(x, sa(ln(*t.norm1, x)));
    return add(x1, ff(ln(*t.norm2, x1)));
  }
  Vec x1 = ln(*t.norm1, add(x, sa(x)));
  return ln(*t.norm2, add(x1, ff(x1)));
}

TEST(NnTransformer, PreNormMatchesReferenceWithMasks) {
  tsr::manual_seed(1);
  const int64_t E = 6, H = 2, F = 10, L = 5, N = 2;
  tsr::nn::TransformerEncoderLayer t(E, H, F, 0.1, "relu", 1e-5, /*batch_first=*/true);
  EXPECT_TRUE(t.norm_first);
  randomize(t, 2);
  t.eval();
  Tensor x = randu({N, L, E}, 3, -1, 1, TSR_F32);
  std::vector<bool> am = {false, true, false, true, false, false, false, true,  false, false, true,  false, false,
                          false, true, false, true, true,  false, false, false, false, true,  false, false};
  std::vector<bool> kpm = {false, false, false, false, true, false, false, true, false, false};
  Vec bias(static_cast<size_t>(N * H * L * L));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          bias[((n * H + h) * L + i) * L + j] = am[i * L + j] || kpm[n * L + j] ? -kInf : 0.0;
  Vec ref = ref_layer(t, values(x), N, L, bias, 1e-5);
  EXPECT_TRUE(
      close(t.forward(x, tsr::from_bools(am, {L, L}), tsr::from_bools(kpm, {N, L})), ref, {N, L, E}, kRtol, kAtol));
  EXPECT_TRUE(close(t(x), ref_layer(t, values(x), N, L, {}, 1e-5), {N, L, E}, kRtol, kAtol));
}

TEST(NnTransformer, PostNormMatchesReferenceSeqFirstGelu) {
  tsr::manual_seed(4);
  const int64_t E = 4, H = 4, F = 7, L = 3, N = 3;
  tsr::nn::TransformerEncoderLayer t(E, H, F, 0.0, "gelu", 1e-3, /*batch_first=*/false, /*norm_first=*/false);
  randomize(t, 5);
  Tensor xb = randu({N, L, E}, 6, -1, 1, TSR_F32);
  Vec ref = seqref::swap01(ref_layer(t, values(xb), N, L, {}, 1e-3), N, L, E);
  EXPECT_TRUE(close(t(xb.transpose(0, 1).contiguous()), ref, {L, N, E}, kRtol, kAtol));
  // Unbatched [L, E] is a batch of one.
  Vec ref1 = ref_layer(t, values(xb.select(0, 1)), 1, L, {}, 1e-3);
  EXPECT_TRUE(close(t(xb.select(0, 1)), ref1, {L, E}, kRtol, kAtol));
}

TEST(NnTransformer, CausalEqualsExplicitMaskAndIgnoresTheFuture) {
  tsr::manual_seed(7);
  const int64_t E = 8, L = 6, N = 2;
  tsr::nn::TransformerEncoderLayer t(E, 2, 16, 0.0, "gelu", 1e-5, true);
  randomize(t, 8);
  Tensor x = randu({N, L, E}, 9, -1, 1, TSR_F32);
  Tensor causal = t.forward(x, std::nullopt, std::nullopt, /*is_causal=*/true);
  Tensor mask = tsr::triu(tsr::ones({L, L}), 1).to(TSR_BOOL);
  EXPECT_TRUE(close(causal, values(t.forward(x, mask)), {N, L, E}, 1e-6, 1e-6));
  // Changing the last token changes only the last position's output.
  Tensor x2 = x.clone();
  {
    tsr::NoGradGuard g;
    x2.select(1, L - 1).copy_(randu({N, E}, 10, -1, 1, TSR_F32));
  }
  Tensor causal2 = t.forward(x2, std::nullopt, std::nullopt, true);
  EXPECT_TRUE(close(causal2.narrow(1, 0, L - 1), values(causal.narrow(1, 0, L - 1)), {N, L - 1, E}, 0, 0));
  double diff = 0;
  Vec a = values(causal2.select(1, L - 1)), b = values(causal.select(1, L - 1));
  for (size_t i = 0; i < a.size(); ++i) diff += std::fabs(a[i] - b[i]);
  EXPECT_GT(diff, 1e-3);
}

TEST(NnTransformer, StateDictKeysAsPyTorchAndDefaults) {
  tsr::nn::TransformerEncoderLayer t(8, 2);
  EXPECT_EQ(t.dim_feedforward, 2048);
  EXPECT_EQ(t.linear1->weight.sizes(), (std::vector<int64_t>{2048, 8}));
  EXPECT_FALSE(t.batch_first);
  EXPECT_EQ(t.state_dict().keys(),
            (std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                                      "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                                      "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
  std::vector<std::string> mods;
  for (auto& kv : t.named_modules()) mods.push_back(kv.first);
  EXPECT_EQ(mods, (std::vector<std::string>{"", "self_attn", "self_attn.out_proj", "linear1", "dropout", "linear2",
                                            "norm1", "norm2", "dropout1", "dropout2"}));
  tsr::nn::TransformerEncoderLayer nb(8, 2, 16, 0.1, "relu", 1e-5, false, true, /*bias=*/false);
  EXPECT_EQ(nb.state_dict().keys(),
            (std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight",
                                      "linear2.weight", "norm1.weight", "norm2.weight"}));
}

TEST(NnTransformer, GradientsReachEveryParameter) {
  tsr::manual_seed(11);
  for (bool nf : {true, false}) {
    tsr::nn::TransformerEncoderLayer t(6, 3, 12, 0.0, "relu", 1e-5, true, nf);
    Tensor x = randu({2, 4, 6}, 12, -1, 1, TSR_F32);
    tsr::sum(tsr::pow(t.forward(x, std::nullopt, std::nullopt, true), 2)).backward();
    for (auto& kv : t.named_parameters()) {
      Tensor g = kv.second.grad();
      ASSERT_TRUE(g.defined()) << kv.first;
      double s = 0;
      for (double v : values(g)) s += std::fabs(v);
      EXPECT_GT(s, 0) << kv.first << (nf ? " pre-norm" : " post-norm");
    }
  }
}

TEST(NnTransformer, Gradcheck) {
  tsr::manual_seed(13);
  tsr::nn::TransformerEncoderLayer t(4, 2, 3, 0.0, "gelu", 1e-5, true);
  t.to(TSR_F64);
  std::vector<Tensor*> s = slots(t);
  std::vector<Tensor> inputs{randu({1, 3, 4}, 14)};
  for (Tensor* p : s) inputs.push_back(randu(p->sizes(), 15 + inputs.size(), -0.7, 0.7));
  EXPECT_TRUE(tsr::optest::gradcheck(
      [&](const std::vector<Tensor>& in) {
        for (size_t i = 0; i < s.size(); ++i) *s[i] = in[1 + i];
        return t.forward(in[0], std::nullopt, std::nullopt, true);
      },
      inputs));
}

TEST(NnTransformer, DropoutOnlyInTraining) {
  tsr::manual_seed(17);
  tsr::nn::TransformerEncoderLayer t(8, 2, 16, 0.3, "relu", 1e-5, true);
  Tensor x = randu({2, 5, 8}, 18, -1, 1, TSR_F32);
  t.eval();
  Vec a = values(t(x));
  EXPECT_TRUE(close(t(x), a, {2, 5, 8}, 0, 0));
  t.train();
  Vec b = values(t(x));
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff += std::fabs(a[i] - b[i]);
  EXPECT_GT(diff, 1e-3);
}

TEST(NnTransformer, EncoderStacksLayersAndTheFinalNorm) {
  tsr::manual_seed(19);
  auto make = [] { return std::make_shared<tsr::nn::TransformerEncoderLayer>(6, 2, 8, 0.0, "gelu", 1e-5, true); };
  tsr::nn::TransformerEncoder enc(make, 2, std::make_shared<tsr::nn::LayerNorm>(std::vector<int64_t>{6}));
  randomize(enc.layer(0), 20);
  randomize(enc.layer(1), 40);
  {
    tsr::NoGradGuard g;
    enc.norm->weight.copy_(randu({6}, 60, 0.5, 1.5, TSR_F32));
    enc.norm->bias.copy_(randu({6}, 61, -0.5, 0.5, TSR_F32));
  }
  Tensor x = randu({2, 5, 6}, 21, -1, 1, TSR_F32);
  Vec bias(static_cast<size_t>(2 * 2 * 5 * 5));
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) bias[(n * 5 + i) * 5 + j] = j > i ? -kInf : 0.0;
  Vec ref = ref_layer(enc.layer(1), ref_layer(enc.layer(0), values(x), 2, 5, bias, 1e-5), 2, 5, bias, 1e-5);
  ref = seqref::layer_norm(ref, 10, 6, values(enc.norm->weight), values(enc.norm->bias), 1e-5);
  EXPECT_TRUE(close(enc.forward(x, std::nullopt, std::nullopt, true), ref, {2, 5, 6}, kRtol, kAtol));
  auto keys = enc.state_dict().keys();
  ASSERT_EQ(keys.size(), 26u);
  EXPECT_EQ(keys[0], "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(keys[12], "layers.1.self_attn.in_proj_weight");
  EXPECT_EQ(keys[25], "norm.bias");
  tsr::nn::TransformerEncoder plain(make, 0);
  EXPECT_TRUE(close(plain(x), values(x), {2, 5, 6}, 0, 0));
  auto shared = make();
  EXPECT_TRUE(throws_with([&] { tsr::nn::TransformerEncoder(([&] { return shared; }), 2); },
                          {"TransformerEncoder", "same layer twice"}));
  EXPECT_TRUE(throws_with([&] { tsr::nn::TransformerEncoder(make, -1); }, {"TransformerEncoder", "num_layers"}));
}

TEST(NnTransformer, BadArgumentsNameTheLayer) {
  EXPECT_TRUE(throws_with([] { tsr::nn::TransformerEncoderLayer(8, 2, 16, 0.1, "tanh"); },
                          {"TransformerEncoderLayer", "activation must be \"relu\" or \"gelu\", got \"tanh\""}));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::TransformerEncoderLayer(10, 4, 16); }, {"MultiheadAttention", "not divisible"}));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::TransformerEncoderLayer(8, 2, 0); }, {"TransformerEncoderLayer", "dim_feedforward"}));
  tsr::nn::TransformerEncoderLayer t(8, 2, 16, 0.1, "relu", 1e-5, true);
  EXPECT_TRUE(throws_with(
      [&] {
        t(tsr::zeros({2, 5, 6}));
      },
      {"TransformerEncoderLayer", "expected src [batch, seq, 8]", "got [2, 5, 6]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        t.forward(tsr::zeros({2, 5, 8}), tsr::zeros({4, 4}));
      },
      {"MultiheadAttention", "attn_mask must be [5, 5]", "got [4, 4]"}));
}

}  // namespace
