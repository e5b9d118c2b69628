// Tessera SDK: gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
//
// clip_grad_norm_ computes the p-norm of all gradients together (the norm of the per-tensor
// norms; p = inf takes the largest |g|), returns it, and scales every gradient in place by
// max_norm / (total + 1e-6) when that factor is below 1, as torch does. The per-tensor norms
// come from the norm op in the gradient's dtype; they are combined in double on the host.
// Parameters without a gradient are skipped; none at all gives 0.
//
// Ownership: the gradients are modified in place (the tensors param.grad() returns).
// Errors: tsr::Error naming the function: a non-finite total with error_if_nonfinite, a
// negative or NaN max_norm / clip_value. Nothing is scaled when it throws.
// Thread-safety: none for the same parameters; independent parameter sets may be clipped
// from different threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace tsr::optim {

inline double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  auto num = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (!(max_norm >= 0))
    throw Error(TSR_INVALID_ARGUMENT, "clip_grad_norm_: max_norm must be >= 0, got " + num(max_norm));
  if (!(norm_type > 0))
    throw Error(TSR_INVALID_ARGUMENT, "clip_grad_norm_: norm_type must be > 0 or inf, got " + num(norm_type));
  NoGradGuard ng;
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    Tensor g = p.grad();
    if (g.defined()) grads.push_back(g);
  }
  if (grads.empty()) return 0.0;
  const bool inf = std::isinf(norm_type) && norm_type > 0;
  double total = 0;
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    const double n = norm(g, norm_type).item<double>();
    if (inf)
      total = (std::isnan(n) || std::isnan(total)) ? std::nan("") : std::max(total, n);
    else
      total += std::pow(n, norm_type);
  }
  if (!inf) total = std::pow(total, 1.0 / norm_type);
  if (error_if_nonfinite && !std::isfinite(total))
    throw Error(TSR_INVALID_ARGUMENT, "clip_grad_norm_: the total norm of order " + num(norm_type) +
                                          " for gradients from `parameters` is non-finite (" + num(total) +
                                          "), so it cannot be clipped. To disable this error and scale the "
                                          "gradients by the non-finite norm anyway, set error_if_nonfinite=false");
  const double coef = max_norm / (total + 1e-6);
  // torch multiplies by min(coef, 1) unconditionally; a factor of exactly 1 changes nothing,
  // and a NaN total (coef NaN) propagates into the grads the same way.
  if (!(coef >= 1.0))
    for (Tensor& g : grads) mul_(g, coef);
  return total;
}

// Clamps every gradient to [-clip_value, clip_value] in place.
inline void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  if (!(clip_value >= 0))
    throw Error(TSR_INVALID_ARGUMENT, "clip_grad_value_: clip_value must be >= 0, got " + std::to_string(clip_value));
  NoGradGuard ng;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    Tensor g = p.grad();
    if (g.defined()) clamp_(g, -clip_value, clip_value);
  }
}

}  // namespace tsr::optim
