// SGD, Adam and AdamW: single steps checked against hand-computed values, several steps
// against float64 reference loops (tests/frontend/optim_reference.hpp), state_dict resume,
// param groups, zero_grad, and the errors.
#include <gtest/gtest.h>

#include "op_test.hpp"
#include "optim_reference.hpp"
#include "optim_test_util.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::close;
using tsr::optest::throws_with;
namespace optim = tsr::optim;
using optim_test::leaf;
using optim_test::leaf64;
using optim_test::set_grad;

TEST(OptimSGD, TwoNesterovStepsWithWeightDecayByHand) {
  Tensor p = leaf64({1.0, -2.0});
  optim::SGD opt({p}, {/*lr=*/0.1, /*momentum=*/0.9, /*dampening=*/0, /*weight_decay=*/0.01, /*nesterov=*/true});
  set_grad(p, {0.5, 0.25});
  opt.step();
  // d = g + 0.01 p = (0.51, 0.23); buf = d (first step); d += 0.9 buf -> (0.969, 0.437); p -= 0.1 d
  EXPECT_TRUE(close(p, {0.9031, -2.0437}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(opt.state(0).at("momentum_buffer"), {0.51, 0.23}, {2}, 0, 1e-12));
  set_grad(p, {-0.3, 0.8});
  opt.step();
  // d = (-0.3 + 0.009031, 0.8 - 0.020437) = (-0.290969, 0.779563)
  // buf = 0.9 (0.51, 0.23) + d = (0.168031, 0.986563); d += 0.9 buf = (-0.1397411, 1.6674697)
  EXPECT_TRUE(close(opt.state(0).at("momentum_buffer"), {0.168031, 0.986563}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(p, {0.9031 + 0.01397411, -2.0437 - 0.16674697}, {2}, 0, 1e-12));
}

TEST(OptimSGD, DampenedMomentumStepInFloat32ByHand) {
  Tensor p = leaf(tsr::from_vector<float>({0.5f, 1.5f}, {2}));
  optim::SGD opt({p}, {0.2, 0.5, 0.25});
  p.set_grad(tsr::from_vector<float>({1.0f, -2.0f}, {2}));
  opt.step();  // buf = g (no dampening on the first step): p = (0.5 - 0.2, 1.5 + 0.4)
  EXPECT_TRUE(close(p, {0.3, 1.9}, {2}, 0, 1e-6));
  p.set_grad(tsr::from_vector<float>({1.0f, -2.0f}, {2}));
  opt.step();  // buf = 0.5 buf + 0.75 g = (1.25, -2.5): p = (0.3 - 0.25, 1.9 + 0.5)
  EXPECT_TRUE(close(p, {0.05, 2.4}, {2}, 0, 1e-6));
}

TEST(OptimAdam, TwoStepsWithCoupledWeightDecayByHand) {
  Tensor p = leaf64({1.0, -2.0});
  optim::Adam opt({p}, {/*lr=*/0.01, {0.9, 0.999}, /*eps=*/1e-8, /*weight_decay=*/0.1});
  set_grad(p, {0.5, -0.1});
  opt.step();
  // d = g + 0.1 p = (0.6, -0.3); m = 0.1 d; v = 0.001 d^2; m/(1-0.9) = d, sqrt(v/(1-0.999)) = |d|
  // p -= 0.01 * d / (|d| + 1e-8)
  const double p1a = 1.0 - 0.01 * 0.6 / (0.6 + 1e-8), p1b = -2.0 + 0.01 * 0.3 / (0.3 + 1e-8);
  EXPECT_TRUE(close(p, {p1a, p1b}, {2}, 0, 1e-12));
  EXPECT_NEAR(p1a, 0.99, 1e-9);
  EXPECT_TRUE(close(opt.state(0).at("exp_avg"), {0.06, -0.03}, {2}, 0, 1e-15));
  EXPECT_TRUE(close(opt.state(0).at("exp_avg_sq"), {0.00036, 0.00009}, {2}, 0, 1e-15));
  EXPECT_EQ(opt.state_step(0), 1);
  set_grad(p, {-0.2, 0.4});
  opt.step();
  const double da = -0.2 + 0.1 * p1a, db = 0.4 + 0.1 * p1b;
  const double ma = 0.9 * 0.06 + 0.1 * da, mb = 0.9 * -0.03 + 0.1 * db;
  const double va = 0.999 * 0.00036 + 0.001 * da * da, vb = 0.999 * 0.00009 + 0.001 * db * db;
  const double bc1 = 1 - 0.9 * 0.9, bc2 = 1 - 0.999 * 0.999;
  const double p2a = p1a - 0.01 / bc1 * ma / (std::sqrt(va) / std::sqrt(bc2) + 1e-8);
  const double p2b = p1b - 0.01 / bc1 * mb / (std::sqrt(vb) / std::sqrt(bc2) + 1e-8);
  EXPECT_TRUE(close(p, {p2a, p2b}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(p, {0.9846283245, -1.9885776344}, {2}, 0, 1e-9));  // the same, evaluated
}

TEST(OptimAdamW, OneStepWithDecoupledWeightDecayByHand) {
  Tensor p = leaf64({1.0, -2.0});
  optim::AdamW opt({p}, {/*lr=*/0.01});  // weight_decay defaults to 0.01
  EXPECT_EQ(opt.param_groups()[0].get("weight_decay"), 0.01);
  set_grad(p, {0.5, -0.1});
  opt.step();
  // p *= 1 - 0.01 * 0.01; then p -= 0.01 * g / (|g| + 1e-8) (the moments never see the decay)
  EXPECT_TRUE(close(p, {0.9999 - 0.01 * 0.5 / (0.5 + 1e-8), -1.9998 + 0.01 * 0.1 / (0.1 + 1e-8)}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(p, {0.9899, -1.9898}, {2}, 0, 1e-6));
  EXPECT_TRUE(close(opt.state(0).at("exp_avg"), {0.05, -0.01}, {2}, 0, 1e-15));
}

TEST(OptimSGD, MatchesReferenceLoop) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    const double rtol = dt == TSR_F64 ? 1e-12 : 1e-5, atol = dt == TSR_F64 ? 1e-12 : 1e-6;
    for (optim::SGDOptions o :
         {optim::SGDOptions{0.1}, optim::SGDOptions{0.05, 0.9, 0.1, 0.02}, optim::SGDOptions{0.05, 0.8, 0, 0.01, true},
          optim::SGDOptions{0.1, 0.5, 0, 0, false, true}}) {
      optim_ref::SGD ref{o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov, o.maximize};
      optim_test::run_vs_reference([&](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps, o); }, ref, dt,
                                   rtol, atol);
    }
  }
}

TEST(OptimAdam, MatchesReferenceLoop) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    const double rtol = dt == TSR_F64 ? 1e-11 : 2e-5, atol = dt == TSR_F64 ? 1e-12 : 2e-6;
    for (optim::AdamOptions o : {optim::AdamOptions{0.01}, optim::AdamOptions{0.02, {0.8, 0.99}, 1e-6, 0.1},
                                 optim::AdamOptions{0.01, {0.9, 0.999}, 1e-8, 0, true},
                                 optim::AdamOptions{0.01, {0.9, 0.95}, 1e-8, 0.05, true, true}}) {
      optim_ref::Adam ref{o.lr, o.betas.first, o.betas.second, o.eps, o.weight_decay, o.amsgrad, o.maximize, false};
      optim_test::run_vs_reference([&](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps, o); }, ref,
                                   dt, rtol, atol);
    }
  }
}

