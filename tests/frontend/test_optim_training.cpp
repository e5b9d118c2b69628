// The optimizers in a real loop (backward, clip_grad_norm_, step, zero_grad, scheduler step):
// each must drive a small least-squares problem to its known solution.
#include <gtest/gtest.h>

#include <functional>

#include "op_test.hpp"
#include "tessera/optim.hpp"

namespace {

using tsr::Tensor;
namespace optim = tsr::optim;

struct Problem {
  Tensor x, y, w, b;
  std::vector<double> w_true{1.5, -2.0, 0.5, 3.0};
  Problem() {
    x = tsr::optest::randu({64, 4}, 11, -1, 1, TSR_F32);
    Tensor wt = tsr::from_vector<float>({1.5f, -2.0f, 0.5f, 3.0f}, {4, 1});
    y = tsr::matmul(x, wt) + 0.25;
    w = tsr::optest::randu({4, 1}, 12, -0.1, 0.1, TSR_F32).clone();
    w.requires_grad_();
    b = tsr::zeros({1});
    b.requires_grad_();
  }
  double loss_step() {
    Tensor d = tsr::matmul(x, w) + b - y;
    Tensor loss = tsr::mean(d * d);
    loss.backward();
    return loss.item<float>();
  }
};

void fits(const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>& make, int steps, double tol) {
  Problem P;
  auto opt = make({P.w, P.b});
  optim::WarmupCosine sched(*opt, 10, steps, 0.01);
  double first = 0, last = 0;
  for (int s = 0; s < steps; ++s) {
    last = P.loss_step();
    if (s == 0) first = last;
    optim::clip_grad_norm_({P.w, P.b}, 5.0);
    opt->step();
    opt->zero_grad();
    sched.step();
  }
  EXPECT_LT(last, first * 1e-3) << opt->name();
  EXPECT_TRUE(tsr::optest::close(P.w, P.w_true, {4, 1}, 0, tol)) << opt->name();
  EXPECT_TRUE(tsr::optest::close(P.b, {0.25}, {1}, 0, tol)) << opt->name();
}

TEST(OptimTraining, EveryOptimizerSolvesLeastSquares) {
  fits(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{0.3, 0.9, 0, 0, true});
      },
      300, 1e-3);
  fits([](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps, optim::AdamOptions{0.1}); }, 400, 1e-3);
  fits(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::AdamW>(ps, optim::AdamWOptions{0.1, {0.9, 0.999}, 1e-8, 0.0});
      },
      400, 1e-3);
  fits(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::RMSprop>(ps, optim::RMSpropOptions{0.02, 0.99, 1e-8, 0, 0.5});
      },
      400, 1e-3);
  fits([](std::vector<Tensor> ps) { return std::make_unique<optim::Adagrad>(ps, optim::AdagradOptions{1.0}); }, 400,
       1e-3);
}

}  // namespace
