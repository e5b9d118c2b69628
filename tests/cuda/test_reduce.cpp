// CUDA kernels of the reduce family against the CPU backend: sum/mean/amax/amin/argmax, the row
// ops (_sort_rows, _extreme_rows, _mode_rows, _prod_rows, _cumulative_rows, _cumextreme_rows,
// _gather_rows, _scatter_add_rows), softmax/log_softmax, the fused layer/rms norm and
// cross-entropy kernels. Every test computes the same op on the same input on "cpu" and on
// "cuda" and compares (exactly for integers, indices and orderings; within per-dtype tolerances
// for floating results). Without a CUDA device every test skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tsr::Device;
using tsr::Tensor;
using Shape = std::vector<int64_t>;

// The first CUDA device, or nullopt with the reason.
std::optional<Device> cuda_device(std::string* why) {
  const tsr_api_t* api = tsr::api();
  int32_t type = -1;
  tsr_status_t st = api->device_type_lookup(tsr::runtime(), "cuda", &type);
  if (st) {
    api->status_free(st);
    *why = "no \"cuda\" device type (the CUDA backend plugin is not loaded)";
    return std::nullopt;
  }
  if (api->device_count(tsr::runtime(), type) <= 0) {
    *why = "the CUDA backend found no GPU";
    return std::nullopt;
  }
  return Device(tsr_device_t{type, 0});
}

#define REQUIRE_CUDA(dev)                                     \
  std::string why_;                                           \
  const std::optional<Device> dev##_opt = cuda_device(&why_); \
  if (!dev##_opt) GTEST_SKIP() << why_;                       \
  const Device dev = *dev##_opt

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Random values on the CPU as dtype dt: floats uniform in [lo, hi); integers in [ilo, ihi);
// bool about half true.
Tensor rand_cpu(const Shape& shape, tsr_dtype_t dt, uint64_t seed, double lo = -2.0, double hi = 2.0, int64_t ilo = -50,
                int64_t ihi = 50) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 11);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  if (tsr::is_floating(dt)) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (double& x : v) x = u(g);
  } else if (dt == TSR_BOOL) {
    for (double& x : v) x = double(g() & 1);
  } else {
    if (dt == TSR_U8) ilo = std::max<int64_t>(ilo, 0);
    std::uniform_int_distribution<int64_t> u(ilo, ihi - 1);
    for (double& x : v) x = double(u(g));
  }
  return tsr::from_vector(v, shape).to(dt);
}

std::vector<double> values(const Tensor& t) { return t.to(Device::cpu(), TSR_F64).contiguous().to_vector<double>(); }

std::pair<double, double> tol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F64:
      return {1e-9, 1e-10};
    case TSR_F32:
      return {2e-5, 2e-5};
    case TSR_F16:
      return {4e-3, 4e-3};
    case TSR_BF16:
      return {3e-2, 3e-2};
    default:
      return {0, 0};
  }
}

// Same shape and dtype; elements within atol + rtol * |expected| (NaN matches NaN).
::testing::AssertionResult same(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "shape " << tsr::describe(got) << " vs " << tsr::describe(want);
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "dtype " << tsr::describe(got) << " vs " << tsr::describe(want);
  const std::vector<double> a = values(got), b = values(want);
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::isinf(b[i]) && a[i] == b[i]) continue;
    if (!(std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i])))
      return ::testing::AssertionFailure() << "element " << i << ": cuda " << a[i] << ", cpu " << b[i] << " (rtol "
                                           << rtol << ", atol " << atol << ") in " << tsr::describe(want);
  }
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult same(const Tensor& got, const Tensor& want) {
  const auto t = tol(want.dtype());
  return same(got, want, t.first, t.second);
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

const tsr_dtype_t kFloats[] = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};

// ---- sum / mean / amax / amin / argmax ---------------------------------------------------------