TEST(OptimAdamW, MatchesReferenceLoop) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    const double rtol = dt == TSR_F64 ? 1e-11 : 2e-5, atol = dt == TSR_F64 ? 1e-12 : 2e-6;
    for (optim::AdamWOptions o : {optim::AdamWOptions{0.01}, optim::AdamWOptions{0.03, {0.9, 0.95}, 1e-8, 0.1, true}}) {
      optim_ref::Adam ref{o.lr, o.betas.first, o.betas.second, o.eps, o.weight_decay, o.amsgrad, o.maximize, true};
      optim_test::run_vs_reference([&](std::vector<Tensor> ps) { return std::make_unique<optim::AdamW>(ps, o); }, ref,
                                   dt, rtol, atol);
    }
  }
}

TEST(OptimSGD, ParamGroupsTakeTheirOwnOptions) {
  Tensor a = leaf64({1.0, 2.0}), b = leaf64({3.0});
  optim::SGD opt({optim::ParamGroup({a}), optim::ParamGroup({b}, {{"lr", 0.5}, {"weight_decay", 0.1}})}, {0.1});
  set_grad(a, {1.0, -1.0});
  set_grad(b, {2.0});
  opt.step();
  EXPECT_TRUE(close(a, {0.9, 2.1}, {2}, 0, 1e-15));
  EXPECT_TRUE(close(b, {3.0 - 0.5 * (2.0 + 0.3)}, {1}, 0, 1e-15));
  EXPECT_EQ(opt.lr(), 0.1);
  opt.set_lr(0.01);
  EXPECT_EQ(opt.param_groups()[1].lr(), 0.01);
  EXPECT_EQ(opt.num_params(), 2u);
  Tensor c = leaf64({5.0});
  opt.add_param_group(optim::ParamGroup({c}, {{"lr", 1.0}}));
  set_grad(c, {0.25});
  opt.step();
  EXPECT_TRUE(close(c, {4.75}, {1}, 0, 1e-15));
  tsr::StateDict sd = opt.state_dict();
  EXPECT_EQ(sd.at("param_groups.2.params").to_vector<int64_t>(), std::vector<int64_t>{2});
  EXPECT_EQ(sd.at("param_groups.1.params").to_vector<int64_t>(), std::vector<int64_t>{1});
  EXPECT_EQ(sd.at("param_groups.1.weight_decay").item<double>(), 0.1);
  EXPECT_EQ(sd.at("param_groups.1.weight_decay").dim(), 0);
}

