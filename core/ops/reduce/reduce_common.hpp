// Helpers shared by the reduce family's composite ops and backward formulas (ops/reduce/*.cpp):
// dim-list normalization with PyTorch's rules, keepdim re-insertion, moving a dim last and back,
// and SDK wrappers of the family's internal row kernels (_sort_rows, _gather_rows, ...).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::core::red {

using Dims = std::vector<int64_t>;

[[noreturn]] inline void fail(const char* op, const std::string& msg) {
  throw tsr::Error(TSR_INVALID_ARGUMENT, std::string(op) + ": " + msg);
}

inline std::string shape_of(const tsr::Tensor& t) {
  std::string s = "[";
  auto sz = t.sizes();
  for (size_t i = 0; i < sz.size(); ++i) s += (i ? ", " : "") + std::to_string(sz[i]);
  return s + "]";
}

// One dim wrapped into [0, ndim) (a 0-dim tensor accepts 0 and -1, as PyTorch).
inline int64_t wrap(const char* op, int64_t d, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    fail(op, "dim " + std::to_string(d) + " out of range for a " + std::to_string(ndim) +
                 "-d tensor (expected a dim in [" + std::to_string(-n) + ", " + std::to_string(n - 1) + "])");
  return d < 0 ? d + n : d;
}

// A dim list: empty = every dim; negative dims wrap; duplicates rejected. Sorted ascending.
// For a 0-dim tensor the result is empty (nothing to reduce over).
inline Dims dims_of(const char* op, const Dims& dims, int64_t ndim) {
  Dims r;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) r.push_back(d);
    return r;
  }
  for (int64_t d : dims) {
    int64_t w = wrap(op, d, ndim);
    if (std::find(r.begin(), r.end(), w) != r.end())
      fail(op, "dim " + std::to_string(w) + " appears multiple times in the list of dims");
    r.push_back(w);
  }
  std::sort(r.begin(), r.end());
  if (ndim == 0) r.clear();
  return r;
}

// Number of elements reduced over `dims` (sorted, wrapped).
inline int64_t count_of(const std::vector<int64_t>& sizes, const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[static_cast<size_t>(d)];
  return n;
}

// A reduced result (keepdim=false) with size-1 dims put back at `dims` (sorted, wrapped).
inline tsr::Tensor unsqueeze_dims(tsr::Tensor t, const Dims& dims) {
  for (int64_t d : dims) t = t.unsqueeze(d);
  return t;
}
inline tsr::Tensor keep(const tsr::Tensor& t, const Dims& dims, bool keepdim) {
  return keepdim ? t : unsqueeze_dims(t, dims);
}
inline tsr::Tensor squeeze_dims(tsr::Tensor t, const Dims& dims) {
  for (size_t i = dims.size(); i-- > 0;) t = t.squeeze(dims[i]);
  return t;
}

// Permutation moving dim d to the end (and its inverse).
inline tsr::Tensor dim_last(const tsr::Tensor& t, int64_t d) {
  const int64_t n = t.dim();
  if (n <= 1 || d == n - 1) return t;
  Dims p;
  for (int64_t i = 0; i < n; ++i)
    if (i != d) p.push_back(i);
  p.push_back(d);
  return t.permute(p);
}
inline tsr::Tensor last_to_dim(const tsr::Tensor& t, int64_t d) {
  const int64_t n = t.dim();
  if (n <= 1 || d == n - 1) return t;
  Dims p;
  for (int64_t i = 0; i < n; ++i) p.push_back(i < d ? i : (i == d ? n - 1 : i - 1));
  return t.permute(p);
}

// All of `dims` (sorted) moved last and flattened into one trailing dim: [kept..., prod(dims)].
inline tsr::Tensor dims_last_flat(const tsr::Tensor& t, const Dims& dims) {
  const int64_t n = t.dim();
  Dims p, kept_sizes;
  auto sz = t.sizes();
  for (int64_t i = 0; i < n; ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) {
      p.push_back(i);
      kept_sizes.push_back(sz[static_cast<size_t>(i)]);
    }
  for (int64_t d : dims) p.push_back(d);
  kept_sizes.push_back(count_of(sz, dims));
  tsr::Tensor moved = n == 0 ? t : t.permute(p);
  return moved.reshape(kept_sizes);
}

inline bool floating(const tsr::Tensor& t) { return is_floating(t.dtype()); }

// Internal row ops (ops/reduce/reduce_rows.cpp): they work along the last dim of any tensor.
inline std::vector<tsr::Tensor> sort_rows(const tsr::Tensor& t, bool descending, bool stable) {
  static const Op op("_sort_rows");
  return call_multi(op, {t, descending, stable});
}
inline std::vector<tsr::Tensor> extreme_rows(const tsr::Tensor& t, bool max) {
  static const Op op("_extreme_rows");
  return call_multi(op, {t, max});
}
inline tsr::Tensor gather_rows(const tsr::Tensor& t, const tsr::Tensor& index) {
  static const Op op("_gather_rows");
  return call(op, {t, index});
}
inline tsr::Tensor scatter_add_rows(const tsr::Tensor& src, const tsr::Tensor& index, int64_t n) {
  static const Op op("_scatter_add_rows");
  return call(op, {src, index, n});
}

// Gradient of a selection along `dim`: grad (shape of `index`) scattered (summed) into zeros of
// `sizes` at index positions along dim.
inline tsr::Tensor scatter_grad(const tsr::Tensor& grad, const tsr::Tensor& index, int64_t dim,
                                const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return grad.reshape({});
  tsr::Tensor g = dim_last(grad, dim), i = dim_last(index, dim);
  tsr::Tensor r = scatter_add_rows(g, i, sizes[static_cast<size_t>(dim)]);
  return last_to_dim(r, dim);
}

// Gradient of a full reduction that selects a value (max(), min(), median() without dim): the
// 0-dim grad split evenly among the elements equal to `value`, or among the NaNs when `value`
// is NaN (PyTorch's evenly_distribute_backward). Elementwise, so no read back to the host.
inline tsr::Tensor evenly_distribute(const tsr::Tensor& grad, const tsr::Tensor& x, const tsr::Tensor& value) {
  tsr::Tensor value_nan = tsr::ne(value, value);
  tsr::Tensor mask = tsr::where(value_nan, tsr::ne(x, x), tsr::eq(x, value));
  tsr::Tensor count = tsr::sum(mask);
  return tsr::where(mask, grad / count, tsr::wrap_scalar(0.0, x.runtime()));
}

}  // namespace tsr::core::red

namespace tsr::core {
class GradCtx;
// The formula of max(), min() and median() without dim (reduce_sort.cpp): red::evenly_distribute.
void evenly_distribute_backward(GradCtx& ctx);
}  // namespace tsr::core
