// Tessera SDK: host wrappers of the fused optimizer steps (included through tessera/ops/linalg.hpp).
// They update param (and the state tensors) in place and are never recorded by autograd.
#pragma once

#include <optional>

#include "tessera/tessera.hpp"

namespace tsr {

struct SgdOptions {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};
// is_first_step: the buffer is initialized to the (decayed) gradient, as torch.optim.SGD does
// when the state is empty.
inline Tensor& sgd_step_(Tensor& param, const Tensor& grad, const std::optional<Tensor>& momentum_buffer,
                         const SgdOptions& o, bool is_first_step = false) {
  static const Op op("sgd_step_");
  call(op, {param, grad, detail::opt_tensor_arg(momentum_buffer), o.lr, o.momentum, o.dampening, o.weight_decay,
            o.nesterov, o.maximize, is_first_step});
  return param;
}

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, decoupled_weight_decay = false, maximize = false;  // decoupled: AdamW
};
// step: the step count including this update (1 for the first).
inline Tensor& adam_step_(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                          const std::optional<Tensor>& max_exp_avg_sq, int64_t step, const AdamOptions& o) {
  static const Op op("adam_step_");
  call(op, {param, grad, exp_avg, exp_avg_sq, detail::opt_tensor_arg(max_exp_avg_sq), step, o.lr, o.beta1, o.beta2,
            o.eps, o.weight_decay, o.amsgrad, o.decoupled_weight_decay, o.maximize});
  return param;
}

}  // namespace tsr
