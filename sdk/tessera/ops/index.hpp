// Tessera SDK: host wrappers of the index op family (included by tessera/tessera.hpp).
//
//   tsr::index_select(x, 0, idx)            rows of x
//   tsr::gather(x, 1, idx) / tsr::scatter_add(x, 1, idx, src)
//   tsr::masked_fill(x, mask, 0.0) / tsr::masked_select(x, mask)
//   tsr::index(x, {i, j})                   x[i, j] (PyTorch advanced indexing on leading dims)
//   tsr::index(x, {i}, 1)                   x[:, i] (the index tensors start at dim 1)
//   tsr::index_put_(x, {i, j}, v, true)     x[i, j] += v (duplicates summed deterministically)
// Index tensors are int64 (int32 accepted); negative indices count from the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

inline Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  static const Op op("index_select");
  return call(op, {self, dim, index});
}
inline Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  static const Op op("gather");
  return call(op, {self, dim, index, false});
}

inline Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  static const Op op("scatter");
  return call(op, {self, dim, index, src});
}
inline Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  static const Op op("scatter_value");
  return call(op, {self, dim, index, detail::scalar_arg(value)});
}
inline Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  static const Op op("scatter_");
  call(op, {self, dim, index, src});
  return self;
}
inline Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, double value) {
  static const Op op("scatter_value_");
  call(op, {self, dim, index, detail::scalar_arg(value)});
  return self;
}
inline Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  static const Op op("scatter_add");
  return call(op, {self, dim, index, src});
}
inline Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  static const Op op("scatter_add_");
  call(op, {self, dim, index, src});
  return self;
}
// reduce: "sum", "prod", "mean", "amax", "amin".
inline Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                             const std::string& reduce, bool include_self = true) {
  static const Op op("scatter_reduce");
  return call(op, {self, dim, index, src, reduce, include_self});
}
inline Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               const std::string& reduce, bool include_self = true) {
  static const Op op("scatter_reduce_");
  call(op, {self, dim, index, src, reduce, include_self});
  return self;
}

inline Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1) {
  static const Op op("index_add");
  return call(op, {self, dim, index, source, detail::scalar_arg(alpha)});
}
inline Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1) {
  static const Op op("index_add_");
  call(op, {self, dim, index, source, detail::scalar_arg(alpha)});
  return self;
}
inline Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  static const Op op("index_copy");
  return call(op, {self, dim, index, source});
}
inline Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  static const Op op("index_copy_");
  call(op, {self, dim, index, source});
  return self;
}
inline Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  static const Op op("index_fill");
  return call(op, {self, dim, index, detail::scalar_arg(value)});
}
inline Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, double value) {
  static const Op op("index_fill_");
  call(op, {self, dim, index, detail::scalar_arg(value)});
  return self;
}

inline Tensor masked_fill(const Tensor& self, const Tensor& mask, double value) {
  static const Op op("masked_fill");
  return call(op, {self, mask, detail::scalar_arg(value)});
}
// value: a 0-dim tensor (differentiable).
inline Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  static const Op op("masked_fill_tensor");
  return call(op, {self, mask, value});
}
inline Tensor& masked_fill_(Tensor& self, const Tensor& mask, double value) {
  static const Op op("masked_fill_");
  call(op, {self, mask, detail::scalar_arg(value)});
  return self;
}
inline Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  static const Op op("masked_fill_tensor_");
  call(op, {self, mask, value});
  return self;
}
inline Tensor masked_select(const Tensor& self, const Tensor& mask) {
  static const Op op("masked_select");
  return call(op, {self, mask});
}
inline Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  static const Op op("masked_scatter");
  return call(op, {self, mask, source});
}
inline Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  static const Op op("masked_scatter_");
  call(op, {self, mask, source});
  return self;
}

inline Tensor nonzero(const Tensor& self) {
  static const Op op("nonzero");
  return call(op, {self});
}
inline Tensor argwhere(const Tensor& self) {
  static const Op op("argwhere");
  return call(op, {self});
}
inline Tensor take(const Tensor& self, const Tensor& index) {
  static const Op op("take");
  return call(op, {self, index});
}
inline Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false) {
  static const Op op("put");
  return call(op, {self, index, source, accumulate});
}
inline Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false) {
  static const Op op("put_");
  call(op, {self, index, source, accumulate});
  return self;
}

namespace detail {
// Moves dims [first, first + k) of x to the front (so that the index ops see them leading).
inline Tensor index_dims_to_front(const Tensor& x, int64_t first, int64_t k) {
  if (first == 0) return x;
  std::vector<int64_t> perm;
  for (int64_t d = first; d < first + k; ++d) perm.push_back(d);
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d < first || d >= first + k) perm.push_back(d);
  return x.permute(perm);
}
// Dims an index list consumes (a bool mask consumes its own rank).
inline int64_t index_consumed_dims(const std::vector<Tensor>& indices) {
  int64_t k = 0;
  for (const Tensor& t : indices) k += t.dtype() == TSR_BOOL ? std::max<int64_t>(1, t.dim()) : 1;
  return k;
}
}  // namespace detail

// x[i, j, ...]: the index tensors apply to consecutive dims starting at `first_dim` (as leading
// full slices in PyTorch: x[:, i] is index(x, {i}, 1)); they broadcast together and their
// broadcast shape replaces the indexed dims in place. A bool tensor selects like its nonzero().
inline Tensor index(const Tensor& self, const std::vector<Tensor>& indices, int64_t first_dim = 0) {
  static const Op op("index");
  if (first_dim == 0) return call(op, {self, indices});
  const int64_t k = detail::index_consumed_dims(indices);
  Tensor r = call(op, {detail::index_dims_to_front(self, first_dim, k), indices});
  // r is [broadcast..., leading dims before first_dim..., trailing dims...]: move the leading
  // dims back in front of the broadcast dims.
  const int64_t nb = r.dim() - (self.dim() - k);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < first_dim; ++d) perm.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) perm.push_back(d);
  for (int64_t d = nb + first_dim; d < r.dim(); ++d) perm.push_back(d);
  return r.permute(perm);
}
// x[i, j] = values (accumulate: +=). Functional: returns a new tensor.
inline Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                        bool accumulate = false) {
  static const Op op("index_put");
  return call(op, {self, indices, values, accumulate});
}
inline Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                          bool accumulate = false) {
  static const Op op("index_put_");
  call(op, {self, indices, values, accumulate});
  return self;
}

}  // namespace tsr
