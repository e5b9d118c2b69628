// Tessera SDK: learning-rate schedulers (torch.optim.lr_scheduler in C++): StepLR,
// MultiStepLR, ConstantLR, ExponentialLR, CosineAnnealingLR, LinearLR, LinearWarmup,
// WarmupCosine and SequentialLR.
//
//   tsr::optim::AdamW opt(params, {3e-4});
//   tsr::optim::WarmupCosine sched(opt, /*warmup_steps=*/100, /*total_steps=*/2000, 0.1);
//   for (...) { ...; opt.step(); sched.step(); }
//
// As in torch, constructing a scheduler records each group's "initial_lr" (if no scheduler
// did before) as its base lr and sets the lr for epoch 0; every step() advances last_epoch and
// writes lr_at(last_epoch, base_lr) into each group. Every scheduler here is a closed form of
// the epoch (torch's _get_closed_form_lr), so a resumed run lands on exactly the same lrs.
//
// state_dict(): last_epoch (0-dim int64), base_lrs and last_lrs (float64 [groups]) and the
// scheduler's hyperparameters (0-dim float64 each). load_state_dict checks every key and
// length before it changes anything; like torch's it does not touch the optimizer's lr (the
// optimizer's own state_dict carries that).
//
// Ownership: a scheduler keeps a reference to its optimizer, which must outlive it.
// Errors: tsr::Error starting with the scheduler's name and naming the value.
// Thread-safety: none; step the scheduler on the thread that steps the optimizer.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/optim/optimizer.hpp"

namespace tsr::optim {

class LRScheduler {
 public:
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  virtual ~LRScheduler() = default;

  void step() {
    ++last_epoch_;
    std::vector<ParamGroup>& groups = opt_->param_groups();
    if (groups.size() != base_lrs_.size())
      throw err("the optimizer has " + std::to_string(groups.size()) +
                " param groups but the scheduler was built for " + std::to_string(base_lrs_.size()));
    for (size_t g = 0; g < groups.size(); ++g) {
      last_lrs_[g] = lr_at(last_epoch_, base_lrs_[g]);
      groups[g].set_lr(last_lrs_[g]);
    }
  }

  // The lr of a group whose base lr is `base` after `epoch` steps (epoch 0: at construction).
  virtual double lr_at(int64_t epoch, double base) const = 0;

