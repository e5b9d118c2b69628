// Backward formulas of softmax and log_softmax (declared in ops/linalg/linalg.cpp), from the saved
// outputs so the forward's input need not be kept.
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

// dx = y * (g - sum(g * y))
void softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  std::vector<int64_t> dim{y.dim() == 0 ? 0 : c.int_arg(1)};
  c.set(0, y * (g - tsr::sum(g * y, dim, true)));
}

// dx = g - exp(y) * sum(g)
void log_softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  std::vector<int64_t> dim{y.dim() == 0 ? 0 : c.int_arg(1)};
  c.set(0, g - tsr::exp(y) * tsr::sum(g, dim, true));
}

}  // namespace

TSR_CORE_BACKWARDS(nn_softmax) {
  b.push_back({"softmax", softmax_backward, kSaveOutputs});
  b.push_back({"log_softmax", log_softmax_backward, kSaveOutputs});
}

}  // namespace tsr::core
