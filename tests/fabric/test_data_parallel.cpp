// DataParallel over virtual CPU devices of one process (TESSERA_CPU_DEVICES=4): outputs and
// gradients equal the module's own on the whole batch, for even, odd and short batches; the
// replicas follow the module after optimizer steps; structural mismatches are refused.
#include <gtest/gtest.h>

#include "reference.hpp"
#include "tessera/distributed/data_parallel.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Device;
using tsr::Tensor;
using tsr::distributed::DataParallel;

std::shared_ptr<tsr::nn::Module> mlp(uint64_t seed, int64_t hidden = 6) {
  tsr::manual_seed(seed);
  using tsr::nn::Linear, tsr::nn::Tanh;
  return std::make_shared<tsr::nn::Sequential>(std::vector<std::shared_ptr<tsr::nn::Module>>{
      std::make_shared<Linear>(4, hidden), std::make_shared<Tanh>(), std::make_shared<Linear>(hidden, 3)});
}

Tensor batch(int64_t rows, uint64_t seed) {
  tsr::manual_seed(seed);
  return tsr::randn({rows, 4});
}

void expect_close(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  ASSERT_TRUE(a.device() == b.device()) << what;
  std::vector<double> x = a.to(TSR_F64).to_vector<double>(), y = b.to(TSR_F64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-5 * (1 + std::abs(y[i]))) << what << " at " << i;
}

std::vector<Device> cpus(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i) d.push_back(Device::cpu(i));
  return d;
}

TEST(DataParallel, OutputsAndGradientsEqualTheModuleOnTheWholeBatch) {
  for (int64_t rows : {12, 7, 2, 1}) {  // even, odd (3,3,1 over three), fewer rows than devices
    auto model = mlp(1), ref = mlp(1);
    DataParallel dp(model, cpus(3), [] { return mlp(99); });
    Tensor x = batch(rows, 10 + static_cast<uint64_t>(rows)), t = batch(rows, 20).narrow(1, 0, 3);
    Tensor out = dp(x);
    Tensor want = (*ref)(x);
    expect_close(out, want, "output, " + std::to_string(rows) + " rows");
    tsr::nn::mse_loss(out, t).backward();
    tsr::nn::mse_loss(want, t).backward();
    std::vector<Tensor> mp = model->parameters(), rp = ref->parameters();
    for (size_t i = 0; i < mp.size(); ++i) {
      ASSERT_TRUE(mp[i].grad().defined()) << "parameter " << i;
      expect_close(mp[i].grad(), rp[i].grad(), "gradient " + std::to_string(i) + ", " + std::to_string(rows) + " rows");
    }
  }
}

TEST(DataParallel, ReplicasFollowTheModuleAcrossOptimizerSteps) {
  auto model = mlp(2), ref = mlp(2);
  DataParallel dp(model, cpus(4), [] { return mlp(77); });
  tsr::optim::SGDOptions o;
  o.lr = 0.1;
  tsr::optim::SGD opt(model->parameters(), o), opt_ref(ref->parameters(), o);
  for (int step = 0; step < 3; ++step) {
    Tensor x = batch(10, 30 + static_cast<uint64_t>(step)), t = batch(10, 40 + static_cast<uint64_t>(step)).narrow(1, 0, 3);
    opt.zero_grad();
    opt_ref.zero_grad();
    tsr::nn::mse_loss(dp(x), t).backward();
    tsr::nn::mse_loss((*ref)(x), t).backward();
    opt.step();
    opt_ref.step();
  }
  std::vector<Tensor> mp = model->parameters(), rp = ref->parameters();
  for (size_t i = 0; i < mp.size(); ++i) expect_close(mp[i], rp[i], "weights after 3 steps, parameter " + std::to_string(i));
  // Inference: no history recorded anywhere, the same output.
  tsr::NoGradGuard no_grad;
  model->eval();
  Tensor x = batch(5, 50);
  Tensor out = dp(x);
  EXPECT_FALSE(out.requires_grad());
  expect_close(out, (*ref)(x), "output in eval mode");
}

TEST(DataParallel, RefusesWhatItCannotReplicate) {
  auto model = mlp(3);
  try {
    DataParallel dp(model, cpus(2), [] { return mlp(3, 7); });  // hidden 7 instead of 6
    FAIL() << "a replica of another shape was accepted";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the source has '0.weight' [6, 4], the replica '0.weight' [7, 4]"),
              std::string::npos)
        << e.what();
  }
  auto elsewhere = mlp(3);
  elsewhere->to(Device::cpu(1));
  try {
    DataParallel dp(elsewhere, cpus(2), [] { return mlp(3); });
    FAIL() << "a module off devices[0] was accepted";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be on devices[0] (cpu:0)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DataParallel(model, {}, nullptr), tsr::Error);
  EXPECT_THROW(DataParallel(model, cpus(2), nullptr), tsr::Error);
}

}  // namespace
