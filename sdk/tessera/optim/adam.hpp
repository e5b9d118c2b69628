// Tessera SDK: tsr::optim::Adam and AdamW (torch.optim.Adam / AdamW) on the fused adam_step_
// op: one pass over param, exp_avg, exp_avg_sq (and max_exp_avg_sq) and grad.
//
// Options (torch's defaults): lr=1e-3, betas=(0.9, 0.999) stored as beta1/beta2, eps=1e-8,
// weight_decay (Adam: 0, added to the gradient; AdamW: 0.01, decoupled: param *= 1 - lr*wd),
// amsgrad=false, maximize=false. State per parameter from its first step: step (the count of
// updates), exp_avg, exp_avg_sq (zeros before the first update) and max_exp_avg_sq with
// amsgrad. Bias corrections use the step count including the current update, as torch's.
// Ownership, errors, thread-safety: see optimizer.hpp.
#pragma once

#include <utility>

#include "tessera/optim/optimizer.hpp"

namespace tsr::optim {

struct AdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
};
struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8, weight_decay = 1e-2;
  bool amsgrad = false, maximize = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions o = {})
      : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  Adam(std::vector<ParamGroup> groups, AdamOptions o = {}) : Adam("Adam", to_options(o), false) {
    init_groups(std::move(groups));
  }

  static Options to_options(const AdamOptions& o) {
    return {{"lr", o.lr},
            {"beta1", o.betas.first},
            {"beta2", o.betas.second},
            {"eps", o.eps},
            {"weight_decay", o.weight_decay},
            {"amsgrad", o.amsgrad ? 1.0 : 0.0},
            {"maximize", o.maximize ? 1.0 : 0.0}};
  }

  void step() override {
    for_each_grad([&](ParamGroup& g, Tensor& p, const Tensor& grad, ParamState& s) {
      tsr::AdamOptions o;
      o.lr = g.get("lr");
      o.beta1 = g.get("beta1");
      o.beta2 = g.get("beta2");
      o.eps = g.get("eps");
      o.weight_decay = g.get("weight_decay");
      o.amsgrad = flag(g, "amsgrad");
      o.maximize = flag(g, "maximize");
      o.decoupled_weight_decay = decoupled_;
      // Missing state (first step, or amsgrad switched on later) starts at zero; it joins the
      // state only once the update succeeded.
      auto get = [&](const char* n) {
        return s.tensors.contains(n) ? s.tensors.at(n) : zeros(p.sizes(), p.dtype(), p.device());
      };
      Tensor m = get("exp_avg"), v = get("exp_avg_sq");
      std::optional<Tensor> vmax;
      if (o.amsgrad) vmax = get("max_exp_avg_sq");
      adam_step_(p, grad, m, v, vmax, s.step + 1, o);
      s.step += 1;
      s.initialized = true;
      s.tensors.insert("exp_avg", m);
      s.tensors.insert("exp_avg_sq", v);
      if (vmax)
        s.tensors.insert("max_exp_avg_sq", *vmax);
      else
        s.tensors.erase("max_exp_avg_sq");  // amsgrad switched off: the state follows the options
    });
  }

 protected:
  Adam(std::string name, Options defaults, bool decoupled)
      : Optimizer(std::move(name), std::move(defaults)), decoupled_(decoupled) {}

  void check_options(const Options& o) const override {
    if (!(o.at("lr") >= 0)) throw err("Invalid learning rate: " + detail::num(o.at("lr")));
    if (!(o.at("eps") >= 0)) throw err("Invalid epsilon value: " + detail::num(o.at("eps")));
    if (!(o.at("beta1") >= 0 && o.at("beta1") < 1))
      throw err("Invalid beta parameter at index 0: " + detail::num(o.at("beta1")));
    if (!(o.at("beta2") >= 0 && o.at("beta2") < 1))
      throw err("Invalid beta parameter at index 1: " + detail::num(o.at("beta2")));
    if (!(o.at("weight_decay") >= 0)) throw err("Invalid weight_decay value: " + detail::num(o.at("weight_decay")));
  }
  std::vector<std::string> state_names(const Options& o) const override {
    if (o.at("amsgrad") != 0) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    return {"exp_avg", "exp_avg_sq"};
  }

 private:
  bool decoupled_;
};

// Adam with decoupled weight decay (Loshchilov & Hutter): the decay multiplies the parameter
// by 1 - lr * weight_decay instead of entering the moments.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions o = {})
      : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  AdamW(std::vector<ParamGroup> groups, AdamWOptions o = {}) : Adam("AdamW", to_options(o), true) {
    init_groups(std::move(groups));
  }
  static Options to_options(const AdamWOptions& o) {
    return Adam::to_options(AdamOptions{o.lr, o.betas, o.eps, o.weight_decay, o.amsgrad, o.maximize});
  }
};

}  // namespace tsr::optim
