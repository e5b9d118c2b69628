// Tessera SDK: tsr::optim::Optimizer, the base of SGD, Adam, AdamW, RMSprop and Adagrad
// (torch.optim.Optimizer in C++), and ParamGroup.
//
//   tsr::optim::AdamW opt(model->parameters(), {3e-4});
//   loss.backward(); opt.step(); opt.zero_grad();
//
// Ownership: an optimizer holds handles to the parameter tensors it was given (the tensors a
// module's forward reads, so the in-place updates are what the model sees) and owns one state
// record per parameter. Build it after Module::to(), which replaces the parameter tensors.
// Parameters are numbered 0, 1, ... in order over the groups; that index names their state.
//
// Hyperparameters live per group in ParamGroup::options as doubles (booleans as 0/1), under
// torch's names ("lr", "momentum", "weight_decay", "beta1", "beta2", ...). A group gives only
// the options it overrides; the rest come from the optimizer's defaults. Schedulers write "lr"
// (and add "initial_lr"). Change options freely between steps; change parameter lists only
// through add_param_group.
//
// state_dict() is all tensors, so a checkpoint is one safetensors file:
//   state.<i>.<name>           per-parameter state (exp_avg, momentum_buffer, ...), and
//   state.<i>.step             the step count as a 0-dim int64 (optimizers that count steps)
//   param_groups.<g>.params    int64 [n]: the parameter indices of group g
//   param_groups.<g>.<option>  0-dim float64 per option (lr, betas as beta1/beta2, ...)
// Its state entries alias the live state tensors (as torch's do): clone them to snapshot.
// load_state_dict checks every key, count, shape and option value before it changes
// anything, then copies into the existing state tensors, and restores the options (so an lr
// set by a scheduler survives a resume).
//
// Errors: tsr::Error whose message starts with the optimizer's name and names the parameter,
// the shapes or the value. step() checks every gradient (shape, dtype, device) before it
// updates any parameter. Parameters without a gradient are skipped.
// Thread-safety: none; one thread steps an optimizer (different optimizers are independent).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/nn/state_dict.hpp"
#include "tessera/tessera.hpp"

namespace tsr::optim {

using Options = std::map<std::string, double>;

namespace detail {
constexpr double kPi = 3.14159265358979323846;
inline std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
// "state.12.exp_avg" -> (12, "exp_avg"); false when the text after the prefix is not
// "<digits>.<rest>".
inline bool split_indexed(const std::string& key, const std::string& prefix, size_t* index, std::string* rest) {
  if (key.compare(0, prefix.size(), prefix) != 0) return false;
  size_t pos = prefix.size(), dot = key.find('.', pos);
  if (dot == std::string::npos || dot == pos || dot - pos > 9 || dot + 1 == key.size()) return false;
  size_t v = 0;
  for (size_t k = pos; k < dot; ++k) {
    if (key[k] < '0' || key[k] > '9') return false;
    v = v * 10 + static_cast<size_t>(key[k] - '0');
  }
  *index = v;
  *rest = key.substr(dot + 1);
  return true;
}
}  // namespace detail

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  // overrides of the optimizer's defaults

  ParamGroup() = default;
  ParamGroup(std::vector<Tensor> p, Options o = {}) : params(std::move(p)), options(std::move(o)) {}  // NOLINT

  bool has(const std::string& key) const { return options.count(key) != 0; }
  double get(const std::string& key) const {
    auto it = options.find(key);
    if (it == options.end()) throw Error(TSR_NOT_FOUND, "ParamGroup: no option named '" + key + "'");
    return it->second;
  }
  void set(const std::string& key, double v) { options[key] = v; }
  double lr() const { return get("lr"); }
  void set_lr(double v) { options["lr"] = v; }
};

