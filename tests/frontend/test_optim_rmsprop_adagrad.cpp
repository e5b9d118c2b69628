// RMSprop and Adagrad: one step by hand, several steps against float64 reference loops
// (tests/frontend/optim_reference.hpp), state_dict resume, Adagrad's construction-time state
// and the option errors.
#include <gtest/gtest.h>

#include <cmath>

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

TEST(OptimRMSprop, OneStepByHand) {
  Tensor p = leaf64({1.0, -2.0});
  optim::RMSprop opt({p}, {/*lr=*/0.01});
  set_grad(p, {0.5, -0.1});
  opt.step();
  // square_avg = 0.01 g^2 = (0.0025, 0.0001); avg = sqrt + 1e-8 = (0.05, 0.01); p -= 0.01 g / avg
  EXPECT_TRUE(close(p, {1.0 - 0.01 * 0.5 / (0.05 + 1e-8), -2.0 + 0.01 * 0.1 / (0.01 + 1e-8)}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(p, {0.9, -1.9}, {2}, 0, 1e-6));
  EXPECT_TRUE(close(opt.state(0).at("square_avg"), {0.0025, 0.0001}, {2}, 0, 1e-15));
}

TEST(OptimRMSprop, CenteredMomentumStepByHand) {
  Tensor p = leaf64({1.0});
  optim::RMSprop opt(
      {p}, {/*lr=*/0.1, /*alpha=*/0.9, /*eps=*/0.0, /*weight_decay=*/0.5, /*momentum=*/0.5, /*centered=*/true});
  set_grad(p, {1.5});
  opt.step();
  // d = 1.5 + 0.5 = 2; square_avg = 0.1 * 4 = 0.4; grad_avg = 0.1 * 2 = 0.2; avg = sqrt(0.4 - 0.04) = 0.6
  // buf = 2 / 0.6; p = 1 - 0.1 * buf
  EXPECT_TRUE(close(p, {1.0 - 0.1 * 2.0 / 0.6}, {1}, 0, 1e-12));
  EXPECT_TRUE(close(opt.state(0).at("grad_avg"), {0.2}, {1}, 0, 1e-15));
  EXPECT_TRUE(close(opt.state(0).at("momentum_buffer"), {2.0 / 0.6}, {1}, 0, 1e-12));
}

TEST(OptimRMSprop, MatchesReferenceLoop) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    const double rtol = dt == TSR_F64 ? 1e-11 : 2e-5, atol = dt == TSR_F64 ? 1e-12 : 2e-6;
    for (optim::RMSpropOptions o : {optim::RMSpropOptions{0.01}, optim::RMSpropOptions{0.01, 0.9, 1e-6, 0.1, 0.0, true},
                                    optim::RMSpropOptions{0.005, 0.95, 1e-8, 0.0, 0.9, false},
                                    optim::RMSpropOptions{0.005, 0.8, 1e-8, 0.05, 0.5, true, true}}) {
      optim_ref::RMSprop ref{o.lr, o.alpha, o.eps, o.weight_decay, o.momentum, o.centered, o.maximize};
      optim_test::run_vs_reference([&](std::vector<Tensor> ps) { return std::make_unique<optim::RMSprop>(ps, o); }, ref,
                                   dt, rtol, atol);
    }
  }
}

TEST(OptimAdagrad, OneStepByHand) {
  Tensor p = leaf64({1.0, -2.0});
  optim::Adagrad opt({p}, {/*lr=*/0.1, /*lr_decay=*/0, /*weight_decay=*/0, /*initial_accumulator_value=*/0.1});
  EXPECT_TRUE(close(opt.state(0).at("sum"), {0.1, 0.1}, {2}, 0, 0));  // state exists before any step
  set_grad(p, {0.5, -0.1});
  opt.step();
  // sum = 0.1 + g^2 = (0.35, 0.11); p -= 0.1 g / (sqrt(sum) + 1e-10)
  EXPECT_TRUE(
      close(p, {1.0 - 0.05 / (std::sqrt(0.35) + 1e-10), -2.0 + 0.01 / (std::sqrt(0.11) + 1e-10)}, {2}, 0, 1e-12));
  EXPECT_TRUE(close(p, {0.9154845, -1.9698489}, {2}, 0, 1e-6));
  // lr_decay: the second step's lr is 0.1 / (1 + 1 * 0.5).
  Tensor q = leaf64({0.0});
  optim::Adagrad o2({q}, {0.1, 0.5});
  set_grad(q, {2.0});
  o2.step();
  set_grad(q, {2.0});
  o2.step();
  EXPECT_TRUE(close(q, {-0.1 * 2 / (2.0 + 1e-10) - 0.1 / 1.5 * 2 / (std::sqrt(8.0) + 1e-10)}, {1}, 0, 1e-15));
}

TEST(OptimAdagrad, MatchesReferenceLoop) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    const double rtol = dt == TSR_F64 ? 1e-11 : 2e-5, atol = dt == TSR_F64 ? 1e-12 : 2e-6;
    for (optim::AdagradOptions o : {optim::AdagradOptions{0.05}, optim::AdagradOptions{0.05, 0.1, 0.05, 0.2, 1e-8},
                                    optim::AdagradOptions{0.02, 0.0, 0.0, 0.5, 1e-10, true}}) {
      optim_ref::Adagrad ref{o.lr, o.lr_decay, o.weight_decay, o.initial_accumulator_value, o.eps, o.maximize};
      optim_test::run_vs_reference([&](std::vector<Tensor> ps) { return std::make_unique<optim::Adagrad>(ps, o); }, ref,
                                   dt, rtol, atol);
    }
  }
}

TEST(OptimResume, RMSpropAdagradBitIdenticalNextStep) {
  optim_test::expect_resume_bit_identical(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::RMSprop>(ps, optim::RMSpropOptions{0.01, 0.9, 1e-8, 0.01, 0.9, true});
      },
      [](std::vector<Tensor> ps) { return std::make_unique<optim::RMSprop>(ps); });
  optim_test::expect_resume_bit_identical(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::Adagrad>(ps, optim::AdagradOptions{0.05, 0.01, 0.0, 0.1});
      },
      [](std::vector<Tensor> ps) { return std::make_unique<optim::Adagrad>(ps); });
}

TEST(OptimErrors, RMSpropAdagradOptions) {
  Tensor a = leaf64({1.0});
  EXPECT_TRUE(throws_with([&] { optim::RMSprop({a}, {0.01, -0.1}); }, {"RMSprop: Invalid alpha value: -0.1"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::RMSprop({a}, {0.01, 0.99, 1e-8, 0, -1});
      },
      {"RMSprop: Invalid momentum value: -1"}));
  EXPECT_TRUE(throws_with([&] { optim::Adagrad({a}, {0.01, -1}); }, {"Adagrad: Invalid lr_decay value: -1"}));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::Adagrad({a}, {0.01, 0, 0, -0.5});
      },
      {"Adagrad: Invalid initial_accumulator_value value: -0.5"}));
  // Switching centered on between steps adds the missing state (from zero), as a fresh start.
  optim::RMSprop opt({a}, {0.01});
  set_grad(a, {1.0});
  opt.step();
  opt.param_groups()[0].set("centered", 1);
  opt.step();
  EXPECT_TRUE(opt.state(0).contains("grad_avg"));
  EXPECT_TRUE(opt.state_dict().contains("state.0.grad_avg"));
}

}  // namespace
