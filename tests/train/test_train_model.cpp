// The GPT of `tessera train`: parameter count, weight tying, causality, input errors, and a
// tiny model that must overfit a fixed batch.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "op_test.hpp"
#include "tessera/optim.hpp"

namespace {

using tessera_train::GPT;
using tessera_train::GPTConfig;
using tsr::optest::throws_with;

GPTConfig small(bool bias = true) {
  GPTConfig c;
  c.vocab_size = 7, c.block_size = 5, c.n_layer = 3, c.n_head = 3, c.n_embd = 12, c.bias = bias;
  return c;
}

// Counted the long way round, layer by layer, independently of GPTConfig's closed form.
int64_t count_by_hand(const GPTConfig& c) {
  const int64_t C = c.n_embd, b = c.bias ? 1 : 0;
  int64_t layer = 2 * C                                                    // ln_1
                  + 3 * C * C + b * 3 * C                                  // c_attn
                  + C * C + b * C                                          // attn.c_proj
                  + 2 * C                                                  // ln_2
                  + 4 * C * C + b * 4 * C                                  // c_fc
                  + 4 * C * C + b * C;                                     // mlp.c_proj
  return c.vocab_size * C + c.block_size * C + c.n_layer * layer + 2 * C;  // no head: it is wte
}

TEST(TrainGpt, ParameterCountMatchesTheFormula) {
  for (bool bias : {true, false}) {
    tsr::manual_seed(1);
    GPTConfig c = small(bias);
    GPT m(c);
    EXPECT_EQ(m.num_parameters(), count_by_hand(c)) << "bias=" << bias;
    EXPECT_EQ(c.expected_parameters(), count_by_hand(c)) << "bias=" << bias;
  }
  GPTConfig none = small();
  none.n_layer = 0;
  EXPECT_EQ(GPT(none).num_parameters(), count_by_hand(none));
}

TEST(TrainGpt, StateDictNamesFollowNanoGpt) {
  tsr::manual_seed(2);
  GPT m(small());
  tsr::StateDict sd = m.state_dict();
  for (const char* k : {"wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.attn.c_attn.weight", "h.0.attn.c_proj.bias",
                        "h.2.mlp.c_fc.weight", "h.2.mlp.c_proj.weight", "ln_f.bias"})
    EXPECT_TRUE(sd.contains(k)) << k;
  EXPECT_FALSE(sd.contains("lm_head.weight"));
}

// The head is wte.weight itself: logits = ln_f(h) @ wte.weight^T, and a change to wte.weight
// shows up in the logits' head as well as in the embedding.
TEST(TrainGpt, HeadIsTiedToTheTokenEmbedding) {
  tsr::manual_seed(3);
  GPTConfig c = small();
  GPT m(c);
  m.eval();
  tsr::NoGradGuard ng;
  tsr::Tensor idx = tsr::optest::randint({2, 4}, 11, 0, c.vocab_size);
  tsr::Tensor logits = m.forward(idx);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 4, c.vocab_size}));
  // The final hidden state through the modules, then the head in float64 on the host.
  tsr::Tensor x = (*m.wte)(idx) + (*m.wpe)(tsr::arange(4));
  for (const auto& b : m.h->blocks()) x = b->forward(x);
  std::vector<double> hf = (*m.ln_f)(x).to_vector<double>(), w = m.wte->weight.to_vector<double>();
  std::vector<double> ref;
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t v = 0; v < c.vocab_size; ++v) {
      double s = 0;
      for (int64_t k = 0; k < c.n_embd; ++k)
        s += hf[static_cast<size_t>(r * c.n_embd + k)] * w[static_cast<size_t>(v * c.n_embd + k)];
      ref.push_back(s);
    }
  EXPECT_TRUE(tsr::optest::close(logits, ref, {2, 4, c.vocab_size}, 1e-5, 1e-5));
  // Only one parameter holds the embedding's storage: no separate head matrix.
  int sharing = 0;
  for (auto& kv : m.named_parameters()) sharing += kv.second.shares_storage(m.wte->weight);
  EXPECT_EQ(sharing, 1);
}

TEST(TrainGpt, HeadGradientReachesTheEmbedding) {
  tsr::manual_seed(4);
  GPTConfig c = small();
  GPT m(c);
  // Token 6 never appears in the input, so its embedding row gets gradient only via the head.
  tsr::Tensor idx = tsr::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 0, 1}, {2, 4});
  tsr::Tensor y = tsr::from_vector<int64_t>({6, 6, 1, 2, 3, 4, 5, 0}, {2, 4});
  m.loss(m.forward(idx), y).backward();
  std::vector<double> g = m.wte->weight.grad().to_vector<double>();
  double row6 = 0;
  for (int64_t k = 0; k < c.n_embd; ++k) row6 += std::abs(g[static_cast<size_t>(6 * c.n_embd + k)]);
  EXPECT_GT(row6, 1e-6);
}

