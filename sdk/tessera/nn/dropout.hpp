// Tessera SDK: Dropout (torch.nn.Dropout). In training mode each element is zeroed with
// probability p and the rest scaled by 1/(1-p) (the mask from the runtime's Philox stream, so
// tsr::manual_seed reproduces it); in eval mode, and for p == 0, the input is returned as is.
//
// Ownership: no tensors. Errors: tsr::Error for p outside [0, 1]. Thread-safety: as nn::Module
// (training-mode calls from several threads share the RNG stream).
#pragma once

#include <string>

#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class Dropout : public Module {
 public:
  double p;

  explicit Dropout(double p = 0.5) : Module("Dropout"), p(p) {
    if (!(p >= 0.0 && p <= 1.0)) detail::fail("Dropout", "probability p must be in [0, 1], got " + detail::num_str(p));
  }

  Tensor forward(const Tensor& x) override {
    detail::require_input(*this, x);
    if (!is_training() || p == 0.0) return x;
    return dropout(x, p, true);
  }

  std::string extra_repr() const override { return "p=" + detail::num_str(p); }
};

}  // namespace tsr::nn
