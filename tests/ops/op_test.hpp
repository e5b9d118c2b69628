// Shared helpers for the op-family tests (tests/ops/test_*.cpp): seeded random inputs, float64
// readback, closeness checks with useful messages, finite-difference gradchecks, and error
// expectations. Everything goes through the public SDK, as a user's code would.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/ext_dispatch_trace.h"
#include "tessera/tessera.hpp"

namespace tsr::optest {

using Shape = std::vector<int64_t>;

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Uniform float64 values in [lo, hi) from `seed` (never all zeros), as `dt` on the CPU.
inline Tensor randu(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0, tsr_dtype_t dt = TSR_F64) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 1);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (double& x : v) x = u(g);
  Tensor t = from_vector(v, shape);
  return dt == TSR_F64 ? t : t.to(dt);
}

// Values with |x| in [lo, hi] and a random sign (keeps away from singular points like 0).
inline Tensor rand_away(const Shape& shape, uint64_t seed, double lo = 0.25, double hi = 2.0,
                        tsr_dtype_t dt = TSR_F64) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 7);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (double& x : v) x = (g() & 1) ? u(g) : -u(g);
  Tensor t = from_vector(v, shape);
  return dt == TSR_F64 ? t : t.to(dt);
}

// int64 values in [lo, hi).
inline Tensor randint(const Shape& shape, uint64_t seed, int64_t lo, int64_t hi, tsr_dtype_t dt = TSR_I64) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 3);
  std::uniform_int_distribution<int64_t> u(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
  for (int64_t& x : v) x = u(g);
  Tensor t = from_vector(v, shape);
  return dt == TSR_I64 ? t : t.to(dt);
}

// A bool mask, about `p` true.
inline Tensor randmask(const Shape& shape, uint64_t seed, double p = 0.5) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 5);
  std::bernoulli_distribution b(p);
  std::vector<bool> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = b(g);
  return from_bools(v, shape);
}

// A non-contiguous tensor with t's values: a transposed copy transposed back (2+ dims) or a
// strided slice of a doubled tensor (1 dim).
inline Tensor noncontig(const Tensor& t) {
  if (t.dim() >= 2) return t.transpose(0, t.dim() - 1).contiguous().transpose(0, t.dim() - 1);
  if (t.dim() == 1) {
    Tensor big = empty({t.numel() * 2}, t.dtype(), t.device());
    Tensor v = big.slice(0, 0, t.numel() * 2, 2);
    v.copy_(t);
    return v;
  }
  return t;
}

// Every element as double (CPU readback); bools and integers convert exactly.
inline std::vector<double> values(const Tensor& t) {
  return t.to(Device::cpu(), TSR_F64).contiguous().to_vector<double>();
}

// Per-dtype default tolerances (rtol, atol) for comparisons against float64 references.
inline std::pair<double, double> default_tol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F64:
      return {1e-10, 1e-12};
    case TSR_F32:
      return {1e-5, 1e-6};
    case TSR_F16:
      return {2e-3, 2e-3};
    case TSR_BF16:
      return {1.6e-2, 1e-2};
    default:
      return {0, 0};
  }
}

