// Tessera SDK: BatchNorm1d and BatchNorm2d (torch.nn names, arguments and defaults).
//
// BatchNorm1d(num_features, eps=1e-5, momentum=0.1, affine=true, track_running_stats=true):
// input [N, C] or [N, C, L]; BatchNorm2d the same for [N, C, H, W]. Parameters weight (ones) and
// bias (zeros) of [C]; buffers running_mean (zeros), running_var (ones) and num_batches_tracked
// (int64 scalar), all in state_dict as PyTorch. In training mode the batch statistics normalize
// and the running stats are updated in place by the functional batch_norm op (the unbiased
// variance, weight `momentum`, or 1/num_batches_tracked for a cumulative average when momentum is
// nullopt); in eval mode the running stats normalize. Without track_running_stats the batch
// statistics are always used and there are no buffers.
//
// Ownership: the layer owns its parameters and buffers (public members). Errors: tsr::Error
// naming the layer and the input's shape (wrong rank or channels; one value per channel in
// training). Thread-safety: as nn::Module; training-mode forwards mutate the buffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/nn/init.hpp"
#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

namespace detail {
class BatchNormBase : public Module {
 public:
  int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine, track_running_stats;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

  void reset_running_stats() {
    if (!track_running_stats) return;
    init::zeros_(running_mean);
    init::ones_(running_var);
    NoGradGuard no_grad;
    num_batches_tracked.fill_(0);
  }
  void reset_parameters() {
    reset_running_stats();
    if (affine) {
      init::ones_(weight);
      init::zeros_(bias);
    }
  }

  Tensor forward(const Tensor& x) override {
    require_input(*this, x);
    auto s = x.sizes();
    bool rank_ok = s.size() == min_rank_ || s.size() == max_rank_;
    if (!rank_ok || s[1] != num_features)
      fail(layer_name(*this),
           "input " + shape_str(s) + " must be " + expected_ + " with C=" + std::to_string(num_features));
    bool use_batch_stats = is_training() || !track_running_stats;
    if (use_batch_stats && x.numel() / num_features <= 1)
      fail(layer_name(*this), "expected more than 1 value per channel when training, got input " + shape_str(s));
    bool update = is_training() && track_running_stats;
    double factor = momentum.value_or(0.0);
    if (update && !momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>() + 1);
    auto o = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    // In training the op updates the running stats it is given (nothing if it throws); the
    // counter follows only after it succeeded, so a failed call leaves every buffer as it was.
    bool stats = track_running_stats;
    Tensor y = batch_norm(x, stats ? o(running_mean) : std::nullopt, stats ? o(running_var) : std::nullopt, o(weight),
                          o(bias), use_batch_stats, factor, eps);
    if (update) {
      NoGradGuard no_grad;
      add_(num_batches_tracked, 1);
    }
    return y;
  }

  std::string extra_repr() const override {
    return std::to_string(num_features) + ", eps=" + num_str(eps) +
           ", momentum=" + (momentum ? num_str(*momentum) : std::string("None")) + ", affine=" + bool_str(affine) +
           ", track_running_stats=" + bool_str(track_running_stats);
  }

 protected:
  BatchNormBase(const std::string& type, size_t min_rank, size_t max_rank, std::string expected, int64_t num_features,
                double eps, std::optional<double> momentum, bool affine, bool track_running_stats)
      : Module(type),
        num_features(num_features),
        eps(eps),
        momentum(momentum),
        affine(affine),
        track_running_stats(track_running_stats),
        min_rank_(min_rank),
        max_rank_(max_rank),
        expected_(std::move(expected)) {
    if (num_features <= 0) fail(type, "num_features must be > 0, got " + std::to_string(num_features));
    if (momentum && !(*momentum >= 0.0 && *momentum <= 1.0))
      fail(type, "momentum must be in [0, 1], got " + num_str(*momentum));
    if (affine) {
      weight = ones({num_features});
      bias = zeros({num_features});
    }
    if (track_running_stats) {
      running_mean = zeros({num_features});
      running_var = ones({num_features});
      num_batches_tracked = zeros({}, TSR_I64);
    }
    register_parameter("weight", weight);
    register_parameter("bias", bias);
    register_buffer("running_mean", running_mean);
    register_buffer("running_var", running_var);
    register_buffer("num_batches_tracked", num_batches_tracked);
  }

 private:
  size_t min_rank_, max_rank_;
  std::string expected_;
};
}  // namespace detail

class BatchNorm1d : public detail::BatchNormBase {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNormBase("BatchNorm1d", 2, 3, "[N, C] or [N, C, L]", num_features, eps, momentum, affine,
                      track_running_stats) {}
};

class BatchNorm2d : public detail::BatchNormBase {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNormBase("BatchNorm2d", 4, 4, "[N, C, H, W]", num_features, eps, momentum, affine, track_running_stats) {}
};

}  // namespace tsr::nn
