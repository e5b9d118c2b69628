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

// cpu:0 .. cpu:world-1 (virtual CPU devices: TESSERA_CPU_DEVICES), an in-process group's members.
inline std::vector<Device> devices(int world) {
  std::vector<Device> ds;
  for (int i = 0; i < world; ++i) ds.push_back(Device::cpu(i));
  return ds;
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

// "world 2 float32 n 7 op 0" for messages.
inline std::string describe(const std::vector<Device>& ds, tsr_dtype_t dt, int64_t n, dist::ReduceOp op) {
  return "world " + std::to_string(ds.size()) + " " + tsr::dtype_name(dt) + " n " + std::to_string(n) + " op " +
         std::to_string(static_cast<int>(op));
}

// How an engine's reductions round: once per element (in-process, Gloo, MPI, NCCL's f32), or at
// each of its steps (the ring engine), which expect_ring_values bounds.
enum class Rounding { once, per_step };

// broadcast, all_gather, reduce_scatter (every op; sizes above 1000 Sum only) and all_to_all of
// every dtype and of the sizes sizes_for(dtype) gives, over the group's members on `ds`.
template <class Sizes>
void check_data_movement(const dist::DeviceGroup& g, const std::vector<Device>& ds, Sizes&& sizes_for,
                         Rounding rounding = Rounding::once) {
  const int world = static_cast<int>(ds.size());
  for (tsr_dtype_t dt : kDtypes)
    for (int64_t k : sizes_for(dt)) {
      const std::string what = describe(ds, dt, k, dist::ReduceOp::Sum);
      std::vector<Tensor> b;
      for (int m = 0; m < world; ++m) b.push_back(random_on(k, dt, m, 11, ds[m]));
      const int root = world / 2;
      const std::vector<double> from_root = values(b[root]);
      g.broadcast(b, root).wait();
      for (int m = 0; m < world; ++m) expect_values(b[m], from_root, dt, "broadcast " + what);

      std::vector<Tensor> in, out;
      std::vector<double> cat;
      for (int m = 0; m < world; ++m) {
        in.push_back(random_on(k, dt, m, 12, ds[m]));
        const std::vector<double> v = values(in.back());
        cat.insert(cat.end(), v.begin(), v.end());
        out.push_back(tsr::zeros({world * k}, dt, ds[m]));
      }
      g.all_gather(in, out).wait();
      for (int m = 0; m < world; ++m) expect_values(out[m], cat, dt, "all_gather " + what);

      for (dist::ReduceOp op : kOps) {
        if (k > 1000 && op != dist::ReduceOp::Sum) continue;
        std::vector<Tensor> rin, rout;
        std::vector<std::vector<double>> rv;
        for (int m = 0; m < world; ++m) {
          rin.push_back(random_on(world * k, dt, m, 13, ds[m]));
          rv.push_back(values(rin.back()));
          rout.push_back(tsr::zeros({k}, dt, ds[m]));
        }
        g.reduce_scatter(rin, rout, op).wait();
        for (int m = 0; m < world; ++m) {
          std::vector<double> want(static_cast<size_t>(k));
          std::vector<std::vector<double>> slices;
          for (const std::vector<double>& v : rv) slices.emplace_back(v.begin() + m * k, v.begin() + (m + 1) * k);
          for (int64_t j = 0; j < k; ++j) want[j] = reference(slices, static_cast<size_t>(j), op, dt);
          if (rounding == Rounding::once)
            expect_values(rout[m], want, dt, "reduce_scatter " + describe(ds, dt, k, op));
          else
            expect_ring_values(rout[m], want, slices, dt, "reduce_scatter " + describe(ds, dt, k, op));
          expect_values(rin[m], rv[m], dt, "reduce_scatter " + describe(ds, dt, k, op) + " (its input)");
        }
      }

      std::vector<Tensor> ain, aout;
      std::vector<std::vector<double>> av;
      for (int m = 0; m < world; ++m) {
        ain.push_back(random_on(world * k, dt, m, 14, ds[m]));
        av.push_back(values(ain.back()));
        aout.push_back(tsr::zeros({world * k}, dt, ds[m]));
      }
      g.all_to_all(ain, aout).wait();
      for (int i = 0; i < world; ++i) {
        std::vector<double> want;
        for (int j = 0; j < world; ++j) want.insert(want.end(), av[j].begin() + i * k, av[j].begin() + (i + 1) * k);
        expect_values(aout[i], want, dt, "all_to_all " + what);
      }
    }
  g.barrier().wait();
}

}  // namespace fabric_test
