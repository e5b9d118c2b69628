// Tessera SDK: activation modules (torch.nn names and defaults): ReLU, ReLU6, GELU, SiLU, Tanh,
// Sigmoid, Mish, SELU, Hardswish, Hardsigmoid, LeakyReLU, ELU, CELU, Softplus, Hardtanh,
// Softmax(dim), LogSoftmax(dim). Each wraps the elementwise op of the same name; none has
// parameters. Deviations: no inplace flag (use the tsr::relu_ style ops directly); Softmax and
// LogSoftmax require dim (PyTorch's implicit-dim choice is deprecated there).
//
// Ownership: no tensors. Errors: tsr::Error for bad constructor arguments (GELU's approximate
// not 'none'/'tanh'); op errors name the op and the input. Thread-safety: stateless forwards.
#pragma once

#include <string>

#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

#define TSR_NN_SIMPLE_ACTIVATION(Name, fn)                            \
  class Name : public Module {                                        \
   public:                                                            \
    Name() : Module(#Name) {}                                         \
    Tensor forward(const Tensor& x) override { return ::tsr::fn(x); } \
  };
TSR_NN_SIMPLE_ACTIVATION(ReLU, relu)
TSR_NN_SIMPLE_ACTIVATION(ReLU6, relu6)
TSR_NN_SIMPLE_ACTIVATION(SiLU, silu)
TSR_NN_SIMPLE_ACTIVATION(Tanh, tanh)
TSR_NN_SIMPLE_ACTIVATION(Sigmoid, sigmoid)
TSR_NN_SIMPLE_ACTIVATION(Mish, mish)
TSR_NN_SIMPLE_ACTIVATION(SELU, selu)
TSR_NN_SIMPLE_ACTIVATION(Hardswish, hardswish)
TSR_NN_SIMPLE_ACTIVATION(Hardsigmoid, hardsigmoid)
#undef TSR_NN_SIMPLE_ACTIVATION

// approximate: "none" (exact erf form) or "tanh".
class GELU : public Module {
 public:
  std::string approximate;
  explicit GELU(std::string approximate = "none") : Module("GELU"), approximate(std::move(approximate)) {
    if (this->approximate != "none" && this->approximate != "tanh")
      detail::fail("GELU", "approximate must be 'none' or 'tanh', got '" + this->approximate + "'");
  }
  Tensor forward(const Tensor& x) override { return ::tsr::gelu(x, approximate.c_str()); }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
};

class LeakyReLU : public Module {
 public:
  double negative_slope;
  explicit LeakyReLU(double negative_slope = 0.01) : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& x) override { return ::tsr::leaky_relu(x, negative_slope); }
  std::string extra_repr() const override { return "negative_slope=" + detail::num_str(negative_slope); }
};

class ELU : public Module {
 public:
  double alpha;
  explicit ELU(double alpha = 1.0) : Module("ELU"), alpha(alpha) {}
  Tensor forward(const Tensor& x) override { return ::tsr::elu(x, alpha); }
  std::string extra_repr() const override { return "alpha=" + detail::num_str(alpha); }
};

class CELU : public Module {
 public:
  double alpha;
  explicit CELU(double alpha = 1.0) : Module("CELU"), alpha(alpha) {
    if (alpha == 0.0) detail::fail("CELU", "alpha must not be 0");
  }
  Tensor forward(const Tensor& x) override { return ::tsr::celu(x, alpha); }
  std::string extra_repr() const override { return "alpha=" + detail::num_str(alpha); }
};

class Softplus : public Module {
 public:
  double beta, threshold;
  explicit Softplus(double beta = 1.0, double threshold = 20.0)
      : Module("Softplus"), beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& x) override { return ::tsr::softplus(x, beta, threshold); }
  std::string extra_repr() const override {
    return "beta=" + detail::num_str(beta) + ", threshold=" + detail::num_str(threshold);
  }
};

class Hardtanh : public Module {
 public:
  double min_val, max_val;
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0)
      : Module("Hardtanh"), min_val(min_val), max_val(max_val) {
    if (!(min_val <= max_val))
      detail::fail("Hardtanh",
                   "min_val=" + detail::num_str(min_val) + " must be <= max_val=" + detail::num_str(max_val));
  }
  Tensor forward(const Tensor& x) override { return ::tsr::hardtanh(x, min_val, max_val); }
  std::string extra_repr() const override {
    return "min_val=" + detail::num_str(min_val) + ", max_val=" + detail::num_str(max_val);
  }
};

class Softmax : public Module {
 public:
  int64_t dim;
  explicit Softmax(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) override { return ::tsr::softmax(x, dim); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
};

class LogSoftmax : public Module {
 public:
  int64_t dim;
  explicit LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) override { return ::tsr::log_softmax(x, dim); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
};

}  // namespace tsr::nn
