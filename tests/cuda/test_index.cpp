// CUDA index-family kernels against the CPU backend: index_select, gather, scatter_reduce (every
// reduction, include_self both ways, duplicates), nonzero, _nn_embedding(+backward),
// _nn_max_pool2d(+backward), _nn_im2col/_nn_col2im, randperm and multinomial (same samples as
// the CPU for the same seed), and the device-side index checks: an out-of-range index gives a
// status naming the op at the next synchronizing call, and the process keeps working.
// Every test skips with the reason when the runtime has no cuda device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tsr::Device;
using tsr::Tensor;
using Shape = std::vector<int64_t>;

const tsr_api_t* A() { return tsr::api(); }

// The loader's reason for refusing the cuda plugin, if it did.
std::string cuda_plugin_refusal(tsr_runtime_t* rt) {
  for (size_t i = 0; i < A()->plugin_count(rt); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof(r);
    if (tsr_status_t st = A()->plugin_record(rt, i, &r)) {
      A()->status_free(st);
      continue;
    }
    if (r.name && std::string(r.name) == "cuda" && !r.loaded)
      return std::string(" (plugin refused: ") + (r.reason ? r.reason : "") + ")";
  }
  return "";
}

// The cuda device type id of the default runtime, or -1 (with the reason) when there is none.
int32_t cuda_type(std::string* why) {
  int32_t id = -1;
  if (tsr_status_t st = A()->device_type_lookup(tsr::runtime(), "cuda", &id)) {
    *why = std::string("no cuda device type in this runtime: ") + A()->status_message(st) +
           cuda_plugin_refusal(tsr::runtime());
    A()->status_free(st);
    return -1;
  }
  if (A()->device_count(tsr::runtime(), id) <= 0) {
    *why = "the cuda device type has no devices";
    return -1;
  }
  return id;
}

#define REQUIRE_CUDA(dev_var)             \
  std::string why_;                       \
  const int32_t type_ = cuda_type(&why_); \
  if (type_ < 0) GTEST_SKIP() << why_;    \
  const Device dev_var(tsr_device_t{type_, 0})

const std::vector<tsr_dtype_t> kAll = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                       TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kFloat = {TSR_F16, TSR_BF16, TSR_F32, TSR_F64};

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Random CPU data of dtype dt: floats in [lo, hi), small integers, bools about half true.
Tensor data(const Shape& s, uint64_t seed, tsr_dtype_t dt, double lo = -3, double hi = 3) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 11);
  std::vector<double> v(static_cast<size_t>(numel(s)));
  if (tsr::is_floating(dt)) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (double& x : v) x = u(g);
  } else if (dt == TSR_BOOL) {
    for (double& x : v) x = double(g() & 1);
  } else {
    std::uniform_int_distribution<int> u(dt == TSR_U8 ? 0 : -8, dt == TSR_U8 ? 15 : 7);
    for (double& x : v) x = u(g);
  }
  return tsr::from_vector(v, s).to(dt);
}

// int64 indices in [lo, hi).
Tensor indices(const Shape& s, uint64_t seed, int64_t lo, int64_t hi) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 3);
  std::uniform_int_distribution<int64_t> u(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(numel(s)));
  for (int64_t& x : v) x = u(g);
  return tsr::from_vector(v, s);
}

Tensor host(const Tensor& t) { return t.to(Device::cpu()); }

std::vector<double> values(const Tensor& t) { return host(t).to_vector<double>(); }

double tol_of(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F16:
      return 2e-2;
    case TSR_BF16:
      return 1e-1;
    case TSR_F32:
      return 1e-5;
    case TSR_F64:
      return 1e-12;
    default:
      return 0;
  }
}

// cuda result == cpu result: same shape, values within rtol (relative to max(1, |ref|)); NaN
// matches NaN.
void expect_match(const Tensor& cpu, const Tensor& gpu, double rtol, const std::string& what) {
  ASSERT_EQ(cpu.sizes(), gpu.sizes()) << what;
  ASSERT_EQ(cpu.dtype(), gpu.dtype()) << what;
  const std::vector<double> a = values(cpu), b = values(gpu);
  int bad = 0;
  for (size_t i = 0; i < a.size() && bad < 5; ++i) {
    const bool ok = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ||
                    std::abs(a[i] - b[i]) <= rtol * std::max(1.0, std::abs(a[i]));
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " cpu " << a[i] << " cuda " << b[i];
    }
  }
}

