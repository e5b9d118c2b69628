// Tessera SDK: Flatten and Unflatten (torch.nn.Flatten / Unflatten). Flatten(start_dim=1,
// end_dim=-1) merges dims start..end (a view when the input's strides allow); Unflatten(dim,
// sizes) splits one dim into `sizes` (one entry may be -1).
//
// Ownership: no tensors. Errors: tsr::Error naming the layer and the input's shape.
// Thread-safety: stateless forwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class Flatten : public Module {
 public:
  int64_t start_dim, end_dim;
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}

  Tensor forward(const Tensor& x) override {
    detail::require_input(*this, x);
    int64_t n = std::max<int64_t>(x.dim(), 1);
    int64_t s = start_dim < 0 ? start_dim + n : start_dim, e = end_dim < 0 ? end_dim + n : end_dim;
    if (s < 0 || s >= n || e < 0 || e >= n || s > e)
      detail::fail(detail::layer_name(*this), "dims out of range for input " + detail::shape_str(x.sizes()));
    return flatten(x, start_dim, end_dim);
  }
  std::string extra_repr() const override {
    return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
  }
};

class Unflatten : public Module {
 public:
  int64_t dim;
  std::vector<int64_t> unflattened_size;
  Unflatten(int64_t dim, std::vector<int64_t> unflattened_size)
      : Module("Unflatten"), dim(dim), unflattened_size(std::move(unflattened_size)) {
    if (this->unflattened_size.empty()) detail::fail("Unflatten", "unflattened_size must not be empty");
  }

  Tensor forward(const Tensor& x) override {
    detail::require_input(*this, x);
    int64_t n = x.dim();
    int64_t d = dim < 0 ? dim + n : dim;
    if (d < 0 || d >= n)
      detail::fail(detail::layer_name(*this), "dim out of range for input " + detail::shape_str(x.sizes()));
    int64_t prod = 1, unknown = 0;
    for (int64_t v : unflattened_size) v == -1 ? ++unknown : prod *= v;
    int64_t size = x.sizes()[static_cast<size_t>(d)];
    bool ok = unknown == 0 ? prod == size : (unknown == 1 && prod > 0 && size % prod == 0);
    if (!ok)
      detail::fail(detail::layer_name(*this), "cannot split dim " + std::to_string(d) + " of input " +
                                                  detail::shape_str(x.sizes()) + " into " +
                                                  detail::shape_str(unflattened_size));
    return unflatten(x, d, unflattened_size);
  }
  std::string extra_repr() const override {
    return "dim=" + std::to_string(dim) + ", unflattened_size=" + detail::tuple_str(unflattened_size);
  }
};

}  // namespace tsr::nn
