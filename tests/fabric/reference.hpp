// What the fabric tests share: random member inputs and the float64 reference of every
// reduce op, with the engines' semantics (integers wrap, bool ops are logical, AVG truncates
// integers).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tessera/distributed/collectives.hpp"
#include "tessera/tessera.hpp"

namespace fabric_test {

namespace dist = tsr::distributed;
using tsr::Device;
using tsr::Tensor;

const dist::ReduceOp kOps[] = {dist::ReduceOp::Sum, dist::ReduceOp::Avg, dist::ReduceOp::Max, dist::ReduceOp::Min,
                               dist::ReduceOp::Prod};
const tsr_dtype_t kDtypes[] = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I32, TSR_I64, TSR_I8, TSR_U8, TSR_BOOL};

inline bool floating(tsr_dtype_t dt) { return dt == TSR_F32 || dt == TSR_F64 || dt == TSR_F16 || dt == TSR_BF16; }

inline double tol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F64:
      return 1e-12;
    case TSR_F32:
      return 1e-6;
    case TSR_F16:
      return 2e-3;
    case TSR_BF16:
      return 1.6e-2;
    default:
      return 0;
  }
}

// Random values (never all zero): floats in [-2, 2) away from 0, integers in [1, 3] with a
// random sign (unsigned: [1, 5]), bools about half true.
inline Tensor random_on(int64_t n, tsr_dtype_t dt, int member, uint64_t seed, Device dev) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(member) * 7919 + static_cast<uint64_t>(dt));
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    if (floating(dt)) {
      x = std::uniform_real_distribution<double>(0.25, 2.0)(rng) * ((rng() & 1) ? 1 : -1);
    } else if (dt == TSR_BOOL) {
      x = static_cast<double>(rng() & 1);
    } else if (dt == TSR_U8) {
      x = static_cast<double>(1 + rng() % 5);
    } else {
      x = static_cast<double>(1 + rng() % 3) * ((rng() & 1) ? 1 : -1);
    }
  }
  return tsr::from_vector(v, {n}, dev).to(dt);
}
// On member's own cpu device (in-process groups).
inline Tensor random_on(int64_t n, tsr_dtype_t dt, int member, uint64_t seed) {
  return random_on(n, dt, member, seed, Device::cpu(member));
}

inline std::vector<double> values(const Tensor& t) { return t.to(TSR_F64).to_vector<double>(); }

inline double combine(double a, double b, dist::ReduceOp op, tsr_dtype_t dt) {
  if (dt == TSR_BOOL)
    return (op == dist::ReduceOp::Min || op == dist::ReduceOp::Prod) ? ((a != 0 && b != 0) ? 1 : 0)
                                                                     : ((a != 0 || b != 0) ? 1 : 0);
  switch (op) {
    case dist::ReduceOp::Max:
      return std::max(a, b);
    case dist::ReduceOp::Min:
      return std::min(a, b);
    case dist::ReduceOp::Prod:
      return a * b;
    default:
      return a + b;
  }
}

// Integers wrap around like the tensors' own arithmetic.
inline double wrap(double v, tsr_dtype_t dt) {
  switch (dt) {
    case TSR_U8:
      return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case TSR_I8:
      return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case TSR_I32:
      return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    default:
      return v;
  }
}

// op over members' values at index j (AVG: the sum divided by n, truncated for integers).
inline double reference(const std::vector<std::vector<double>>& vs, size_t j, dist::ReduceOp op, tsr_dtype_t dt) {
  double acc = vs[0][j];
  for (size_t m = 1; m < vs.size(); ++m) acc = wrap(combine(acc, vs[m][j], op, dt), dt);
  if (op == dist::ReduceOp::Avg && dt != TSR_BOOL) {
    acc /= static_cast<double>(vs.size());
    if (!floating(dt)) acc = std::trunc(acc);
  }
  return acc;
}

// "" when t holds `want` within the dtype's tolerance, else the first difference.
inline std::string mismatch(const Tensor& t, const std::vector<double>& want, tsr_dtype_t dt) {
  std::vector<double> got = values(t);
  if (got.size() != want.size())
    return std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    double bound = tol(dt) * (1 + std::fabs(want[j])) * 4;
    if (!(std::fabs(got[j] - want[j]) <= bound))
      return "element " + std::to_string(j) + " is " + std::to_string(got[j]) + ", expected " + std::to_string(want[j]);
  }
  return "";
}

inline void expect_values(const Tensor& t, const std::vector<double>& want, tsr_dtype_t dt, const std::string& what) {
  std::string m = mismatch(t, want, dt);
  if (!m.empty()) ADD_FAILURE() << what << ": " << m;
}

// The unit roundoff of a floating dtype (0: exact).
inline double unit(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F16:
      return std::ldexp(1.0, -11);
    case TSR_BF16:
      return std::ldexp(1.0, -8);
    case TSR_F32:
      return std::ldexp(1.0, -24);
    case TSR_F64:
      return std::ldexp(1.0, -53);
    default:
      return 0;
  }
}

// The ring rounds to the dtype after each of its world-1 combining steps (as NCCL does), so its
// error is bounded by the partial sums, not only by the result: at most (world-1) roundings of
// values no larger than sum |v_m| (plus the result's own rounding).
inline void expect_ring_values(const Tensor& t, const std::vector<double>& want,
                        const std::vector<std::vector<double>>& members, tsr_dtype_t dt, const std::string& what) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) {
    double mag = 0;
    for (const std::vector<double>& v : members) mag += std::fabs(v[j]);
    const double bound = tol(dt) * (1 + std::fabs(want[j])) * 4 + unit(dt) * static_cast<double>(members.size()) * mag;
    if (!(std::fabs(got[j] - want[j]) <= bound)) {
      ADD_FAILURE() << what << ": element " << j << " is " << got[j] << ", expected " << want[j];
      return;
    }
  }
}

}  // namespace fabric_test
