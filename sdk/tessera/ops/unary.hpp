// Tessera SDK: host wrappers of the unary op family (included by tessera/tessera.hpp).
// Functional form tsr::sin(x); in-place form tsr::sin_(x) (writes into x, returns it); out=
// through tsr::call_out(tsr::Op("sin"), out, {x}).
#pragma once

#include <optional>

#include "tessera/tessera.hpp"

namespace tsr {

namespace detail {
template <class... A>
inline Tensor& unary_inplace(const Op& op, Tensor& self, A&&... extra) {
  call_multi(op, {self, std::forward<A>(extra)...}, {self});
  return self;
}
}  // namespace detail

#define TSR_SDK_UNARY_FAMILY(name)       \
  inline Tensor name(const Tensor& a) {  \
    static const Op op(#name);           \
    return call(op, {a});                \
  }                                      \
  inline Tensor& name##_(Tensor& a) {    \
    static const Op op(#name "_");       \
    return detail::unary_inplace(op, a); \
  }
#define TSR_SDK_UNARY_INPLACE_ONLY(name) \
  inline Tensor& name##_(Tensor& a) {    \
    static const Op op(#name "_");       \
    return detail::unary_inplace(op, a); \
  }
#define TSR_SDK_UNARY_PREDICATE(name)   \
  inline Tensor name(const Tensor& a) { \
    static const Op op(#name);          \
    return call(op, {a});               \
  }

// Foundation ops (functional wrappers live in tessera.hpp).
TSR_SDK_UNARY_INPLACE_ONLY(neg)
TSR_SDK_UNARY_INPLACE_ONLY(abs)
TSR_SDK_UNARY_INPLACE_ONLY(exp)
TSR_SDK_UNARY_INPLACE_ONLY(log)
TSR_SDK_UNARY_INPLACE_ONLY(sqrt)
TSR_SDK_UNARY_INPLACE_ONLY(rsqrt)
TSR_SDK_UNARY_INPLACE_ONLY(tanh)
TSR_SDK_UNARY_INPLACE_ONLY(sigmoid)
TSR_SDK_UNARY_INPLACE_ONLY(relu)
TSR_SDK_UNARY_INPLACE_ONLY(silu)

TSR_SDK_UNARY_FAMILY(sign)
TSR_SDK_UNARY_FAMILY(sgn)
TSR_SDK_UNARY_FAMILY(exp2)
TSR_SDK_UNARY_FAMILY(expm1)
TSR_SDK_UNARY_FAMILY(log2)
TSR_SDK_UNARY_FAMILY(log10)
TSR_SDK_UNARY_FAMILY(log1p)
TSR_SDK_UNARY_FAMILY(reciprocal)
TSR_SDK_UNARY_FAMILY(square)
TSR_SDK_UNARY_FAMILY(sin)
TSR_SDK_UNARY_FAMILY(cos)
TSR_SDK_UNARY_FAMILY(tan)
TSR_SDK_UNARY_FAMILY(asin)
TSR_SDK_UNARY_FAMILY(acos)
TSR_SDK_UNARY_FAMILY(atan)
TSR_SDK_UNARY_FAMILY(sinh)
TSR_SDK_UNARY_FAMILY(cosh)
TSR_SDK_UNARY_FAMILY(asinh)
TSR_SDK_UNARY_FAMILY(acosh)
TSR_SDK_UNARY_FAMILY(atanh)
TSR_SDK_UNARY_FAMILY(erf)
TSR_SDK_UNARY_FAMILY(erfc)
TSR_SDK_UNARY_FAMILY(erfinv)
TSR_SDK_UNARY_FAMILY(floor)
TSR_SDK_UNARY_FAMILY(ceil)
TSR_SDK_UNARY_FAMILY(trunc)
TSR_SDK_UNARY_FAMILY(frac)
TSR_SDK_UNARY_FAMILY(relu6)
TSR_SDK_UNARY_FAMILY(selu)
TSR_SDK_UNARY_FAMILY(mish)
TSR_SDK_UNARY_FAMILY(hardswish)
TSR_SDK_UNARY_FAMILY(hardsigmoid)

TSR_SDK_UNARY_PREDICATE(isnan)
TSR_SDK_UNARY_PREDICATE(isinf)
TSR_SDK_UNARY_PREDICATE(isposinf)
TSR_SDK_UNARY_PREDICATE(isneginf)
TSR_SDK_UNARY_PREDICATE(isfinite)
TSR_SDK_UNARY_PREDICATE(signbit)
TSR_SDK_UNARY_PREDICATE(positive)

#undef TSR_SDK_UNARY_FAMILY
#undef TSR_SDK_UNARY_INPLACE_ONLY
#undef TSR_SDK_UNARY_PREDICATE

// round half to even; decimals != 0 rounds to 10^-decimals (floating tensors only).
inline Tensor round(const Tensor& a, int64_t decimals = 0) {
  static const Op op("round");
  return call(op, {a, decimals});
}
inline Tensor& round_(Tensor& a, int64_t decimals = 0) {
  static const Op op("round_");
  return detail::unary_inplace(op, a, decimals);
}
inline Tensor logit(const Tensor& a, std::optional<double> eps = std::nullopt) {
  static const Op op("logit");
  return call(op, {a, eps});
}
inline Tensor& logit_(Tensor& a, std::optional<double> eps = std::nullopt) {
  static const Op op("logit_");
  return detail::unary_inplace(op, a, Arg(eps));
}
inline Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01) {
  static const Op op("leaky_relu");
  return call(op, {a, negative_slope});
}
inline Tensor& leaky_relu_(Tensor& a, double negative_slope = 0.01) {
  static const Op op("leaky_relu_");
  return detail::unary_inplace(op, a, negative_slope);
}
inline Tensor elu(const Tensor& a, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0) {
  static const Op op("elu");
  return call(op, {a, alpha, scale, input_scale});
}
inline Tensor& elu_(Tensor& a, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0) {
  static const Op op("elu_");
  return detail::unary_inplace(op, a, alpha, scale, input_scale);
}
inline Tensor celu(const Tensor& a, double alpha = 1.0) {
  static const Op op("celu");
  return call(op, {a, alpha});
}
inline Tensor& celu_(Tensor& a, double alpha = 1.0) {
  static const Op op("celu_");
  return detail::unary_inplace(op, a, alpha);
}
inline Tensor softplus(const Tensor& a, double beta = 1.0, double threshold = 20.0) {
  static const Op op("softplus");
  return call(op, {a, beta, threshold});
}
inline Tensor& softplus_(Tensor& a, double beta = 1.0, double threshold = 20.0) {
  static const Op op("softplus_");
  return detail::unary_inplace(op, a, beta, threshold);
}
inline Tensor hardtanh(const Tensor& a, double min_val = -1.0, double max_val = 1.0) {
  static const Op op("hardtanh");
  return call(op, {a, detail::scalar_arg(min_val), detail::scalar_arg(max_val)});
}
inline Tensor& hardtanh_(Tensor& a, double min_val = -1.0, double max_val = 1.0) {
  static const Op op("hardtanh_");
  return detail::unary_inplace(op, a, detail::scalar_arg(min_val), detail::scalar_arg(max_val));
}
inline Tensor& gelu_(Tensor& a, const char* approximate = "none") {
  static const Op op("gelu_");
  return detail::unary_inplace(op, a, approximate);
}
// nan -> nan (default 0), +inf -> posinf (default: dtype max), -inf -> neginf (dtype lowest).
inline Tensor nan_to_num(const Tensor& a, std::optional<double> nan = std::nullopt,
                         std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt) {
  static const Op op("nan_to_num");
  return call(op, {a, nan, posinf, neginf});
}
inline Tensor& nan_to_num_(Tensor& a, std::optional<double> nan = std::nullopt,
                           std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt) {
  static const Op op("nan_to_num_");
  return detail::unary_inplace(op, a, Arg(nan), Arg(posinf), Arg(neginf));
}

}  // namespace tsr
