// Tessera SDK: host wrappers of the reduce op family (included by tessera/tessera.hpp).
// sum, mean, amax, amin, argmax are declared in tessera/tessera.hpp. Dim lists: empty = every
// dim. PyTorch overloads get distinct names: max(dim) -> max_dim, min(dim) -> min_dim,
// median(dim) -> median_dim.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

namespace detail {
inline Arg opt_dtype_arg(std::optional<tsr_dtype_t> dt) { return dt ? Arg(*dt) : Arg(none); }
inline std::pair<Tensor, Tensor> pair_of(std::vector<Tensor> r) { return {std::move(r[0]), std::move(r[1])}; }
}  // namespace detail

inline Tensor prod(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false,
                   std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("prod");
  return call(op, {a, std::move(dims), keepdim, detail::opt_dtype_arg(dtype)});
}
inline Tensor nansum(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false,
                     std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("nansum");
  return call(op, {a, std::move(dims), keepdim, detail::opt_dtype_arg(dtype)});
}
inline Tensor nanmean(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false,
                      std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("nanmean");
  return call(op, {a, std::move(dims), keepdim, detail::opt_dtype_arg(dtype)});
}
// correction: 1 = Bessel's (unbiased), 0 = population.
inline Tensor var(const Tensor& a, std::vector<int64_t> dims = {}, double correction = 1, bool keepdim = false) {
  static const Op op("var");
  return call(op, {a, std::move(dims), detail::scalar_arg(correction), keepdim});
}
inline Tensor std(const Tensor& a, std::vector<int64_t> dims = {}, double correction = 1, bool keepdim = false) {
  static const Op op("std");
  return call(op, {a, std::move(dims), detail::scalar_arg(correction), keepdim});
}
// (var, mean) and (std, mean).
inline std::pair<Tensor, Tensor> var_mean(const Tensor& a, std::vector<int64_t> dims = {}, double correction = 1,
                                          bool keepdim = false) {
  static const Op op("var_mean");
  return detail::pair_of(call_multi(op, {a, std::move(dims), detail::scalar_arg(correction), keepdim}));
}
inline std::pair<Tensor, Tensor> std_mean(const Tensor& a, std::vector<int64_t> dims = {}, double correction = 1,
                                          bool keepdim = false) {
  static const Op op("std_mean");
  return detail::pair_of(call_multi(op, {a, std::move(dims), detail::scalar_arg(correction), keepdim}));
}
// Vector p-norm over dims (p = inf / -inf / 0 / any float), as torch.linalg.vector_norm.
inline Tensor norm(const Tensor& a, double p = 2, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("norm");
  return call(op, {a, detail::scalar_arg(p), std::move(dims), keepdim});
}
inline Tensor logsumexp(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("logsumexp");
  return call(op, {a, std::move(dims), keepdim});
}
inline Tensor all(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("all");
  return call(op, {a, std::move(dims), keepdim});
}
inline Tensor any(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("any");
  return call(op, {a, std::move(dims), keepdim});
}
inline Tensor count_nonzero(const Tensor& a, std::vector<int64_t> dims = {}) {
  static const Op op("count_nonzero");
  return call(op, {a, std::move(dims)});
}
// Full reductions (torch.max(x) / torch.min(x)).
inline Tensor max(const Tensor& a) {
  static const Op op("max");
  return call(op, {a});
}
inline Tensor min(const Tensor& a) {
  static const Op op("min");
  return call(op, {a});
}
// (values, indices) along dim (torch.max(x, dim) / torch.min(x, dim)).
inline std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim = false) {
  static const Op op("max_dim");
  return detail::pair_of(call_multi(op, {a, dim, keepdim}));
}
inline std::pair<Tensor, Tensor> min_dim(const Tensor& a, int64_t dim, bool keepdim = false) {
  static const Op op("min_dim");
  return detail::pair_of(call_multi(op, {a, dim, keepdim}));
}
inline Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false) {
  static const Op op("argmin");
  return call(op, {a, dim, keepdim});
}
// (min, max).
inline std::pair<Tensor, Tensor> aminmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt,
                                         bool keepdim = false) {
  static const Op op("aminmax");
  return detail::pair_of(call_multi(op, {a, dim, keepdim}));
}

inline Tensor cumsum(const Tensor& a, int64_t dim, std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("cumsum");
  return call(op, {a, dim, detail::opt_dtype_arg(dtype)});
}
inline Tensor cumprod(const Tensor& a, int64_t dim, std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("cumprod");
  return call(op, {a, dim, detail::opt_dtype_arg(dtype)});
}
inline Tensor logcumsumexp(const Tensor& a, int64_t dim) {
  static const Op op("logcumsumexp");
  return call(op, {a, dim});
}
inline std::pair<Tensor, Tensor> cummax(const Tensor& a, int64_t dim) {
  static const Op op("cummax");
  return detail::pair_of(call_multi(op, {a, dim}));
}
inline std::pair<Tensor, Tensor> cummin(const Tensor& a, int64_t dim) {
  static const Op op("cummin");
  return detail::pair_of(call_multi(op, {a, dim}));
}

inline std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim = -1, bool descending = false, bool stable = false) {
  static const Op op("sort");
  return detail::pair_of(call_multi(op, {a, dim, descending, stable}));
}
inline Tensor argsort(const Tensor& a, int64_t dim = -1, bool descending = false, bool stable = false) {
  static const Op op("argsort");
  return call(op, {a, dim, descending, stable});
}
inline std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim = -1, bool largest = true,
                                      bool sorted = true) {
  static const Op op("topk");
  return detail::pair_of(call_multi(op, {a, k, dim, largest, sorted}));
}
// k-th smallest (1-based) along dim.
inline std::pair<Tensor, Tensor> kthvalue(const Tensor& a, int64_t k, int64_t dim = -1, bool keepdim = false) {
  static const Op op("kthvalue");
  return detail::pair_of(call_multi(op, {a, k, dim, keepdim}));
}
// Lower median of every element (NaN if any is NaN).
inline Tensor median(const Tensor& a) {
  static const Op op("median");
  return call(op, {a});
}
inline std::pair<Tensor, Tensor> median_dim(const Tensor& a, int64_t dim, bool keepdim = false) {
  static const Op op("median_dim");
  return detail::pair_of(call_multi(op, {a, dim, keepdim}));
}

}  // namespace tsr