struct RedCase {
  Shape shape;
  std::vector<int64_t> dims;
};
const std::vector<RedCase>& red_cases() {
  static const std::vector<RedCase> cases = {
      {{}, {}},
      {{0}, {}},
      {{7}, {}},
      {{7}, {0}},
      {{33, 65}, {}},
      {{33, 65}, {0}},
      {{33, 65}, {1}},
      {{3, 0, 5}, {1}},
      {{3, 0, 5}, {0}},
      {{5, 1, 7, 3}, {0, 2}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {-1}},
      {{64, 3000}, {1}},
      {{3000, 64}, {0}},
      {{1 << 20}, {}},
      {{4, 300001}, {1}},
      {{300001, 4}, {0}},
      {{17, 19, 23}, {0, 2}},
      {{1, 1, 1}, {1}},
  };
  return cases;
}

TEST(CudaReduce, SumMeanAgainstCpu) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 1;
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64, TSR_I32, TSR_U8}) {
    for (const RedCase& rc : red_cases()) {
      for (bool keepdim : {false, true}) {
        for (bool nc : {false, true}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(rc.shape) + " dims " + shape_str(rc.dims) +
                       (keepdim ? " keepdim" : "") + (nc ? " non-contiguous" : ""));
          Tensor x = rand_cpu(rc.shape, dt, seed++);
          Tensor xg = x.to(dev);
          if (nc && x.dim() >= 2) {  // same values, transposed storage
            x = x.transpose(0, x.dim() - 1).contiguous().transpose(0, x.dim() - 1);
            xg = xg.transpose(0, xg.dim() - 1).contiguous().transpose(0, xg.dim() - 1);
          }
          // Both backends accumulate in double, but the CPU adds contiguous f32/f16/bf16 runs in
          // float lanes first: allow an absolute error growing like the square root of the count
          // (a sum near zero has no useful relative tolerance).
          Tensor want = tsr::sum(x, rc.dims, keepdim);
          const double count = double(x.numel()) / double(std::max<int64_t>(1, want.numel()));
          const auto t = tol(dt);
          EXPECT_TRUE(same(tsr::sum(xg, rc.dims, keepdim), want, t.first, t.second * (1 + std::sqrt(count))));
          if (tsr::is_floating(dt)) {
            EXPECT_TRUE(same(tsr::mean(xg, rc.dims, keepdim), tsr::mean(x, rc.dims, keepdim)));
          }
        }
      }
    }
  }
}

TEST(CudaReduce, AmaxAminArgmaxAgainstCpu) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 100;
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64, TSR_I32, TSR_I16, TSR_I8, TSR_U8, TSR_BOOL}) {
    for (const RedCase& rc : red_cases()) {
      Tensor x = rand_cpu(rc.shape, dt, seed++);
      Tensor xg = x.to(dev);
      bool empty_reduced = x.numel() == 0;
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(rc.shape) + " dims " + shape_str(rc.dims));
        if (!empty_reduced) {
          EXPECT_TRUE(same(tsr::amax(xg, rc.dims, keepdim), tsr::amax(x, rc.dims, keepdim), 0, 0));
          EXPECT_TRUE(same(tsr::amin(xg, rc.dims, keepdim), tsr::amin(x, rc.dims, keepdim), 0, 0));
          EXPECT_TRUE(same(tsr::argmax(xg, std::nullopt, keepdim), tsr::argmax(x, std::nullopt, keepdim), 0, 0));
        }
        for (int64_t d = 0; d < x.dim(); ++d) {
          if (x.size(d) == 0) continue;
          EXPECT_TRUE(same(tsr::argmax(xg, d, keepdim), tsr::argmax(x, d, keepdim), 0, 0)) << "dim " << d;
          Tensor xt = x.transpose(0, d), xgt = xg.transpose(0, d);  // strided reduced dim
          EXPECT_TRUE(same(tsr::argmax(xgt, 0, keepdim), tsr::argmax(xt, 0, keepdim), 0, 0)) << "dim " << d;
        }
      }
    }
  }
}

