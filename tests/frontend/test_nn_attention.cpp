// nn::MultiheadAttention against softmax(QK^T / sqrt(d)) V per head written here in float64 from
// the module's own parameters: both layouts, masks (bool, float, padding, causal), both code
// paths (need_weights and the scaled_dot_product_attention one), gradients and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "op_test.hpp"
#include "seq_ref.hpp"
#include "tessera/nn/attention.hpp"

namespace {

using seqref::Vec;
using tsr::Tensor;
using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;

constexpr double kRtol = 1e-5, kAtol = 1e-5;
const double kInf = std::numeric_limits<double>::infinity();

// Head average of probs [N, H, L, S] -> [N, L, S].
Vec head_mean(const Vec& p, int64_t N, int64_t H, int64_t L, int64_t S) {
  Vec o(static_cast<size_t>(N * L * S), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L * S; ++i) o[n * L * S + i] += p[(n * H + h) * L * S + i] / H;
  return o;
}

// A bool mask as a -inf/0 bias broadcast to [N, H, L, S]; `at(n, h, i, j)` says "masked".
template <class F>
Vec bias_of(int64_t N, int64_t H, int64_t L, int64_t S, F at) {
  Vec b(static_cast<size_t>(N * H * L * S));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < S; ++j) b[((n * H + h) * L + i) * S + j] = at(n, h, i, j);
  return b;
}

TEST(NnAttention, SelfAttentionMatchesReferenceInBothLayouts) {
  for (bool bf : {false, true}) {
    SCOPED_TRACE(bf ? "batch_first" : "seq_first");
    tsr::manual_seed(1);
    const int64_t E = 6, H = 3, L = 5, N = 2;
    tsr::nn::MultiheadAttention mha(E, H, 0.0, true, bf);
    {  // non-zero biases so that their placement is checked too
      tsr::NoGradGuard g;
      mha.in_proj_bias.copy_(randu({3 * E}, 2, -0.5, 0.5, TSR_F32));
      mha.out_proj->bias.copy_(randu({E}, 3, -0.5, 0.5, TSR_F32));
    }
    Tensor xb = randu({N, L, E}, 4, -1, 1, TSR_F32);  // batch-major
    Tensor x = bf ? xb : xb.transpose(0, 1).contiguous();
    Vec probs;
    Vec ref = seqref::mha(mha, values(xb), values(xb), values(xb), N, L, L, {}, &probs);
    Vec ref_out = bf ? ref : seqref::swap01(ref, N, L, E);
    std::vector<int64_t> out_shape = bf ? std::vector<int64_t>{N, L, E} : std::vector<int64_t>{L, N, E};

    auto [out, w] = mha.forward(x, x, x);
    EXPECT_TRUE(close(out, ref_out, out_shape, kRtol, kAtol));
    EXPECT_TRUE(close(w, head_mean(probs, N, H, L, L), {N, L, L}, kRtol, kAtol));
    auto [out2, w2] = mha.forward(x, x, x, std::nullopt, true, std::nullopt, /*average_attn_weights=*/false);
    EXPECT_TRUE(close(w2, probs, {N, H, L, L}, kRtol, kAtol));
    auto [out3, w3] = mha.forward(x, x, x, std::nullopt, /*need_weights=*/false);
    EXPECT_FALSE(w3.defined());
    EXPECT_TRUE(close(out3, ref_out, out_shape, kRtol, kAtol));
    EXPECT_TRUE(close(mha(x), ref_out, out_shape, kRtol, kAtol));
    // Distinct (equal-valued) tensors take the three-projection path: same result.
    auto [out4, w4] = mha.forward(x, x.clone(), x.clone());
    EXPECT_TRUE(close(out4, ref_out, out_shape, kRtol, kAtol));
  }
}

