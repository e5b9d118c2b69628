// Helpers of the CPU op tests: random inputs in every dtype (never all zeros), non-contiguous
// variants, float64 references with broadcasting, and per-dtype tolerances.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tt {

using Shape = std::vector<int64_t>;
using tsr::Tensor;

inline const std::vector<tsr_dtype_t>& all_dtypes() {
  static const std::vector<tsr_dtype_t> v = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                             TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  return v;
}
inline const std::vector<tsr_dtype_t>& float_dtypes() {
  static const std::vector<tsr_dtype_t> v = {TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  return v;
}
inline const std::vector<tsr_dtype_t>& numeric_dtypes() {
  static const std::vector<tsr_dtype_t> v = {TSR_U8,  TSR_I8,   TSR_I16, TSR_I32, TSR_I64,
                                             TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  return v;
}

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::string str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

enum class Kind {
  Any,       // floats in +-[0.1, 2], ints in a small signed range (non-negative for u8), bools
  Positive,  // floats in [0.1, 3], ints in [1, 9]
  SmallInt,  // integer values in [-3, 3] ([0, 6] for u8): equalities happen
  Wide,      // floats in [-8, 8] (activations)
};

inline double random_value(std::mt19937& rng, tsr_dtype_t dt, Kind kind) {
  if (dt == TSR_BOOL) return double(rng() % 2);
  const bool is_unsigned = dt == TSR_U8;
  if (kind == Kind::SmallInt || (tsr::is_integral(dt) && kind != Kind::Positive)) {
    int v = int(rng() % 7) - 3;
    if (kind != Kind::SmallInt && tsr::is_integral(dt)) v = int(rng() % 19) - 9;
    if (is_unsigned) v = std::abs(v);
    return v;
  }
  if (kind == Kind::Positive) {
    if (tsr::is_integral(dt)) return double(1 + rng() % 9);
    return std::uniform_real_distribution<double>(0.1, 3.0)(rng);
  }
  if (kind == Kind::Wide) return std::uniform_real_distribution<double>(-8.0, 8.0)(rng);
  const double m = std::uniform_real_distribution<double>(0.1, 2.0)(rng);
  return (rng() & 1) ? m : -m;
}

inline std::vector<double> random_values(int64_t n, tsr_dtype_t dt, std::mt19937& rng, Kind kind = Kind::Any) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = random_value(rng, dt, kind);
  if (dt == TSR_BOOL && n > 0) v[0] = 1;  // never all false
  return v;
}

// A tensor of `dt` holding `values` (row-major).
inline Tensor make(const std::vector<double>& values, const Shape& shape, tsr_dtype_t dt) {
  return tsr::from_vector<double>(values, shape).to(dt);
}

// Logical values of any tensor, row-major, as doubles (exact for every dtype but huge i64).
inline std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

enum class Layout { Contiguous, Transposed, Strided, Expanded };
inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Transposed:
      return "transposed";
    case Layout::Strided:
      return "step-2 slice";
    default:
      return "expanded";
  }
}

// A random tensor of logical shape `shape` in the given memory layout.
inline Tensor random_tensor(const Shape& shape, tsr_dtype_t dt, std::mt19937& rng, Kind kind = Kind::Any,
                            Layout layout = Layout::Contiguous) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (layout == Layout::Transposed && nd >= 2) {
    Shape s = shape;
    std::swap(s[size_t(nd - 1)], s[size_t(nd - 2)]);
    Tensor base = make(random_values(numel(s), dt, rng, kind), s, dt);
    Tensor v = base.transpose(nd - 1, nd - 2);
    return v;
  }
  if (layout == Layout::Strided && nd >= 1) {
    Shape s = shape;
    s[0] = s[0] * 2;
    Tensor base = make(random_values(numel(s), dt, rng, kind), s, dt);
    return base.slice(0, 0, s[0], 2);
  }
  if (layout == Layout::Expanded && nd >= 1 && shape[0] > 1) {
    Shape s = shape;
    s[0] = 1;
    Tensor base = make(random_values(numel(s), dt, rng, kind), s, dt);
    return base.expand(shape);
  }
  return make(random_values(numel(shape), dt, rng, kind), shape, dt);
}