  double last_lr() const { return last_lrs_.at(0); }
  const std::vector<double>& last_lrs() const { return last_lrs_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::string& name() const { return name_; }
  const Options& hparams() const { return hp_; }
  Optimizer& optimizer() const { return *opt_; }

  virtual StateDict state_dict() const {
    StateDict sd;
    sd.insert("last_epoch", scalar_tensor_int(last_epoch_, TSR_I64, false));
    const int64_t n = static_cast<int64_t>(base_lrs_.size());
    sd.insert("base_lrs", from_vector(base_lrs_, {n}));
    sd.insert("last_lrs", from_vector(last_lrs_, {n}));
    for (const auto& kv : hp_) sd.insert(kv.first, scalar_tensor(kv.second, TSR_F64, false));
    return sd;
  }

  virtual void load_state_dict(const StateDict& sd) {
    for (const auto& kv : sd)
      if (kv.first != "last_epoch" && kv.first != "base_lrs" && kv.first != "last_lrs" && !hp_.count(kv.first))
        throw err("unexpected state_dict entry '" + kv.first + "'");
    const double epoch = scalar(sd, "last_epoch");
    if (epoch != std::floor(epoch) || epoch < -1)
      throw err("'last_epoch' must be an integer >= -1, got " + detail::num(epoch));
    std::vector<double> base = vec(sd, "base_lrs"), last = vec(sd, "last_lrs");
    Options hp = hp_;
    for (auto& kv : hp) kv.second = scalar(sd, kv.first);
    check_hparams(hp);
    last_epoch_ = static_cast<int64_t>(epoch);
    base_lrs_ = std::move(base);
    last_lrs_ = std::move(last);
    hp_ = std::move(hp);
  }

 protected:
  LRScheduler(Optimizer& opt, std::string name, Options hp) : opt_(&opt), name_(std::move(name)), hp_(std::move(hp)) {
    for (ParamGroup& g : opt.param_groups()) {
      if (!g.has("initial_lr")) g.set("initial_lr", g.lr());
      base_lrs_.push_back(g.get("initial_lr"));
    }
    last_lrs_ = base_lrs_;
  }
  // The derived constructor's last statement (its lr_at is in effect there): epoch 0's lrs.
  void initial_step() {
    check_hparams(hp_);
    step();
  }
  // Throws err(...) for out-of-range hyperparameters (at construction and on load).
  virtual void check_hparams(const Options&) const {}
  Error err(const std::string& msg) const { return Error(TSR_INVALID_ARGUMENT, name_ + ": " + msg); }
  double hp(const char* key) const { return hp_.at(key); }

  Optimizer* opt_;
  std::string name_;
  Options hp_;
  int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_, last_lrs_;

 private:
  double scalar(const StateDict& sd, const std::string& key) const {
    if (!sd.contains(key)) throw err("state_dict is missing '" + key + "'");
    const Tensor& t = sd.at(key);
    if (!t.defined() || t.numel() != 1 || t.dtype() == TSR_BOOL)
      throw err("'" + key + "' must be a numeric scalar tensor, got " + describe(t));
    return t.item<double>();
  }
  std::vector<double> vec(const StateDict& sd, const std::string& key) const {
    if (!sd.contains(key)) throw err("state_dict is missing '" + key + "'");
    const Tensor& t = sd.at(key);
    if (!t.defined() || t.dim() != 1 || t.numel() != static_cast<int64_t>(base_lrs_.size()) || t.dtype() == TSR_BOOL)
      throw err("'" + key + "' must be a 1-D tensor of " + std::to_string(base_lrs_.size()) +
                " values (one per param group), got " + describe(t));
    return t.to_vector<double>();
  }
};

// lr = base * gamma^floor(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1)
      : LRScheduler(opt, "StepLR", {{"step_size", double(step_size)}, {"gamma", gamma}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    return base * std::pow(hp("gamma"), std::floor(double(e) / hp("step_size")));
  }

 protected:
  void check_hparams(const Options& o) const override {
    if (!(o.at("step_size") >= 1) || o.at("step_size") != std::floor(o.at("step_size")))
      throw err("step_size must be an integer >= 1, got " + detail::num(o.at("step_size")));
  }
};

// lr = base * gamma^(number of milestones <= epoch); a repeated milestone counts twice.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1)
      : LRScheduler(opt, "MultiStepLR", {{"gamma", gamma}}), milestones_(std::move(milestones)) {
    std::sort(milestones_.begin(), milestones_.end());
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin();
    return base * std::pow(hp("gamma"), double(passed));
  }