TEST(CudaReduce, NaNPropagationAndTies) {
  REQUIRE_CUDA(dev);
  const double nan = std::nan("");
  const double inf = INFINITY;
  for (tsr_dtype_t dt : kFloats) {
    // NaN positions inside and outside long runs; ties for argmax (first index wins).
    for (int64_t n : {5, 100, 70001}) {
      std::vector<double> v(static_cast<size_t>(3 * n), 1.0);
      v[static_cast<size_t>(n / 2)] = 3.0;
      v[static_cast<size_t>(n - 1)] = 3.0;      // a later tie of the max
      v[static_cast<size_t>(n + n / 3)] = nan;  // row 1: one NaN
      v[static_cast<size_t>(n + n / 2)] = nan;  // ... and a later one
      v[static_cast<size_t>(2 * n)] = -inf;     // row 2: -inf and a max at the end
      v[static_cast<size_t>(3 * n - 1)] = inf;
      Tensor x = tsr::from_vector(v, {3, n}).to(dt);
      Tensor xg = x.to(dev);
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " n=" + std::to_string(n));
      EXPECT_TRUE(same(tsr::amax(xg, {1}), tsr::amax(x, {1}), 0, 0));
      EXPECT_TRUE(same(tsr::amin(xg, {1}), tsr::amin(x, {1}), 0, 0));
      EXPECT_TRUE(same(tsr::argmax(xg, 1), tsr::argmax(x, 1), 0, 0));
      EXPECT_TRUE(same(tsr::argmax(xg), tsr::argmax(x), 0, 0));
      EXPECT_TRUE(same(tsr::sum(xg, {1}), tsr::sum(x, {1})));
      EXPECT_TRUE(same(tsr::amax(xg.t(), {0}), tsr::amax(x.t(), {0}), 0, 0));
    }
  }
}

// ---- row ops ---------------------------------------------------------------------------------

const std::vector<Shape>& row_shapes() {
  static const std::vector<Shape> shapes = {{}, {1}, {9}, {5, 7}, {2, 3, 33}, {4000, 9}, {3, 100003}, {6, 1000}};
  return shapes;
}

// Floats with many exact ties (small integers / 4), a -0.0 and NaNs for the ordering ops.
Tensor tie_values(const Shape& shape, tsr_dtype_t dt, uint64_t seed, bool nans) {
  std::mt19937_64 g(seed);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (double& x : v) {
    const int64_t k = int64_t(g() % 17) - 8;
    x = tsr::is_floating(dt) ? double(k) / 4.0 : double(k);
    if (nans && tsr::is_floating(dt) && g() % 29 == 0) x = std::nan("");
    if (tsr::is_floating(dt) && x == 0 && (g() & 1)) x = -0.0;
  }
  if (dt == TSR_BOOL || dt == TSR_U8)
    for (double& x : v) x = std::fabs(x);
  return tsr::from_vector(v, shape).to(dt);
}

const tsr_dtype_t kOrderTypes[] = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64,
                                   TSR_I32, TSR_I16, TSR_I8,  TSR_U8,   TSR_BOOL};

TEST(CudaRows, SortStableWithNaNAndSignedZero) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 7;
  for (tsr_dtype_t dt : kOrderTypes) {
    for (const Shape& s : row_shapes()) {
      Tensor x = tie_values(s, dt, seed++, true);
      Tensor xg = x.to(dev);
      for (bool desc : {false, true}) {
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(s) + (desc ? " descending" : ""));
        auto want = tsr::call_multi(tsr::Op("_sort_rows"), {x, desc, true});
        auto got = tsr::call_multi(tsr::Op("_sort_rows"), {xg, desc, true});
        EXPECT_TRUE(same(got[0], want[0], 0, 0));
        EXPECT_TRUE(same(got[1], want[1], 0, 0));
      }
    }
  }
  // The public op over a non-last, non-contiguous dim.
  Tensor x = tie_values({40, 30}, TSR_F32, 99, true);
  auto want = tsr::sort(x.t(), 0, true, true);
  auto got = tsr::sort(x.to(dev).t(), 0, true, true);
  EXPECT_TRUE(same(got.first, want.first, 0, 0));
  EXPECT_TRUE(same(got.second, want.second, 0, 0));
}

