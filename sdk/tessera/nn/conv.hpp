// Tessera SDK: Conv1d, Conv2d and ConvTranspose2d (torch.nn names, arguments and defaults).
//
// Conv1d(in, out, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=true):
//   input [N, C_in, L] or unbatched [C_in, L]; weight [out, in/groups, k].
// Conv2d(in, out, kernel_size, stride={1}, padding={0}, dilation={1}, groups=1, bias=true):
//   input [N, C_in, H, W] or [C_in, H, W]; weight [out, in/groups, kh, kw]. Size arguments take
//   1 or 2 values (PyTorch's int-or-pair). Both also take padding=ConvPadding::same (stride 1
//   only) or ::valid, PyTorch's padding='same'/'valid' (an enum, not a string: a string overload
//   makes a braced padding like {0} or {1} ambiguous).
// ConvTranspose2d(in, out, kernel_size, stride={1}, padding={0}, output_padding={0}, groups=1,
//   bias=true, dilation={1}): weight [in, out/groups, kh, kw].
// Init as PyTorch's _ConvNd.reset_parameters: weight kaiming_uniform_(a=sqrt(5)), bias
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in from the weight (in/groups*k for convs,
// out/groups*k for the transposed conv), from the runtime RNG.
// Deviations: padding_mode is 'zeros' only; ConvTranspose2d.forward has no output_size argument
// (use output_padding).
//
// Ownership: each layer owns its weight/bias (public members). Errors: tsr::Error naming the layer
// with its arguments and the input's shape. Thread-safety: as nn::Module.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/nn/init.hpp"
#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

enum class ConvPadding { same, valid };

namespace detail {
// The part of every conv layer that is not the arithmetic: checked arguments, parameters,
// PyTorch's init and repr.
class ConvBase : public Module {
 public:
  int64_t in_channels, out_channels, groups;
  std::vector<int64_t> kernel_size, stride, padding, dilation, output_padding;
  std::string padding_str;  // "same" / "valid" when built with a ConvPadding, else empty
  bool transposed;
  Tensor weight, bias;

  void reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) {
      int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
      double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
      init::uniform_(bias, -bound, bound);
    }
  }

  // PyTorch's format: "3, 8, kernel_size=(3, 3), stride=(1, 1)" plus non-default extras.
  std::string extra_repr() const override {
    std::string s = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                    ", kernel_size=" + tuple_str(kernel_size) + ", stride=" + tuple_str(stride);
    if (!padding_str.empty())
      s += ", padding='" + padding_str + "'";
    else if (!all_are(padding, 0))
      s += ", padding=" + tuple_str(padding);
    if (!all_are(dilation, 1)) s += ", dilation=" + tuple_str(dilation);
    if (transposed && !all_are(output_padding, 0)) s += ", output_padding=" + tuple_str(output_padding);
    if (groups != 1) s += ", groups=" + std::to_string(groups);
    if (!bias.defined()) s += ", bias=false";
    return s;
  }

 protected:
  ConvBase(const std::string& type, size_t nd, int64_t in, int64_t out, std::vector<int64_t> k, std::vector<int64_t> st,
           std::vector<int64_t> pad, std::vector<int64_t> dil, int64_t groups, bool with_bias, bool transposed,
           std::vector<int64_t> out_pad = {0}, std::string pad_str = "")
      : Module(type),
        in_channels(in),
        out_channels(out),
        groups(groups),
        padding_str(std::move(pad_str)),
        transposed(transposed) {
    kernel_size = expand_param(type, "kernel_size", std::move(k), nd);
    stride = expand_param(type, "stride", std::move(st), nd);
    padding = expand_param(type, "padding", std::move(pad), nd);
    dilation = expand_param(type, "dilation", std::move(dil), nd);
    output_padding = expand_param(type, "output_padding", std::move(out_pad), nd);
    std::string args =
        type + "(" + std::to_string(in) + ", " + std::to_string(out) + ", kernel_size=" + tuple_str(kernel_size) + ")";
    if (in <= 0 || out <= 0) fail(args, "in_channels and out_channels must be > 0");
    if (groups <= 0 || in % groups != 0 || out % groups != 0)
      fail(args, "in_channels=" + std::to_string(in) + " and out_channels=" + std::to_string(out) +
                     " must be divisible by groups=" + std::to_string(groups));
    for (size_t i = 0; i < nd; ++i) {
      if (kernel_size[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0 || padding[i] < 0 || output_padding[i] < 0)
        fail(args, "kernel_size, stride and dilation must be > 0 and padding >= 0; got stride=" + tuple_str(stride) +
                       ", padding=" + tuple_str(padding) + ", dilation=" + tuple_str(dilation));
      if (transposed && output_padding[i] >= std::max(stride[i], dilation[i]))
        fail(args, "output_padding " + tuple_str(output_padding) + " must be smaller than stride or dilation");
    }
    if (!padding_str.empty()) {
      if (padding_str == "same" && !all_are(stride, 1))
        fail(args, "padding='same' needs stride 1, got stride=" + tuple_str(stride));
    }
    std::vector<int64_t> wshape =
        transposed ? std::vector<int64_t>{in, out / groups} : std::vector<int64_t>{out, in / groups};
    wshape.insert(wshape.end(), kernel_size.begin(), kernel_size.end());
    weight = empty(wshape);
    if (with_bias) bias = empty({out});
    reset_parameters();
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }

  // Accepts [N, C, *spatial] or unbatched [C, *spatial] with C == in_channels.
  void check_input(const Tensor& x, size_t nd) const {
    require_input(*this, x);
    auto s = x.sizes();
    size_t cdim = s.size() == nd + 2 ? 1 : 0;
    if ((s.size() != nd + 1 && s.size() != nd + 2) || s[cdim] != in_channels)
      fail(layer_name(*this), "input " + shape_str(s) + " must be [N, " + std::to_string(in_channels) + ", " +
                                  (nd == 1 ? "L" : "H, W") + "] or unbatched [" + std::to_string(in_channels) + ", " +
                                  (nd == 1 ? "L" : "H, W") + "]");
  }
  static bool all_are(const std::vector<int64_t>& v, int64_t x) {
    for (int64_t e : v)
      if (e != x) return false;
    return true;
  }
  std::optional<Tensor> opt_bias() const { return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt; }
};
}  // namespace detail

