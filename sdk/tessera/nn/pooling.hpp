// Tessera SDK: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (torch.nn names, arguments, defaults).
//
// MaxPool2d(kernel_size, stride=nullopt (= kernel_size), padding={0}, dilation={1},
//   ceil_mode=false); forward_with_indices() also returns the flat argmax in each H*W plane.
// AvgPool2d(kernel_size, stride=nullopt, padding={0}, ceil_mode=false, count_include_pad=true,
//   divisor_override=nullopt).
// AdaptiveAvgPool2d(output_size): 1 or 2 values.
// Inputs are [N, C, H, W] or unbatched [C, H, W]. Size arguments take 1 or 2 values. Deviation:
// MaxPool2d has no return_indices flag (forward returns one tensor); use forward_with_indices.
//
// Ownership: no tensors. Errors: tsr::Error naming the layer and the input's shape; window
// arithmetic errors come from the pooling ops. Thread-safety: stateless forwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

namespace detail {
inline void check_pool_input(const Module& layer, const Tensor& x) {
  require_input(layer, x);
  if (x.dim() != 3 && x.dim() != 4)
    fail(layer_name(layer), "input " + shape_str(x.sizes()) + " must be [N, C, H, W] or unbatched [C, H, W]");
}
inline void check_positive(const std::string& layer, const char* name, const std::vector<int64_t>& v, int64_t min) {
  for (int64_t d : v)
    if (d < min) fail(layer, std::string(name) + "=" + tuple_str(v) + " must be >= " + std::to_string(min));
}
}  // namespace detail

class MaxPool2d : public Module {
 public:
  std::vector<int64_t> kernel_size, stride, padding, dilation;
  bool ceil_mode;

  explicit MaxPool2d(std::vector<int64_t> kernel_size, std::optional<std::vector<int64_t>> stride = std::nullopt,
                     std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1}, bool ceil_mode = false)
      : Module("MaxPool2d"), ceil_mode(ceil_mode) {
    this->kernel_size = detail::expand_param("MaxPool2d", "kernel_size", std::move(kernel_size), 2);
    this->stride = stride ? detail::expand_param("MaxPool2d", "stride", std::move(*stride), 2) : this->kernel_size;
    this->padding = detail::expand_param("MaxPool2d", "padding", std::move(padding), 2);
    this->dilation = detail::expand_param("MaxPool2d", "dilation", std::move(dilation), 2);
    detail::check_positive("MaxPool2d", "kernel_size", this->kernel_size, 1);
    detail::check_positive("MaxPool2d", "stride", this->stride, 1);
    detail::check_positive("MaxPool2d", "dilation", this->dilation, 1);
    detail::check_positive("MaxPool2d", "padding", this->padding, 0);
  }

  Tensor forward(const Tensor& x) override {
    detail::check_pool_input(*this, x);
    return max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode);
  }
  // (values, flat indices into each input H*W plane).
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    detail::check_pool_input(*this, x);
    auto r = max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode);
    return {r[0], r[1]};
  }

  std::string extra_repr() const override {
    return "kernel_size=" + detail::tuple_str(kernel_size) + ", stride=" + detail::tuple_str(stride) +
           ", padding=" + detail::tuple_str(padding) + ", dilation=" + detail::tuple_str(dilation) +
           ", ceil_mode=" + detail::bool_str(ceil_mode);
  }
};

class AvgPool2d : public Module {
 public:
  std::vector<int64_t> kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
  std::optional<int64_t> divisor_override;

  explicit AvgPool2d(std::vector<int64_t> kernel_size, std::optional<std::vector<int64_t>> stride = std::nullopt,
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt)
      : Module("AvgPool2d"),
        ceil_mode(ceil_mode),
        count_include_pad(count_include_pad),
        divisor_override(divisor_override) {
    this->kernel_size = detail::expand_param("AvgPool2d", "kernel_size", std::move(kernel_size), 2);
    this->stride = stride ? detail::expand_param("AvgPool2d", "stride", std::move(*stride), 2) : this->kernel_size;
    this->padding = detail::expand_param("AvgPool2d", "padding", std::move(padding), 2);
    detail::check_positive("AvgPool2d", "kernel_size", this->kernel_size, 1);
    detail::check_positive("AvgPool2d", "stride", this->stride, 1);
    detail::check_positive("AvgPool2d", "padding", this->padding, 0);
    if (divisor_override && *divisor_override == 0) detail::fail("AvgPool2d", "divisor_override must not be 0");
  }

  Tensor forward(const Tensor& x) override {
    detail::check_pool_input(*this, x);
    return avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  }

  std::string extra_repr() const override {
    return "kernel_size=" + detail::tuple_str(kernel_size) + ", stride=" + detail::tuple_str(stride) +
           ", padding=" + detail::tuple_str(padding);
  }
};

class AdaptiveAvgPool2d : public Module {
 public:
  std::vector<int64_t> output_size;

  explicit AdaptiveAvgPool2d(std::vector<int64_t> output_size) : Module("AdaptiveAvgPool2d") {
    this->output_size = detail::expand_param("AdaptiveAvgPool2d", "output_size", std::move(output_size), 2);
    detail::check_positive("AdaptiveAvgPool2d", "output_size", this->output_size, 1);
  }

  Tensor forward(const Tensor& x) override {
    detail::check_pool_input(*this, x);
    return adaptive_avg_pool2d(x, output_size);
  }

  std::string extra_repr() const override { return "output_size=" + detail::tuple_str(output_size); }
};

}  // namespace tsr::nn
