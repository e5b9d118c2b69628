// Tessera SDK: tsr::optim::SGD, torch.optim.SGD (momentum, dampening, nesterov, weight decay,
// maximize) on the fused sgd_step_ op: one pass over param, momentum buffer and grad.
//
// Options (torch's defaults): lr=1e-3, momentum=0, dampening=0, weight_decay=0 (added to the
// gradient), nesterov=false, maximize=false. State per parameter once it steps with
// momentum != 0: momentum_buffer, initialized to the (decayed) gradient on its first step, as
// torch does. SGD keeps no step count. Ownership, errors, thread-safety: see optimizer.hpp.
#pragma once

#include "tessera/optim/optimizer.hpp"

namespace tsr::optim {

struct SGDOptions {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions o = {}) : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  SGD(std::vector<ParamGroup> groups, SGDOptions o = {}) : Optimizer("SGD", to_options(o)) {
    init_groups(std::move(groups));
  }

  static Options to_options(const SGDOptions& o) {
    return {{"lr", o.lr},
            {"momentum", o.momentum},
            {"dampening", o.dampening},
            {"weight_decay", o.weight_decay},
            {"nesterov", o.nesterov ? 1.0 : 0.0},
            {"maximize", o.maximize ? 1.0 : 0.0}};
  }

  void step() override {
    for_each_grad([&](ParamGroup& g, Tensor& p, const Tensor& grad, ParamState& s) {
      tsr::SgdOptions o;
      o.lr = g.get("lr");
      o.momentum = g.get("momentum");
      o.dampening = g.get("dampening");
      o.weight_decay = g.get("weight_decay");
      o.nesterov = flag(g, "nesterov");
      o.maximize = flag(g, "maximize");
      if (o.momentum == 0) {
        sgd_step_(p, grad, std::nullopt, o);
        s.tensors.erase("momentum_buffer");  // momentum switched off: the state follows the options
        s.initialized = false;
        return;
      }
      const bool first = !s.tensors.contains("momentum_buffer");
      Tensor buf = first ? empty(p.sizes(), p.dtype(), p.device()) : s.tensors.at("momentum_buffer");
      sgd_step_(p, grad, buf, o, first);
      if (first) s.tensors.insert("momentum_buffer", buf);
      s.initialized = true;
    });
  }

 protected:
  void check_options(const Options& o) const override {
    if (!(o.at("lr") >= 0)) throw err("Invalid learning rate: " + detail::num(o.at("lr")));
    if (!(o.at("momentum") >= 0)) throw err("Invalid momentum value: " + detail::num(o.at("momentum")));
    if (!(o.at("weight_decay") >= 0)) throw err("Invalid weight_decay value: " + detail::num(o.at("weight_decay")));
    if (o.at("nesterov") != 0 && (o.at("momentum") <= 0 || o.at("dampening") != 0))
      throw err("Nesterov momentum requires a momentum and zero dampening (momentum=" + detail::num(o.at("momentum")) +
                ", dampening=" + detail::num(o.at("dampening")) + ")");
  }
  std::vector<std::string> state_names(const Options& o) const override {
    if (o.at("momentum") != 0) return {"momentum_buffer"};
    return {};
  }
  bool counts_steps() const override { return false; }
};

}  // namespace tsr::optim