TEST(CudaRows, ExtremeModeProd) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 300;
  for (tsr_dtype_t dt : kOrderTypes) {
    for (const Shape& s : row_shapes()) {
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(s));
      Tensor x = tie_values(s, dt, seed++, true);
      Tensor xg = x.to(dev);
      for (bool mx : {true, false}) {
        auto want = tsr::call_multi(tsr::Op("_extreme_rows"), {x, mx});
        auto got = tsr::call_multi(tsr::Op("_extreme_rows"), {xg, mx});
        EXPECT_TRUE(same(got[0], want[0], 0, 0)) << (mx ? "max" : "min");
        EXPECT_TRUE(same(got[1], want[1], 0, 0)) << (mx ? "max" : "min");
      }
      auto want = tsr::call_multi(tsr::Op("_mode_rows"), {x});
      auto got = tsr::call_multi(tsr::Op("_mode_rows"), {xg});
      EXPECT_TRUE(same(got[0], want[0], 0, 0)) << "mode";
      EXPECT_TRUE(same(got[1], want[1], 0, 0)) << "mode";
      if (dt != TSR_BOOL) {
        // Products of values near 1 (floats) or small integers (wrapping).
        Tensor p = tsr::is_floating(dt) ? rand_cpu(s, dt, seed++, 0.999, 1.001) : rand_cpu(s, dt, seed++, 0, 0, -3, 4);
        Tensor pg = p.to(dev);
        const auto t = tol(dt);
        EXPECT_TRUE(same(tsr::call("_prod_rows", {pg}), tsr::call("_prod_rows", {p}), t.first * 10, t.second * 10))
            << "prod";
      }
    }
  }
}

TEST(CudaRows, Scans) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 500;
  for (tsr_dtype_t dt : kOrderTypes) {
    for (const Shape& s : row_shapes()) {
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(s));
      Tensor x = tie_values(s, dt, seed++, true);
      Tensor xg = x.to(dev);
      for (bool mx : {true, false}) {
        auto want = tsr::call_multi(tsr::Op("_cumextreme_rows"), {x, mx});
        auto got = tsr::call_multi(tsr::Op("_cumextreme_rows"), {xg, mx});
        EXPECT_TRUE(same(got[0], want[0], 0, 0)) << (mx ? "cummax" : "cummin");
        EXPECT_TRUE(same(got[1], want[1], 0, 0)) << (mx ? "cummax" : "cummin");
      }
      if (dt == TSR_BOOL) continue;
      const bool fl = tsr::is_floating(dt);
      // cumsum: floats in [-1, 1) (long rows: a random walk); integers wrap.
      Tensor a = fl ? rand_cpu(s, dt, seed++, -1.0, 1.0) : rand_cpu(s, dt, seed++, 0, 0, -100, 100);
      const auto t = tol(dt);
      const double scale = fl ? 20 : 0;  // partial sums of a long walk lose relative precision
      EXPECT_TRUE(same(tsr::call("_cumulative_rows", {a.to(dev), int64_t(0)}),
                       tsr::call("_cumulative_rows", {a, int64_t(0)}), t.first * scale, t.second * scale))
          << "cumsum";
      Tensor p = fl ? rand_cpu(s, dt, seed++, 0.999, 1.001) : rand_cpu(s, dt, seed++, 0, 0, -3, 4);
      EXPECT_TRUE(same(tsr::call("_cumulative_rows", {p.to(dev), int64_t(1)}),
                       tsr::call("_cumulative_rows", {p, int64_t(1)}), t.first * scale, t.second * scale))
          << "cumprod";
      if (fl) {
        Tensor l = rand_cpu(s, dt, seed++, -5.0, 5.0);
        EXPECT_TRUE(same(tsr::call("_cumulative_rows", {l.to(dev), int64_t(2)}),
                         tsr::call("_cumulative_rows", {l, int64_t(2)}), t.first * 4, t.second * 4))
            << "logcumsumexp";
      }
    }
  }
  // Public ops over a strided dim.
  Tensor x = rand_cpu({50, 70}, TSR_F32, 77);
  EXPECT_TRUE(same(tsr::cumsum(x.to(dev).t(), 1), tsr::cumsum(x.t(), 1)));
  auto want = tsr::cummax(x.t(), 0);
  auto got = tsr::cummax(x.to(dev).t(), 0);
  EXPECT_TRUE(same(got.first, want.first, 0, 0));
  EXPECT_TRUE(same(got.second, want.second, 0, 0));
}

