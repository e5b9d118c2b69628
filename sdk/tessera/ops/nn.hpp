// Tessera SDK: host wrappers of the nn op family (included by tessera/tessera.hpp), named after
// torch.nn.functional. Reductions are 'none' | 'mean' | 'sum'.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {
namespace nn {

using IntList = std::vector<int64_t>;
using OptTensor = std::optional<Tensor>;

// ---- losses ---------------------------------------------------------------------------------------
inline Tensor mse_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean") {
  static const Op op("mse_loss");
  return call(op, {x, y, reduction});
}
inline Tensor l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean") {
  static const Op op("l1_loss");
  return call(op, {x, y, reduction});
}
inline Tensor smooth_l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean",
                             double beta = 1.0) {
  static const Op op("smooth_l1_loss");
  return call(op, {x, y, reduction, beta});
}
inline Tensor huber_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean", double delta = 1.0) {
  static const Op op("huber_loss");
  return call(op, {x, y, reduction, delta});
}
inline Tensor binary_cross_entropy(const Tensor& x, const Tensor& y, const OptTensor& weight = std::nullopt,
                                   const std::string& reduction = "mean") {
  static const Op op("binary_cross_entropy");
  return call(op, {x, y, detail::opt_tensor_arg(weight), reduction});
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y, const OptTensor& weight = std::nullopt,
                                               const OptTensor& pos_weight = std::nullopt,
                                               const std::string& reduction = "mean") {
  static const Op op("binary_cross_entropy_with_logits");
  return call(op, {x, y, detail::opt_tensor_arg(weight), detail::opt_tensor_arg(pos_weight), reduction});
}
// reduction may also be 'batchmean'.
inline Tensor kl_div(const Tensor& x, const Tensor& target, const std::string& reduction = "mean",
                     bool log_target = false) {
  static const Op op("kl_div");
  return call(op, {x, target, reduction, log_target});
}
inline Tensor nll_loss(const Tensor& x, const Tensor& target, const OptTensor& weight = std::nullopt,
                       const std::string& reduction = "mean", int64_t ignore_index = -100) {
  static const Op op("nll_loss");
  return call(op, {x, target, detail::opt_tensor_arg(weight), reduction, ignore_index});
}
// target: class indices (integer) or class probabilities (floating, the input's shape).
inline Tensor cross_entropy(const Tensor& x, const Tensor& target, const OptTensor& weight = std::nullopt,
                            const std::string& reduction = "mean", int64_t ignore_index = -100,
                            double label_smoothing = 0.0) {
  static const Op op("cross_entropy");
  return call(op, {x, target, detail::opt_tensor_arg(weight), reduction, ignore_index, label_smoothing});
}

// ---- recurrent cells ----------------------------------------------------------------------------
// The pointwise part of an LSTM step: gates [N, 4H] (pre-activation, PyTorch's i, f, g, o order)
// and the cell state cx [N, H] -> (hy, cy) = (o * tanh(cy), f * cx + i * g).
inline std::pair<Tensor, Tensor> lstm_cell_gates(const Tensor& gates, const Tensor& cx) {
  static const Op op("lstm_cell_gates");
  std::vector<Tensor> r = call_multi(op, {gates, cx});
  return {std::move(r[0]), std::move(r[1])};
}

// The pointwise part of a GRU step: input and hidden projections [N, 3H] (PyTorch's r, z, n order,
// the hidden one with b_hh) and hx [N, H] -> hy = n + z * (hx - n).
inline Tensor gru_cell_gates(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx) {
  static const Op op("gru_cell_gates");
  return call(op, {input_gates, hidden_gates, hx});
}

// ---- normalization ------------------------------------------------------------------------------
inline Tensor layer_norm(const Tensor& x, IntList normalized_shape, const OptTensor& weight = std::nullopt,
                         const OptTensor& bias = std::nullopt, double eps = 1e-5) {
  static const Op op("layer_norm");
  return call(op, {x, std::move(normalized_shape), detail::opt_tensor_arg(weight), detail::opt_tensor_arg(bias), eps});
}
inline Tensor rms_norm(const Tensor& x, IntList normalized_shape, const OptTensor& weight = std::nullopt,
                       std::optional<double> eps = std::nullopt) {
  static const Op op("rms_norm");
  return call(op, {x, std::move(normalized_shape), detail::opt_tensor_arg(weight), eps});
}
inline Tensor group_norm(const Tensor& x, int64_t num_groups, const OptTensor& weight = std::nullopt,
                         const OptTensor& bias = std::nullopt, double eps = 1e-5) {
  static const Op op("group_norm");
  return call(op, {x, num_groups, detail::opt_tensor_arg(weight), detail::opt_tensor_arg(bias), eps});
}
// Training mode updates running_mean/running_var in place.
inline Tensor batch_norm(const Tensor& x, const OptTensor& running_mean, const OptTensor& running_var,
                         const OptTensor& weight = std::nullopt, const OptTensor& bias = std::nullopt,
                         bool training = false, double momentum = 0.1, double eps = 1e-5) {
  static const Op op("batch_norm");
  return call(op, {x, detail::opt_tensor_arg(weight), detail::opt_tensor_arg(bias),
                   detail::opt_tensor_arg(running_mean), detail::opt_tensor_arg(running_var), training, momentum, eps});
}