 private:
  std::vector<int64_t> milestones_;
};

// lr = base * factor until epoch total_iters, then base.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& opt, double factor = 1.0 / 3, int64_t total_iters = 5)
      : LRScheduler(opt, "ConstantLR", {{"factor", factor}, {"total_iters", double(total_iters)}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    return double(e) < hp("total_iters") ? base * hp("factor") : base;
  }

 protected:
  void check_hparams(const Options& o) const override {
    if (!(o.at("factor") >= 0 && o.at("factor") <= 1))
      throw err("Constant multiplicative factor expected to be between 0 and 1, got " + detail::num(o.at("factor")));
  }
};

// lr = base * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt, "ExponentialLR", {{"gamma", gamma}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override { return base * std::pow(hp("gamma"), double(e)); }
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 (torch's closed form;
// past T_max it continues as the cosine does).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min = 0)
      : LRScheduler(opt, "CosineAnnealingLR", {{"T_max", double(T_max)}, {"eta_min", eta_min}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    const double eta_min = hp("eta_min");
    return eta_min + (base - eta_min) * (1 + std::cos(detail::kPi * double(e) / hp("T_max"))) / 2;
  }

 protected:
  void check_hparams(const Options& o) const override {
    if (!(o.at("T_max") > 0)) throw err("T_max must be > 0, got " + detail::num(o.at("T_max")));
  }
};

// lr = base * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) / total_iters):
// a linear warmup (or decay) over total_iters steps.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5)
      : LRScheduler(
            opt, "LinearLR",
            {{"start_factor", start_factor}, {"end_factor", end_factor}, {"total_iters", double(total_iters)}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    const double s = hp("start_factor"), f = hp("end_factor"), n = hp("total_iters");
    return base * (s + (f - s) * std::min(double(e), n) / n);
  }

 protected:
  void check_hparams(const Options& o) const override {
    if (!(o.at("start_factor") > 0 && o.at("start_factor") <= 1))
      throw err("Starting multiplicative factor expected to be greater than 0 and less or equal to 1, got " +
                detail::num(o.at("start_factor")));
    if (!(o.at("end_factor") >= 0 && o.at("end_factor") <= 1))
      throw err("Ending multiplicative factor expected to be between 0 and 1, got " + detail::num(o.at("end_factor")));
    if (!(o.at("total_iters") >= 1)) throw err("total_iters must be >= 1, got " + detail::num(o.at("total_iters")));
  }
};

// lr = base * min(1, (epoch + 1) / warmup_steps): WarmupCosine's warmup, then constant.
class LinearWarmup : public LRScheduler {
 public:
  LinearWarmup(Optimizer& opt, int64_t warmup_steps)
      : LRScheduler(opt, "LinearWarmup", {{"warmup_steps", double(warmup_steps)}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    const double w = hp("warmup_steps");
    return double(e) < w ? base * (double(e) + 1) / w : base;
  }

 protected:
  void check_hparams(const Options& o) const override {
    const double w = o.at("warmup_steps");
    if (!(w >= 0) || w != std::floor(w)) throw err("warmup_steps must be an integer >= 0, got " + detail::num(w));
  }
};

// The GPT schedule: linear warmup to base over warmup_steps (lr = base * (epoch + 1) /
// warmup_steps, so the first step is not wasted at lr 0), then a half cosine from base down to
// base * min_lr_ratio at total_steps, and min after that.
class WarmupCosine : public LRScheduler {
 public:
  WarmupCosine(Optimizer& opt, int64_t warmup_steps, int64_t total_steps, double min_lr_ratio = 0.0)
      : LRScheduler(opt, "WarmupCosine",
                    {{"warmup_steps", double(warmup_steps)},
                     {"total_steps", double(total_steps)},
                     {"min_lr_ratio", min_lr_ratio}}) {
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    const double w = hp("warmup_steps"), n = hp("total_steps"), lo = base * hp("min_lr_ratio"), ep = double(e);
    if (ep < w) return base * (ep + 1) / w;
    if (ep >= n) return lo;
    const double progress = (ep - w) / (n - w);
    return lo + (base - lo) * 0.5 * (1 + std::cos(detail::kPi * progress));
  }

 protected:
  void check_hparams(const Options& o) const override {
    const double w = o.at("warmup_steps"), n = o.at("total_steps"), r = o.at("min_lr_ratio");
    if (!(w >= 0) || w != std::floor(w)) throw err("warmup_steps must be an integer >= 0, got " + detail::num(w));
    if (!(n >= 1) || n != std::floor(n)) throw err("total_steps must be an integer >= 1, got " + detail::num(n));
    if (w > n) throw err("warmup_steps (" + detail::num(w) + ") exceeds total_steps (" + detail::num(n) + ")");
    if (!(r >= 0 && r <= 1)) throw err("min_lr_ratio must be in [0, 1], got " + detail::num(r));
  }
};

// Runs schedulers[k] from milestones[k-1] on (its epoch counted from that milestone), as
// torch's SequentialLR. The children must be built on the same optimizer; their own step()
// is not called.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers, std::vector<int64_t> milestones)
      : LRScheduler(opt, "SequentialLR", {}), children_(std::move(schedulers)), milestones_(std::move(milestones)) {
    if (children_.empty()) throw err("expects at least one scheduler");
    if (milestones_.size() + 1 != children_.size())
      throw err("expects " + std::to_string(children_.size() - 1) + " milestones for " +
                std::to_string(children_.size()) + " schedulers, got " + std::to_string(milestones_.size()));
    for (size_t k = 0; k < children_.size(); ++k) {
      if (!children_[k]) throw err("scheduler " + std::to_string(k) + " is null");
      if (&children_[k]->optimizer() != &opt)
        throw err("scheduler " + std::to_string(k) + " belongs to another optimizer");
    }
    if (!std::is_sorted(milestones_.begin(), milestones_.end())) throw err("milestones must be in increasing order");
    initial_step();
  }
  double lr_at(int64_t e, double base) const override {
    const size_t k =
        static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin());
    return children_[k]->lr_at(e - (k ? milestones_[k - 1] : 0), base);
  }

 private:
  std::vector<std::shared_ptr<LRScheduler>> children_;
  std::vector<int64_t> milestones_;
};

}  // namespace tsr::optim
