// Reductions (sum, mean, amax, amin, argmax) on the cpu device against float64 references.
#include <cmath>
#include <limits>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

struct RefOut {
  std::vector<double> vals, abs_sum;  // abs_sum: sum of |x| per output (tolerance scale)
  Shape shape;
};

// Reduces `v` (shape `s`, row-major) over `dims` (empty = all) with fn(block values) per output.
RefOut reduce_ref(const std::vector<double>& v, const Shape& s, std::vector<int64_t> dims, bool keepdim,
                  const std::function<double(const std::vector<double>&)>& fn) {
  const int64_t nd = int64_t(s.size());
  std::vector<bool> red(size_t(nd), dims.empty());
  for (int64_t d : dims) red[size_t(d < 0 ? d + nd : d)] = true;
  RefOut r;
  Shape kept;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[size_t(d)]) kept.push_back(s[size_t(d)]);
    if (!red[size_t(d)] || keepdim) r.shape.push_back(red[size_t(d)] ? 1 : s[size_t(d)]);
  }
  const int64_t nout = tt::numel(kept);
  std::vector<std::vector<double>> blocks(static_cast<size_t>(nout));
  for (int64_t i = 0; i < tt::numel(s); ++i) {
    int64_t rem = i, o = 0, ostride = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t idx = rem % s[size_t(d)];
      rem /= s[size_t(d)];
      if (!red[size_t(d)]) {
        o += idx * ostride;
        ostride *= s[size_t(d)];
      }
    }
    blocks[size_t(o)].push_back(v[size_t(i)]);
  }
  for (const auto& b : blocks) {
    r.vals.push_back(fn(b));
    double a = 0;
    for (double x : b) a += std::fabs(x);
    r.abs_sum.push_back(a);
  }
  return r;
}

double ref_sum(const std::vector<double>& b) {
  double s = 0;
  for (double x : b) s += x;
  return s;
}
double ref_mean(const std::vector<double>& b) { return b.empty() ? std::nan("") : ref_sum(b) / double(b.size()); }
double ref_max(const std::vector<double>& b) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : b) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
double ref_min(const std::vector<double>& b) {
  double m = std::numeric_limits<double>::infinity();
  for (double x : b) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}
double ref_argmax(const std::vector<double>& b) {
  size_t bi = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (std::isnan(b[i])) return double(i);
    if (b[i] > b[bi]) bi = i;
  }
  return double(bi);
}

struct Case {
  Shape shape;
  std::vector<int64_t> dims;
};
const std::vector<Case>& cases() {
  static const std::vector<Case> v = {{{0}, {}},
                                      {{1}, {}},
                                      {{7}, {}},
                                      {{1031}, {0}},
                                      {{3, 5, 7}, {}},
                                      {{3, 5, 7}, {0}},
                                      {{3, 5, 7}, {1}},
                                      {{3, 5, 7}, {2}},
                                      {{3, 5, 7}, {-1}},
                                      {{3, 5, 7}, {0, 2}},
                                      {{3, 5, 7}, {1, 2}},
                                      {{13, 1031}, {0}},
                                      {{13, 1031}, {1}},
                                      {{300, 700}, {0}},
                                      {{2, 0, 3}, {1}},
                                      {{4, 1, 6}, {1}},
                                      {{2, 3, 4, 5}, {1, 3}},
                                      {{70000}, {}}};
  return v;
}

TEST(CpuReduce, SumMeanAmaxAminAllDtypes) {
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    std::mt19937 rng(100 + unsigned(dt));
    for (const Case& c : cases()) {
      for (Layout l : {Layout::Contiguous, Layout::Transposed, Layout::Strided}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str(c.shape) + " dims " + tt::str(c.dims) +
                       (keepdim ? " keepdim " : " ") + tt::layout_name(l));
          Tensor a = tt::random_tensor(c.shape, dt, rng, Kind::Any, l);
          const auto av = tt::values(a);
          const tsr_dtype_t sum_dt = tsr::is_floating(dt) ? dt : TSR_I64;
          {
            RefOut s = reduce_ref(av, c.shape, c.dims, keepdim, ref_sum);
            tt::expect_close(tsr::sum(a, c.dims, keepdim), s.vals, sum_dt, s.shape, 0, &s.abs_sum);
          }
          if (tsr::is_floating(dt)) {
            RefOut m = reduce_ref(av, c.shape, c.dims, keepdim, ref_mean);
            std::vector<double> scale(m.abs_sum.size());
            for (size_t i = 0; i < scale.size(); ++i) {
              const int64_t cnt = tt::numel(c.shape) / std::max<int64_t>(1, int64_t(m.vals.size()));
              scale[i] = m.abs_sum[i] / double(std::max<int64_t>(1, cnt));
            }
            tt::expect_close(tsr::mean(a, c.dims, keepdim), m.vals, dt, m.shape, 0, &scale);
          }
          if (tt::numel(c.shape) > 0) {
            RefOut mx = reduce_ref(av, c.shape, c.dims, keepdim, ref_max);
            tt::expect_close(tsr::amax(a, c.dims, keepdim), mx.vals, dt, mx.shape);
            RefOut mn = reduce_ref(av, c.shape, c.dims, keepdim, ref_min);
            tt::expect_close(tsr::amin(a, c.dims, keepdim), mn.vals, dt, mn.shape);
          }
        }
      }
    }
  }
}

