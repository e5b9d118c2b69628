// Tessera SDK: nn::Module, the base of every layer and model (torch.nn.Module in C++).
//
// A module owns tensors in its own member variables and registers *pointers* to them:
//
//   struct Affine : tsr::nn::Module {
//     tsr::Tensor weight, bias;
//     Affine(int64_t n) : Module("Affine") {
//       weight = tsr::randn({n});  register_parameter("weight", weight);
//       bias = tsr::zeros({n});    register_parameter("bias", bias);
//     }
//     tsr::Tensor forward(const tsr::Tensor& x) override { return x * weight + bias; }
//   };
//
// so `to()` and `load_state_dict()` update what the layer's forward reads, with no lookup by
// name on the hot path. Because of those pointers a module cannot be copied or moved: hold
// modules in std::shared_ptr (children are registered as shared_ptr too).
//
// Parameters are leaves with requires_grad; buffers (running statistics, masks) are not.
// An undefined tensor may be registered (an optional bias): it is skipped by every listing.
//
// Errors are tsr::Error. load_state_dict checks every key and shape before it copies anything,
// so a failed load leaves the module as it was. Not thread-safe: do not mutate a module while
// another thread runs it (running forward from several threads on an eval module is fine).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/nn/state_dict.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class Module {
 public:
  explicit Module(std::string type_name = "Module") : type_name_(std::move(type_name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  const std::string& type_name() const { return type_name_; }

  // The single-tensor forward that Sequential and operator() use. Modules with other
  // signatures (attention, recurrent layers) add their own forward overloads.
  virtual Tensor forward(const Tensor& /*x*/) {
    throw Error(TSR_UNIMPLEMENTED, type_name_ + ": this module has no forward(Tensor)");
  }
  Tensor operator()(const Tensor& x) { return forward(x); }

  // ---- listings (declaration order; children after the module's own tensors) ----
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const {
    std::vector<std::pair<std::string, Tensor>> out;
    visit("", recurse, [&](const std::string& prefix, const Module& m) {
      for (const Slot& s : m.params_)
        if (s.t->defined()) out.emplace_back(prefix + s.name, *s.t);
    });
    return out;
  }
  std::vector<Tensor> parameters(bool recurse = true) const {
    std::vector<Tensor> out;
    for (auto& kv : named_parameters(recurse)) out.push_back(kv.second);
    return out;
  }
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const {
    std::vector<std::pair<std::string, Tensor>> out;
    visit("", recurse, [&](const std::string& prefix, const Module& m) {
      for (const Slot& s : m.buffers_)
        if (s.t->defined()) out.emplace_back(prefix + s.name, *s.t);
    });
    return out;
  }
  std::vector<Tensor> buffers(bool recurse = true) const {
    std::vector<Tensor> out;
    for (auto& kv : named_buffers(recurse)) out.push_back(kv.second);
    return out;
  }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  // This module (named prefix, "" by default) and every descendant, depth first.
  std::vector<std::pair<std::string, Module*>> named_modules(const std::string& prefix = "") {
    std::vector<std::pair<std::string, Module*>> out;
    collect_modules(prefix, &out);
    return out;
  }
  // Number of parameter elements (a model's "size").
  int64_t num_parameters() const {
    int64_t n = 0;
    for (auto& kv : named_parameters()) n += kv.second.numel();
    return n;
  }

  // ---- mode ----
  virtual void train(bool on = true) {
    training_ = on;
    for (auto& c : children_) c.second->train(on);
  }
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // ---- placement ----
  // Moves every parameter and buffer to dev; floating-point ones are also converted to dtype
  // when given (integer buffers such as step counters keep theirs). Parameters stay leaves
  // with requires_grad; their .grad is dropped. Build optimizers after to(): like PyTorch's,
  // they hold the parameter tensors they were given.
  void to(Device dev, std::optional<tsr_dtype_t> dtype = std::nullopt) {
    NoGradGuard no_grad;
    for (auto& kv : named_modules()) kv.second->move_own(dev, dtype);
  }
  void to(tsr_dtype_t dtype) {
    NoGradGuard no_grad;
    for (auto& kv : named_modules()) kv.second->move_own(std::nullopt, dtype);
  }

  // set_to_none=true drops each .grad; false zeroes it in place.
  void zero_grad(bool set_to_none = true) {
    NoGradGuard no_grad;
    for (Tensor& p : parameters()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else
        g.fill_(0);
    }
  }

  // ---- state ----
  // Parameters and persistent buffers under their dotted names, sharing storage with the
  // module (detached: no autograd history). Clone before mutating if that matters.
  StateDict state_dict() const {
    StateDict sd;
    visit("", true, [&](const std::string& prefix, const Module& m) {
      for (const Slot& s : m.params_)
        if (s.t->defined()) sd.insert(prefix + s.name, s.t->detach());
      for (const Slot& s : m.buffers_)
        if (s.t->defined() && s.persistent) sd.insert(prefix + s.name, s.t->detach());
    });
    return sd;
  }
  // Copies sd's tensors into this module's (converting dtype and device as needed). strict:
  // a key missing from sd or a key of sd this module does not have is an error. A shape
  // mismatch is always an error. Every check runs before the first copy.
  void load_state_dict(const StateDict& sd, bool strict = true) {
    std::vector<std::pair<Tensor*, Tensor>> copies;
    std::vector<std::string> missing, mismatched;
    std::vector<std::string> own;
    visit_slots([&](const std::string& name, Tensor* t) {
      own.push_back(name);
      if (!sd.contains(name)) {
        missing.push_back(name);
        return;
      }
      const Tensor& src = sd.at(name);
      if (!src.defined() || src.sizes() != t->sizes()) {
        mismatched.push_back(name + ": checkpoint " + (src.defined() ? shape_text(src.sizes()) : "undefined") +
                             ", module " + shape_text(t->sizes()));
        return;
      }
      copies.emplace_back(t, src);
    });
    std::vector<std::string> unexpected;
    for (const auto& kv : sd)
      if (std::find(own.begin(), own.end(), kv.first) == own.end()) unexpected.push_back(kv.first);
    std::string msg;
    if (!mismatched.empty()) msg += " size mismatch for " + join(mismatched, "; ") + ".";
    if (strict && !missing.empty()) msg += " missing keys: " + join(missing, ", ") + ".";
    if (strict && !unexpected.empty()) msg += " unexpected keys: " + join(unexpected, ", ") + ".";
    if (!msg.empty()) throw Error(TSR_INVALID_ARGUMENT, "load_state_dict(" + type_name_ + "):" + msg);
    NoGradGuard no_grad;
    for (auto& c : copies) c.first->copy_(c.second);
  }

  // Makes this module, built the same way as `src` (same parameters and buffers, names and
  // shapes), a replica of src on `dev` for one forward: each parameter becomes src's parameter
  // copied to dev *with* autograd history, so the replica's gradients flow back into src's
  // .grad (summed over replicas); each buffer becomes a copy. The replica's parameters are then
  // not leaves: train src, not the replica. Checks everything before changing anything.
  // (torch.nn.parallel.replicate; DataParallel calls it before every forward.)
  void replicate_from(const Module& src, Device dev) {
    std::vector<SlotRef> mine, theirs;
    collect_slots("", &mine);
    const_cast<Module&>(src).collect_slots("", &theirs);
    std::string diff;
    if (mine.size() != theirs.size())
      diff = std::to_string(theirs.size()) + " parameters and buffers, the replica " + std::to_string(mine.size());
    for (size_t i = 0; diff.empty() && i < mine.size(); ++i)
      if (mine[i].name != theirs[i].name || mine[i].is_param != theirs[i].is_param ||
          mine[i].t->defined() != theirs[i].t->defined() ||
          (mine[i].t->defined() && mine[i].t->sizes() != theirs[i].t->sizes()))
        diff = "'" + theirs[i].name + "' " +
               (theirs[i].t->defined() ? shape_text(theirs[i].t->sizes()) : std::string("undefined")) +
               ", the replica '" + mine[i].name + "' " +
               (mine[i].t->defined() ? shape_text(mine[i].t->sizes()) : std::string("undefined"));
    if (!diff.empty())
      throw Error(TSR_INVALID_ARGUMENT, "replicate_from(" + src.type_name_ + "): the replica is not built like the "
                                            "source: the source has " + diff);
    for (size_t i = 0; i < mine.size(); ++i) {
      if (!theirs[i].t->defined()) continue;
      if (theirs[i].is_param) {
        *mine[i].t = theirs[i].t->to(dev);  // recorded: the gradient flows back to the source
      } else {
        NoGradGuard no_grad;
        *mine[i].t = theirs[i].t->detach().to(dev);
      }
    }
    train(src.is_training());
  }

  // A readable tree: "GPT(\n  (wte): Embedding(64, 128)\n ...)".
  virtual std::string extra_repr() const { return ""; }
  std::string repr(int indent = 0) const {
    std::string s = type_name_ + "(" + extra_repr();
    if (children_.empty()) return s + ")";
    std::string pad(static_cast<size_t>(indent + 2), ' ');
    s += "\n";
    for (auto& c : children_) s += pad + "(" + c.first + "): " + c.second->repr(indent + 2) + "\n";
    return s + std::string(static_cast<size_t>(indent), ' ') + ")";
  }

 protected:
  // slot must be a member of this module (it is updated in place by to()/load_state_dict()).
  Tensor& register_parameter(const std::string& name, Tensor& slot, bool requires_grad = true) {
    check_new_name(name);
    if (slot.defined() && requires_grad && !slot.requires_grad()) {
      if (!slot.is_leaf()) slot = slot.detach();
      slot.requires_grad_(true);
    }
    params_.push_back({name, &slot, true});
    return slot;
  }
  // persistent=false keeps a buffer out of state_dict (e.g. a causal mask rebuilt on load).
  Tensor& register_buffer(const std::string& name, Tensor& slot, bool persistent = true) {
    check_new_name(name);
    buffers_.push_back({name, &slot, persistent});
    return slot;
  }
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    if (!m) throw Error(TSR_INVALID_ARGUMENT, type_name_ + ": register_module('" + name + "') with a null module");
    check_new_name(name);
    children_.emplace_back(name, m);
    return m;
  }

 private:
  struct Slot {
    std::string name;
    Tensor* t;
    bool persistent;
  };

  struct SlotRef {
    std::string name;
    Tensor* t;
    bool is_param;
  };
  // Every parameter and buffer slot (undefined ones too), in a fixed order, with dotted names.
  void collect_slots(const std::string& prefix, std::vector<SlotRef>* out) {
    for (Slot& s : params_) out->push_back({prefix + s.name, s.t, true});
    for (Slot& s : buffers_) out->push_back({prefix + s.name, s.t, false});
    for (auto& c : children_) c.second->collect_slots(prefix + c.first + ".", out);
  }
  template <class F>
  void visit(const std::string& prefix, bool recurse, F&& f) const {
    f(prefix, *this);
    if (!recurse) return;
    for (auto& c : children_) c.second->visit(prefix + c.first + ".", true, f);
  }
  // Every state_dict slot (parameters and persistent buffers) with its dotted name.
  template <class F>
  void visit_slots(F&& f, const std::string& prefix = "") {
    for (Slot& s : params_)
      if (s.t->defined()) f(prefix + s.name, s.t);
    for (Slot& s : buffers_)
      if (s.t->defined() && s.persistent) f(prefix + s.name, s.t);
    for (auto& c : children_) c.second->visit_slots(f, prefix + c.first + ".");
  }
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>* out) {
    out->emplace_back(prefix, this);
    for (auto& c : children_) c.second->collect_modules(prefix.empty() ? c.first : prefix + "." + c.first, out);
  }
  void move_own(std::optional<Device> dev, std::optional<tsr_dtype_t> dtype) {
    auto convert = [&](Tensor* t, bool is_param) {
      if (!t->defined()) return;
      Device d = dev ? *dev : t->device();
      tsr_dtype_t dt = (dtype && is_floating(t->dtype())) ? *dtype : t->dtype();
      if (dt == t->dtype() && d.d.type == t->device().d.type && d.d.index == t->device().d.index) return;
      Tensor moved = t->detach().to(d, dt);
      if (is_param) moved.requires_grad_(t->requires_grad());
      *t = moved;
    };
    for (Slot& s : params_) convert(s.t, true);
    for (Slot& s : buffers_) convert(s.t, false);
  }
  void check_new_name(const std::string& name) const {
    if (name.empty() || name.find('.') != std::string::npos)
      throw Error(TSR_INVALID_ARGUMENT,
                  type_name_ + ": '" + name + "' is not a valid attribute name (empty or dotted)");
    auto taken = [&](const auto& v) {
      return std::any_of(v.begin(), v.end(), [&](const auto& s) { return slot_name(s) == name; });
    };
    if (taken(params_) || taken(buffers_) || taken(children_))
      throw Error(TSR_ALREADY_EXISTS, type_name_ + ": '" + name + "' is already registered");
  }
  static const std::string& slot_name(const Slot& s) { return s.name; }
  static const std::string& slot_name(const std::pair<std::string, std::shared_ptr<Module>>& c) { return c.first; }
  static std::string shape_text(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  }
  static std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
  }

  std::string type_name_;
  bool training_ = true;
  std::vector<Slot> params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace tsr::nn
