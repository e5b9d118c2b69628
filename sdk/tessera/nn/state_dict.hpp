// Tessera SDK: StateDict, the ordered name -> tensor map that modules, optimizers, schedulers
// and checkpoints exchange (what torch calls an OrderedDict of tensors).
//
// Insertion order is kept, because a safetensors file and a printed state_dict should list
// parameters in the order the model declared them. Lookups are O(1) through an index.
// Not thread-safe: one writer, or several readers.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  // Adds name -> t, or replaces the tensor of an existing name (keeping its position).
  void insert(const std::string& name, Tensor t) {
    auto it = index_.find(name);
    if (it != index_.end()) {
      items_[it->second].second = std::move(t);
      return;
    }
    index_.emplace(name, items_.size());
    items_.emplace_back(name, std::move(t));
  }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  // Throws tsr::Error(NOT_FOUND) naming the key.
  const Tensor& at(const std::string& name) const {
    auto it = index_.find(name);
    if (it == index_.end()) throw Error(TSR_NOT_FOUND, "state_dict: no entry named '" + name + "'");
    return items_[it->second].second;
  }
  // Removes name if present (O(n): the order of the rest is kept).
  void erase(const std::string& name) {
    auto it = index_.find(name);
    if (it == index_.end()) return;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    reindex();
  }
  // Every entry whose name starts with prefix, with the prefix removed ("model." -> "fc.weight").
  StateDict with_prefix_removed(const std::string& prefix) const {
    StateDict out;
    for (const Item& kv : items_)
      if (kv.first.compare(0, prefix.size(), prefix) == 0) out.insert(kv.first.substr(prefix.size()), kv.second);
    return out;
  }
  // Inserts every entry of other under prefix + name.
  void merge(const StateDict& other, const std::string& prefix = "") {
    for (const Item& kv : other) insert(prefix + kv.first, kv.second);
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    k.reserve(items_.size());
    for (const Item& kv : items_) k.push_back(kv.first);
    return k;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }

 private:
  void reindex() {
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace tsr