TEST(NnAttention, CrossAttentionWithBoolAndFloatMasks) {
  tsr::manual_seed(5);
  const int64_t E = 4, H = 2, L = 4, S = 3, N = 2;
  tsr::nn::MultiheadAttention mha(E, H);
  Tensor q = randu({L, N, E}, 6, -1, 1, TSR_F32), k = randu({S, N, E}, 7, -1, 1, TSR_F32),
         v = randu({S, N, E}, 8, -1, 1, TSR_F32);
  Vec qb = seqref::swap01(values(q), L, N, E), kb = seqref::swap01(values(k), S, N, E),
      vb = seqref::swap01(values(v), S, N, E);
  // Key 0 is never masked, so every row keeps a finite score.
  std::vector<bool> am = {false, true, false, false, false, true, false, true, true, false, false, false};
  std::vector<bool> kpm = {false, false, true, false, true, false};
  Vec bias = bias_of(N, H, L, S, [&](int64_t n, int64_t, int64_t i, int64_t j) {
    return (am[i * S + j] || kpm[n * S + j]) ? -kInf : 0.0;
  });
  Vec probs;
  Vec ref = seqref::swap01(seqref::mha(mha, qb, kb, vb, N, L, S, bias, &probs), N, L, E);
  Tensor am_t = tsr::from_bools(am, {L, S}), kpm_t = tsr::from_bools(kpm, {N, S});
  for (bool need : {true, false}) {
    SCOPED_TRACE(need ? "need_weights" : "sdpa");
    auto [out, w] = mha.forward(q, k, v, kpm_t, need, am_t);
    EXPECT_TRUE(close(out, ref, {L, N, E}, kRtol, kAtol));
    if (need) {
      EXPECT_TRUE(close(w, head_mean(probs, N, H, L, S), {N, L, S}, kRtol, kAtol));
    }
  }

  // Float masks: a per-(batch, head) [N*H, L, S] attn_mask plus a float padding mask.
  Tensor fam = randu({N * H, L, S}, 9, -2, 2, TSR_F32), fkpm = randu({N, S}, 10, -1, 1, TSR_F32);
  Vec famv = values(fam), fkpmv = values(fkpm);
  Vec fbias = bias_of(N, H, L, S, [&](int64_t n, int64_t h, int64_t i, int64_t j) {
    return famv[(((n * H) + h) * L + i) * S + j] + fkpmv[n * S + j];
  });
  Vec fref = seqref::swap01(seqref::mha(mha, qb, kb, vb, N, L, S, fbias, &probs), N, L, E);
  for (bool need : {true, false}) {
    auto [out, w] = mha.forward(q, k, v, fkpm, need, fam, false);
    EXPECT_TRUE(close(out, fref, {L, N, E}, kRtol, kAtol));
    if (need) {
      EXPECT_TRUE(close(w, probs, {N, H, L, S}, kRtol, kAtol));
    }
  }
}

TEST(NnAttention, IsCausalEqualsAnExplicitMask) {
  tsr::manual_seed(11);
  const int64_t E = 8, H = 2, L = 5, N = 3;
  tsr::nn::MultiheadAttention mha(E, H, 0.0, true, /*batch_first=*/true);
  Tensor x = randu({N, L, E}, 12, -1, 1, TSR_F32);
  Vec probs;
  Vec ref = seqref::mha(mha, values(x), values(x), values(x), N, L, L,
                        bias_of(N, H, L, L, [](int64_t, int64_t, int64_t i, int64_t j) { return j > i ? -kInf : 0.0; }),
                        &probs);
  Tensor bool_mask = tsr::triu(tsr::ones({L, L}), 1).to(TSR_BOOL);
  Tensor float_mask = tsr::where(bool_mask, tsr::full({}, -INFINITY), tsr::zeros({}));
  for (bool need : {true, false}) {
    SCOPED_TRACE(need ? "need_weights" : "sdpa");
    auto [c, cw] = mha.forward(x, x, x, std::nullopt, need, std::nullopt, true, /*is_causal=*/true);
    auto [b, bw] = mha.forward(x, x, x, std::nullopt, need, bool_mask);
    auto [f, fw] = mha.forward(x, x, x, std::nullopt, need, float_mask);
    auto [both, bothw] = mha.forward(x, x, x, std::nullopt, need, bool_mask, true, true);
    for (const Tensor* t : {&c, &b, &f, &both}) EXPECT_TRUE(close(*t, ref, {N, L, E}, kRtol, kAtol));
    if (need) {
      Vec w = values(cw);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = i + 1; j < L; ++j) EXPECT_EQ(w[(n * L + i) * L + j], 0.0);
      EXPECT_TRUE(close(cw, head_mean(probs, N, H, L, L), {N, L, L}, kRtol, kAtol));
    }
  }
  // Causal plus padding: the last key of batch 0 is padded.
  std::vector<bool> pad(static_cast<size_t>(N * L), false);
  pad[L - 1] = true;
  Vec pbias = bias_of(
      N, H, L, L, [&](int64_t n, int64_t, int64_t i, int64_t j) { return (j > i || pad[n * L + j]) ? -kInf : 0.0; });
  Vec pref = seqref::mha(mha, values(x), values(x), values(x), N, L, L, pbias);
  auto [cp, cpw] = mha.forward(x, x, x, tsr::from_bools(pad, {N, L}), false, std::nullopt, true, true);
  EXPECT_TRUE(close(cp, pref, {N, L, E}, kRtol, kAtol));
}