TEST(TrainGpt, IsCausal) {
  tsr::manual_seed(5);
  GPTConfig c = small();
  GPT m(c);
  m.eval();
  tsr::NoGradGuard ng;
  std::vector<int64_t> a = {1, 4, 2, 6, 3}, b = a;
  b[3] = 0;  // a later token changes
  std::vector<double> la = m.forward(tsr::from_vector<int64_t>(a, {1, 5})).to_vector<double>();
  std::vector<double> lb = m.forward(tsr::from_vector<int64_t>(b, {1, 5})).to_vector<double>();
  const size_t V = static_cast<size_t>(c.vocab_size);
  for (size_t i = 0; i < 3 * V; ++i) EXPECT_NEAR(la[i], lb[i], 1e-6) << "position " << i / V;
  double diff = 0;
  for (size_t i = 3 * V; i < 5 * V; ++i) diff += std::abs(la[i] - lb[i]);
  EXPECT_GT(diff, 1e-4) << "positions 3 and 4 must see the change";
}

TEST(TrainGpt, BadInputsAndConfigsAreErrors) {
  tsr::manual_seed(6);
  GPTConfig c = small();
  GPT m(c);
  EXPECT_TRUE(throws_with(
      [&] {
        m.forward(tsr::zeros({1, 6}, TSR_I64));
      },
      {"GPT", "sequence length 6", "block_size 5"}));
  EXPECT_TRUE(throws_with([&] { m.forward(tsr::zeros({1, 3})); }, {"GPT", "integer token indices", "float32"}));
  EXPECT_TRUE(throws_with([&] { m.forward(tsr::zeros({3}, TSR_I64)); }, {"GPT", "[B, T]"}));
  GPTConfig bad = c;
  bad.n_embd = 10;
  EXPECT_TRUE(throws_with([&] { GPT g(bad); }, {"n_embd (10)", "multiple of n_head (3)"}));
  bad = c;
  bad.dropout = 1.0;
  EXPECT_TRUE(throws_with([&] { GPT g(bad); }, {"dropout"}));
  bad = c;
  bad.vocab_size = 0;
  EXPECT_TRUE(throws_with([&] { GPT g(bad); }, {"vocab_size"}));
}

TEST(TrainGpt, SameSeedSameInitialization) {
  tsr::manual_seed(7);
  GPT a(small());
  tsr::manual_seed(7);
  GPT b(small());
  EXPECT_EQ(a.wte->weight.to_vector<float>(), b.wte->weight.to_vector<float>());
  EXPECT_EQ(a.h->blocks()[2]->mlp->c_proj->weight.to_vector<float>(),
            b.h->blocks()[2]->mlp->c_proj->weight.to_vector<float>());
  // GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer).
  auto stddev = [](const tsr::Tensor& t) {
    std::vector<double> v = t.to_vector<double>();
    double s = 0;
    for (double x : v) s += x * x;
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  EXPECT_NEAR(stddev(a.h->blocks()[0]->mlp->c_fc->weight), 0.02, 0.004);
  EXPECT_NEAR(stddev(a.h->blocks()[0]->mlp->c_proj->weight), 0.02 / std::sqrt(6.0), 0.002);
}

// A tiny model memorizes one fixed batch: the loss must fall far below its start.
TEST(TrainGpt, OverfitsAFixedBatch) {
  tsr::manual_seed(8);
  tessera_train::AdditionOptions ao;
  ao.digits = 2;
  tessera_train::AdditionTask task(ao);
  GPTConfig c;
  c.vocab_size = task.vocab_size(), c.block_size = task.block_size(), c.n_layer = 1, c.n_head = 2, c.n_embd = 32;
  GPT m(c);
  tessera_train::Batch b = task.batch(0, 16, tsr::Device::cpu());
  tsr::optim::AdamWOptions o;
  o.lr = 1e-2;
  o.weight_decay = 0;
  tsr::optim::AdamW opt(m.parameters(), o);
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    tsr::Tensor loss = m.loss(m.forward(b.x), b.y);
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  EXPECT_GT(first, 1.5);  // about log(12) at the start
  EXPECT_LT(last, 0.05) << "from " << first;
}

}  // namespace
