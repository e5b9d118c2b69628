// Helpers shared by the unary family's test files: a persistent op table (tsr::Op caches by
// address, so Ops must outlive their calls) and float64 references computed with std:: math.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace tsr::optest::unary {

// A long-lived tsr::Op per name.
inline const Op& op_named(const std::string& name) {
  static std::map<std::string, std::unique_ptr<std::pair<std::string, std::unique_ptr<Op>>>> ops;
  auto it = ops.find(name);
  if (it == ops.end()) {
    auto entry = std::make_unique<std::pair<std::string, std::unique_ptr<Op>>>(name, nullptr);
    entry->second = std::make_unique<Op>(entry->first.c_str());
    it = ops.emplace(name, std::move(entry)).first;
  }
  return *it->second->second;
}

// Calls op `name` on x with the op's extra arguments bound; `outs` as for tsr::call_multi.
using Invoke = std::function<Tensor(const Op& op, const Tensor& x, std::vector<Tensor> outs)>;

inline Invoke no_args() {
  return
      [](const Op& op, const Tensor& x, std::vector<Tensor> outs) { return call_multi(op, {x}, std::move(outs))[0]; };
}
inline Invoke with_double(double a) {
  return [a](const Op& op, const Tensor& x, std::vector<Tensor> outs) {
    return call_multi(op, {x, a}, std::move(outs))[0];
  };
}
inline Invoke with_doubles(double a, double b) {
  return [a, b](const Op& op, const Tensor& x, std::vector<Tensor> outs) {
    return call_multi(op, {x, a, b}, std::move(outs))[0];
  };
}
inline Invoke with_doubles(double a, double b, double c) {
  return [a, b, c](const Op& op, const Tensor& x, std::vector<Tensor> outs) {
    return call_multi(op, {x, a, b, c}, std::move(outs))[0];
  };
}
inline Invoke with_int(int64_t a) {
  return [a](const Op& op, const Tensor& x, std::vector<Tensor> outs) {
    return call_multi(op, {x, a}, std::move(outs))[0];
  };
}
inline Invoke with_str(const char* s) {
  return [s](const Op& op, const Tensor& x, std::vector<Tensor> outs) {
    return call_multi(op, {x, s}, std::move(outs))[0];
  };
}

inline std::vector<double> map_ref(const std::vector<double>& in, const std::function<double(double)>& f) {
  std::vector<double> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = f(in[i]);
  return out;
}

// erfinv by bisection on std::erf (independent of the kernel's method).
inline double ref_erfinv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  double lo = -6, hi = 6;
  for (int i = 0; i < 64; ++i) {  // 12 * 2^-64: below double resolution
    double mid = 0.5 * (lo + hi);
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
inline double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
inline double ref_softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
inline double ref_elu(double x, double alpha, double scale, double in_scale) {
  return x > 0 ? x * scale : std::expm1(x * in_scale) * alpha * scale;
}
inline double ref_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

}  // namespace tsr::optest::unary