TEST(OptimSGD, ZeroGradDropsOrZeroesAndUngradedParamsAreSkipped) {
  Tensor a = leaf64({1.0, 2.0}), b = leaf64({3.0});
  optim::SGD opt({a, b}, {0.1, 0.9});
  set_grad(a, {1.0, 1.0});
  opt.step();
  EXPECT_TRUE(close(b, {3.0}, {1}, 0, 0));
  EXPECT_TRUE(opt.state(1).empty());
  EXPECT_FALSE(opt.state_dict().contains("state.1.momentum_buffer"));
  EXPECT_TRUE(opt.state_dict().contains("state.0.momentum_buffer"));
  EXPECT_FALSE(opt.state_dict().contains("state.0.step"));  // SGD counts no steps, as torch's
  opt.zero_grad(false);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0.0, 0.0}));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(OptimAdam, StateDictLayout) {
  Tensor a = leaf64({1.0, 2.0});
  optim::Adam opt({a}, {0.01, {0.9, 0.99}, 1e-8, 0, true});
  set_grad(a, {1.0, 1.0});
  opt.step();
  opt.step();
  tsr::StateDict sd = opt.state_dict();
  EXPECT_EQ(sd.keys(),
            (std::vector<std::string>{"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq",
                                      "param_groups.0.params", "param_groups.0.amsgrad", "param_groups.0.beta1",
                                      "param_groups.0.beta2", "param_groups.0.eps", "param_groups.0.lr",
                                      "param_groups.0.maximize", "param_groups.0.weight_decay"}));
  EXPECT_EQ(sd.at("state.0.step").dtype(), TSR_I64);
  EXPECT_EQ(sd.at("state.0.step").dim(), 0);
  EXPECT_EQ(sd.at("state.0.step").item<int64_t>(), 2);
  EXPECT_EQ(sd.at("param_groups.0.beta2").dtype(), TSR_F64);
  EXPECT_EQ(sd.at("param_groups.0.beta2").item<double>(), 0.99);
}

TEST(OptimResume, SGDAdamAdamWBitIdenticalNextStep) {
  optim_test::expect_resume_bit_identical(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{0.1, 0.9, 0, 0.01, true});
      },
      [](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps); });
  optim_test::expect_resume_bit_identical(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::Adam>(ps, optim::AdamOptions{0.01, {0.9, 0.99}, 1e-8, 0.1, true});
      },
      [](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps); });
  optim_test::expect_resume_bit_identical(
      [](std::vector<Tensor> ps) { return std::make_unique<optim::AdamW>(ps, optim::AdamWOptions{0.003}); },
      [](std::vector<Tensor> ps) { return std::make_unique<optim::AdamW>(ps); });
}

TEST(OptimResume, LoadCopiesIntoExistingStateTensors) {
  Tensor a = leaf64({1.0, 2.0}), b = leaf64({1.0, 2.0});
  optim::Adam oa({a}, {0.01}), ob({b}, {0.01});
  set_grad(a, {1.0, -1.0});
  set_grad(b, {0.5, 0.5});
  oa.step();
  ob.step();
  Tensor held = ob.state(0).at("exp_avg");
  ob.load_state_dict(oa.state_dict());
  EXPECT_EQ(ob.state(0).at("exp_avg").get(), held.get());
  EXPECT_EQ(held.to_vector<double>(), oa.state(0).at("exp_avg").to_vector<double>());
  EXPECT_FALSE(held.shares_storage(oa.state(0).at("exp_avg")));
}

