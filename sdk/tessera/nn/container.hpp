// Tessera SDK: module containers (torch.nn.Sequential, ModuleList, ModuleDict).
//
//   auto mlp = std::make_shared<tsr::nn::Sequential>(
//       std::make_shared<tsr::nn::Linear>(4, 8), std::make_shared<tsr::nn::ReLU>(),
//       std::make_shared<tsr::nn::Linear>(8, 2));      // or from a std::vector<shared_ptr<Module>>
//   tsr::Tensor y = (*mlp)(x);               // Linear -> ReLU -> Linear
//   auto first = mlp->at<tsr::nn::Linear>(0);  // typed access
//
// Sequential and ModuleList name their children "0", "1", ... (so state_dict keys are "0.weight",
// as PyTorch); Sequential::push_back(name, m) and ModuleDict use given names (no dots). Children
// are shared, not copied: one module may sit in several containers (shared weights).
//
// Ownership: containers hold std::shared_ptr to their modules. Errors: tsr::Error for an index
// out of range, an unknown key, a null module, a wrong type in at<T>(), and forward() on a
// ModuleList/ModuleDict (they have none). Thread-safety: as nn::Module.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

namespace detail {
// An indexable list of modules kept alongside Module's registered children.
class ModuleSeq : public Module {
 public:
  using Ptr = std::shared_ptr<Module>;
  explicit ModuleSeq(std::string type, std::vector<Ptr> mods) : Module(std::move(type)) {
    for (auto& m : mods) push_back(std::move(m));
  }
  void push_back(Ptr m) { push_back_named(std::to_string(mods_.size()), std::move(m)); }
  void extend(const std::vector<Ptr>& ms) {
    for (const auto& m : ms) push_back(m);
  }
  size_t size() const { return mods_.size(); }
  bool empty() const { return mods_.empty(); }
  // Negative i counts from the end, as Python.
  Ptr operator[](int64_t i) const { return mods_[index(i)]; }
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>(mods_[index(i)]);
    if (!p)
      throw Error(TSR_INVALID_ARGUMENT, type_name() + ": module " + std::to_string(i) + " is a " +
                                            mods_[index(i)]->type_name() + ", not the type requested");
    return p;
  }
  std::vector<Ptr>::const_iterator begin() const { return mods_.begin(); }
  std::vector<Ptr>::const_iterator end() const { return mods_.end(); }

 protected:
  void push_back_named(const std::string& name, Ptr m) {
    if (!m) throw Error(TSR_INVALID_ARGUMENT, type_name() + ": push_back of a null module");
    register_module(name, m);
    mods_.push_back(std::move(m));
  }

 private:
  size_t index(int64_t i) const {
    int64_t n = static_cast<int64_t>(mods_.size());
    int64_t j = i < 0 ? i + n : i;
    if (j < 0 || j >= n)
      throw Error(TSR_OUT_OF_RANGE,
                  type_name() + ": index " + std::to_string(i) + " out of range for " + std::to_string(n) + " modules");
    return static_cast<size_t>(j);
  }
  std::vector<Ptr> mods_;
};
}  // namespace detail

// Calls its modules' forward(Tensor) in order.
class Sequential : public detail::ModuleSeq {
 public:
  Sequential() : ModuleSeq("Sequential", {}) {}
  explicit Sequential(std::vector<Ptr> mods) : ModuleSeq("Sequential", std::move(mods)) {}
  template <class... M>
  explicit Sequential(std::shared_ptr<M>... mods) : ModuleSeq("Sequential", std::vector<Ptr>{std::move(mods)...}) {}
  using ModuleSeq::push_back;
  // A named child (state_dict keys "name.weight"); names must be unique and dot-free.
  void push_back(const std::string& name, Ptr m) { push_back_named(name, std::move(m)); }

  Tensor forward(const Tensor& x) override {
    Tensor y = x;
    for (const auto& m : *this) y = m->forward(y);
    return y;
  }
};

// Holds modules for a parent to call as it likes (e.g. transformer blocks); no forward.
class ModuleList : public detail::ModuleSeq {
 public:
  ModuleList() : ModuleSeq("ModuleList", {}) {}
  explicit ModuleList(std::vector<Ptr> mods) : ModuleSeq("ModuleList", std::move(mods)) {}
  template <class... M>
  explicit ModuleList(std::shared_ptr<M>... mods) : ModuleSeq("ModuleList", std::vector<Ptr>{std::move(mods)...}) {}
};

// Modules by name, in insertion order; no forward.
class ModuleDict : public Module {
 public:
  using Ptr = std::shared_ptr<Module>;
  ModuleDict() : Module("ModuleDict") {}
  explicit ModuleDict(const std::vector<std::pair<std::string, Ptr>>& items) : Module("ModuleDict") {
    for (const auto& kv : items) insert(kv.first, kv.second);
  }
  // A new key (re-inserting a key is an error: the registered child cannot be replaced).
  void insert(const std::string& key, Ptr m) {
    if (!m) throw Error(TSR_INVALID_ARGUMENT, "ModuleDict: insert('" + key + "') of a null module");
    register_module(key, m);
  }
  bool contains(const std::string& key) const {
    for (const auto& kv : named_children())
      if (kv.first == key) return true;
    return false;
  }
  Ptr operator[](const std::string& key) const {
    for (const auto& kv : named_children())
      if (kv.first == key) return kv.second;
    throw Error(TSR_NOT_FOUND, "ModuleDict: no module named '" + key + "' (keys: " + key_list() + ")");
  }
  template <class T>
  std::shared_ptr<T> at(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[key]);
    if (!p) throw Error(TSR_INVALID_ARGUMENT, "ModuleDict: module '" + key + "' is not the type requested");
    return p;
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& kv : named_children()) out.push_back(kv.first);
    return out;
  }
  size_t size() const { return named_children().size(); }
  bool empty() const { return named_children().empty(); }
  auto begin() const { return named_children().begin(); }
  auto end() const { return named_children().end(); }

 private:
  std::string key_list() const {
    std::string s;
    for (const auto& k : keys()) s += (s.empty() ? "" : ", ") + k;
    return s;
  }
};

}  // namespace tsr::nn