TEST(CpuReduce, Argmax) {
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    std::mt19937 rng(200 + unsigned(dt));
    for (const Shape& s : {Shape{1}, Shape{7}, Shape{1031}, Shape{3, 5, 7}, Shape{13, 1031}, Shape{4, 1, 6}}) {
      for (Layout l : {Layout::Contiguous, Layout::Transposed}) {
        Tensor a = tt::random_tensor(s, dt, rng, Kind::SmallInt, l);  // ties: the first maximum wins
        const auto av = tt::values(a);
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str(s) + " " + tt::layout_name(l));
        RefOut all = reduce_ref(av, s, {}, false, ref_argmax);
        tt::expect_close(tsr::argmax(a), all.vals, TSR_I64, {});
        for (int64_t d = 0; d < int64_t(s.size()); ++d)
          for (bool keepdim : {false, true}) {
            RefOut r = reduce_ref(av, s, {d}, keepdim, ref_argmax);
            tt::expect_close(tsr::argmax(a, d, keepdim), r.vals, TSR_I64, r.shape);
          }
      }
    }
  }
}

TEST(CpuReduce, NaNPropagationAndEmpty) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (tsr_dtype_t dt : tt::float_dtypes()) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor a = tt::make({1, 5, nan, 5, 2, 9, 3, 3, 3}, {3, 3}, dt);
    tt::expect_close(tsr::amax(a), {nan}, dt, {});
    tt::expect_close(tsr::amax(a, {1}), {nan, 9, 3}, dt, {3});
    tt::expect_close(tsr::amin(a, {0}), {1, 2, nan}, dt, {3});
    tt::expect_close(tsr::argmax(a), {2}, TSR_I64, {});
    tt::expect_close(tsr::argmax(a, int64_t(1)), {2, 2, 0}, TSR_I64, {3});
    tt::expect_close(tsr::sum(a, {0}), {9, 10, nan}, dt, {3});
    Tensor e = tsr::zeros({2, 0}, dt);
    tt::expect_close(tsr::sum(e, {1}), {0, 0}, dt, {2});
    tt::expect_close(tsr::mean(e, {1}), {nan, nan}, dt, {2});
    tt::expect_close(tsr::sum(e), {0}, dt, {});
  }
  EXPECT_EQ(tsr::sum(tsr::zeros({0}, TSR_I32)).to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(CpuReduce, LargeSumIsAccurate) {
  tsr::manual_seed(99);
  Tensor x = tsr::rand({int64_t(1) << 24}, TSR_F32);  // 16M in [0, 1)
  const auto xv = x.to_vector<float>();
  double ref = 0;
  for (float v : xv) ref += v;
  const double got = tsr::sum(x).item<float>();
  EXPECT_NEAR(got, ref, 2e-7 * ref);  // f32 rounding of the result only
  EXPECT_NEAR(tsr::mean(x).item<float>(), ref / double(xv.size()), 1e-7);
  // Column sums of a tall matrix (reduced dim strided) and row sums.
  Tensor m = x.view({4096, 4096});
  const auto cols = tsr::sum(m, {0}).to_vector<float>(), rows = tsr::sum(m, {1}).to_vector<float>();
  for (int64_t j = 0; j < 4096; j += 511) {
    double c = 0, r = 0;
    for (int64_t i = 0; i < 4096; ++i) {
      c += xv[size_t(i * 4096 + j)];
      r += xv[size_t(j * 4096 + i)];
    }
    EXPECT_NEAR(cols[size_t(j)], c, 1e-6 * c);
    EXPECT_NEAR(rows[size_t(j)], r, 1e-6 * r);
  }
  // f16 input: accumulated in f32, not in f16.
  Tensor h = tsr::full({100000}, 0.1, TSR_F16);
  EXPECT_NEAR(tsr::sum(h).item<float>(), 100000 * double(float(tsr::Half(0.1f))), 64.0);
  EXPECT_NEAR(tsr::sum(h.to(TSR_F32)).item<float>(), 100000 * double(float(tsr::Half(0.1f))), 0.1);
}

TEST(CpuReduce, SumDtypeArgument) {
  Tensor a = tsr::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  tt::expect_close(tsr::sum(a, {1}, false, TSR_F64), {3, 7}, TSR_F64, {2});
  tt::expect_close(tsr::sum(tsr::from_bools({true, false, true}, {3})), {2}, TSR_I64, {});
}

TEST(CpuReduce, ErrorsNameTheOp) {
  Tensor a = tsr::zeros({3, 4});
  tt::expect_error_naming("sum", [&] { tsr::sum(a, {2}); });
  tt::expect_error_naming("mean", [&] { tsr::mean(a, {-3}); });
  tt::expect_error_naming("amax", [&] { tsr::amax(tsr::zeros({0})); });
  tt::expect_error_naming("argmax", [&] { tsr::argmax(a, int64_t(5)); });
}

}  // namespace
