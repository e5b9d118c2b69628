// Tessera SDK: datasets (torch.utils.data.Dataset in C++).
//
//   struct Squares : tsr::data::Dataset {
//     size_t size() const override { return 100; }
//     tsr::data::Example get(size_t i) const override {
//       return {tsr::full({1}, double(i)), tsr::full({}, double(i * i))};
//     }
//   };
//
// An Example is one sample as a list of fields (input, target, ...). get_batch() collates the
// samples of a batch; the default stacks each field of get(i) along a new dim 0, and datasets
// that hold whole tensors (TensorDataset) override it with one gather per field.
//
// Ownership: an Example holds tensor references; datasets are shared through
// std::shared_ptr<const Dataset> by the loaders that read them.
// Errors: tsr::Error naming the dataset, the index and the shapes involved (an index past the
// end is OUT_OF_RANGE; samples whose fields disagree in count or shape are INVALID_ARGUMENT).
// Thread-safety: a DataLoader with workers calls size(), get() and get_batch() from several
// threads at once, so both must be safe to call concurrently (const and free of unsynchronized
// caches). Tensors may be read from many threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::data {

using Example = std::vector<Tensor>;

namespace detail {
inline std::string shape_str(const Tensor& t) {
  if (!t.defined()) return "undefined";
  std::string s = "[";
  auto sz = t.sizes();
  for (size_t i = 0; i < sz.size(); ++i) s += (i ? ", " : "") + std::to_string(sz[i]);
  return s + "]";
}
}  // namespace detail

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual Example get(size_t i) const = 0;

  // The samples `idx` collated: field f of the result is stack(get(i)[f] for i in idx).
  virtual Example get_batch(const std::vector<int64_t>& idx) const {
    if (idx.empty()) throw Error(TSR_INVALID_ARGUMENT, "Dataset::get_batch: empty index list");
    const size_t n = size();
    std::vector<Example> samples;
    samples.reserve(idx.size());
    for (int64_t i : idx) {
      if (i < 0 || static_cast<size_t>(i) >= n)
        throw Error(TSR_OUT_OF_RANGE, "Dataset::get_batch: index " + std::to_string(i) +
                                          " out of range for a dataset of size " + std::to_string(n));
      samples.push_back(get(static_cast<size_t>(i)));
    }
    const size_t nfields = samples[0].size();
    Example out;
    out.reserve(nfields);
    for (size_t f = 0; f < nfields; ++f) {
      std::vector<Tensor> column;
      column.reserve(samples.size());
      for (size_t s = 0; s < samples.size(); ++s) {
        if (samples[s].size() != nfields)
          throw Error(TSR_INVALID_ARGUMENT, "Dataset::get_batch: sample " + std::to_string(idx[s]) + " has " +
                                                std::to_string(samples[s].size()) + " fields, sample " +
                                                std::to_string(idx[0]) + " has " + std::to_string(nfields));
        const Tensor& t = samples[s][f];
        // Checked here so the message names samples and fields instead of stack's list positions.
        if (!t.defined() || t.sizes() != samples[0][f].sizes())
          throw Error(TSR_INVALID_ARGUMENT, "Dataset::get_batch: field " + std::to_string(f) + " of sample " +
                                                std::to_string(idx[s]) + " has shape " + detail::shape_str(t) +
                                                ", sample " + std::to_string(idx[0]) + " has " +
                                                detail::shape_str(samples[0][f]));
        column.push_back(t);
      }
      out.push_back(stack(column, 0));
    }
    return out;
  }
};

// The samples of `base` at `indices` (a train/validation split). Holds the base dataset.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices)
      : base_(std::move(base)), indices_(std::move(indices)) {
    if (!base_) throw Error(TSR_INVALID_ARGUMENT, "Subset: null base dataset");
    const size_t n = base_->size();
    for (int64_t i : indices_)
      if (i < 0 || static_cast<size_t>(i) >= n)
        throw Error(TSR_OUT_OF_RANGE,
                    "Subset: index " + std::to_string(i) + " out of range for a dataset of size " + std::to_string(n));
  }
  size_t size() const override { return indices_.size(); }
  Example get(size_t i) const override {
    return base_->get(static_cast<size_t>(indices_[check(static_cast<int64_t>(i))]));
  }
  Example get_batch(const std::vector<int64_t>& idx) const override {
    std::vector<int64_t> mapped;
    mapped.reserve(idx.size());
    for (int64_t i : idx) mapped.push_back(indices_[check(i)]);
    return base_->get_batch(mapped);
  }

 private:
  size_t check(int64_t i) const {
    if (i < 0 || static_cast<size_t>(i) >= indices_.size())
      throw Error(TSR_OUT_OF_RANGE, "Subset: index " + std::to_string(i) + " out of range for a subset of size " +
                                        std::to_string(indices_.size()));
    return static_cast<size_t>(i);
  }
  std::shared_ptr<const Dataset> base_;
  std::vector<int64_t> indices_;
};

}  // namespace tsr::data