class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // One update of every parameter that has a gradient.
  virtual void step() = 0;

  // Drops every gradient (set_to_none) or zeroes it in place.
  void zero_grad(bool set_to_none = true) {
    NoGradGuard ng;
    for (ParamGroup& g : groups_)
      for (Tensor& p : g.params) {
        if (set_to_none) {
          p.set_grad(Tensor());
        } else {
          Tensor gr = p.grad();
          if (gr.defined()) gr.fill_(0);
        }
      }
  }

  // Group 0's learning rate; set_lr sets every group's.
  double lr() const { return groups_.at(0).lr(); }
  void set_lr(double lr) {
    for (ParamGroup& g : groups_) g.set_lr(lr);
  }

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }
  const std::string& name() const { return name_; }
  size_t num_params() const { return state_.size(); }

  // Appends a group (its parameters get the next indices), checked like the constructor's.
  void add_param_group(ParamGroup g) {
    std::vector<ParamGroup> one{std::move(g)};
    check_and_fill(one, num_params());
    const size_t first = num_params();
    groups_.push_back(std::move(one[0]));
    state_.resize(first + groups_.back().params.size());
    for (size_t k = 0; k < groups_.back().params.size(); ++k)
      init_state(groups_.back(), groups_.back().params[k], state_[first + k]);
  }

  // The state tensors of parameter i (empty before its first step) and its step count.
  const StateDict& state(size_t i) const { return state_.at(i).tensors; }
  int64_t state_step(size_t i) const { return state_.at(i).step; }

  virtual StateDict state_dict() const {
    StateDict sd;
    for (size_t i = 0; i < state_.size(); ++i) {
      const ParamState& s = state_[i];
      if (!s.initialized) continue;
      const std::string pre = "state." + std::to_string(i) + ".";
      if (counts_steps()) sd.insert(pre + "step", scalar_tensor_int(s.step, TSR_I64, false));
      for (const auto& kv : s.tensors) sd.insert(pre + kv.first, kv.second);
    }
    int64_t next = 0;
    for (size_t g = 0; g < groups_.size(); ++g) {
      const std::string pre = "param_groups." + std::to_string(g) + ".";
      std::vector<int64_t> idx(groups_[g].params.size());
      for (int64_t& v : idx) v = next++;
      sd.insert(pre + "params", from_vector(idx, {static_cast<int64_t>(idx.size())}));
      for (const auto& kv : groups_[g].options) sd.insert(pre + kv.first, scalar_tensor(kv.second, TSR_F64, false));
    }
    return sd;
  }

  virtual void load_state_dict(const StateDict& sd) {
    const size_t np = num_params(), ng = groups_.size();
    std::vector<Options> new_opts(ng);
    std::vector<bool> has_params(ng, false);
    std::vector<std::map<std::string, Tensor>> saved(np);
    // Pass 1: every key is understood, every index is in range.
    for (const auto& kv : sd) {
      size_t idx;
      std::string rest;
      if (detail::split_indexed(kv.first, "state.", &idx, &rest)) {
        if (idx >= np)
          throw err("state_dict entry '" + kv.first + "' names parameter " + std::to_string(idx) + " but the " + name_ +
                    " optimizer has " + std::to_string(np) + " parameters");
        saved[idx][rest] = kv.second;
      } else if (detail::split_indexed(kv.first, "param_groups.", &idx, &rest)) {
        if (idx >= ng)
          throw err("state_dict entry '" + kv.first + "' names param group " + std::to_string(idx) + " but the " +
                    name_ + " optimizer has " + std::to_string(ng) + " groups");
        if (rest == "params") {
          check_group_params(kv.second, idx);
          has_params[idx] = true;
        } else {
          if (!defaults_.count(rest) && rest != "initial_lr")
            throw err("state_dict entry '" + kv.first + "' is not an option of " + name_);
          new_opts[idx][rest] = scalar_of(kv.first, kv.second);
        }
      } else {
        throw err("unexpected state_dict entry '" + kv.first +
                  "' (expected state.<i>.<name> or param_groups.<g>.<option>)");
      }
    }
    // Pass 2: every group is complete and valid, every state has the right tensors and shapes.
    for (size_t g = 0; g < ng; ++g) {
      const std::string pre = "param_groups." + std::to_string(g) + ".";
      if (!has_params[g]) throw err("state_dict is missing '" + pre + "params'");
      for (const auto& d : defaults_)
        if (!new_opts[g].count(d.first)) throw err("state_dict is missing '" + pre + d.first + "'");
      check_options(new_opts[g]);
    }
    std::vector<size_t> group_of(np);
    std::vector<const Tensor*> param_of(np);
    for (size_t g = 0, i = 0; g < ng; ++g)
      for (const Tensor& p : groups_[g].params) {
        group_of[i] = g;
        param_of[i++] = &p;
      }
    std::vector<int64_t> steps(np, 0);
    for (size_t i = 0; i < np; ++i) {
      if (saved[i].empty()) continue;
      const Tensor& p = *param_of[i];
      std::vector<std::string> want = state_names(new_opts[group_of[i]]);
      const std::string pre = "state." + std::to_string(i) + ".";
      if (counts_steps()) {
        auto it = saved[i].find("step");
        if (it == saved[i].end()) throw err("state_dict is missing '" + pre + "step'");
        double v = scalar_of(pre + "step", it->second);
        if (!(v >= 0) || v != std::floor(v)) throw err("'" + pre + "step' must be a count >= 0, got " + detail::num(v));
        steps[i] = static_cast<int64_t>(v);
      }
      for (const std::string& n : want) {
        auto it = saved[i].find(n);
        if (it == saved[i].end()) throw err("state_dict is missing '" + pre + n + "'");
        const Tensor& t = it->second;
        if (!t.defined() || t.sizes() != p.sizes())
          throw err("'" + pre + n + "' has shape " + (t.defined() ? detail::shape_str(t.sizes()) : "undefined") +
                    " but parameter " + std::to_string(i) + " has shape " + detail::shape_str(p.sizes()));
        if (!is_floating(t.dtype()))
          throw err("'" + pre + n + "' must be floating point, got " + dtype_name(t.dtype()));
      }
      for (const auto& kv : saved[i])
        if ((kv.first != "step" || !counts_steps()) && std::find(want.begin(), want.end(), kv.first) == want.end())
          throw err("unexpected state_dict entry '" + pre + kv.first + "' for " + name_ + " with these options");
    }
    // Pass 3: apply (copies into existing state tensors, fresh tensors for new state).
    NoGradGuard ng_guard;
    std::vector<ParamState> next(np);
    for (size_t i = 0; i < np; ++i) {
      if (saved[i].empty()) continue;
      const Tensor& p = *param_of[i];
      ParamState& s = next[i];
      s.initialized = true;
      s.step = steps[i];
      for (const std::string& n : state_names(new_opts[group_of[i]])) {
        const Tensor& src = saved[i].at(n);
        Tensor dst;
        if (state_[i].tensors.contains(n)) dst = state_[i].tensors.at(n);
        if (!dst.defined() || dst.dtype() != p.dtype() || dst.device() != p.device() || dst.sizes() != p.sizes())
          dst = empty(p.sizes(), p.dtype(), p.device());
        if (!dst.shares_storage(src)) dst.copy_(src);
        s.tensors.insert(n, dst);
      }
    }
    state_ = std::move(next);
    for (size_t g = 0; g < ng; ++g) groups_[g].options = std::move(new_opts[g]);
  }

 protected:
  struct ParamState {
    bool initialized = false;
    int64_t step = 0;
    StateDict tensors;
  };

  Optimizer(std::string name, Options defaults) : name_(std::move(name)), defaults_(std::move(defaults)) {}

  // Called by the derived constructor (where its virtual overrides are in effect).
  void init_groups(std::vector<ParamGroup> groups) {
    if (groups.empty()) throw err("optimizer got an empty parameter list");
    check_and_fill(groups, 0);
    groups_ = std::move(groups);
    size_t n = 0;
    for (const ParamGroup& g : groups_) n += g.params.size();
    if (n == 0) throw err("optimizer got an empty parameter list");
    state_.assign(n, ParamState{});
    size_t i = 0;
    for (ParamGroup& g : groups_)
      for (Tensor& p : g.params) init_state(g, p, state_[i++]);
  }

  // Throws err(...) when an option value is out of range (torch's messages).
  virtual void check_options(const Options& o) const = 0;
  // The state tensors a parameter of a group with options o keeps once it has stepped.
  virtual std::vector<std::string> state_names(const Options& o) const = 0;
  virtual bool counts_steps() const { return true; }
  // State a parameter gets at construction (Adagrad's accumulator); most optimizers start empty.
  virtual void init_state(const ParamGroup&, const Tensor&, ParamState&) {}

  Error err(const std::string& msg) const { return Error(TSR_INVALID_ARGUMENT, name_ + ": " + msg); }
  static bool flag(const ParamGroup& g, const char* key) { return g.get(key) != 0; }

  // Calls f(group, param, grad, state) for every parameter with a gradient, under NoGradGuard,
  // after checking all of them: a bad gradient throws before any parameter changes.
  template <class F>
  void for_each_grad(F&& f) {
    size_t n = 0;
    for (const ParamGroup& g : groups_) n += g.params.size();
    if (n != state_.size())
      throw err("the parameter lists changed since construction (" + std::to_string(state_.size()) + " -> " +
                std::to_string(n) + " parameters); add parameters with add_param_group");
    struct Item {
      ParamGroup* group;
      Tensor param, grad;
      size_t index;
    };
    std::vector<Item> items;
    size_t i = 0;
    for (size_t gi = 0; gi < groups_.size(); ++gi)
      for (Tensor& p : groups_[gi].params) {
        Tensor gr = p.grad();
        if (gr.defined()) {
          check_grad(p, gr, i, gi);
          check_state(p, state_[i], i);
          items.push_back(Item{&groups_[gi], p, gr, i});
        }
        ++i;
      }
    NoGradGuard ng;
    for (Item& it : items) f(*it.group, it.param, it.grad, state_[it.index]);
  }

  std::string name_;
  Options defaults_;
  std::vector<ParamGroup> groups_;
  std::vector<ParamState> state_;

 private:
  void check_grad(const Tensor& p, const Tensor& g, size_t i, size_t gi) const {
    const std::string who = "the grad of parameter " + std::to_string(i) + " (group " + std::to_string(gi) + ")";
    if (g.sizes() != p.sizes())
      throw err(who + " has shape " + detail::shape_str(g.sizes()) + " but the parameter has shape " +
                detail::shape_str(p.sizes()));
    if (g.dtype() != p.dtype())
      throw err(who + " is " + dtype_name(g.dtype()) + " but the parameter is " + dtype_name(p.dtype()));
    if (g.device() != p.device())
      throw err(who + " is on " + g.device().str(g.runtime()) + " but the parameter is on " +
                p.device().str(p.runtime()));
  }

  // A parameter tensor swapped in a group after its state was created (another shape or
  // dtype) is caught here, with the optimizer's name, rather than inside the fused op.
  void check_state(const Tensor& p, const ParamState& s, size_t i) const {
    for (const auto& kv : s.tensors) {
      const Tensor& t = kv.second;
      const std::string who = "state '" + kv.first + "' of parameter " + std::to_string(i);
      if (t.sizes() != p.sizes())
        throw err(who + " has shape " + detail::shape_str(t.sizes()) + " but the parameter has shape " +
                  detail::shape_str(p.sizes()));
      if (t.dtype() != p.dtype() || t.device() != p.device())
        throw err(who + " is " + describe(t) + " but the parameter is " + describe(p) +
                  " (build the optimizer after moving the model)");
    }
  }

  // Fills each group's missing options from the defaults and checks options and parameters.
  void check_and_fill(std::vector<ParamGroup>& groups, size_t first_index) const {
    std::set<tsr_tensor_t*> seen;
    for (const ParamGroup& g : groups_)
      for (const Tensor& p : g.params) seen.insert(p.get());
    size_t i = first_index;
    for (ParamGroup& g : groups) {
      for (const auto& kv : g.options)
        if (!defaults_.count(kv.first) && kv.first != "initial_lr")
          throw err("unknown option '" + kv.first + "' in a parameter group");
      for (const auto& d : defaults_) g.options.emplace(d.first, d.second);
      check_options(g.options);
      for (const Tensor& p : g.params) {
        const std::string who = "parameter " + std::to_string(i++);
        if (!p.defined()) throw err(who + " is an undefined tensor");
        if (!is_floating(p.dtype())) throw err(who + " must be floating point, got " + dtype_name(p.dtype()));
        if (!p.is_leaf()) throw err("can't optimize a non-leaf tensor (" + who + ")");
        if (!seen.insert(p.get()).second) throw err(who + " appears more than once in the parameter groups");
      }
    }
  }

  void check_group_params(const Tensor& t, size_t g) const {
    const std::string key = "param_groups." + std::to_string(g) + ".params";
    int64_t first = 0;
    for (size_t k = 0; k < g; ++k) first += static_cast<int64_t>(groups_[k].params.size());
    const int64_t n = static_cast<int64_t>(groups_[g].params.size());
    if (!t.defined() || t.dim() != 1 || is_floating(t.dtype()) || t.dtype() == TSR_BOOL)
      throw err("'" + key + "' must be a 1-D integer tensor of parameter indices");
    if (t.numel() != n)
      throw err("loaded state dict has a parameter group (" + key + ") of " + std::to_string(t.numel()) +
                " parameters but group " + std::to_string(g) + " of the " + name_ + " optimizer has " +
                std::to_string(n));
    std::vector<int64_t> v = t.to_vector<int64_t>();
    for (int64_t k = 0; k < n; ++k)
      if (v[static_cast<size_t>(k)] != first + k)
        throw err("'" + key + "' lists parameter " + std::to_string(v[static_cast<size_t>(k)]) + " where parameter " +
                  std::to_string(first + k) + " was expected");
  }

  double scalar_of(const std::string& key, const Tensor& t) const {
    if (!t.defined() || t.numel() != 1 || t.dtype() == TSR_BOOL)
      throw err("'" + key + "' must be a numeric scalar tensor, got " + describe(t));
    return t.item<double>();
  }
};

}  // namespace tsr::optim