// The status of synchronizing `dev` (empty when OK); frees it.
std::string sync_status(const Device& dev, tsr_code_t* code = nullptr) {
  tsr_status_t st = A()->device_synchronize(tsr::runtime(), dev.d);
  if (!st) {
    if (code) *code = TSR_OK;
    return "";
  }
  if (code) *code = A()->status_code(st);
  std::string m = A()->status_message(st);
  A()->status_free(st);
  return m;
}

// ---- index_select ---------------------------------------------------------------------------

TEST(CudaIndex, IndexSelectMatchesCpu) {
  REQUIRE_CUDA(cuda);
  const Shape shape = {5, 7, 3};
  uint64_t seed = 1;
  for (tsr_dtype_t dt : kAll) {
    Tensor x = data(shape, seed++, dt);
    Tensor xg = x.to(cuda);
    for (int64_t dim = 0; dim < 3; ++dim) {
      const int64_t S = shape[dim];
      for (int64_t K : {int64_t(0), int64_t(1), int64_t(9)}) {
        Tensor idx = indices({K}, seed++, -S, S);  // negatives wrap; duplicates likely
        std::string what = std::string("index_select ") + tsr::dtype_name(dt) + " dim " + std::to_string(dim) + " K " +
                           std::to_string(K);
        expect_match(tsr::index_select(x, dim, idx), tsr::index_select(xg, dim, idx.to(cuda)), 0, what);
      }
    }
    // A non-contiguous self.
    Tensor xt = x.transpose(0, 2), xgt = xg.transpose(0, 2);
    Tensor idx = indices({6}, seed++, -3, 3);
    expect_match(tsr::index_select(xt, 1, idx), tsr::index_select(xgt, 1, idx.to(cuda)), 0,
                 std::string("index_select transposed ") + tsr::dtype_name(dt));
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- gather ---------------------------------------------------------------------------------

TEST(CudaIndex, GatherMatchesCpu) {
  REQUIRE_CUDA(cuda);
  uint64_t seed = 100;
  for (tsr_dtype_t dt : kAll) {
    Tensor x = data({4, 6, 5}, seed++, dt);
    Tensor xg = x.to(cuda);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Shape is = {3, 4, 5};
      is[dim] = 7;  // larger than self along dim: duplicates
      const int64_t S = x.size(dim);
      Tensor idx = indices(is, seed++, -S, S);
      std::string what = std::string("gather ") + tsr::dtype_name(dt) + " dim " + std::to_string(dim);
      expect_match(tsr::gather(x, dim, idx), tsr::gather(xg, dim, idx.to(cuda)), 0, what);
      // Non-contiguous self and index (transposed views of transposed copies).
      Tensor xn = x.transpose(0, 2).contiguous().transpose(0, 2);
      Tensor in = idx.transpose(0, 2).contiguous().transpose(0, 2);
      Tensor xgn = xg.transpose(0, 2).contiguous().transpose(0, 2);
      Tensor ign = idx.to(cuda).transpose(0, 2).contiguous().transpose(0, 2);
      expect_match(tsr::gather(xn, dim, in), tsr::gather(xgn, dim, ign), 0, what + " non-contiguous");
    }
    // An expanded (stride 0) row index, as embedding lookups make.
    Tensor ri = indices({3, 1}, seed++, -4, 4);
    Tensor x2 = data({4, 5}, seed++, dt);
    expect_match(tsr::gather(x2, 0, ri.expand({3, 5})), tsr::gather(x2.to(cuda), 0, ri.to(cuda).expand({3, 5})), 0,
                 std::string("gather expanded ") + tsr::dtype_name(dt));
    // Empty index.
    Tensor e = tsr::from_vector(std::vector<int64_t>{}, {0, 6, 5});
    expect_match(tsr::gather(x, 0, e), tsr::gather(xg, 0, e.to(cuda)), 0, "gather empty");
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- scatter family ---------------------------------------------------------------------------

TEST(CudaIndex, ScatterReduceMatchesCpu) {
  REQUIRE_CUDA(cuda);
  uint64_t seed = 200;
  const std::vector<std::string> reds = {"sum", "prod", "mean", "amax", "amin"};
  for (tsr_dtype_t dt : kAll) {
    for (int64_t dim = 0; dim < 2; ++dim) {
      const Shape self_shape = {6, 5};
      Shape is = {6, 5};
      is[dim] = 12;  // twice the size along dim: many duplicate targets
      Shape ss = is;
      ss[1 - dim] += 1;  // src larger than the index outside dim
      const int64_t S = self_shape[dim];
      Tensor self = data(self_shape, seed++, dt, 0.5, 1.5);
      Tensor src = data(ss, seed++, dt, 0.5, 1.5);  // near 1: products stay finite
      Tensor idx = indices(is, seed++, -S, S);
      Tensor sg = self.to(cuda), srg = src.to(cuda), ig = idx.to(cuda);
      for (const std::string& red : reds) {
        if (dt == TSR_BOOL && red == "mean") continue;
        for (bool include_self : {true, false}) {
          std::string what = std::string("scatter_reduce ") + red + " " + tsr::dtype_name(dt) + " dim " +
                             std::to_string(dim) + (include_self ? " include_self" : " exclude_self");
          expect_match(tsr::scatter_reduce(self, dim, idx, src, red, include_self),
                       tsr::scatter_reduce(sg, dim, ig, srg, red, include_self), tol_of(dt) * 4, what);
        }
      }
      expect_match(tsr::scatter_add(self, dim, idx, src), tsr::scatter_add(sg, dim, ig, srg), tol_of(dt) * 4,
                   std::string("scatter_add ") + tsr::dtype_name(dt));
      // Non-contiguous src.
      Tensor srcn = src.transpose(0, 1).contiguous().transpose(0, 1);
      Tensor srgn = srg.transpose(0, 1).contiguous().transpose(0, 1);
      expect_match(tsr::scatter_reduce(self, dim, idx, srcn, "amax"), tsr::scatter_reduce(sg, dim, ig, srgn, "amax"), 0,
                   std::string("scatter_reduce amax non-contiguous src ") + tsr::dtype_name(dt));
    }
    // scatter (assign) with distinct targets per column: the result is defined.
    std::vector<int64_t> perm = {3, -1, 0, 2, -5};  // distinct rows of 5 (wrapped)
    std::vector<int64_t> iv;
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < 4; ++c) iv.push_back(perm[static_cast<size_t>((r + c) % 5)]);
    Tensor idx = tsr::from_vector(iv, {5, 4});
    Tensor self = data({5, 4}, seed++, dt), src = data({5, 4}, seed++, dt);
    expect_match(tsr::scatter(self, 0, idx, src), tsr::scatter(self.to(cuda), 0, idx.to(cuda), src.to(cuda)), 0,
                 std::string("scatter ") + tsr::dtype_name(dt));
    // Empty index: self unchanged.
    Tensor e = tsr::from_vector(std::vector<int64_t>{}, {0, 4});
    Tensor es = data({0, 4}, seed++, dt);
    expect_match(tsr::scatter_add(self, 0, e, es), tsr::scatter_add(self.to(cuda), 0, e.to(cuda), es.to(cuda)), 0,
                 "scatter_add empty");
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// Integer sums with many duplicates are exact (atomics only reorder them).
TEST(CudaIndex, ScatterAddManyDuplicatesExactForIntegers) {
  REQUIRE_CUDA(cuda);
  Tensor self = tsr::from_vector(std::vector<int64_t>(8, 0), {8});
  Tensor idx = indices({100000}, 5, -8, 8);
  Tensor src = indices({100000}, 6, -1000, 1000);
  expect_match(tsr::scatter_add(self, 0, idx, src), tsr::scatter_add(self.to(cuda), 0, idx.to(cuda), src.to(cuda)), 0,
               "scatter_add int64 duplicates");
  Tensor s32 = self.to(TSR_I32), src32 = src.to(TSR_I32);
  expect_match(tsr::scatter_reduce(s32, 0, idx, src32, "amax"),
               tsr::scatter_reduce(s32.to(cuda), 0, idx.to(cuda), src32.to(cuda), "amax"), 0, "amax int32 duplicates");
  Tensor s16 = self.to(TSR_I16), src16 = src.to(TSR_I16);
  expect_match(tsr::scatter_reduce(s16, 0, idx, src16, "mean", false),
               tsr::scatter_reduce(s16.to(cuda), 0, idx.to(cuda), src16.to(cuda), "mean", false), 0, "mean int16");
  EXPECT_EQ(sync_status(cuda), "");
}

// amax/amin propagate NaN as the CPU kernel.
TEST(CudaIndex, ScatterAmaxPropagatesNan) {
  REQUIRE_CUDA(cuda);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor self = tsr::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
  Tensor src = tsr::from_vector(std::vector<double>{5, nan, -1, 7, 0.5}, {5});
  Tensor idx = tsr::from_vector(std::vector<int64_t>{0, 1, 1, 3, -4}, {5});
  for (tsr_dtype_t dt : kFloat)
    for (const char* red : {"amax", "amin"})
      for (bool inc : {true, false})
        expect_match(tsr::scatter_reduce(self.to(dt), 0, idx, src.to(dt), red, inc),
                     tsr::scatter_reduce(self.to(dt).to(cuda), 0, idx.to(cuda), src.to(dt).to(cuda), red, inc), 0,
                     std::string(red) + " NaN " + tsr::dtype_name(dt));
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- nonzero --------------------------------------------------------------------------------

TEST(CudaIndex, NonzeroMatchesCpu) {
  REQUIRE_CUDA(cuda);
  uint64_t seed = 300;
  const std::vector<Shape> shapes = {{0}, {17}, {33, 65}, {3, 4, 5, 6}, {1000, 999}, {2, 1, 0, 3}};
  for (tsr_dtype_t dt : kAll) {
    for (const Shape& s : shapes) {
      // About a third zeros.
      std::mt19937_64 g(seed++);
      std::vector<double> v(static_cast<size_t>(numel(s)));
      for (double& x : v) x = (g() % 3 == 0) ? 0.0 : double(int(g() % 5) + 1);
      Tensor x = tsr::from_vector(v, s).to(dt);
      expect_match(tsr::nonzero(x), tsr::nonzero(x.to(cuda)), 0,
                   std::string("nonzero ") + tsr::dtype_name(dt) + " numel " + std::to_string(numel(s)));
    }
  }
  // -0.0 is zero, NaN is not.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor f = tsr::from_vector(std::vector<double>{0.0, -0.0, nan, 1.0, -2.0, 0.0}, {2, 3});
  for (tsr_dtype_t dt : kFloat)
    expect_match(tsr::nonzero(f.to(dt)), tsr::nonzero(f.to(dt).to(cuda)), 0,
                 std::string("nonzero signed zero ") + tsr::dtype_name(dt));
  // A non-contiguous input.
  Tensor x = data({40, 30}, seed++, TSR_I32);
  expect_match(tsr::nonzero(x.transpose(0, 1)), tsr::nonzero(x.to(cuda).transpose(0, 1)), 0, "nonzero transposed");
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- embedding ------------------------------------------------------------------------------

TEST(CudaIndex, EmbeddingMatchesCpu) {
  REQUIRE_CUDA(cuda);
  static const tsr::Op fwd("_nn_embedding");
  static const tsr::Op bwd("_nn_embedding_backward");
  uint64_t seed = 400;
  const int64_t V = 37, D = 19;
  for (tsr_dtype_t dt : kAll) {
    Tensor w = data({V, D}, seed++, dt);
    for (const Shape& is : std::vector<Shape>{{0}, {5}, {6, 50}}) {
      Tensor idx = indices(is, seed++, 0, V);
      expect_match(tsr::call(fwd, {w, idx}), tsr::call(fwd, {w.to(cuda), idx.to(cuda)}), 0,
                   std::string("_nn_embedding ") + tsr::dtype_name(dt));
    }
  }
  // Backward: deterministic, in the CPU's order and precision -> identical results.
  for (tsr_dtype_t dt : kFloat) {
    for (int64_t pad : {int64_t(-1), int64_t(3)}) {
      for (int64_t M : {int64_t(0), int64_t(1), int64_t(500)}) {
        Tensor idx = indices({M}, seed++, 0, 8);  // few rows: long runs of duplicates
        Tensor g = data({M, D}, seed++, dt);
        std::string what = std::string("_nn_embedding_backward ") + tsr::dtype_name(dt) + " M " + std::to_string(M) +
                           " pad " + std::to_string(pad);
        expect_match(tsr::call(bwd, {g, idx, V, pad}), tsr::call(bwd, {g.to(cuda), idx.to(cuda), V, pad}), 0, what);
      }
    }
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- max_pool2d -----------------------------------------------------------------------------

struct PoolCase {
  Shape x;
  Shape k, s, p, d;
};

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

TEST(CudaIndex, MaxPoolMatchesCpu) {
  REQUIRE_CUDA(cuda);
  static const tsr::Op fwd("_nn_max_pool2d");
  static const tsr::Op bwd("_nn_max_pool2d_backward");
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},    // non-overlapping
      {{2, 3, 9, 7}, {3, 3}, {2, 1}, {1, 1}, {1, 1}},    // overlapping, padded
      {{1, 2, 11, 10}, {3, 2}, {1, 2}, {1, 0}, {2, 3}},  // dilated
      {{0, 3, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},    // empty batch
  };
  uint64_t seed = 500;
  for (tsr_dtype_t dt : kFloat) {
    for (const PoolCase& pc : cases) {
      Tensor x = data(pc.x, seed++, dt);
      std::vector<double> xv = x.to_vector<double>();
      if (!xv.empty()) {  // a NaN: propagates into its windows
        xv[xv.size() / 2] = std::numeric_limits<double>::quiet_NaN();
        x = tsr::from_vector(xv, pc.x).to(dt);
      }
      const Shape ohw = {pool_out(pc.x[2], pc.k[0], pc.s[0], pc.p[0], pc.d[0]),
                         pool_out(pc.x[3], pc.k[1], pc.s[1], pc.p[1], pc.d[1])};
      auto rc = tsr::call_multi(fwd, {x, pc.k, pc.s, pc.p, pc.d, ohw});
      auto rg = tsr::call_multi(fwd, {x.to(cuda), pc.k, pc.s, pc.p, pc.d, ohw});
      std::string what = std::string("_nn_max_pool2d ") + tsr::dtype_name(dt) + " k " + std::to_string(pc.k[0]);
      expect_match(rc[0], rg[0], 0, what + " values");
      expect_match(rc[1], rg[1], 0, what + " indices");
      Tensor g = data({pc.x[0], pc.x[1], ohw[0], ohw[1]}, seed++, dt);
      const Shape hw = {pc.x[2], pc.x[3]};
      expect_match(tsr::call(bwd, {g, rc[1], hw}), tsr::call(bwd, {g.to(cuda), rg[1], hw}), tol_of(dt) * 4,
                   what + " backward");
    }
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- im2col / col2im ------------------------------------------------------------------------

TEST(CudaIndex, Im2colCol2imMatchCpu) {
  REQUIRE_CUDA(cuda);
  static const tsr::Op im2col("_nn_im2col");
  static const tsr::Op col2im("_nn_col2im");
  struct Case {
    Shape x, k, d, p, s, ohw;
    double pad;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {7, 6}, 0.0},
      {{1, 2, 9, 8}, {2, 3}, {2, 1}, {0, 2}, {2, 3}, {4, 4}, 0.0},
      {{2, 1, 5, 5}, {2, 2}, {1, 1}, {0, 0}, {2, 2}, {3, 3}, -1.5},  // ceil-mode: windows past the edge
      {{0, 2, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, {3, 3}, 0.0},
  };
  uint64_t seed = 600;
  for (tsr_dtype_t dt : kFloat) {
    for (const Case& cs : cases) {
      Tensor x = data(cs.x, seed++, dt);
      std::string what = std::string("im2col ") + tsr::dtype_name(dt) + " x " + std::to_string(cs.x[2]);
      Tensor cc = tsr::call(im2col, {x, cs.k, cs.d, cs.p, cs.s, cs.ohw, cs.pad});
      Tensor cg = tsr::call(im2col, {x.to(cuda), cs.k, cs.d, cs.p, cs.s, cs.ohw, cs.pad});
      expect_match(cc, cg, 0, what);
      // col2im sums in the CPU's order and precision: identical.
      Tensor cols = data(cc.sizes(), seed++, dt);
      const Shape hw = {cs.x[2], cs.x[3]};
      expect_match(tsr::call(col2im, {cols, hw, cs.k, cs.d, cs.p, cs.s, cs.ohw}),
                   tsr::call(col2im, {cols.to(cuda), hw, cs.k, cs.d, cs.p, cs.s, cs.ohw}), 0, "col2im " + what);
    }
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// ---- random ---------------------------------------------------------------------------------

TEST(CudaIndex, RandpermMatchesCpu) {
  REQUIRE_CUDA(cuda);
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(7), int64_t(1000), int64_t(100003)}) {
    for (tsr_dtype_t dt : {TSR_I64, TSR_I32, TSR_F32}) {
      for (int64_t offset : {int64_t(0), int64_t(12345)}) {
        Tensor c = tsr::randperm(n, dt, Device::cpu(), 42, offset);
        Tensor g = tsr::randperm(n, dt, cuda, 42, offset);
        expect_match(c, g, 0, "randperm n " + std::to_string(n) + " " + tsr::dtype_name(dt));
      }
    }
  }
  // A permutation.
  std::vector<int64_t> p = host(tsr::randperm(5000, TSR_I64, cuda, 7, 0)).to_vector<int64_t>();
  std::vector<char> seen(p.size(), 0);
  for (int64_t v : p) {
    ASSERT_TRUE(v >= 0 && v < 5000);
    ASSERT_FALSE(seen[static_cast<size_t>(v)]) << "duplicate " << v;
    seen[static_cast<size_t>(v)] = 1;
  }
  EXPECT_EQ(sync_status(cuda), "");
}

TEST(CudaIndex, MultinomialMatchesCpu) {
  REQUIRE_CUDA(cuda);
  uint64_t seed = 700;
  for (const Shape& s : std::vector<Shape>{{10}, {3, 50}, {4, 1000}}) {
    Tensor p = data(s, seed++, TSR_F64, 0.0, 1.0);
    std::vector<double> pv = p.to_vector<double>();
    for (size_t i = 0; i < pv.size(); i += 4) pv[i] = 0;  // zero-weight categories are never drawn
    p = tsr::from_vector(pv, s);
    const int64_t cats = s.back();
    for (bool repl : {true, false}) {
      for (int64_t ns : {int64_t(1), int64_t(5), repl ? int64_t(300) : cats / 2}) {
        std::string what = std::string("multinomial ") + (repl ? "replacement" : "no replacement") + " cats " +
                           std::to_string(cats) + " ns " + std::to_string(ns);
        Tensor c = tsr::multinomial(p, ns, repl, 99, 5);
        Tensor g = tsr::multinomial(p.to(cuda), ns, repl, 99, 5);
        expect_match(c, g, 0, what);
        std::vector<int64_t> gv = host(g).to_vector<int64_t>();
        for (size_t i = 0; i < gv.size(); ++i) {
          const size_t row = i / static_cast<size_t>(ns);
          ASSERT_GT(pv[row * static_cast<size_t>(cats) + static_cast<size_t>(gv[i])], 0)
              << what << ": drew a zero-weight category";
        }
      }
    }
  }
  // Invalid distributions fail with the CPU's message (the kernel reads the check back).
  Tensor bad = tsr::from_vector(std::vector<double>{0.5, -1.0, 0.5}, {3}).to(cuda);
  try {
    (void)tsr::multinomial(bad, 1, true, 1, 0);
    ADD_FAILURE() << "multinomial accepted a negative probability";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("probability tensor contains"), std::string::npos) << e.what();
  }
  Tensor zeros = tsr::from_vector(std::vector<double>{0, 0, 1, 0}, {4}).to(cuda);
  try {
    (void)tsr::multinomial(zeros, 2, false, 1, 0);
    ADD_FAILURE() << "multinomial drew 2 samples without replacement from one nonzero category";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not enough non-zero"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sync_status(cuda), "");
}

// Distribution sanity on a large draw: frequencies follow the weights.
TEST(CudaIndex, MultinomialFrequencies) {
  REQUIRE_CUDA(cuda);
  Tensor p = tsr::from_vector(std::vector<double>{1, 2, 3, 4}, {4}).to(cuda);
  std::vector<int64_t> v = host(tsr::multinomial(p, 200000, true, 3, 0)).to_vector<int64_t>();
  std::vector<double> freq(4, 0);
  for (int64_t k : v) freq[static_cast<size_t>(k)] += 1.0 / double(v.size());
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(freq[static_cast<size_t>(k)], (k + 1) / 10.0, 0.01) << "category " << k;
}

// ---- device-side index errors ---------------------------------------------------------------

TEST(CudaIndex, OutOfRangeIndexReportedAtSynchronize) {
  REQUIRE_CUDA(cuda);
  Tensor x = data({5, 4}, 1, TSR_F32).to(cuda);
  // gather: 100 is out of [-5, 5) along dim 0.
  Tensor bad = tsr::from_vector(std::vector<int64_t>{0, 100, 1, 2}, {1, 4}).to(cuda);
  Tensor r = tsr::gather(x, 0, bad);  // enqueued; no host sync
  tsr_code_t code = TSR_OK;
  const std::string msg = sync_status(cuda, &code);
  EXPECT_EQ(code, TSR_OUT_OF_RANGE) << msg;
  EXPECT_NE(msg.find("gather"), std::string::npos) << msg;
  EXPECT_NE(msg.find("100"), std::string::npos) << msg;
  // Reported once; the device keeps working.
  EXPECT_EQ(sync_status(cuda), "");
  Tensor good = tsr::from_vector(std::vector<int64_t>{4, -5, 1, 2}, {1, 4});
  expect_match(tsr::gather(host(x), 0, good), tsr::gather(x, 0, good.to(cuda)), 0, "gather after an error");
  EXPECT_EQ(sync_status(cuda), "");
}

TEST(CudaIndex, OutOfRangeIndexReportedAtCopyToHost) {
  REQUIRE_CUDA(cuda);
  Tensor self = tsr::from_vector(std::vector<float>(6, 0.0f), {6}).to(cuda);
  Tensor idx = tsr::from_vector(std::vector<int64_t>{1, -7, 2}, {3}).to(cuda);  // -7 < -6
  Tensor src = tsr::from_vector(std::vector<float>{1, 2, 3}, {3}).to(cuda);
  bool threw = false;
  try {
    Tensor r = tsr::scatter_add(self, 0, idx, src);
    (void)host(r).to_vector<float>();
  } catch (const tsr::Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("scatter"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-7"), std::string::npos) << e.what();
  }
  if (!threw) {  // the copy did not surface it: the next synchronize must
    const std::string msg = sync_status(cuda);
    EXPECT_NE(msg.find("scatter"), std::string::npos) << "no error reported for index -7: '" << msg << "'";
  }
  EXPECT_EQ(sync_status(cuda), "");
  std::vector<float> ok =
      host(tsr::scatter_add(self, 0, tsr::from_vector(std::vector<int64_t>{1, -6, 1}, {3}).to(cuda), src))
          .to_vector<float>();
  EXPECT_EQ(ok, (std::vector<float>{2, 4, 0, 0, 0, 0}));
}

TEST(CudaIndex, OutOfRangeIndexInKernelsOfNnOps) {
  REQUIRE_CUDA(cuda);
  static const tsr::Op fwd("_nn_embedding");
  static const tsr::Op bwd("_nn_embedding_backward");
  Tensor w = data({10, 4}, 2, TSR_F32).to(cuda);
  // Negative indices are not wrapped by embedding (as on the CPU).
  Tensor idx = tsr::from_vector(std::vector<int64_t>{3, -1, 9}, {3}).to(cuda);
  (void)tsr::call(fwd, {w, idx});
  std::string msg = sync_status(cuda);
  EXPECT_NE(msg.find("_nn_embedding"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-1"), std::string::npos) << msg;
  Tensor g = data({3, 4}, 3, TSR_F32).to(cuda);
  Tensor idx2 = tsr::from_vector(std::vector<int64_t>{3, 10, 9}, {3}).to(cuda);
  (void)tsr::call(bwd, {g, idx2, int64_t(10), int64_t(-1)});
  msg = sync_status(cuda);
  EXPECT_NE(msg.find("_nn_embedding_backward"), std::string::npos) << msg;
  EXPECT_EQ(sync_status(cuda), "");
  // index_select with an index below -size.
  Tensor bad = tsr::from_vector(std::vector<int64_t>{0, -11}, {2}).to(cuda);
  (void)tsr::index_select(w, 0, bad);
  msg = sync_status(cuda);
  EXPECT_NE(msg.find("index_select"), std::string::npos) << msg;
  EXPECT_EQ(sync_status(cuda), "");
}

}  // namespace
