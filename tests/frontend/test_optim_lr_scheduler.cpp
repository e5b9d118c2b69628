// LR schedulers: lr sequences against closed forms written out here, PyTorch's documented
// example values, torch's recursive CosineAnnealingLR, several groups, state_dict resume and
// the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::throws_with;
namespace optim = tsr::optim;
const double kPi = std::acos(-1.0);

Tensor param() {
  Tensor p = tsr::zeros({2});
  p.requires_grad_();
  return p;
}

// The lrs the optimizer sees at epochs 0..n-1 (epoch 0: right after construction).
template <class S>
std::vector<double> lrs(optim::Optimizer& opt, S& sched, int n) {
  std::vector<double> out;
  for (int e = 0; e < n; ++e) {
    if (e) sched.step();
    EXPECT_EQ(sched.last_epoch(), e);
    EXPECT_EQ(sched.last_lr(), opt.lr());
    out.push_back(opt.lr());
  }
  return out;
}

void expect_seq(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-15) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], want[e], tol) << "epoch " << e;
}

TEST(OptimLRScheduler, StepLRTorchDocExample) {
  // torch docs: lr = 0.05 if epoch < 30, 0.005 if 30 <= epoch < 60, 0.0005 if 60 <= epoch < 90
  Tensor p = param();
  optim::SGD opt({p}, {0.05});
  optim::StepLR s(opt, 30, 0.1);
  std::vector<double> want;
  for (int e = 0; e < 95; ++e) want.push_back(e < 30 ? 0.05 : e < 60 ? 0.005 : e < 90 ? 0.0005 : 0.00005);
  expect_seq(lrs(opt, s, 95), want, 1e-17);
}

TEST(OptimLRScheduler, MultiStepLRTorchDocExample) {
  // torch docs: milestones [30, 80]: 0.05 if epoch < 30, 0.005 if 30 <= epoch < 80, 0.0005 after
  Tensor p = param();
  optim::SGD opt({p}, {0.05});
  optim::MultiStepLR s(opt, {80, 30}, 0.1);
  std::vector<double> want;
  for (int e = 0; e < 90; ++e) want.push_back(e < 30 ? 0.05 : e < 80 ? 0.005 : 0.0005);
  expect_seq(lrs(opt, s, 90), want, 1e-17);
}

TEST(OptimLRScheduler, LinearLRTorchDocExample) {
  // torch docs: lr 0.05, start_factor 0.5, total_iters 4: 0.025, 0.03125, 0.0375, 0.04375, 0.05, ...
  Tensor p = param();
  optim::SGD opt({p}, {0.05});
  optim::LinearLR s(opt, 0.5, 1.0, 4);
  expect_seq(lrs(opt, s, 7), {0.025, 0.03125, 0.0375, 0.04375, 0.05, 0.05, 0.05});
}

TEST(OptimLRScheduler, ConstantAndExponential) {
  Tensor p = param(), q = param();
  optim::SGD o1({p}, {0.05}), o2({q}, {0.3});
  optim::ConstantLR c(o1, 0.5, 4);  // torch docs: 0.025 for epochs 0..3, then 0.05
  expect_seq(lrs(o1, c, 6), {0.025, 0.025, 0.025, 0.025, 0.05, 0.05});
  optim::ExponentialLR x(o2, 0.9);
  std::vector<double> want;
  for (int e = 0; e < 12; ++e) want.push_back(0.3 * std::pow(0.9, e));
  expect_seq(lrs(o2, x, 12), want);
}

TEST(OptimLRScheduler, CosineAnnealingMatchesTorchsRecursiveForm) {
  const double base = 0.1, eta_min = 0.001;
  const int T = 10;
  Tensor p = param();
  optim::SGD opt({p}, {base});
  optim::CosineAnnealingLR s(opt, T, eta_min);
  std::vector<double> got = lrs(opt, s, 3 * T + 3);
  // torch.optim.lr_scheduler.CosineAnnealingLR.get_lr, the chainable form, past T_max too
  double lr = base;
  for (int e = 0; e < 3 * T + 3; ++e) {
    if (e == 0)
      lr = base;
    else if ((e - 1 - T) % (2 * T) == 0)
      lr = lr + (base - eta_min) * (1 - std::cos(kPi / T)) / 2;
    else
      lr = (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lr - eta_min) + eta_min;
    EXPECT_NEAR(got[e], lr, 1e-12) << "epoch " << e;
  }
  EXPECT_NEAR(got[5], (base + eta_min) / 2, 1e-15);
  EXPECT_NEAR(got[10], eta_min, 1e-15);
}

TEST(OptimLRScheduler, WarmupCosine) {
  Tensor p = param();
  optim::AdamW opt({p}, {1.0});
  optim::WarmupCosine s(opt, /*warmup_steps=*/4, /*total_steps=*/12, /*min_lr_ratio=*/0.1);
  std::vector<double> got = lrs(opt, s, 16);
  std::vector<double> want{0.25, 0.5, 0.75, 1.0};
  for (int e = 4; e < 16; ++e) want.push_back(e >= 12 ? 0.1 : 0.1 + 0.9 * 0.5 * (1 + std::cos(kPi * (e - 4) / 8.0)));
  expect_seq(got, want);
  EXPECT_NEAR(got[8], 0.55, 1e-15);  // halfway down the cosine
  for (int e = 5; e < 16; ++e) EXPECT_LE(got[e], got[e - 1]);
  // No warmup: starts at base.
  Tensor q = param();
  optim::AdamW o2({q}, {0.2});
  optim::WarmupCosine s2(o2, 0, 10);
  EXPECT_EQ(o2.lr(), 0.2);
  for (int e = 0; e < 10; ++e) s2.step();
  EXPECT_EQ(o2.lr(), 0.0);
}