TEST(CudaRows, GatherScatterAdd) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 900;
  for (tsr_dtype_t dt : kOrderTypes) {
    for (const Shape& s : {Shape{5, 7}, Shape{3, 100003}, Shape{4000, 9}, Shape{1}}) {
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(s));
      Tensor x = rand_cpu(s, dt, seed++, -2, 2, -20, 20);
      const int64_t n = s.back();
      Shape is = s;
      is.back() = n + 3;  // more picks than elements: repeated indices
      std::mt19937_64 g(seed++);
      std::vector<int64_t> iv(static_cast<size_t>(numel_of(is)));
      for (int64_t& k : iv) k = int64_t(g() % uint64_t(n));
      Tensor idx = tsr::from_vector(iv, is);
      EXPECT_TRUE(same(tsr::call("_gather_rows", {x.to(dev), idx.to(dev)}), tsr::call("_gather_rows", {x, idx}), 0, 0))
          << "gather";
      Tensor src = rand_cpu(is, dt, seed++, -2, 2, -20, 20);
      const auto t = tol(dt);
      // Atomic accumulation order differs: a few roundings of the output dtype apart.
      EXPECT_TRUE(same(tsr::call("_scatter_add_rows", {src.to(dev), idx.to(dev), n}),
                       tsr::call("_scatter_add_rows", {src, idx, n}), t.first * 8, t.second * 8))
          << "scatter_add";
    }
  }
}

TEST(CudaRows, GatherOutOfRangeFailsAtSync) {
  REQUIRE_CUDA(dev);
  Tensor x = rand_cpu({2, 4}, TSR_F32, 5).to(dev);
  Tensor idx = tsr::from_vector(std::vector<int64_t>{0, 1, 4, 2}, {2, 2}).to(dev);
  EXPECT_THROW(
      {
        Tensor y = tsr::call("_gather_rows", {x, idx});
        values(y);  // the device-side check surfaces at the next synchronizing call
      },
      tsr::Error);
  // The device is usable afterwards.
  EXPECT_TRUE(same(tsr::sum(x), tsr::sum(x.to(Device::cpu()))));
}

// ---- softmax ---------------------------------------------------------------------------------

TEST(CudaSoftmax, AgainstCpu) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 1200;
  struct Case {
    Shape shape;
    int64_t dim;
  };
  const Case cases[] = {{{}, 0},         {{0, 5}, 1},    {{7}, 0},         {{4, 7}, 1},
                        {{4, 7}, 0},     {{3, 5, 6}, 1}, {{5000, 33}, 1},  {{2, 100000}, 1},
                        {{2, 1025}, -1}, {{1024, 3}, 0}, {{3, 4, 1000}, 2}};
  for (tsr_dtype_t dt : kFloats) {
    for (const Case& cs : cases) {
      for (bool nc : {false, true}) {
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + shape_str(cs.shape) + " dim " + std::to_string(cs.dim) +
                     (nc ? " non-contiguous" : ""));
        Tensor x = rand_cpu(cs.shape, dt, seed++, -8.0, 8.0);
        Tensor xg = x.to(dev);
        if (nc && x.dim() >= 2) {
          x = x.transpose(0, 1).contiguous().transpose(0, 1);
          xg = xg.transpose(0, 1).contiguous().transpose(0, 1);
        }
        // Long rows: the CPU sums the exponentials in 16 float lanes of up to D/16 terms each.
        const int64_t D = x.dim() == 0 ? 1 : x.size(cs.dim);
        const auto t = tol(dt);
        const double k = 1.0 + double(D) / 20000.0;
        EXPECT_TRUE(same(tsr::softmax(xg, cs.dim), tsr::softmax(x, cs.dim), t.first * k, t.second * k));
        EXPECT_TRUE(same(tsr::log_softmax(xg, cs.dim), tsr::log_softmax(x, cs.dim), t.first * k, t.second * k));
      }
    }
    // A row with a NaN (all NaN), a row of -inf (NaN), a row with +inf.
    const double nan = std::nan(""), inf = INFINITY;
    Tensor x = tsr::from_vector(std::vector<double>{1, nan, 2, -inf, -inf, -inf, 0, inf, 1}, {3, 3}).to(dt);
    EXPECT_TRUE(same(tsr::softmax(x.to(dev), 1), tsr::softmax(x, 1)));
    EXPECT_TRUE(same(tsr::log_softmax(x.to(dev), 1), tsr::log_softmax(x, 1)));
  }
}

