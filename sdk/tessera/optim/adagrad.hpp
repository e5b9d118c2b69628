// Tessera SDK: tsr::optim::Adagrad (torch.optim.Adagrad), written with in-place SDK ops.
//
// Options (torch's defaults): lr=1e-2, lr_decay=0, weight_decay=0 (added to the gradient),
// initial_accumulator_value=0, eps=1e-10, maximize=false. As torch's, the state exists from
// construction: step=0 and sum filled with initial_accumulator_value. One update:
//   clr = lr / (1 + (step - 1) * lr_decay)     (step counts this update)
//   sum += g^2;  param -= clr * g / (sqrt(sum) + eps)
// Ownership, errors, thread-safety: see optimizer.hpp.
#pragma once

#include "tessera/optim/optimizer.hpp"

namespace tsr::optim {

struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions o = {})
      : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions o = {}) : Optimizer("Adagrad", to_options(o)) {
    init_groups(std::move(groups));
  }

  static Options to_options(const AdagradOptions& o) {
    return {{"lr", o.lr},
            {"lr_decay", o.lr_decay},
            {"weight_decay", o.weight_decay},
            {"initial_accumulator_value", o.initial_accumulator_value},
            {"eps", o.eps},
            {"maximize", o.maximize ? 1.0 : 0.0}};
  }

  void step() override {
    for_each_grad([&](ParamGroup& gr, Tensor& p, const Tensor& grad, ParamState& s) {
      if (!s.initialized) init_state(gr, p, s);  // a state_dict without this param's state
      const double lr = gr.get("lr"), lr_decay = gr.get("lr_decay"), wd = gr.get("weight_decay"), eps = gr.get("eps");
      const int64_t step = s.step + 1;
      Tensor g = flag(gr, "maximize") ? neg(grad) : grad;
      if (wd != 0) g = add(g, p, wd);
      const double clr = lr / (1 + double(step - 1) * lr_decay);
      Tensor sum = s.tensors.at("sum");
      addcmul_(sum, g, g, 1);
      Tensor denom = sqrt(sum);
      add_(denom, eps);
      addcdiv_(p, g, denom, -clr);
      s.step = step;
    });
  }

 protected:
  void check_options(const Options& o) const override {
    if (!(o.at("lr") >= 0)) throw err("Invalid learning rate: " + detail::num(o.at("lr")));
    if (!(o.at("lr_decay") >= 0)) throw err("Invalid lr_decay value: " + detail::num(o.at("lr_decay")));
    if (!(o.at("weight_decay") >= 0)) throw err("Invalid weight_decay value: " + detail::num(o.at("weight_decay")));
    if (!(o.at("initial_accumulator_value") >= 0))
      throw err("Invalid initial_accumulator_value value: " + detail::num(o.at("initial_accumulator_value")));
    if (!(o.at("eps") >= 0)) throw err("Invalid epsilon value: " + detail::num(o.at("eps")));
  }
  std::vector<std::string> state_names(const Options&) const override { return {"sum"}; }
  void init_state(const ParamGroup& g, const Tensor& p, ParamState& s) override {
    s.tensors = StateDict();
    s.tensors.insert("sum", full(p.sizes(), g.get("initial_accumulator_value"), p.dtype(), p.device()));
    s.step = 0;
    s.initialized = true;
  }
};

}  // namespace tsr::optim
