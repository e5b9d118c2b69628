// The sequence layers learn: each one, with a linear head and Adam, must overfit a fixed random
// batch (the loss falls to a small fraction of its start). Catches gradients that are present
// but wrong in a way the per-op checks would not show (e.g. a state not carried across steps).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "op_test.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::randu;

// Runs `steps` Adam steps on mse(model(x), y); returns (first loss, last loss).
std::pair<double, double> fit(tsr::nn::Module& body, tsr::nn::Linear& head,
                              const std::function<Tensor(const Tensor&)>& run, const Tensor& x, const Tensor& y,
                              int steps, double lr) {
  std::vector<Tensor> params = body.parameters();
  for (const Tensor& p : head.parameters()) params.push_back(p);
  tsr::optim::Adam opt(params, tsr::optim::AdamOptions{lr});
  double first = 0, last = 0;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    Tensor loss = tsr::nn::mse_loss(head(run(x)), y);
    loss.backward();
    opt.step();
    last = loss.item<double>();
    if (s == 0) first = last;
  }
  return {first, last};
}

TEST(NnSeqTrain, RecurrentLayersOverfitAFixedBatch) {
  tsr::manual_seed(1);
  Tensor x = randu({6, 4, 3}, 1, -1, 1, TSR_F32), y = randu({6, 4, 1}, 2, -1, 1, TSR_F32);
  tsr::nn::LSTM lstm(3, 12, 2);
  tsr::nn::Linear head(12, 1);
  auto [a0, a1] = fit(
      lstm, head, [&](const Tensor& in) { return lstm(in); }, x, y, 80, 0.03);
  EXPECT_LT(a1, 0.1 * a0) << "LSTM loss " << a0 << " -> " << a1;

  tsr::nn::GRU gru(3, 12, 1, true, false, 0.0, /*bidirectional=*/true);
  tsr::nn::Linear head2(24, 1);
  auto [b0, b1] = fit(
      gru, head2, [&](const Tensor& in) { return gru(in); }, x, y, 80, 0.03);
  EXPECT_LT(b1, 0.1 * b0) << "GRU loss " << b0 << " -> " << b1;
}

TEST(NnSeqTrain, CausalTransformerOverfitsAFixedBatch) {
  tsr::manual_seed(2);
  Tensor x = randu({4, 6, 8}, 3, -1, 1, TSR_F32), y = randu({4, 6, 1}, 4, -1, 1, TSR_F32);
  tsr::nn::TransformerEncoderLayer block(8, 2, 32, 0.0, "gelu", 1e-5, /*batch_first=*/true);
  tsr::nn::Linear head(8, 1);
  auto [a0, a1] = fit(
      block, head, [&](const Tensor& in) { return block.forward(in, std::nullopt, std::nullopt, true); }, x, y, 80,
      0.01);
  EXPECT_LT(a1, 0.1 * a0) << "TransformerEncoderLayer loss " << a0 << " -> " << a1;
}

}  // namespace
