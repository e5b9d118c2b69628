// Tessera SDK: Identity, Linear and Bilinear layers (torch.nn.Identity/Linear/Bilinear).
//
// Linear(in, out, bias=true): y = x W^T + b over the last dim; weight [out, in], bias [out].
// Init as PyTorch: weight kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)), bias the same
// bound (0 when in == 0). Bilinear(in1, in2, out): y[o] = x1^T W[o] x2 + b[o]; weight
// [out, in1, in2], weight and bias U(-1/sqrt(in1), 1/sqrt(in1)). Both draw from the runtime RNG.
//
// Ownership: a layer owns its parameter tensors (public members, registered by pointer; see
// nn/module.hpp). Errors: tsr::Error naming the layer, its sizes and the input's shape.
// Thread-safety: as nn::Module.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "tessera/nn/init.hpp"
#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

// Returns its input; a placeholder in Sequential (e.g. an optional norm).
class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& x) override { return x; }
};

class Linear : public Module {
 public:
  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when built with bias=false

  Linear(int64_t in_features, int64_t out_features, bool with_bias = true)
      : Module("Linear"), in_features(in_features), out_features(out_features) {
    if (in_features < 0 || out_features < 0)
      detail::fail("Linear", "in_features and out_features must be >= 0, got " + std::to_string(in_features) + ", " +
                                 std::to_string(out_features));
    weight = empty({out_features, in_features});
    if (with_bias) bias = empty({out_features});
    reset_parameters();
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  void reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) {
      double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
      init::uniform_(bias, -bound, bound);
    }
  }

  Tensor forward(const Tensor& x) override {
    detail::require_input(*this, x);
    auto s = x.sizes();
    if (s.empty() || s.back() != in_features)
      detail::fail(name(), "input " + detail::shape_str(s) + " must end in in_features=" + std::to_string(in_features));
    return linear(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
  }

  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
           ", bias=" + detail::bool_str(bias.defined());
  }

 private:
  std::string name() const { return "Linear(" + extra_repr() + ")"; }
};

class Bilinear : public Module {
 public:
  int64_t in1_features, in2_features, out_features;
  Tensor weight, bias;

  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool with_bias = true)
      : Module("Bilinear"), in1_features(in1_features), in2_features(in2_features), out_features(out_features) {
    if (in1_features < 0 || in2_features < 0 || out_features < 0)
      detail::fail("Bilinear", "feature sizes must be >= 0, got " + extra_repr());
    weight = empty({out_features, in1_features, in2_features});
    if (with_bias) bias = empty({out_features});
    reset_parameters();
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  void reset_parameters() {
    double bound = in1_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in1_features)) : 0.0;
    init::uniform_(weight, -bound, bound);
    if (bias.defined()) init::uniform_(bias, -bound, bound);
  }

  // x1 [..., in1], x2 [..., in2] with the same leading dims -> [..., out].
  Tensor forward(const Tensor& x1, const Tensor& x2) {
    detail::require_input(*this, x1);
    detail::require_input(*this, x2);
    auto s1 = x1.sizes(), s2 = x2.sizes();
    if (s1.empty() || s2.empty() || s1.back() != in1_features || s2.back() != in2_features ||
        std::vector<int64_t>(s1.begin(), s1.end() - 1) != std::vector<int64_t>(s2.begin(), s2.end() - 1))
      detail::fail(name(), "inputs " + detail::shape_str(s1) + " and " + detail::shape_str(s2) +
                               " must be [..., in1_features] and [..., in2_features] with the same leading dims");
    std::vector<int64_t> lead(s1.begin(), s1.end() - 1);
    int64_t n = 1;
    for (int64_t d : lead) n *= d;
    // One matmul x1 . W (as [in1, out*in2]) then a product with x2 summed over in2: the BLAS
    // does the O(n*in1*out*in2) part and autograd comes from the composed ops.
    Tensor a = x1.reshape({n, in1_features});
    Tensor b = x2.reshape({n, 1, in2_features});
    Tensor w = weight.permute({1, 0, 2}).reshape({in1_features, out_features * in2_features});
    Tensor t = matmul(a, w).reshape({n, out_features, in2_features});
    Tensor y = sum(t * b, {2});
    if (bias.defined()) y = y + bias;
    lead.push_back(out_features);
    return y.reshape(lead);
  }
  Tensor forward(const Tensor&) override {
    throw Error(TSR_INVALID_ARGUMENT, name() + ": takes two inputs, call forward(x1, x2)");
  }
  Tensor operator()(const Tensor& x1, const Tensor& x2) { return forward(x1, x2); }

  std::string extra_repr() const override {
    return "in1_features=" + std::to_string(in1_features) + ", in2_features=" + std::to_string(in2_features) +
           ", out_features=" + std::to_string(out_features) + ", bias=" + detail::bool_str(bias.defined());
  }

 private:
  std::string name() const { return "Bilinear(" + extra_repr() + ")"; }
};

}  // namespace tsr::nn