TEST(OptimLRScheduler, LinearWarmup) {
  Tensor p = param();
  optim::Adam opt({p}, {0.4});
  optim::LinearWarmup s(opt, 4);
  expect_seq(lrs(opt, s, 7), {0.1, 0.2, 0.30000000000000004, 0.4, 0.4, 0.4, 0.4});
  EXPECT_TRUE(
      throws_with([&] { optim::LinearWarmup(opt, -1); }, {"LinearWarmup: warmup_steps must be an integer >= 0"}));
}

TEST(OptimLRScheduler, SequentialWarmupThenDecay) {
  Tensor p = param();
  optim::SGD opt({p}, {1.0});
  auto warm = std::make_shared<optim::LinearLR>(opt, 0.25, 1.0, 3);
  auto decay = std::make_shared<optim::ExponentialLR>(opt, 0.5);
  optim::SequentialLR s(opt, {warm, decay}, {3});
  // LinearLR for epochs 0..2, then ExponentialLR from its own epoch 0
  expect_seq(lrs(opt, s, 7), {0.25, 0.5, 0.75, 1.0, 0.5, 0.25, 0.125});
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SequentialLR(opt, {warm, decay}, {});
      },
      {"SequentialLR: expects 1 milestones"}));
  Tensor q = param();
  optim::SGD other({q});
  auto foreign = std::make_shared<optim::ExponentialLR>(other, 0.5);
  EXPECT_TRUE(throws_with([&] { optim::SequentialLR(opt, {warm, foreign}, {2}); }, {"belongs to another optimizer"}));
}

TEST(OptimLRScheduler, EachGroupFromItsOwnBaseLr) {
  Tensor a = param(), b = param();
  optim::SGD opt({optim::ParamGroup({a}), optim::ParamGroup({b}, {{"lr", 0.5}})}, {0.1});
  optim::StepLR s(opt, 2, 0.5);
  s.step();
  s.step();
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 0.05);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].lr(), 0.25);
  EXPECT_EQ(opt.param_groups()[1].get("initial_lr"), 0.5);
  EXPECT_EQ(s.last_lrs(), (std::vector<double>{0.05, 0.25}));
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.1, 0.5}));
}

TEST(OptimLRScheduler, StateDictResumesTheSequence) {
  Tensor a = param(), b = param();
  optim::AdamW oa({a}, {1e-3}), ob({b}, {1e-3});
  optim::WarmupCosine sa(oa, 5, 50, 0.1), sb(ob, 5, 50, 0.1);
  for (int e = 0; e < 7; ++e) sa.step();
  tsr::StateDict sd = sa.state_dict();
  EXPECT_EQ(sd.at("last_epoch").item<int64_t>(), 7);
  EXPECT_EQ(sd.at("last_epoch").dtype(), TSR_I64);
  EXPECT_EQ(sd.at("warmup_steps").item<double>(), 5.0);
  ob.load_state_dict(oa.state_dict());
  sb.load_state_dict(sd);
  EXPECT_EQ(sb.last_epoch(), 7);
  EXPECT_EQ(ob.lr(), oa.lr());  // the optimizer's state_dict carries the current lr
  for (int e = 0; e < 5; ++e) {
    sa.step();
    sb.step();
    EXPECT_EQ(oa.lr(), ob.lr());
  }
}

TEST(OptimLRScheduler, ErrorsNameTheSchedulerAndValue) {
  Tensor p = param();
  optim::SGD opt({p}, {0.1});
  EXPECT_TRUE(throws_with([&] { optim::StepLR(opt, 0); }, {"StepLR: step_size must be an integer >= 1, got 0"}));
  EXPECT_TRUE(throws_with([&] { optim::WarmupCosine(opt, 20, 10); },
                          {"WarmupCosine: warmup_steps (20) exceeds total_steps (10)"}));
  EXPECT_TRUE(throws_with([&] { optim::WarmupCosine(opt, 2, 10, 1.5); }, {"min_lr_ratio must be in [0, 1], got 1.5"}));
  EXPECT_TRUE(throws_with([&] { optim::LinearLR(opt, 0.0); }, {"LinearLR: Starting multiplicative factor expected"}));
  EXPECT_TRUE(throws_with([&] { optim::CosineAnnealingLR(opt, 0); }, {"CosineAnnealingLR: T_max must be > 0"}));
  optim::StepLR s(opt, 3, 0.5);
  s.step();
  const double lr = opt.lr();
  tsr::StateDict bad = s.state_dict();
  bad.insert("base_lrs", tsr::from_vector<double>({0.1, 0.2}, {2}));
  EXPECT_TRUE(throws_with([&] { s.load_state_dict(bad); }, {"StepLR: 'base_lrs' must be a 1-D tensor of 1 values"}));
  bad = s.state_dict();
  bad.insert("T_max", tsr::zeros({}));
  EXPECT_TRUE(throws_with([&] { s.load_state_dict(bad); }, {"StepLR: unexpected state_dict entry 'T_max'"}));
  bad = s.state_dict();
  bad.insert("step_size", tsr::zeros({}));
  bad.insert("last_epoch", tsr::full({}, 9, TSR_I64));
  EXPECT_TRUE(throws_with([&] { s.load_state_dict(bad); }, {"step_size must be an integer >= 1, got 0"}));
  bad = s.state_dict();
  bad.erase("last_epoch");
  EXPECT_TRUE(throws_with([&] { s.load_state_dict(bad); }, {"missing 'last_epoch'"}));
  EXPECT_EQ(s.last_epoch(), 1);  // failed loads changed nothing
  EXPECT_EQ(s.hparams().at("step_size"), 3.0);
  EXPECT_EQ(opt.lr(), lr);
}

}  // namespace