TEST(NnAttention, UnbatchedSeqOneAndEmptyBatch) {
  tsr::manual_seed(13);
  const int64_t E = 6, H = 2, L = 3, S = 1;
  tsr::nn::MultiheadAttention mha(E, H);
  Tensor q = randu({L, E}, 14, -1, 1, TSR_F32), kv = randu({S, E}, 15, -1, 1, TSR_F32);
  auto [out, w] = mha.forward(q, kv, kv);
  Vec ref = seqref::mha(mha, values(q), values(kv), values(kv), 1, L, S, {});
  EXPECT_TRUE(close(out, ref, {L, E}, kRtol, kAtol));
  EXPECT_TRUE(close(w, Vec(L, 1.0), {L, S}, kRtol, kAtol));  // one key: all weight on it
  auto [ob, wb] = mha.forward(q.unsqueeze(1), kv.unsqueeze(1), kv.unsqueeze(1));
  EXPECT_TRUE(close(out, values(ob.squeeze(1)), {L, E}, kRtol, 1e-6));

  tsr::nn::MultiheadAttention bf(E, H, 0.0, true, true);
  auto [e, ew] = bf.forward(tsr::zeros({0, 4, E}), tsr::zeros({0, 2, E}), tsr::zeros({0, 2, E}));
  EXPECT_EQ(e.sizes(), (std::vector<int64_t>{0, 4, E}));
  EXPECT_EQ(ew.sizes(), (std::vector<int64_t>{0, 4, 2}));
}