// ---- fused layer norm / cross entropy ----------------------------------------------------------

TEST(CudaNorm, LayerNormForwardBackward) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 1500;
  for (tsr_dtype_t dt : kFloats) {
    for (int64_t rows : {0, 1, 300}) {
      for (int64_t M : {1, 17, 1024, 1025, 100000}) {
        if (rows * M > 4000000) continue;
        for (bool rms : {false, true}) {
          for (int aff = 0; aff < 3; ++aff) {  // no weight, weight, weight + bias
            SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " rows " + std::to_string(rows) + " M " +
                         std::to_string(M) + (rms ? " rms" : "") + " affine " + std::to_string(aff));
            Tensor x = rand_cpu({rows, M}, dt, seed++, -3.0, 5.0);
            Tensor w = rand_cpu({M}, dt, seed++, 0.5, 1.5);
            Tensor b = rand_cpu({M}, dt, seed++, -1.0, 1.0);
            Tensor g = rand_cpu({rows, M}, dt, seed++, -1.0, 1.0);
            const double eps = 1e-5;
            auto fw = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
              return tsr::call("_nn_layer_norm", {xx, aff >= 1 ? tsr::Arg(ww) : tsr::Arg(tsr::none),
                                                  aff >= 2 && !rms ? tsr::Arg(bb) : tsr::Arg(tsr::none), M, eps, rms});
            };
            EXPECT_TRUE(same(fw(x.to(dev), w.to(dev), b.to(dev)), fw(x, w, b)));
            auto bw = [&](const Tensor& xx, const Tensor& ww, const Tensor& gg) {
              return tsr::call_multi(tsr::Op("_nn_layer_norm_backward"),
                                     {xx, aff >= 1 ? tsr::Arg(ww) : tsr::Arg(tsr::none), gg, M, eps, rms});
            };
            auto want = bw(x, w, g);
            auto got = bw(x.to(dev), w.to(dev), g.to(dev));
            const auto t = tol(dt);
            EXPECT_TRUE(same(got[0], want[0], t.first * 4, t.second * 4)) << "dx";
            // Column sums over rows: relative to the number of rows summed.
            const double k = 4 + std::sqrt(double(rows));
            EXPECT_TRUE(same(got[1], want[1], t.first * k, t.second * k)) << "dweight";
            EXPECT_TRUE(same(got[2], want[2], t.first * k, t.second * k)) << "dbias";
          }
        }
      }
    }
  }
  // The public ops route through the fused kernels.
  Tensor x = rand_cpu({6, 10, 12}, TSR_F32, 3);
  EXPECT_TRUE(same(tsr::nn::layer_norm(x.to(dev), {10, 12}), tsr::nn::layer_norm(x, {10, 12})));
  EXPECT_TRUE(same(tsr::nn::rms_norm(x.to(dev), {12}), tsr::nn::rms_norm(x, {12})));
}