// ---- convolution and pooling ------------------------------------------------------------------------
inline Tensor conv1d(const Tensor& x, const Tensor& w, const OptTensor& bias = std::nullopt, int64_t stride = 1,
                     int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1) {
  static const Op op("conv1d");
  return call(op, {x, w, detail::opt_tensor_arg(bias), stride, padding, dilation, groups});
}
inline Tensor conv2d(const Tensor& x, const Tensor& w, const OptTensor& bias = std::nullopt, IntList stride = {1},
                     IntList padding = {0}, IntList dilation = {1}, int64_t groups = 1) {
  static const Op op("conv2d");
  return call(op,
              {x, w, detail::opt_tensor_arg(bias), std::move(stride), std::move(padding), std::move(dilation), groups});
}
// padding 'same' or 'valid'.
inline Tensor conv2d_padding(const Tensor& x, const Tensor& w, const OptTensor& bias, IntList stride,
                             const std::string& padding, IntList dilation = {1}, int64_t groups = 1) {
  static const Op op("conv2d_padding");
  return call(op, {x, w, detail::opt_tensor_arg(bias), std::move(stride), padding, std::move(dilation), groups});
}
inline Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const OptTensor& bias = std::nullopt,
                               IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                               int64_t groups = 1, IntList dilation = {1}) {
  static const Op op("conv_transpose2d");
  return call(op, {x, w, detail::opt_tensor_arg(bias), std::move(stride), std::move(padding), std::move(output_padding),
                   groups, std::move(dilation)});
}
inline Tensor max_pool2d(const Tensor& x, IntList kernel_size, std::optional<IntList> stride = std::nullopt,
                         IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false) {
  static const Op op("max_pool2d");
  return call(op, {x, std::move(kernel_size), stride, std::move(padding), std::move(dilation), ceil_mode});
}
// (values, flat indices into each input plane)
inline std::vector<Tensor> max_pool2d_with_indices(const Tensor& x, IntList kernel_size,
                                                   std::optional<IntList> stride = std::nullopt, IntList padding = {0},
                                                   IntList dilation = {1}, bool ceil_mode = false) {
  static const Op op("max_pool2d_with_indices");
  return call_multi(op, {x, std::move(kernel_size), stride, std::move(padding), std::move(dilation), ceil_mode});
}
inline Tensor avg_pool2d(const Tensor& x, IntList kernel_size, std::optional<IntList> stride = std::nullopt,
                         IntList padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                         std::optional<int64_t> divisor_override = std::nullopt) {
  static const Op op("avg_pool2d");
  return call(op,
              {x, std::move(kernel_size), stride, std::move(padding), ceil_mode, count_include_pad, divisor_override});
}
inline Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size) {
  static const Op op("adaptive_avg_pool2d");
  return call(op, {x, std::move(output_size)});
}

// ---- resampling, embedding, dropout, attention ---------------------------------------------------------
// mode 'nearest' or 'bilinear'; exactly one of size / scale_factor.
inline Tensor interpolate(const Tensor& x, std::optional<IntList> size,
                          std::optional<double> scale_factor = std::nullopt, const std::string& mode = "nearest",
                          std::optional<bool> align_corners = std::nullopt) {
  static const Op op("interpolate");
  return call(op, {x, size, scale_factor, mode, align_corners});
}
inline Tensor embedding(const Tensor& indices, const Tensor& weight,
                        std::optional<int64_t> padding_idx = std::nullopt) {
  static const Op op("embedding");
  return call(op, {weight, indices, padding_idx});
}
inline Tensor one_hot(const Tensor& t, int64_t num_classes = -1) {
  static const Op op("one_hot");
  return call(op, {t, num_classes});
}
inline Tensor dropout(const Tensor& x, double p = 0.5, bool training = true) {
  static const Op op("dropout");
  return call(op, {x, p, training});
}
inline Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const OptTensor& attn_mask = std::nullopt, double dropout_p = 0.0,
                                           bool is_causal = false, std::optional<double> scale = std::nullopt) {
  static const Op op("scaled_dot_product_attention");
  return call(op, {q, k, v, detail::opt_tensor_arg(attn_mask), dropout_p, is_causal, scale});
}

}  // namespace nn
}  // namespace tsr
