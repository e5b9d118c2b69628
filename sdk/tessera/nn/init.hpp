// Tessera SDK: parameter initialisation (torch.nn.init in C++), namespace tsr::nn::init.
//
// Every function fills its tensor in place and returns it, under a NoGradGuard (so it works on
// leaves that require grad and records nothing), drawing from the runtime's Philox stream: after
// tsr::manual_seed(s) a model built in the same order gets the same values. Formulas, defaults
// and gains are PyTorch's, so a Tessera layer's initial statistics match torch.nn's.
//
// Ownership: the caller's tensor is written through its handle; nothing is retained.
// Errors: tsr::Error (TSR_INVALID_ARGUMENT) naming the function, the shape and the bad value
// (fan computations need 2+ dims; unknown mode or nonlinearity; std < 0). A zero-element
// tensor is left as it is (PyTorch warns and does nothing) since its fans may be 0.
// Thread-safety: as for any in-place op; concurrent init calls interleave the shared RNG stream
// (values stay valid but reproducibility across runs is lost).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn::init {

namespace detail {
inline std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
inline void require_defined(const Tensor& t, const char* fn) {
  if (!t.defined()) throw Error(TSR_INVALID_ARGUMENT, std::string("nn::init::") + fn + ": undefined tensor");
  if (!is_floating(t.dtype()))
    throw Error(TSR_INVALID_ARGUMENT, std::string("nn::init::") + fn + ": needs a floating tensor, got " + describe(t));
}
}  // namespace detail

// (fan_in, fan_out) as PyTorch: dim 1 and dim 0 times the product of the remaining dims (the
// receptive field of a conv kernel).
inline std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t, const char* fn = "fan") {
  std::vector<int64_t> s = t.sizes();
  if (s.size() < 2)
    throw Error(TSR_INVALID_ARGUMENT, std::string("nn::init::") + fn +
                                          ": fan in and fan out need a tensor with at least 2 dims, got " +
                                          detail::shape_str(s));
  int64_t receptive = 1;
  for (size_t i = 2; i < s.size(); ++i) receptive *= s[i];
  return {s[1] * receptive, s[0] * receptive};
}

// The recommended gain for a nonlinearity (torch.nn.init.calculate_gain). param is
// leaky_relu's negative slope (default 0.01).
inline double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt) {
  static const char* linear_fns[] = {"linear",           "conv1d",           "conv2d",           "conv3d",
                                     "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid"};
  for (const char* n : linear_fns)
    if (nonlinearity == n) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    double slope = param ? *param : 0.01;
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw Error(TSR_INVALID_ARGUMENT, "nn::init::calculate_gain: unsupported nonlinearity '" + nonlinearity + "'");
}

inline Tensor& uniform_(Tensor& t, double a = 0.0, double b = 1.0) {
  detail::require_defined(t, "uniform_");
  if (!(a <= b))
    throw Error(TSR_INVALID_ARGUMENT,
                "nn::init::uniform_: need a <= b, got a=" + std::to_string(a) + ", b=" + std::to_string(b));
  if (t.numel() == 0) return t;
  NoGradGuard no_grad;
  tsr::uniform_(t, a, b);
  return t;
}

inline Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0) {
  detail::require_defined(t, "normal_");
  if (!(std >= 0)) throw Error(TSR_INVALID_ARGUMENT, "nn::init::normal_: std must be >= 0, got " + std::to_string(std));
  if (t.numel() == 0) return t;
  NoGradGuard no_grad;
  tsr::normal_(t, mean, std);
  return t;
}

// Normal(mean, std) redrawn outside [a, b] (torch.nn.init.trunc_normal_); each element is
// redrawn until it lands inside, so the result is exactly truncated.
inline Tensor& trunc_normal_(Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0) {
  detail::require_defined(t, "trunc_normal_");
  if (!(std > 0) || !(a < b) || !(mean + 6 * std > a && mean - 6 * std < b))
    throw Error(
        TSR_INVALID_ARGUMENT,
        "nn::init::trunc_normal_: need std > 0, a < b and [a, b] near the mean; got mean=" + std::to_string(mean) +
            ", std=" + std::to_string(std) + ", a=" + std::to_string(a) + ", b=" + std::to_string(b));
  if (t.numel() == 0) return t;
  NoGradGuard no_grad;
  Tensor draw = tsr::normal(mean, std, t.sizes(), t.dtype(), t.device());
  // Resample the outliers a few rounds; a lingering one (p < 1e-30 after 16 rounds for the
  // default +-2 std) is clamped rather than looping forever.
  for (int round = 0; round < 16; ++round) {
    Tensor bad = tsr::logical_or(tsr::lt(draw, a), tsr::gt(draw, b));
    if (tsr::any(bad).to(TSR_I64).item<int64_t>() == 0) break;
    draw = tsr::where(bad, tsr::normal(mean, std, t.sizes(), t.dtype(), t.device()), draw);
  }
  t.copy_(tsr::clamp(draw, a, b));
  return t;
}

inline Tensor& constant_(Tensor& t, double value) {
  if (!t.defined()) throw Error(TSR_INVALID_ARGUMENT, "nn::init::constant_: undefined tensor");
  NoGradGuard no_grad;
  t.fill_(value);
  return t;
}
inline Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
inline Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
inline Tensor& xavier_uniform_(Tensor& t, double gain = 1.0) {
  detail::require_defined(t, "xavier_uniform_");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t, "xavier_uniform_");
  if (t.numel() == 0) return t;
  double a = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return init::uniform_(t, -a, a);
}

// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
inline Tensor& xavier_normal_(Tensor& t, double gain = 1.0) {
  detail::require_defined(t, "xavier_normal_");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t, "xavier_normal_");
  if (t.numel() == 0) return t;
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

namespace detail {
inline int64_t correct_fan(const Tensor& t, const std::string& mode, const char* fn) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t, fn);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  throw Error(TSR_INVALID_ARGUMENT,
              std::string("nn::init::") + fn + ": mode must be 'fan_in' or 'fan_out', got '" + mode + "'");
}
}  // namespace detail

// U(-bound, bound), bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).
// Linear and Conv use a = sqrt(5), which gives bound = 1 / sqrt(fan_in).
inline Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                                const std::string& nonlinearity = "leaky_relu") {
  detail::require_defined(t, "kaiming_uniform_");
  int64_t fan = detail::correct_fan(t, mode, "kaiming_uniform_");
  double gain = calculate_gain(nonlinearity, a);
  if (t.numel() == 0) return t;
  double bound = gain * std::sqrt(3.0 / static_cast<double>(fan));
  return init::uniform_(t, -bound, bound);
}

// N(0, std^2), std = gain / sqrt(fan).
inline Tensor& kaiming_normal_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                               const std::string& nonlinearity = "leaky_relu") {
  detail::require_defined(t, "kaiming_normal_");
  int64_t fan = detail::correct_fan(t, mode, "kaiming_normal_");
  double gain = calculate_gain(nonlinearity, a);
  if (t.numel() == 0) return t;
  return init::normal_(t, 0.0, gain / std::sqrt(static_cast<double>(fan)));
}

}  // namespace tsr::nn::init