TEST(NnAttention, ParametersAsPyTorch) {
  tsr::manual_seed(17);
  tsr::nn::MultiheadAttention mha(8, 4);
  std::vector<std::string> names;
  for (auto& kv : mha.named_parameters()) names.push_back(kv.first);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(mha.in_proj_weight.sizes(), (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(mha.out_proj->weight.sizes(), (std::vector<int64_t>{8, 8}));
  for (double b : values(mha.in_proj_bias)) EXPECT_EQ(b, 0.0);
  for (double b : values(mha.out_proj->bias)) EXPECT_EQ(b, 0.0);
  Vec w = values(mha.in_proj_weight);
  const double bound = std::sqrt(6.0 / (8 + 24));  // xavier_uniform_ over [3E, E]
  double lo = 1, hi = -1;
  for (double x : w) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -bound / 2);
  tsr::manual_seed(17);
  tsr::nn::MultiheadAttention again(8, 4);
  EXPECT_TRUE(close(again.in_proj_weight, w, {24, 8}, 0, 0));
  EXPECT_TRUE(close(again.out_proj->weight, values(mha.out_proj->weight), {8, 8}, 0, 0));

  tsr::nn::MultiheadAttention nobias(8, 4, 0.0, false);
  EXPECT_EQ(nobias.named_parameters().size(), 2u);
  Tensor x = randu({2, 1, 8}, 18, -1, 1, TSR_F32);
  Vec ref = seqref::swap01(seqref::mha(nobias, values(x), values(x), values(x), 1, 2, 2, {}), 1, 2, 8);
  EXPECT_TRUE(close(nobias(x), ref, {2, 1, 8}, kRtol, kAtol));
  EXPECT_EQ(mha.repr(), "MultiheadAttention(embed_dim=8, num_heads=4\n  (out_proj): " + mha.out_proj->repr(2) + "\n)");
}

TEST(NnAttention, GradientsReachEveryParameter) {
  tsr::manual_seed(19);
  tsr::nn::MultiheadAttention mha(6, 3, 0.0, true, true);
  Tensor x = randu({2, 4, 6}, 20, -1, 1, TSR_F32);
  for (bool need : {true, false}) {
    mha.zero_grad();
    tsr::sum(tsr::pow(mha.forward(x, x, x, std::nullopt, need, std::nullopt, true, true).first, 2)).backward();
    for (auto& kv : mha.named_parameters()) {
      Tensor g = kv.second.grad();
      ASSERT_TRUE(g.defined()) << kv.first;
      double s = 0;
      for (double v : values(g)) s += std::fabs(v);
      EXPECT_GT(s, 0) << kv.first << (need ? " need_weights" : " sdpa");
    }
  }
}

TEST(NnAttention, Gradcheck) {
  tsr::manual_seed(21);
  tsr::nn::MultiheadAttention mha(4, 2);
  mha.to(TSR_F64);
  std::vector<Tensor*> slots{&mha.in_proj_weight, &mha.in_proj_bias, &mha.out_proj->weight, &mha.out_proj->bias};
  std::vector<Tensor> inputs{randu({3, 2, 4}, 22), randu({2, 2, 4}, 23), randu({2, 2, 4}, 24),
                             randu({2, 2}, 25, -1, 1)};
  for (Tensor* s : slots) inputs.push_back(randu(s->sizes(), 26 + inputs.size(), -0.7, 0.7));
  EXPECT_TRUE(tsr::optest::gradcheck(
      [&](const std::vector<Tensor>& in) {
        for (size_t i = 0; i < slots.size(); ++i) *slots[i] = in[4 + i];
        auto [a, w] = mha.forward(in[0], in[1], in[2], in[3], true);
        auto [b, none] = mha.forward(in[0], in[1], in[2], in[3], false);
        return tsr::cat({tsr::flatten(a), tsr::flatten(w), tsr::flatten(b)});
      },
      inputs));
}

TEST(NnAttention, DropoutOnlyInTraining) {
  tsr::manual_seed(23);
  tsr::nn::MultiheadAttention mha(4, 2, 0.5, true, true);
  Tensor x = randu({2, 6, 4}, 27, -1, 1, TSR_F32);
  mha.eval();
  Vec ref = seqref::mha(mha, values(x), values(x), values(x), 2, 6, 6, {});
  EXPECT_TRUE(close(mha(x), ref, {2, 6, 4}, kRtol, kAtol));
  mha.train();
  for (bool need : {true, false}) {
    Vec tr = values(mha.forward(x, x, x, std::nullopt, need).first);
    double diff = 0;
    for (size_t i = 0; i < tr.size(); ++i) diff += std::fabs(tr[i] - ref[i]);
    EXPECT_GT(diff, 1e-3) << (need ? "need_weights" : "sdpa");
  }
}

TEST(NnAttention, BadInputsNameTheModuleAndShapes) {
  EXPECT_TRUE(throws_with([] { tsr::nn::MultiheadAttention(10, 3); },
                          {"MultiheadAttention", "embed_dim 10 is not divisible by num_heads 3"}));
  EXPECT_TRUE(
      throws_with([] { tsr::nn::MultiheadAttention(8, 0); }, {"MultiheadAttention", "num_heads must be positive"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::MultiheadAttention(8, 2, -0.1); }, {"MultiheadAttention", "dropout"}));
  tsr::nn::MultiheadAttention mha(8, 2);
  Tensor x = tsr::zeros({5, 2, 8});
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(tsr::zeros({5, 2, 7}), x, x);
      },
      {"MultiheadAttention", "[len, batch, 8]", "query [5, 2, 7]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(x, tsr::zeros({4, 2, 8}), x);
      },
      {"MultiheadAttention", "key [4, 2, 8], value [5, 2, 8]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(x, tsr::zeros({5, 3, 8}), tsr::zeros({5, 3, 8}));
      },
      {"MultiheadAttention", "query's batch"}));
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(x, x, x, std::nullopt, true, tsr::zeros({5, 4}));
      },
      {"MultiheadAttention", "attn_mask must be [5, 5] or [4, 5, 5]", "got [5, 4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(x, x, x, tsr::zeros({5, 2}));
      },
      {"MultiheadAttention", "key_padding_mask must be [2, 5]", "got [5, 2]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        mha.forward(x, x, x, std::nullopt, true, tsr::zeros({5, 5}, TSR_I64));
      },
      {"MultiheadAttention", "attn_mask must be bool or floating point, got int64"}));
  EXPECT_TRUE(throws_with([&] { mha(tsr::zeros({5, 2, 8}, TSR_F64)); }, {"MultiheadAttention", "float64", "float32"}));
}

}  // namespace