// Broadcast shape (numpy rules); throws on mismatch.
inline Shape broadcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) throw std::runtime_error("broadcast mismatch");
    r[i] = x == 1 ? y : x;
  }
  return r;
}

// Index into a (row-major) tensor of shape `in` broadcast to `out`, for out's linear index.
inline int64_t broadcast_index(const Shape& out, const Shape& in, int64_t linear) {
  int64_t idx = 0, stride = 1;
  const size_t off = out.size() - in.size();
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t i = linear % out[d];
    linear /= out[d];
    if (d >= off) {
      const int64_t s = in[d - off];
      if (s != 1) idx += i * stride;
      stride *= s;
    }
  }
  return idx;
}

// Relative tolerance of results stored in dt (computed in f32 or better, rounded once).
inline double rtol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F16:
      return 2e-3;
    case TSR_BF16:
      return 1.6e-2;
    case TSR_F32:
      return 2e-6;
    case TSR_F64:
      return 1e-12;
    default:
      return 0;
  }
}
inline double atol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F16:
      return 1e-3;
    case TSR_BF16:
      return 1e-2;
    case TSR_F32:
      return 1e-6;
    case TSR_F64:
      return 1e-12;
    default:
      return 0;
  }
}

// Rounds/wraps a double reference to what dtype dt stores.
inline double cast_to(double v, tsr_dtype_t dt) {
  switch (dt) {
    case TSR_BOOL:
      return v != 0 ? 1 : 0;
    case TSR_U8:
      return double(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case TSR_I8:
      return double(static_cast<int8_t>(static_cast<int64_t>(v)));
    case TSR_I16:
      return double(static_cast<int16_t>(static_cast<int64_t>(v)));
    case TSR_I32:
      return double(static_cast<int32_t>(static_cast<int64_t>(v)));
    case TSR_I64:
      return double(static_cast<int64_t>(v));
    case TSR_F16:
      return double(float(tsr::Half(float(v))));
    case TSR_BF16:
      return double(float(tsr::BFloat16(float(v))));
    case TSR_F32:
      return double(float(v));
    default:
      return v;
  }
}

// Checks dtype, shape and values of `got` against a double reference (already in logical order).
// `scale` (optional, per element) widens the absolute tolerance, e.g. sum |x| for reductions.
inline void expect_close(const Tensor& got, const std::vector<double>& ref, tsr_dtype_t dt, const Shape& shape,
                         double extra_rtol = 0, const std::vector<double>* scale = nullptr) {
  ASSERT_EQ(got.dtype(), dt) << "dtype " << tsr::dtype_name(got.dtype()) << " expected " << tsr::dtype_name(dt);
  ASSERT_EQ(got.sizes(), shape) << "shape " << str(got.sizes()) << " expected " << str(shape);
  const std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), ref.size());
  const double rt = rtol(dt) + extra_rtol, at = atol(dt);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double r = tsr::is_floating(dt) ? ref[i] : cast_to(ref[i], dt);
    if (std::isnan(r)) {
      if (!std::isnan(g[i]) && ++bad <= 5) ADD_FAILURE() << "at " << i << ": got " << g[i] << ", expected NaN";
      continue;
    }
    if (std::isinf(r)) {
      if (g[i] != r && ++bad <= 5) ADD_FAILURE() << "at " << i << ": got " << g[i] << ", expected " << r;
      continue;
    }
    const double tol = tsr::is_floating(dt) ? at + rt * std::fabs(r) + (scale ? (rt + 1e-6) * (*scale)[i] : 0.0) : 0.0;
    if (!(std::fabs(g[i] - r) <= tol) && ++bad <= 5)
      ADD_FAILURE() << "at " << i << ": got " << g[i] << ", expected " << r << " (tol " << tol << ")";
  }
  EXPECT_EQ(bad, 0) << bad << " mismatching elements";
}

// Expects `fn` to throw tsr::Error whose message names `op`.
template <class F>
void expect_error_naming(const char* op, F&& fn) {
  try {
    fn();
    ADD_FAILURE() << "expected tsr::Error naming '" << op << "'";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << "message: " << e.what();
  }
}

}  // namespace tt