class Conv1d : public detail::ConvBase {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool with_bias = true)
      : ConvBase("Conv1d", 1, in_channels, out_channels, {kernel_size}, {stride}, {padding}, {dilation}, groups,
                 with_bias, false) {}
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, ConvPadding padding,
         int64_t dilation = 1, int64_t groups = 1, bool with_bias = true)
      : ConvBase("Conv1d", 1, in_channels, out_channels, {kernel_size}, {stride}, {0}, {dilation}, groups, with_bias,
                 false, {0}, padding == ConvPadding::same ? "same" : "valid") {}

  Tensor forward(const Tensor& x) override {
    check_input(x, 1);
    if (!padding_str.empty()) {
      static const Op op("conv1d_padding");
      return call(op, {x, weight, ::tsr::detail::opt_tensor_arg(opt_bias()), stride, padding_str, dilation, groups});
    }
    return conv1d(x, weight, opt_bias(), stride[0], padding[0], dilation[0], groups);
  }
};

class Conv2d : public detail::ConvBase {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size, std::vector<int64_t> stride = {1},
         std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1}, int64_t groups = 1,
         bool with_bias = true)
      : ConvBase("Conv2d", 2, in_channels, out_channels, std::move(kernel_size), std::move(stride), std::move(padding),
                 std::move(dilation), groups, with_bias, false) {}
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size, std::vector<int64_t> stride,
         ConvPadding padding, std::vector<int64_t> dilation = {1}, int64_t groups = 1, bool with_bias = true)
      : ConvBase("Conv2d", 2, in_channels, out_channels, std::move(kernel_size), std::move(stride), {0},
                 std::move(dilation), groups, with_bias, false, {0}, padding == ConvPadding::same ? "same" : "valid") {}

  Tensor forward(const Tensor& x) override {
    check_input(x, 2);
    if (!padding_str.empty()) return conv2d_padding(x, weight, opt_bias(), stride, padding_str, dilation, groups);
    return conv2d(x, weight, opt_bias(), stride, padding, dilation, groups);
  }
};

class ConvTranspose2d : public detail::ConvBase {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, int64_t groups = 1, bool with_bias = true,
                  std::vector<int64_t> dilation = {1})
      : ConvBase("ConvTranspose2d", 2, in_channels, out_channels, std::move(kernel_size), std::move(stride),
                 std::move(padding), std::move(dilation), groups, with_bias, true, std::move(output_padding)) {}

  Tensor forward(const Tensor& x) override {
    check_input(x, 2);
    return conv_transpose2d(x, weight, opt_bias(), stride, padding, output_padding, groups, dilation);
  }
};

}  // namespace tsr::nn