TEST(CudaCrossEntropy, ForwardBackward) {
  REQUIRE_CUDA(dev);
  uint64_t seed = 1800;
  struct Case {
    int64_t N, C;
  };
  const Case cases[] = {{0, 5}, {7, 10}, {1000, 33}, {64, 50000}, {3, 1025}};
  for (tsr_dtype_t dt : kFloats) {
    for (const Case& cs : cases) {
      for (bool weighted : {false, true}) {
        for (double ls : {0.0, 0.1}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " N " + std::to_string(cs.N) + " C " + std::to_string(cs.C) +
                       (weighted ? " weighted" : "") + " ls " + std::to_string(ls));
          Tensor x = rand_cpu({cs.N, cs.C}, dt, seed++, -4.0, 4.0);
          Tensor w = rand_cpu({cs.C}, dt, seed++, 0.2, 2.0);
          std::mt19937_64 g(seed++);
          std::vector<int64_t> tv(static_cast<size_t>(cs.N));
          for (int64_t& t : tv) t = (g() % 5 == 0) ? -100 : int64_t(g() % uint64_t(cs.C));  // some ignored
          Tensor t = tsr::from_vector(tv, {cs.N});
          Tensor gr = rand_cpu({cs.N}, dt, seed++, 0.5, 1.5);
          auto fw = [&](const Tensor& xx, const Tensor& tt, const Tensor& ww) {
            return tsr::call_multi(tsr::Op("_nn_cross_entropy_rows"),
                                   {xx, tt, weighted ? tsr::Arg(ww) : tsr::Arg(tsr::none), int64_t(-100), ls});
          };
          auto want = fw(x, t, w);
          auto got = fw(x.to(dev), t.to(dev), w.to(dev));
          const auto tl = tol(dt);
          EXPECT_TRUE(same(got[0], want[0], tl.first * 4, tl.second * 4)) << "loss";
          EXPECT_TRUE(same(got[1], want[1], 0, 0)) << "weight";
          auto bw = [&](const Tensor& xx, const Tensor& tt, const Tensor& ww, const Tensor& gg) {
            return tsr::call(tsr::Op("_nn_cross_entropy_rows_backward"),
                             {xx, tt, weighted ? tsr::Arg(ww) : tsr::Arg(tsr::none), gg, int64_t(-100), ls});
          };
          EXPECT_TRUE(
              same(bw(x.to(dev), t.to(dev), w.to(dev), gr.to(dev)), bw(x, t, w, gr), tl.first * 4, tl.second * 4))
              << "dx";
        }
      }
    }
  }
  // The public op (mean reduction, fused path) and its gradient input.
  Tensor x = rand_cpu({16, 40}, TSR_F32, 4);
  std::vector<int64_t> tv(16);
  for (size_t i = 0; i < tv.size(); ++i) tv[i] = int64_t(i * 7 % 40);
  Tensor t = tsr::from_vector(tv, {16});
  EXPECT_TRUE(same(tsr::nn::cross_entropy(x.to(dev), t.to(dev)), tsr::nn::cross_entropy(x, t)));
}

TEST(CudaCrossEntropy, TargetOutOfRangeFailsAtSync) {
  REQUIRE_CUDA(dev);
  Tensor x = rand_cpu({3, 4}, TSR_F32, 6).to(dev);
  Tensor t = tsr::from_vector(std::vector<int64_t>{0, 9, 1}, {3}).to(dev);
  EXPECT_THROW(
      {
        auto r = tsr::call_multi(tsr::Op("_nn_cross_entropy_rows"), {x, t, tsr::none, int64_t(-100), 0.0});
        values(r[0]);
      },
      tsr::Error);
  EXPECT_TRUE(same(tsr::sum(x), tsr::sum(x.to(Device::cpu()))));
}

// The backward, reachable through op_find, reports a bad target too (it used to write a zero
// row and return OK; the CPU kernel refuses it at once).
TEST(CudaCrossEntropy, BackwardTargetOutOfRangeFailsAtSync) {
  REQUIRE_CUDA(dev);
  Tensor x = rand_cpu({3, 4}, TSR_F32, 7).to(dev);
  Tensor t = tsr::from_vector(std::vector<int64_t>{0, 1000000, 1}, {3}).to(dev);
  Tensor g = tsr::ones({3}).to(dev);
  EXPECT_THROW(
      {
        Tensor dx = tsr::call("_nn_cross_entropy_rows_backward", {x, t, tsr::none, g, int64_t(-100), 0.0});
        values(dx);
      },
      tsr::Error);
  // The error was consumed by the failing sync: the device works on.
  EXPECT_TRUE(same(tsr::sum(x), tsr::sum(x.to(Device::cpu()))));
}

}  // namespace
