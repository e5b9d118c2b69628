// Tessera SDK: host wrappers of the linalg op family (included by tessera/tessera.hpp). mm, bmm
// and matmul are in tessera.hpp itself; random and optimizer ops are in their own headers.
#pragma once

#include <string>
#include <utility>

#include "tessera/tessera.hpp"

namespace tsr {

inline Tensor mv(const Tensor& a, const Tensor& v) {
  static const Op op("mv");
  return call(op, {a, v});
}
inline Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, double beta = 1, double alpha = 1) {
  static const Op op("addmm");
  return call(op, {self, m1, m2, detail::scalar_arg(beta), detail::scalar_arg(alpha)});
}
inline Tensor addmv(const Tensor& self, const Tensor& m, const Tensor& v, double beta = 1, double alpha = 1) {
  static const Op op("addmv");
  return call(op, {self, m, v, detail::scalar_arg(beta), detail::scalar_arg(alpha)});
}
inline Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, double beta = 1, double alpha = 1) {
  static const Op op("baddbmm");
  return call(op, {self, b1, b2, detail::scalar_arg(beta), detail::scalar_arg(alpha)});
}
inline Tensor addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, double beta = 1, double alpha = 1) {
  static const Op op("addbmm");
  return call(op, {self, b1, b2, detail::scalar_arg(beta), detail::scalar_arg(alpha)});
}
inline Tensor dot(const Tensor& a, const Tensor& b) {
  static const Op op("dot");
  return call(op, {a, b});
}
inline Tensor vdot(const Tensor& a, const Tensor& b) {
  static const Op op("vdot");
  return call(op, {a, b});
}
inline Tensor outer(const Tensor& a, const Tensor& b) {
  static const Op op("outer");
  return call(op, {a, b});
}
inline Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt) {
  static const Op op("linear");
  return call(op, {x, w, detail::opt_tensor_arg(bias)});
}
inline Tensor tensordot(const Tensor& a, const Tensor& b, std::vector<int64_t> dims_a, std::vector<int64_t> dims_b) {
  static const Op op("tensordot");
  return call(op, {a, b, std::move(dims_a), std::move(dims_b)});
}
inline Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  static const Op op("einsum");
  return call(op, {equation, operands});
}
inline Tensor inverse(const Tensor& a) {
  static const Op op("inverse");
  return call(op, {a});
}
inline Tensor linalg_solve(const Tensor& a, const Tensor& b) {
  static const Op op("linalg_solve");
  return call(op, {a, b});
}
inline Tensor det(const Tensor& a) {
  static const Op op("det");
  return call(op, {a});
}
// (sign, logabsdet)
inline std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  static const Op op("slogdet");
  auto r = call_multi(op, {a});
  return {r[0], r[1]};
}
inline Tensor cholesky(const Tensor& a, bool upper = false) {
  static const Op op("cholesky");
  return call(op, {a, upper});
}

}  // namespace tsr

#include "tessera/ops/random.hpp"
#include "tessera/ops/optim.hpp"