TEST(OptimResume, StateConvertsToTheParamsDtype) {
  Tensor a = leaf(tsr::from_vector<float>({1.0f, 2.0f}, {2})), b = leaf64({1.0, 2.0});
  optim::Adam oa({a}), ob({b});
  a.set_grad(tsr::from_vector<float>({0.5f, -0.25f}, {2}));
  oa.step();
  ob.load_state_dict(oa.state_dict());
  EXPECT_EQ(ob.state(0).at("exp_avg").dtype(), TSR_F64);
  EXPECT_EQ(ob.state(0).at("exp_avg").to_vector<double>(), (std::vector<double>{0.05f, -0.025f}));
  EXPECT_EQ(ob.state_step(0), 1);
}

TEST(OptimErrors, BadStateDictsAreRejectedAndChangeNothing) {
  Tensor a = leaf(tsr::optest::randu({2, 3}, 3, -1, 1, TSR_F32)), b = leaf(tsr::optest::randu({4}, 4, -1, 1, TSR_F32));
  optim::Adam src({a, b}, {0.01});
  a.set_grad(tsr::optest::randu({2, 3}, 5, -1, 1, TSR_F32));
  b.set_grad(tsr::optest::randu({4}, 6, -1, 1, TSR_F32));
  src.step();
  const tsr::StateDict good = src.state_dict();

  Tensor c = leaf(tsr::optest::randu({2, 3}, 7, -1, 1, TSR_F32)), d = leaf(tsr::optest::randu({4}, 8, -1, 1, TSR_F32));
  optim::Adam dst({c, d}, {0.5});
  c.set_grad(tsr::optest::randu({2, 3}, 9, -1, 1, TSR_F32));
  dst.step();
  const std::vector<float> m0 = dst.state(0).at("exp_avg").to_vector<float>();
  auto unchanged = [&] {
    EXPECT_EQ(dst.lr(), 0.5);
    EXPECT_EQ(dst.state(0).at("exp_avg").to_vector<float>(), m0);
    EXPECT_EQ(dst.state_step(0), 1);
    EXPECT_TRUE(dst.state(1).empty());
  };
  auto with = [&](const std::string& key, Tensor t) {
    tsr::StateDict sd = good;
    if (t.defined())
      sd.insert(key, t);
    else
      sd.erase(key);
    return sd;
  };
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("state.1.exp_avg", tsr::zeros({3}))); },
                          {"Adam", "'state.1.exp_avg' has shape [3] but parameter 1 has shape [4]"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("state.1.exp_avg_sq", Tensor())); },
                          {"Adam", "missing 'state.1.exp_avg_sq'"}));
  unchanged();
  EXPECT_TRUE(
      throws_with([&] { dst.load_state_dict(with("param_groups.0.lr", Tensor())); }, {"missing 'param_groups.0.lr'"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("state.2.exp_avg", tsr::zeros({4}))); },
                          {"names parameter 2 but the Adam optimizer has 2 parameters"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("param_groups.0.momentum", tsr::zeros({}))); },
                          {"'param_groups.0.momentum' is not an option of Adam"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("param_groups.0.beta1", tsr::full({}, 1.5, TSR_F64))); },
                          {"Adam: Invalid beta parameter at index 0: 1.5"}));
  unchanged();
  EXPECT_TRUE(throws_with(
      [&] {
        dst.load_state_dict(with("state.0.max_exp_avg_sq", tsr::zeros({2, 3})));
      },
      {"unexpected state_dict entry 'state.0.max_exp_avg_sq'"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("state.0.step", tsr::full({}, -2, TSR_I64))); },
                          {"'state.0.step' must be a count >= 0, got -2"}));
  unchanged();
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(with("model.weight", tsr::zeros({2}))); },
                          {"unexpected state_dict entry 'model.weight'"}));
  unchanged();
  // A state_dict of a one-parameter optimizer: the group sizes differ.
  Tensor e = leaf(tsr::optest::randu({2, 3}, 10, -1, 1, TSR_F32));
  optim::Adam one({e});
  EXPECT_TRUE(
      throws_with([&] { dst.load_state_dict(one.state_dict()); },
                  {"parameter group (param_groups.0.params) of 1 parameters but group 0 of the Adam optimizer has 2"}));
  unchanged();
  // An SGD state_dict lacks Adam's options.
  optim::SGD sgd({leaf(tsr::zeros({2, 3})), leaf(tsr::zeros({4}))});
  EXPECT_TRUE(throws_with([&] { dst.load_state_dict(sgd.state_dict()); }, {"Adam", "not an option of Adam"}));
  unchanged();
  EXPECT_NO_THROW(dst.load_state_dict(good));
  EXPECT_EQ(dst.lr(), 0.01);
  EXPECT_EQ(dst.state_step(1), 1);
}

