// Tessera SDK: tsr::optim::RMSprop (torch.optim.RMSprop), written with in-place SDK ops.
//
// Options (torch's defaults): lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0 (added to the
// gradient), momentum=0, centered=false, maximize=false. State per parameter from its first
// step: step, square_avg, momentum_buffer (momentum > 0), grad_avg (centered); all start at
// zero. One update, as torch's single-tensor RMSprop:
//   square_avg = alpha * square_avg + (1 - alpha) * g^2
//   avg = sqrt(square_avg - grad_avg^2) (centered, grad_avg = lerp(grad_avg, g, 1 - alpha))
//         or sqrt(square_avg), then + eps
//   momentum: buf = momentum * buf + g / avg; param -= lr * buf; else param -= lr * g / avg
// Ownership, errors, thread-safety: see optimizer.hpp.
#pragma once

#include "tessera/optim/optimizer.hpp"

namespace tsr::optim {

struct RMSpropOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions o = {})
      : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, o) {}
  RMSprop(std::vector<ParamGroup> groups, RMSpropOptions o = {}) : Optimizer("RMSprop", to_options(o)) {
    init_groups(std::move(groups));
  }

  static Options to_options(const RMSpropOptions& o) {
    return {{"lr", o.lr},
            {"alpha", o.alpha},
            {"eps", o.eps},
            {"weight_decay", o.weight_decay},
            {"momentum", o.momentum},
            {"centered", o.centered ? 1.0 : 0.0},
            {"maximize", o.maximize ? 1.0 : 0.0}};
  }

  void step() override {
    for_each_grad([&](ParamGroup& gr, Tensor& p, const Tensor& grad, ParamState& s) {
      const double lr = gr.get("lr"), alpha = gr.get("alpha"), eps = gr.get("eps"), wd = gr.get("weight_decay"),
                   momentum = gr.get("momentum");
      const bool centered = flag(gr, "centered");
      std::vector<std::string> names = state_names(gr.options);
      StateDict next;  // the state after this update; it replaces s only once every op succeeded
      for (const std::string& n : names)
        next.insert(n, s.tensors.contains(n) ? s.tensors.at(n) : zeros(p.sizes(), p.dtype(), p.device()));
      Tensor g = flag(gr, "maximize") ? neg(grad) : grad;
      if (wd != 0) g = add(g, p, wd);
      Tensor sq = next.at("square_avg");
      mul_(sq, alpha);
      addcmul_(sq, g, g, 1 - alpha);
      Tensor avg;
      if (centered) {
        Tensor ga = next.at("grad_avg");
        lerp_(ga, g, 1 - alpha);
        avg = addcmul(sq, ga, ga, -1);
        sqrt_(avg);
      } else {
        avg = sqrt(sq);
      }
      add_(avg, eps);
      if (momentum > 0) {
        Tensor buf = next.at("momentum_buffer");
        mul_(buf, momentum);
        addcdiv_(buf, g, avg);
        add_(p, buf, -lr);
      } else {
        addcdiv_(p, g, avg, -lr);
      }
      s.tensors = std::move(next);
      s.step += 1;
      s.initialized = true;
    });
  }

 protected:
  void check_options(const Options& o) const override {
    if (!(o.at("lr") >= 0)) throw err("Invalid learning rate: " + detail::num(o.at("lr")));
    if (!(o.at("eps") >= 0)) throw err("Invalid epsilon value: " + detail::num(o.at("eps")));
    if (!(o.at("momentum") >= 0)) throw err("Invalid momentum value: " + detail::num(o.at("momentum")));
    if (!(o.at("weight_decay") >= 0)) throw err("Invalid weight_decay value: " + detail::num(o.at("weight_decay")));
    if (!(o.at("alpha") >= 0)) throw err("Invalid alpha value: " + detail::num(o.at("alpha")));
  }
  std::vector<std::string> state_names(const Options& o) const override {
    std::vector<std::string> n{"square_avg"};
    if (o.at("momentum") > 0) n.push_back("momentum_buffer");
    if (o.at("centered") != 0) n.push_back("grad_avg");
    return n;
  }
};

}  // namespace tsr::optim
