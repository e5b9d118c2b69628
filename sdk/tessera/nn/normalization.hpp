// Tessera SDK: LayerNorm, RMSNorm and GroupNorm (torch.nn names, arguments and defaults).
//
// LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=true, bias=true): normalizes over
// the trailing dims given; weight ones, bias zeros, both of normalized_shape.
// RMSNorm(normalized_shape, eps=nullopt (the dtype's epsilon, as PyTorch), elementwise_affine):
// x / sqrt(mean(x^2) + eps) * weight; weight ones.
// GroupNorm(num_groups, num_channels, eps=1e-5, affine=true): input [N, C, *]; weight ones and
// bias zeros of [C]; num_channels must be divisible by num_groups.
// BatchNorm lives in nn/batchnorm.hpp.
//
// Ownership: each layer owns its parameters (public members). Errors: tsr::Error naming the
// layer (with its arguments) and the input's shape. Thread-safety: as nn::Module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/init.hpp"
#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

namespace detail {
inline void check_norm_shape(const std::string& layer, const std::vector<int64_t>& shape) {
  if (shape.empty()) fail(layer, "normalized_shape must not be empty");
  for (int64_t d : shape)
    if (d < 0) fail(layer, "normalized_shape " + shape_str(shape) + " has a negative size");
}
// x's trailing dims must equal `shape`.
inline void check_trailing(const Module& layer, const Tensor& x, const std::vector<int64_t>& shape) {
  require_input(layer, x);
  auto s = x.sizes();
  bool ok = s.size() >= shape.size() &&
            std::equal(shape.begin(), shape.end(), s.end() - static_cast<std::ptrdiff_t>(shape.size()));
  if (!ok) fail(layer_name(layer), "input " + shape_str(s) + " must end in normalized_shape " + shape_str(shape));
}
}  // namespace detail

class LayerNorm : public Module {
 public:
  std::vector<int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight, bias;

  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool with_bias = true)
      : Module("LayerNorm"),
        normalized_shape(std::move(normalized_shape)),
        eps(eps),
        elementwise_affine(elementwise_affine) {
    detail::check_norm_shape("LayerNorm", this->normalized_shape);
    if (elementwise_affine) {
      weight = ones(this->normalized_shape);
      if (with_bias) bias = zeros(this->normalized_shape);
    }
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }
  // LayerNorm(n) for the common 1-D case. Deliberately one argument: with more, a braced
  // LayerNorm({a, b}) would also match a move from LayerNorm(a, b) and be ambiguous.
  explicit LayerNorm(int64_t normalized_size) : LayerNorm(std::vector<int64_t>{normalized_size}) {}

  void reset_parameters() {
    if (weight.defined()) init::ones_(weight);
    if (bias.defined()) init::zeros_(bias);
  }

  Tensor forward(const Tensor& x) override {
    detail::check_trailing(*this, x, normalized_shape);
    return layer_norm(x, normalized_shape, opt(weight), opt(bias), eps);
  }

  std::string extra_repr() const override {
    return detail::tuple_str(normalized_shape) + ", eps=" + detail::num_str(eps) +
           ", elementwise_affine=" + detail::bool_str(elementwise_affine);
  }

 private:
  std::string name() const { return "LayerNorm(" + extra_repr() + ")"; }
  static std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
};

class RMSNorm : public Module {
 public:
  std::vector<int64_t> normalized_shape;
  std::optional<double> eps;
  bool elementwise_affine;
  Tensor weight;

  explicit RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
                   bool elementwise_affine = true)
      : Module("RMSNorm"),
        normalized_shape(std::move(normalized_shape)),
        eps(eps),
        elementwise_affine(elementwise_affine) {
    detail::check_norm_shape("RMSNorm", this->normalized_shape);
    if (elementwise_affine) weight = ones(this->normalized_shape);
    register_parameter("weight", weight);
  }
  explicit RMSNorm(int64_t normalized_size) : RMSNorm(std::vector<int64_t>{normalized_size}) {}  // see LayerNorm(n)

  void reset_parameters() {
    if (weight.defined()) init::ones_(weight);
  }

  Tensor forward(const Tensor& x) override {
    detail::check_trailing(*this, x, normalized_shape);
    return rms_norm(x, normalized_shape, weight.defined() ? std::optional<Tensor>(weight) : std::nullopt, eps);
  }

  std::string extra_repr() const override {
    return detail::tuple_str(normalized_shape) + ", eps=" + (eps ? detail::num_str(*eps) : std::string("None")) +
           ", elementwise_affine=" + detail::bool_str(elementwise_affine);
  }

 private:
  std::string name() const { return "RMSNorm(" + extra_repr() + ")"; }
};

class GroupNorm : public Module {
 public:
  int64_t num_groups, num_channels;
  double eps;
  bool affine;
  Tensor weight, bias;

  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true)
      : Module("GroupNorm"), num_groups(num_groups), num_channels(num_channels), eps(eps), affine(affine) {
    if (num_groups <= 0 || num_channels < 0 || num_channels % num_groups != 0)
      detail::fail("GroupNorm", "num_channels=" + std::to_string(num_channels) +
                                    " must be divisible by num_groups=" + std::to_string(num_groups) + " (> 0)");
    if (affine) {
      weight = ones({num_channels});
      bias = zeros({num_channels});
    }
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  void reset_parameters() {
    if (weight.defined()) init::ones_(weight);
    if (bias.defined()) init::zeros_(bias);
  }

  Tensor forward(const Tensor& x) override {
    detail::require_input(*this, x);
    auto s = x.sizes();
    if (s.size() < 2 || s[1] != num_channels)
      detail::fail(name(), "input " + detail::shape_str(s) + " must be [N, " + std::to_string(num_channels) + ", *]");
    auto o = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    return group_norm(x, num_groups, o(weight), o(bias), eps);
  }

  std::string extra_repr() const override {
    return std::to_string(num_groups) + ", " + std::to_string(num_channels) + ", eps=" + detail::num_str(eps) +
           ", affine=" + detail::bool_str(affine);
  }

 private:
  std::string name() const { return "GroupNorm(" + extra_repr() + ")"; }
};

}  // namespace tsr::nn