TEST(OptimErrors, SGDStateDictWithAStepCountIsRejected) {
  Tensor a = leaf64({1.0, 2.0});
  std::vector<optim::ParamGroup> groups{optim::ParamGroup({a}, {{"momentum", 0.9}})};
  optim::SGD opt(groups);
  set_grad(a, {1.0, 1.0});
  opt.step();
  tsr::StateDict sd = opt.state_dict();
  sd.insert("state.0.step", tsr::full({}, 1, TSR_I64));
  EXPECT_TRUE(throws_with([&] { opt.load_state_dict(sd); }, {"SGD: unexpected state_dict entry 'state.0.step'"}));
}

TEST(OptimErrors, ConstructorChecksOptionsAndParams) {
  Tensor a = leaf64({1.0});
  EXPECT_TRUE(throws_with([&] { optim::SGD({a}, {-1.0}); }, {"SGD: Invalid learning rate: -1"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SGD({a}, {0.1, 0.0, 0, 0, true});
      },
      {"SGD: Nesterov momentum requires a momentum and zero dampening"}));
  EXPECT_TRUE(throws_with([&] { optim::SGD({a}, {0.1, -0.5}); }, {"Invalid momentum value: -0.5"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::Adam({a}, {0.1, {1.0, 0.9}});
      },
      {"Adam: Invalid beta parameter at index 0: 1"}));
  EXPECT_TRUE(throws_with([&] { optim::AdamW({a}, {0.1, {0.9, 0.9}, -1e-8}); }, {"AdamW: Invalid epsilon value"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::Adam({a}, {0.1, {0.9, 0.9}, 1e-8, -0.1});
      },
      {"Invalid weight_decay value: -0.1"}));
  EXPECT_TRUE(throws_with([&] { optim::SGD(std::vector<Tensor>{}); }, {"SGD: optimizer got an empty parameter list"}));
  EXPECT_TRUE(throws_with([&] { optim::SGD({a, a}); }, {"parameter 1 appears more than once"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SGD({leaf64({1.0}), tsr::arange(3)});
      },
      {"parameter 1 must be floating point, got int64"}));
  Tensor nonleaf = a * 2.0;
  EXPECT_TRUE(throws_with([&] { optim::SGD({nonleaf}); }, {"can't optimize a non-leaf tensor (parameter 0)"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SGD({optim::ParamGroup({a}, {{"betas", 0.9}})}, {});
      },
      {"SGD: unknown option 'betas'"}));
  optim::SGD ok({a});
  EXPECT_TRUE(throws_with([&] { ok.add_param_group(optim::ParamGroup({a})); }, {"parameter 1 appears more than once"}));
  EXPECT_EQ(ok.param_groups().size(), 1u);
}

TEST(OptimErrors, SwappedParamIsCaughtBeforeAnyUpdate) {
  Tensor a = leaf64({1.0, 2.0}), b = leaf64({3.0, 4.0, 5.0});
  optim::SGD opt({a, b}, {0.1, 0.9});
  set_grad(a, {1.0, 1.0});
  set_grad(b, {1.0, 1.0, 1.0});
  opt.step();
  const std::vector<double> a1 = a.to_vector<double>();
  Tensor swapped = leaf64({0.0, 0.0});
  swapped.set_grad(tsr::from_vector<double>({1.0, 1.0}, {2}));
  opt.param_groups()[0].params[1] = swapped;
  EXPECT_TRUE(
      throws_with([&] { opt.step(); },
                  {"SGD: state 'momentum_buffer' of parameter 1 has shape [3] but the parameter has shape [2]"}));
  EXPECT_EQ(a.to_vector<double>(), a1);  // parameter 0 was not updated either
  opt.param_groups()[0].params.push_back(leaf64({1.0}));
  EXPECT_TRUE(throws_with([&] { opt.step(); }, {"SGD: the parameter lists changed", "add_param_group"}));
}

TEST(OptimErrors, MismatchedGradsNeverReachTheOptimizer) {
  // The core refuses a grad whose shape or dtype differs from its tensor; the optimizer's own
  // check (which names the optimizer) guards against anything that gets past it.
  Tensor a = leaf64({1.0, 2.0});
  EXPECT_THROW(a.set_grad(tsr::zeros({3}, TSR_F64)), tsr::Error);
  EXPECT_THROW(a.set_grad(tsr::zeros({2}, TSR_F32)), tsr::Error);
}

}  // namespace