// Shapes equal and every element within atol + rtol*|expected| (NaNs must match, infs equal).
inline ::testing::AssertionResult close(const Tensor& actual, const std::vector<double>& expected,
                                        const Shape& expected_shape, double rtol, double atol) {
  if (actual.sizes() != expected_shape) {
    std::ostringstream os;
    os << "shape " << describe(actual) << " but expected [";
    for (size_t i = 0; i < expected_shape.size(); ++i) os << (i ? ", " : "") << expected_shape[i];
    return ::testing::AssertionFailure() << os.str() << "]";
  }
  std::vector<double> a = values(actual);
  if (a.size() != expected.size())
    return ::testing::AssertionFailure() << "got " << a.size() << " values, expected " << expected.size();
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a[i], e = expected[i];
    if (std::isnan(e) && std::isnan(x)) continue;
    if (std::isinf(e) && x == e) continue;
    if (!(std::fabs(x - e) <= atol + rtol * std::fabs(e)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << x << ", expected " << e << " (rtol "
                                           << rtol << ", atol " << atol << ") in " << describe(actual);
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult close(const Tensor& actual, const Tensor& expected, double rtol = -1,
                                        double atol = -1) {
  auto tol = default_tol(actual.dtype());
  return close(actual, values(expected), expected.sizes(), rtol < 0 ? tol.first : rtol, atol < 0 ? tol.second : atol);
}

// Central finite differences in float64 against autograd, for every input in `inputs` that is
// floating: fn(inputs) -> one output (any shape). Inputs are cloned as leaves requiring grad;
// the output is contracted with a fixed random cotangent so every element matters.
inline ::testing::AssertionResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                            const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                                            double rtol = 1e-4) {
  std::vector<Tensor> leaves;
  std::vector<Tensor> wrt;
  for (const Tensor& t : inputs) {
    Tensor c = t.clone();
    if (is_floating(c.dtype())) {
      c.requires_grad_(true);
      wrt.push_back(c);
    }
    leaves.push_back(c);
  }
  Tensor out = fn(leaves);
  Tensor cot = randu(out.sizes(), 12345, -1.0, 1.0, out.dtype());
  std::vector<Tensor> analytic = autograd::grad({out}, wrt, {cot}, false, false, true);
  std::vector<double> c = values(cot);
  auto contract = [&](const std::vector<Tensor>& in) {
    NoGradGuard ng;
    std::vector<double> o = values(fn(in));
    double s = 0;
    for (size_t i = 0; i < o.size(); ++i) s += o[i] * c[i];
    return s;
  };
  size_t k = 0;
  for (size_t idx = 0; idx < leaves.size(); ++idx) {
    if (!is_floating(leaves[idx].dtype())) continue;
    std::vector<double> ga =
        analytic[k].defined() ? values(analytic[k]) : std::vector<double>(leaves[idx].numel(), 0.0);
    ++k;
    std::vector<Tensor> in;
    for (const Tensor& t : leaves) in.push_back(t.detach().clone());
    Tensor x = in[idx];
    std::vector<double> base = values(x);
    Shape shape = x.sizes();
    for (size_t e = 0; e < base.size(); ++e) {
      std::vector<double> plus = base, minus = base;
      plus[e] += eps;
      minus[e] -= eps;
      in[idx] = from_vector(plus, shape).to(x.dtype());
      double fp = contract(in);
      in[idx] = from_vector(minus, shape).to(x.dtype());
      double fm = contract(in);
      double num = (fp - fm) / (2 * eps);
      if (!(std::fabs(num - ga[e]) <= atol + rtol * std::fabs(num)))
        return ::testing::AssertionFailure()
               << "input " << idx << " element " << e << ": analytic gradient " << ga[e] << ", numeric " << num;
    }
    in[idx] = x;
  }
  return ::testing::AssertionSuccess();
}

// `fn` throws tsr::Error whose message contains every one of `parts` (e.g. the op name and a
// shape), and nothing else goes wrong.
inline ::testing::AssertionResult throws_with(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-tsr exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// Kernel lookups seen through the tessera.dispatch_trace extension while fn runs.
struct Lookups {
  std::vector<std::string> ops;
  int count(const std::string& op) const {
    int n = 0;
    for (const std::string& o : ops) n += o == op;
    return n;
  }
};
inline void record_lookup(void* user, const char* op, tsr_device_t, int32_t, int32_t has_kernel) {
  if (has_kernel) static_cast<Lookups*>(user)->ops.push_back(op);
}
template <class F>
Lookups trace_lookups(F&& fn) {
  const auto* t =
      static_cast<const tsr_dispatch_trace_t*>(api()->get_extension(runtime(), TSR_DISPATCH_TRACE_EXTENSION));
  EXPECT_NE(t, nullptr);
  Lookups l;
  if (!t) return l;
  check(t->set_observer(runtime(), record_lookup, &l));
  try {
    fn();
  } catch (...) {
    check(t->set_observer(runtime(), nullptr, nullptr));
    throw;
  }
  check(t->set_observer(runtime(), nullptr, nullptr));
  return l;
}

}  // namespace tsr::optest
