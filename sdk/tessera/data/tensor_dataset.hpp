// Tessera SDK: TensorDataset, samples as rows of whole tensors (torch TensorDataset).
//
//   auto ds = std::make_shared<tsr::data::TensorDataset>(std::vector<tsr::Tensor>{x, y});
//   ds->get(3)            -> {x[3], y[3]}           (views: no copy)
//   ds->get_batch({4, 1}) -> {x[[4, 1]], y[[4, 1]]} (one index_select per field)
//
// A batch is gathered with one index_select per field rather than by stacking row views,
// because one op over the whole batch is what makes loading cheap next to the training step.
//
// Ownership: holds a reference to each tensor (they are not copied; writing into them later
// changes what the dataset returns).
// Errors: tsr::Error. The constructor rejects an empty field list, undefined or 0-dim tensors
// and tensors whose sizes along dim 0 differ (naming both shapes); an index past the end is
// OUT_OF_RANGE naming the index and the size.
// Thread-safety: get and get_batch may be called from any number of threads at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/data/dataset.hpp"
#include "tessera/tessera.hpp"

namespace tsr::data {

class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
    if (tensors_.empty()) throw Error(TSR_INVALID_ARGUMENT, "TensorDataset: no tensors given");
    for (size_t f = 0; f < tensors_.size(); ++f) {
      const Tensor& t = tensors_[f];
      if (!t.defined() || t.dim() == 0)
        throw Error(TSR_INVALID_ARGUMENT, "TensorDataset: tensor " + std::to_string(f) + " has shape " +
                                              detail::shape_str(t) + "; every tensor needs a dim 0 to index");
      if (t.size(0) != tensors_[0].size(0))
        throw Error(TSR_INVALID_ARGUMENT, "TensorDataset: tensor " + std::to_string(f) + " has shape " +
                                              detail::shape_str(t) + " but tensor 0 has " +
                                              detail::shape_str(tensors_[0]) + " (sizes along dim 0 differ)");
      if (t.runtime() != tensors_[0].runtime())
        throw Error(TSR_INVALID_ARGUMENT,
                    "TensorDataset: tensor " + std::to_string(f) + " belongs to another runtime than tensor 0");
    }
    size_ = static_cast<size_t>(tensors_[0].size(0));
  }

  size_t size() const override { return size_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

  Example get(size_t i) const override {
    check(static_cast<int64_t>(i));
    Example out;
    out.reserve(tensors_.size());
    for (const Tensor& t : tensors_) out.push_back(t.select(0, static_cast<int64_t>(i)));
    return out;
  }

  Example get_batch(const std::vector<int64_t>& idx) const override {
    if (idx.empty()) throw Error(TSR_INVALID_ARGUMENT, "TensorDataset::get_batch: empty index list");
    for (int64_t i : idx) check(i);
    Example out;
    out.reserve(tensors_.size());
    // The index tensor must live in the tensors' runtime, whichever runtime this thread uses.
    RuntimeScope scope(tensors_[0].runtime());
    Tensor host_index = from_vector(idx, {static_cast<int64_t>(idx.size())});
    Tensor index;
    for (const Tensor& t : tensors_) {
      if (!index.defined() || index.device() != t.device()) index = host_index.to(t.device());
      out.push_back(index_select(t, 0, index));
    }
    return out;
  }

 private:
  void check(int64_t i) const {
    if (i < 0 || static_cast<size_t>(i) >= size_)
      throw Error(TSR_OUT_OF_RANGE, "TensorDataset: index " + std::to_string(i) +
                                        " out of range for a dataset of size " + std::to_string(size_));
  }
  std::vector<Tensor> tensors_;
  size_t size_ = 0;
};

}  // namespace tsr::data
