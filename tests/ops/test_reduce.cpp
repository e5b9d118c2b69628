// Reduce family: reductions over dim lists, statistics, norms, scans, sorting and order
// statistics, checked against float64 references computed here with std:: math.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "op_test.hpp"

namespace tsr::optest {
namespace {

using Vals = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Row-major strides of a shape.
Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Reference reduction: fn over the elements of every slice spanned by `dims` (empty = all).
struct Ref {
  Vals v;
  Shape shape;
};
Ref ref_reduce(const Vals& x, const Shape& shape, Shape dims, bool keepdim,
               const std::function<double(const Vals&)>& fn) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (dims.empty())
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  for (auto& d : dims) d = d < 0 ? d + nd : d;
  std::vector<bool> red(shape.size(), false);
  for (auto d : dims) red[static_cast<size_t>(d)] = true;
  Shape out_full, out_shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    out_full.push_back(red[d] ? 1 : shape[d]);
    if (!red[d] || keepdim) out_shape.push_back(red[d] ? 1 : shape[d]);
  }
  std::vector<Vals> groups(static_cast<size_t>(numel_of(out_full)));
  Shape st = strides_of(out_full);
  for (int64_t i = 0; i < numel_of(shape); ++i) {
    int64_t rem = i, o = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (!red[d]) o += c * st[d];
    }
    groups[static_cast<size_t>(o)].push_back(x[static_cast<size_t>(i)]);
  }
  Ref r;
  for (auto& g : groups) r.v.push_back(fn(g));
  r.shape = out_shape;
  return r;
}

// Reference along one dim: fn maps each slice to a slice of `out_len` values (-1: same length).
Ref ref_along(const Vals& x, const Shape& shape, int64_t dim, const std::function<Vals(const Vals&)>& fn,
              int64_t out_len = -1) {
  if (shape.empty()) return {fn(x), {}};
  dim = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
  const int64_t n = shape[static_cast<size_t>(dim)];
  const int64_t m = out_len < 0 ? n : out_len;
  Shape out_shape = shape;
  out_shape[static_cast<size_t>(dim)] = m;
  Shape st = strides_of(shape), ost = strides_of(out_shape);
  Ref r{Vals(static_cast<size_t>(numel_of(out_shape))), out_shape};
  Shape outer_shape = shape;
  outer_shape[static_cast<size_t>(dim)] = 1;
  Shape ist = strides_of(outer_shape);
  for (int64_t o = 0; o < numel_of(outer_shape); ++o) {
    int64_t rem = o, base = 0, obase = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t c = rem % outer_shape[d];
      rem /= outer_shape[d];
      base += c * st[d];
      obase += c * ost[d];
    }
    (void)ist;
    Vals slice;
    for (int64_t j = 0; j < n; ++j) slice.push_back(x[static_cast<size_t>(base + j * st[static_cast<size_t>(dim)])]);
    Vals res = fn(slice);
    for (int64_t j = 0; j < m; ++j)
      r.v[static_cast<size_t>(obase + j * ost[static_cast<size_t>(dim)])] = res[static_cast<size_t>(j)];
  }
  return r;
}

::testing::AssertionResult matches(const Tensor& t, const Ref& r, double rtol = -1, double atol = -1) {
  auto tol = default_tol(t.dtype());
  return close(t, r.v, r.shape, rtol < 0 ? tol.first : rtol, atol < 0 ? tol.second : atol);
}

double vsum(const Vals& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double vprod(const Vals& v) {
  double p = 1;
  for (double x : v) p *= x;
  return p;
}
double vmean(const Vals& v) { return v.empty() ? kNaN : vsum(v) / double(v.size()); }
double vvar(const Vals& v, double corr) {
  double m = vmean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / std::max(0.0, double(v.size()) - corr);
}
// NaN as the largest value.
bool nan_less(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

// ---- foundation ops: gradients and precision --------------------------------------------------

TEST(ReduceOps, SumMeanBackward) {
  Tensor x = randu({3, 4, 5}, 1);
  for (Shape dims : {Shape{}, Shape{1}, Shape{0, -1}}) {
    for (bool keepdim : {false, true}) {
      EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return tsr::sum(in[0], dims, keepdim); }, {x}));
      EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return tsr::mean(in[0], dims, keepdim); }, {x}));
    }
  }
  // the gradient of a float32 sum arrives as float32
  Tensor f = randu({4}, 2, -1, 1, TSR_F32).requires_grad_(true);
  tsr::sum(f).backward();
  EXPECT_EQ(f.grad().dtype(), TSR_F32);
  EXPECT_TRUE(close(f.grad(), Vals(4, 1.0), {4}, 0, 0));
}

TEST(ReduceOps, AmaxAminBackwardSplitsTies) {
  Tensor x = randu({4, 6}, 3);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::amax(in[0], {1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::amin(in[0], {0}, true); }, {x}));
  Tensor t = from_vector<double>({1, 3, 3, 2, 3, 0}, {6}).requires_grad_(true);
  tsr::amax(t).backward();
  EXPECT_TRUE(close(t.grad(), Vals{0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3, 0}, {6}, 1e-12, 1e-12));
  Tensor u = from_vector<double>({1, -2, -2}, {3}).requires_grad_(true);
  tsr::amin(u).backward();
  EXPECT_TRUE(close(u.grad(), Vals{0, 0.5, 0.5}, {3}, 1e-12, 1e-12));
}

TEST(ReduceOps, StridedFloatSumKeepsPrecision) {
  // 2^20 values around 1 read with a stride: a single float accumulator drifts far beyond 1e-5.
  Tensor base = randu({1 << 21}, 4, 0.5, 1.5, TSR_F32);
  Tensor strided = base.slice(0, 0, 1 << 21, 2);
  Vals v = values(strided);
  EXPECT_TRUE(close(tsr::sum(strided), Vals{vsum(v)}, {}, 1e-6, 0));
  Tensor m = randu({1000, 301}, 5, 0.5, 1.5, TSR_F32).t();  // reduce over the strided dim
  Ref r = ref_reduce(values(m), m.sizes(), {1}, false, vsum);
  EXPECT_TRUE(matches(tsr::sum(m, {1}), r, 1e-6, 0));
}

TEST(ReduceOps, DimListRules) {
  Tensor x = randu({2, 3}, 6);
  EXPECT_TRUE(throws_with([&] { tsr::sum(x, {1, -1}); }, {"sum", "dim 1", "multiple"}));
  EXPECT_TRUE(throws_with([&] { tsr::prod(x, {0, 0}); }, {"prod", "multiple"}));
  EXPECT_TRUE(throws_with([&] { tsr::var(x, {2}); }, {"var", "dim 2", "out of range"}));
  EXPECT_TRUE(throws_with([&] { tsr::amax(tsr::zeros({0, 3})); }, {"amax", "[0, 3]"}));
  EXPECT_TRUE(throws_with([&] { tsr::max(tsr::zeros({2, 0})); }, {"max", "[2, 0]"}));
  EXPECT_TRUE(throws_with([&] { tsr::max_dim(tsr::zeros({2, 0}), 1); }, {"max_dim", "[2, 0]"}));
  // empty reductions with an identity
  EXPECT_TRUE(close(tsr::sum(tsr::zeros({0, 3}), {0}), Vals(3, 0.0), {3}, 0, 0));
  EXPECT_TRUE(close(tsr::prod(tsr::zeros({0, 3}), {0}), Vals(3, 1.0), {3}, 0, 0));
  EXPECT_TRUE(close(tsr::all(tsr::zeros({3, 0}), {1}), Vals(3, 1.0), {3}, 0, 0));
  EXPECT_TRUE(close(tsr::any(tsr::zeros({3, 0}), {1}), Vals(3, 0.0), {3}, 0, 0));
  EXPECT_TRUE(close(tsr::logsumexp(tsr::zeros({3, 0}), {1}), Vals(3, -kInf), {3}, 0, 0));
  EXPECT_EQ(tsr::sum(tsr::zeros({0}), {}, true).sizes(), Shape{1});
}

// ---- prod --------------------------------------------------------------------------------------

TEST(ReduceOps, Prod) {
  for (Shape shape : {Shape{5}, Shape{3, 7}, Shape{2, 3, 4}, Shape{1, 0, 3}}) {
    Tensor x = randu(shape, 7, 0.5, 1.5);
    Vals v = values(x);
    EXPECT_TRUE(matches(tsr::prod(x), ref_reduce(v, shape, {}, false, vprod)));
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      for (bool keepdim : {false, true})
        EXPECT_TRUE(matches(tsr::prod(noncontig(x), {d}, keepdim), ref_reduce(v, shape, {d}, keepdim, vprod)));
    for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16})
      EXPECT_TRUE(matches(tsr::prod(x.to(dt), {-1}), ref_reduce(values(x.to(dt)), shape, {-1}, false, vprod)));
  }
  Tensor i = randint({4, 5}, 8, -3, 4, TSR_I32);
  Tensor pi = tsr::prod(i, {1});
  EXPECT_EQ(pi.dtype(), TSR_I64);
  EXPECT_TRUE(matches(pi, ref_reduce(values(i), {4, 5}, {1}, false, vprod)));
  EXPECT_EQ(tsr::prod(randmask({3}, 9)).dtype(), TSR_I64);
  EXPECT_EQ(tsr::prod(i, {}, false, TSR_F64).dtype(), TSR_F64);
}

TEST(ReduceOps, ProdGradWithZeros) {
  Tensor x = randu({3, 5}, 10, 0.5, 1.5);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::prod(in[0], {1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::prod(in[0], {}, true); }, {x}));
  // one zero: only it gets the product of the others; two zeros: nothing.
  Tensor z = from_vector<double>({2, 0, 3, 0, 0, 5, 1, 2, 4}, {3, 3});
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::prod(in[0], {1}); }, {z}));
  Tensor zl = z.clone().requires_grad_(true);
  tsr::sum(tsr::prod(zl, {1})).backward();
  EXPECT_TRUE(close(zl.grad(), Vals{0, 6, 0, 0, 0, 0, 8, 4, 2}, {3, 3}, 1e-12, 1e-12));
}

// ---- var / std ---------------------------------------------------------------------------------

TEST(ReduceOps, VarStd) {
  Shape shape{4, 7, 3};
  Tensor x = randu(shape, 11);
  Vals v = values(x);
  for (double corr : {0.0, 1.0, 2.0}) {
    for (Shape dims : {Shape{}, Shape{1}, Shape{0, 2}}) {
      for (bool keepdim : {false, true}) {
        auto fv = [corr](const Vals& s) { return vvar(s, corr); };
        auto fs = [corr](const Vals& s) { return std::sqrt(vvar(s, corr)); };
        EXPECT_TRUE(matches(tsr::var(noncontig(x), dims, corr, keepdim), ref_reduce(v, shape, dims, keepdim, fv)));
        EXPECT_TRUE(matches(tsr::std(x, dims, corr, keepdim), ref_reduce(v, shape, dims, keepdim, fs)));
        auto vm = tsr::var_mean(x, dims, corr, keepdim);
        EXPECT_TRUE(matches(vm.first, ref_reduce(v, shape, dims, keepdim, fv)));
        EXPECT_TRUE(matches(vm.second, ref_reduce(v, shape, dims, keepdim, vmean)));
        auto sm = tsr::std_mean(x.to(TSR_F32), dims, corr, keepdim);
        EXPECT_TRUE(matches(sm.first, ref_reduce(v, shape, dims, keepdim, fs), 1e-5, 1e-5));
        EXPECT_TRUE(matches(sm.second, ref_reduce(v, shape, dims, keepdim, vmean), 1e-5, 1e-5));
      }
    }
  }
  EXPECT_TRUE(matches(tsr::var(x.to(TSR_BF16), {1}),
                      ref_reduce(values(x.to(TSR_BF16)), shape, {1}, false, [](const Vals& s) { return vvar(s, 1); }),
                      5e-2, 5e-2));
  EXPECT_TRUE(throws_with([] { tsr::var(randint({3}, 1, 0, 5)); }, {"var", "int64"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::var(in[0], {1}); }, {randu({3, 4}, 12)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::std(in[0], {}, 0); }, {randu({3, 4}, 13)}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return tsr::std_mean(in[0], {0}).first; }, {randu({3, 4}, 14)}));
}

// A row with zero spread: std is 0 there and its gradient 0 (PyTorch masks grad / (2 std) where
// std == 0), not 0/0 = NaN; the other rows keep the usual gradient.
TEST(ReduceOps, StdGradientOfAConstantRowIsZero) {
  Vals xv{1.5, 1.5, 1.5, 1.5, -0.5, 2.0, 0.25, 1.0};
  Vals ref{0, 0, 0, 0};  // d std / dx_i = (x_i - mean) / ((n - 1) std) for the second row
  {
    Vals r(xv.begin() + 4, xv.end());
    double m = vmean(r), sd = std::sqrt(vvar(r, 1));
    for (double x : r) ref.push_back((x - m) / (3 * sd));
  }
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    Tensor x = from_vector<double>(xv, {2, 4}).to(dt).requires_grad_(true);
    tsr::sum(tsr::std(x, {1})).backward();
    EXPECT_TRUE(close(x.grad(), ref, {2, 4}, 1e-5, 1e-6)) << dtype_name(dt);
    Tensor y = from_vector<double>(xv, {2, 4}).to(dt).requires_grad_(true);
    tsr::sum(tsr::std_mean(y, {1}).first).backward();
    EXPECT_TRUE(close(y.grad(), ref, {2, 4}, 1e-5, 1e-6)) << dtype_name(dt);
  }
  Tensor c = tsr::full({3}, 2.0, TSR_F64).requires_grad_(true);  // every element equal
  tsr::std(c).backward();
  EXPECT_TRUE(close(c.grad(), Vals{0, 0, 0}, {3}, 0, 0));
}

// max(), min() and median() without dim split the gradient evenly among tied elements, and
// among the NaNs when the result is NaN (PyTorch's evenly_distribute_backward).
TEST(ReduceOps, FullReductionGradientsSplitTies) {
  Tensor m = from_vector<double>({1, 2, 2, 3, 2, 0}, {2, 3}).requires_grad_(true);
  tsr::median(m).backward();
  EXPECT_TRUE(close(m.grad(), Vals{0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3, 0}, {2, 3}, 1e-12, 1e-12));
  Tensor a = from_vector<double>({1, 3, 2, 3, 0, 3}, {2, 3}).requires_grad_(true);
  (tsr::max(a) * 6.0).backward();
  EXPECT_TRUE(close(a.grad(), Vals{0, 2, 0, 2, 0, 2}, {2, 3}, 1e-12, 1e-12));
  Tensor b = from_vector<double>({-1, 2, -1, 0, 4}, {5}).requires_grad_(true);
  tsr::min(b).backward();
  EXPECT_TRUE(close(b.grad(), Vals{0.5, 0, 0.5, 0, 0}, {5}, 1e-12, 1e-12));
  Tensor n = from_vector<double>({1, kNaN, 5, kNaN}, {4}).requires_grad_(true);
  tsr::max(n).backward();
  EXPECT_TRUE(close(n.grad(), Vals{0, 0.5, 0, 0.5}, {4}, 0, 0));
  Tensor f = from_vector<double>({4, 4, 1}, {3}).to(TSR_F32).requires_grad_(true);
  tsr::median(f).backward();
  EXPECT_TRUE(close(f.grad(), Vals{0.5, 0.5, 0}, {3}, 0, 0));
}

// sum(..., dtype=bool) sums in bool, where true + true stays true: any() of the nonzeros.
TEST(ReduceOps, SumIntoBoolIsAnyNonzero) {
  Tensor x = from_vector<double>({0, 0.5, 0, 0, 0, 0, -3, 0, 0}, {3, 3});
  Tensor all = tsr::sum(x, {}, false, TSR_BOOL);
  EXPECT_EQ(all.dtype(), TSR_BOOL);
  EXPECT_TRUE(close(all, Vals{1}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::sum(x, {1}, false, TSR_BOOL), Vals{1, 0, 1}, {3}, 0, 0));
  EXPECT_TRUE(close(tsr::sum(noncontig(x), {0}, true, TSR_BOOL), Vals{1, 1, 0}, {1, 3}, 0, 0));
  EXPECT_TRUE(close(tsr::sum(randint({4, 2}, 5, 0, 1), {0}, false, TSR_BOOL), Vals{0, 0}, {2}, 0, 0));
  EXPECT_TRUE(close(tsr::sum(tsr::zeros({0, 3}), {0}, false, TSR_BOOL), Vals{0, 0, 0}, {3}, 0, 0));
  static const Op sum_op("sum");
  Tensor out = tsr::zeros({3}, TSR_BOOL);
  call_out(sum_op, out, {x, std::vector<int64_t>{1}, false, TSR_BOOL});
  EXPECT_TRUE(close(out, Vals{1, 0, 1}, {3}, 0, 0));
}

// ---- norm --------------------------------------------------------------------------------------

TEST(ReduceOps, Norm) {
  Shape shape{3, 6};
  Tensor x = randu(shape, 15);
  Vals v = values(x);
  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5}) {
    auto f = [p](const Vals& s) {
      if (std::isinf(p)) {
        double r = p > 0 ? 0 : kInf;
        for (double a : s) r = p > 0 ? std::max(r, std::fabs(a)) : std::min(r, std::fabs(a));
        return r;
      }
      if (p == 0) return double(std::count_if(s.begin(), s.end(), [](double a) { return a != 0; }));
      double acc = 0;
      for (double a : s) acc += std::pow(std::fabs(a), p);
      return std::pow(acc, 1 / p);
    };
    for (Shape dims : {Shape{}, Shape{1}})
      for (bool keepdim : {false, true}) {
        EXPECT_TRUE(matches(tsr::norm(x, p, dims, keepdim), ref_reduce(v, shape, dims, keepdim, f))) << "p=" << p;
        EXPECT_TRUE(matches(tsr::norm(noncontig(x).to(TSR_F32), p, dims, keepdim),
                            ref_reduce(v, shape, dims, keepdim, f), 1e-5, 1e-5))
            << "p=" << p;
      }
    if (p != 0) {
      EXPECT_TRUE(
          gradcheck([p](const std::vector<Tensor>& in) { return tsr::norm(in[0], p, {1}); }, {rand_away(shape, 16)}))
          << "p=" << p;
    }
  }
  // at zero: a zero subgradient, not NaN
  for (double p : {2.0, 3.0}) {
    Tensor z = tsr::zeros({4}, TSR_F64).requires_grad_(true);
    tsr::norm(z, p).backward();
    EXPECT_TRUE(close(z.grad(), Vals(4, 0.0), {4}, 0, 0)) << "p=" << p;
  }
  EXPECT_TRUE(throws_with([] { tsr::norm(randint({3}, 1, 0, 5)); }, {"norm", "int64"}));
}

// ---- logsumexp ---------------------------------------------------------------------------------

TEST(ReduceOps, Logsumexp) {
  Shape shape{4, 5};
  Tensor x = randu(shape, 17, -30, 30);
  auto f = [](const Vals& s) {
    double m = -kInf;
    for (double a : s) m = std::max(m, a);
    if (std::isinf(m)) m = 0;
    double acc = 0;
    for (double a : s) acc += std::exp(a - m);
    return std::log(acc) + m;
  };
  for (Shape dims : {Shape{}, Shape{0}, Shape{1}})
    for (bool keepdim : {false, true}) {
      EXPECT_TRUE(matches(tsr::logsumexp(x, dims, keepdim), ref_reduce(values(x), shape, dims, keepdim, f)));
      EXPECT_TRUE(matches(tsr::logsumexp(noncontig(x.to(TSR_F32)), dims, keepdim),
                          ref_reduce(values(x), shape, dims, keepdim, f), 1e-5, 1e-5));
    }
  Tensor big = from_vector<double>({1000, 1000, -kInf, -kInf, kInf, 1}, {3, 2});
  EXPECT_TRUE(close(tsr::logsumexp(big, {1}), Vals{1000 + std::log(2.0), -kInf, kInf}, {3}, 1e-12, 1e-12));
  Tensor li = tsr::logsumexp(randint({3}, 18, 0, 4), {0});
  EXPECT_EQ(li.dtype(), TSR_F32);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::logsumexp(in[0], {1}); }, {randu({3, 4}, 19)}));
}

// Over the last dim alone logsumexp is one fused kernel (_logsumexp_rows) where the device has
// it: every float dtype, rows of 1 to 1000 elements (past the kernels' vector lanes and blocks),
// no rows, strided inputs, and the special rows (NaN, +inf, all -inf) against float64.
TEST(ReduceOps, LogsumexpOverTheLastDimIsOneFusedPass) {
  auto lse = [](const Vals& s) {
    double m = -kInf;
    bool nan = false;
    for (double a : s) {
      nan = nan || std::isnan(a);
      m = std::max(m, a);
    }
    if (nan) return std::numeric_limits<double>::quiet_NaN();
    if (std::isinf(m)) return m;
    double acc = 0;
    for (double a : s) acc += std::exp(a - m);
    return std::log(acc) + m;
  };
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16})
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{3, 1}, Shape{4, 33}, Shape{5, 70}, Shape{2, 3, 300},
                               Shape{3, 1000}, Shape{0, 5}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + std::to_string(shape.back()));
      Vals v = values(randu(shape, 40, -20, 20, dt));
      // Row 0: a NaN, row 1: +inf, row 2: all -inf; row 3: +inf and a NaN, row 4: -inf and a NaN
      // (the kernel's max skips NaNs: these rows reach its NaN check for infinite maxima).
      const size_t n = static_cast<size_t>(shape.back());
      if (shape.size() == 2 && shape[0] >= 3 && shape[1] >= 2) {
        v[1] = std::numeric_limits<double>::quiet_NaN();
        v[n] = kInf;
        for (size_t j = 0; j < n; ++j) v[2 * n + j] = -kInf;
      }
      if (shape.size() == 2 && shape[0] >= 5) {
        v[3 * n] = kInf;
        v[3 * n + n - 1] = std::numeric_limits<double>::quiet_NaN();
        for (size_t j = 0; j < n; ++j) v[4 * n + j] = -kInf;
        v[4 * n + n / 2] = std::numeric_limits<double>::quiet_NaN();
      }
      Tensor x = from_vector(v, shape).to(dt);
      const int64_t last = static_cast<int64_t>(shape.size()) - 1;
      for (bool keepdim : {false, true}) {
        const Ref ref = ref_reduce(v, shape, {last}, keepdim, lse);
        EXPECT_TRUE(matches(tsr::logsumexp(x, {-1}, keepdim), ref));
        EXPECT_TRUE(matches(tsr::logsumexp(noncontig(x), {last}, keepdim), ref));
      }
    }
  // The kernel is what runs: no exp, sum or log kernels are looked up.
  Tensor x = randu({8, 64}, 41, -5, 5, TSR_F32);
  Lookups l = trace_lookups([&] { tsr::logsumexp(x, {1}); });
  EXPECT_EQ(l.count("_logsumexp_rows"), 1);
  EXPECT_EQ(l.count("exp") + l.count("sum") + l.count("log"), 0);
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return tsr::logsumexp(in[0], {-1}, true); }, {randu({2, 3, 5}, 42)}));
  EXPECT_TRUE(throws_with([] { tsr::call("_logsumexp_rows", {tsr::zeros({3, 0})}); }, {"_logsumexp_rows", "last dim"}));
}

// ---- all / any / count_nonzero / nansum / nanmean ----------------------------------------------

TEST(ReduceOps, AllAnyCountNonzero) {
  Shape shape{4, 6};
  Tensor m = randmask(shape, 20, 0.7);
  Tensor f = tsr::where(m, randu(shape, 21), tsr::zeros(shape, TSR_F64));
  auto fall = [](const Vals& s) { return double(std::all_of(s.begin(), s.end(), [](double a) { return a != 0; })); };
  auto fany = [](const Vals& s) { return double(std::any_of(s.begin(), s.end(), [](double a) { return a != 0; })); };
  auto fcnt = [](const Vals& s) { return double(std::count_if(s.begin(), s.end(), [](double a) { return a != 0; })); };
  for (const Tensor& t : {m, f, f.to(TSR_F16), f.to(TSR_I32), noncontig(f)})
    for (Shape dims : {Shape{}, Shape{1}, Shape{0}})
      for (bool keepdim : {false, true}) {
        Tensor a = tsr::all(t, dims, keepdim), b = tsr::any(t, dims, keepdim);
        EXPECT_EQ(a.dtype(), TSR_BOOL);
        EXPECT_TRUE(matches(a, ref_reduce(values(t), shape, dims, keepdim, fall)));
        EXPECT_TRUE(matches(b, ref_reduce(values(t), shape, dims, keepdim, fany)));
        Tensor c = tsr::count_nonzero(t, dims);
        EXPECT_EQ(c.dtype(), TSR_I64);
        EXPECT_TRUE(matches(c, ref_reduce(values(t), shape, dims, false, fcnt)));
      }
  EXPECT_TRUE(close(tsr::all(from_vector<double>({kNaN, 1}, {2})), Vals{1}, {}, 0, 0));
}

TEST(ReduceOps, NansumNanmean) {
  Shape shape{3, 5};
  Tensor x = tsr::where(randmask(shape, 22, 0.3), tsr::full(shape, kNaN, TSR_F64), randu(shape, 23));
  auto fs = [](const Vals& s) {
    double a = 0;
    for (double v : s) a += std::isnan(v) ? 0 : v;
    return a;
  };
  auto fm = [&](const Vals& s) {
    double n = double(std::count_if(s.begin(), s.end(), [](double v) { return !std::isnan(v); }));
    return fs(s) / n;
  };
  for (Shape dims : {Shape{}, Shape{1}})
    for (bool keepdim : {false, true}) {
      EXPECT_TRUE(matches(tsr::nansum(x, dims, keepdim), ref_reduce(values(x), shape, dims, keepdim, fs)));
      EXPECT_TRUE(matches(tsr::nanmean(noncontig(x), dims, keepdim), ref_reduce(values(x), shape, dims, keepdim, fm)));
    }
  Tensor i = randint(shape, 24, -5, 5, TSR_I16);
  EXPECT_EQ(tsr::nansum(i).dtype(), TSR_I64);
  EXPECT_TRUE(throws_with([&] { tsr::nanmean(i); }, {"nanmean", "int16"}));
  Tensor clean = randu(shape, 25);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::nansum(in[0], {1}); }, {clean}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::nanmean(in[0], {0}); }, {clean}));
}

// ---- max / min ---------------------------------------------------------------------------------

TEST(ReduceOps, MaxMinDim) {
  Shape shape{4, 7, 3};
  Tensor x = randu(shape, 26);
  Vals v = values(x);
  for (int64_t d : {0, 1, 2, -1}) {
    for (bool keepdim : {false, true}) {
      for (bool is_max : {true, false}) {
        auto r = is_max ? tsr::max_dim(noncontig(x), d, keepdim) : tsr::min_dim(noncontig(x), d, keepdim);
        auto fv = [is_max](const Vals& s) {
          return is_max ? *std::max_element(s.begin(), s.end()) : *std::min_element(s.begin(), s.end());
        };
        auto fi = [is_max](const Vals& s) {
          return double((is_max ? std::max_element(s.begin(), s.end()) : std::min_element(s.begin(), s.end())) -
                        s.begin());
        };
        EXPECT_TRUE(matches(r.first, ref_reduce(v, shape, {d}, keepdim, fv)));
        EXPECT_TRUE(matches(r.second, ref_reduce(v, shape, {d}, keepdim, fi)));
        EXPECT_EQ(r.second.dtype(), TSR_I64);
        if (!is_max) {
          EXPECT_TRUE(matches(tsr::argmin(x, d, keepdim), ref_reduce(v, shape, {d}, keepdim, fi)));
        }
      }
    }
  }
  EXPECT_TRUE(close(tsr::max(x), Vals{*std::max_element(v.begin(), v.end())}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::min(x), Vals{*std::min_element(v.begin(), v.end())}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::argmin(x), Vals{double(std::min_element(v.begin(), v.end()) - v.begin())}, {}, 0, 0));
  EXPECT_EQ(tsr::argmin(x, std::nullopt, true).sizes(), (Shape{1, 1, 1}));
  // ties: first index; NaN wins with its first index
  Tensor t = from_vector<double>({1, 3, 3, kNaN, 0, kNaN}, {6});
  EXPECT_TRUE(close(tsr::max_dim(t, 0).second, Vals{3}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::min_dim(t, 0).first, Vals{kNaN}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::max_dim(t.slice(0, 0, 3), 0).second, Vals{1}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::max(t), Vals{kNaN}, {}, 0, 0));
  // every dtype
  for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16, TSR_I8, TSR_U8, TSR_I32, TSR_I64, TSR_BOOL}) {
    Tensor xi = dt == TSR_BOOL ? randmask({3, 5}, 27) : randint({3, 5}, 27, dt == TSR_U8 ? 0 : -50, 50, dt);
    auto r = tsr::min_dim(xi, 1);
    auto fi = [](const Vals& s) { return double(std::min_element(s.begin(), s.end()) - s.begin()); };
    EXPECT_EQ(r.first.dtype(), dt);
    EXPECT_TRUE(matches(r.second, ref_reduce(values(xi), {3, 5}, {1}, false, fi))) << dtype_name(dt);
    auto mm = tsr::aminmax(xi, 0);
    EXPECT_TRUE(matches(mm.first, ref_reduce(values(xi), {3, 5}, {0}, false,
                                             [](const Vals& s) { return *std::min_element(s.begin(), s.end()); })));
    EXPECT_TRUE(matches(mm.second, ref_reduce(values(xi), {3, 5}, {0}, false,
                                              [](const Vals& s) { return *std::max_element(s.begin(), s.end()); })));
  }
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return tsr::max_dim(in[0], 1).first; }, {randu({3, 5}, 28)}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return tsr::min_dim(in[0], 0, true).first; }, {randu({3, 5}, 29)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::max(in[0]); }, {randu({3, 5}, 30)}));
  // 0-d
  Tensor s = from_vector<double>({2.5}, {}).reshape({});
  EXPECT_TRUE(close(tsr::max_dim(s, 0).first, Vals{2.5}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::max_dim(s, -1, true).second, Vals{0}, {}, 0, 0));
}

// ---- scans -------------------------------------------------------------------------------------

Vals scan(const Vals& s, int kind) {
  Vals r;
  double acc = kind == 0 ? 0 : kind == 1 ? 1 : -kInf;
  for (double x : s) {
    if (kind == 0)
      acc += x;
    else if (kind == 1)
      acc *= x;
    else {
      double m = std::max(acc, x);
      acc = std::isinf(m) && m < 0 ? m : m + std::log(std::exp(acc - m) + std::exp(x - m));
    }
    r.push_back(acc);
  }
  return r;
}

TEST(ReduceOps, CumsumCumprodLogcumsumexp) {
  for (Shape shape : {Shape{7}, Shape{3, 5}, Shape{2, 0, 3}, Shape{2, 3, 4}}) {
    Tensor x = randu(shape, 31, 0.5, 1.5);
    Vals v = values(x);
    for (int64_t d = -1; d < int64_t(shape.size()); ++d) {
      EXPECT_TRUE(
          matches(tsr::cumsum(noncontig(x), d), ref_along(v, shape, d, [](const Vals& s) { return scan(s, 0); })));
      EXPECT_TRUE(matches(tsr::cumprod(x, d), ref_along(v, shape, d, [](const Vals& s) { return scan(s, 1); })));
      EXPECT_TRUE(matches(tsr::logcumsumexp(x, d), ref_along(v, shape, d, [](const Vals& s) { return scan(s, 2); })));
      for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16})
        EXPECT_TRUE(matches(tsr::cumsum(x.to(dt), d),
                            ref_along(values(x.to(dt)), shape, d, [](const Vals& s) { return scan(s, 0); })));
    }
  }
  Tensor i = randint({3, 6}, 32, -4, 5, TSR_I8);
  Tensor ci = tsr::cumsum(i, 1);
  EXPECT_EQ(ci.dtype(), TSR_I64);
  EXPECT_TRUE(matches(ci, ref_along(values(i), {3, 6}, 1, [](const Vals& s) { return scan(s, 0); })));
  EXPECT_TRUE(matches(tsr::cumprod(i, 0), ref_along(values(i), {3, 6}, 0, [](const Vals& s) { return scan(s, 1); })));
  EXPECT_EQ(tsr::cumsum(randmask({4}, 33), 0).dtype(), TSR_I64);
  EXPECT_EQ(tsr::cumsum(i, 0, TSR_F32).dtype(), TSR_F32);
  Tensor li = from_vector<double>({-kInf, -kInf, 3, 1000}, {4});
  EXPECT_TRUE(close(tsr::logcumsumexp(li, 0), Vals{-kInf, -kInf, 3, 1000}, {4}, 1e-12, 0));
  EXPECT_TRUE(throws_with([&] { tsr::logcumsumexp(i, 0); }, {"logcumsumexp", "int8"}));
  EXPECT_TRUE(throws_with([&] { tsr::cumsum(i, 2); }, {"cumsum", "dim 2"}));

  Tensor g = randu({3, 5}, 34);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cumsum(in[0], 1); }, {g}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cumsum(in[0], 0); }, {g}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cumprod(in[0], 1); }, {g}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::logcumsumexp(in[0], 1); }, {g}));
  // zeros: one, two, and at the ends of a slice
  Tensor z = from_vector<double>({2, 0, 3, 0.5, 4, 1.5, 0, 2, 0, 3, 0, 2, 3, 4, 0.5}, {3, 5});
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cumprod(in[0], 1); }, {z}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cumprod(in[0], 0); }, {z}));
}

TEST(ReduceOps, CummaxCummin) {
  Shape shape{3, 6};
  Tensor x = randint(shape, 35, 0, 4).to(TSR_F64);  // many ties
  for (bool is_max : {true, false}) {
    for (int64_t d : {0, 1}) {
      auto r = is_max ? tsr::cummax(noncontig(x), d) : tsr::cummin(noncontig(x), d);
      auto fv = [is_max](const Vals& s) {
        Vals out;
        double b = s[0];
        for (double a : s) {
          b = is_max ? std::max(b, a) : std::min(b, a);
          out.push_back(b);
        }
        return out;
      };
      // ties move the index to the latest occurrence (PyTorch)
      auto fi = [is_max](const Vals& s) {
        Vals out;
        double b = s[0];
        size_t bi = 0;
        for (size_t j = 0; j < s.size(); ++j) {
          if (is_max ? s[j] >= b : s[j] <= b) {
            b = s[j];
            bi = j;
          }
          out.push_back(double(bi));
        }
        return out;
      };
      EXPECT_TRUE(matches(r.first, ref_along(values(x), shape, d, fv)));
      EXPECT_TRUE(matches(r.second, ref_along(values(x), shape, d, fi)));
    }
  }
  Tensor n = from_vector<double>({1, kNaN, 3, kNaN, 0}, {5});
  auto r = tsr::cummax(n, 0);
  EXPECT_TRUE(close(r.first, Vals{1, kNaN, kNaN, kNaN, kNaN}, {5}, 0, 0));
  EXPECT_TRUE(close(r.second, Vals{0, 1, 1, 3, 3}, {5}, 0, 0));
  Tensor xi = randint(shape, 36, -9, 9, TSR_I16);
  EXPECT_EQ(tsr::cummin(xi, 1).first.dtype(), TSR_I16);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cummax(in[0], 1).first; }, {randu(shape, 37)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::cummin(in[0], 0).first; }, {randu(shape, 38)}));
}

// ---- sorting -----------------------------------------------------------------------------------

std::vector<size_t> stable_order(const Vals& s, bool descending) {
  std::vector<size_t> o(s.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(),
                   [&](size_t a, size_t b) { return descending ? nan_less(s[b], s[a]) : nan_less(s[a], s[b]); });
  return o;
}

TEST(ReduceOps, SortArgsort) {
  for (Shape shape : {Shape{9}, Shape{4, 7}, Shape{2, 3, 5}, Shape{3, 0}}) {
    Tensor x = randint(shape, 39, 0, 6).to(TSR_F64);  // ties exercise stability
    Vals v = values(x);
    for (int64_t d = -1; d < int64_t(shape.size()); ++d) {
      for (bool desc : {false, true}) {
        auto fv = [desc](const Vals& s) {
          Vals r;
          for (size_t i : stable_order(s, desc)) r.push_back(s[i]);
          return r;
        };
        auto fi = [desc](const Vals& s) {
          Vals r;
          for (size_t i : stable_order(s, desc)) r.push_back(double(i));
          return r;
        };
        auto r = tsr::sort(noncontig(x), d, desc, true);
        EXPECT_TRUE(matches(r.first, ref_along(v, shape, d, fv)));
        EXPECT_TRUE(matches(r.second, ref_along(v, shape, d, fi)));
        EXPECT_TRUE(matches(tsr::argsort(x, d, desc, true), ref_along(v, shape, d, fi)));
      }
    }
  }
  Tensor n = from_vector<double>({3, kNaN, -1, kInf, kNaN, 0}, {6});
  EXPECT_TRUE(close(tsr::sort(n).first, Vals{-1, 0, 3, kInf, kNaN, kNaN}, {6}, 0, 0));
  EXPECT_TRUE(close(tsr::sort(n, 0, true).second, Vals{1, 4, 3, 0, 5, 2}, {6}, 0, 0));
  for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16, TSR_I8, TSR_U8, TSR_I16, TSR_I32, TSR_I64, TSR_BOOL}) {
    Tensor xi = dt == TSR_BOOL ? randmask({3, 8}, 40) : randint({3, 8}, 40, dt == TSR_U8 ? 0 : -60, 60, dt);
    auto fv = [](const Vals& s) {
      Vals r = s;
      std::sort(r.begin(), r.end());
      return r;
    };
    auto r = tsr::sort(xi, 1);
    EXPECT_EQ(r.first.dtype(), dt);
    EXPECT_TRUE(matches(r.first, ref_along(values(xi), {3, 8}, 1, fv))) << dtype_name(dt);
  }
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::sort(in[0], 1).first; }, {randu({3, 5}, 41)}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return tsr::sort(in[0], 0, true).first; }, {randu({3, 5}, 42)}));
}

TEST(ReduceOps, TopkKthvalue) {
  Shape shape{4, 9};
  Tensor x = randu(shape, 43);
  Vals v = values(x);
  for (int64_t k : {0, 1, 4, 9}) {
    for (bool largest : {true, false}) {
      auto fv = [k, largest](const Vals& s) {
        Vals r;
        auto o = stable_order(s, largest);
        for (int64_t j = 0; j < k; ++j) r.push_back(s[o[size_t(j)]]);
        return r;
      };
      auto fi = [k, largest](const Vals& s) {
        Vals r;
        auto o = stable_order(s, largest);
        for (int64_t j = 0; j < k; ++j) r.push_back(double(o[size_t(j)]));
        return r;
      };
      auto r = tsr::topk(noncontig(x), k, 1, largest);
      EXPECT_TRUE(matches(r.first, ref_along(v, shape, 1, fv, k)));
      EXPECT_TRUE(matches(r.second, ref_along(v, shape, 1, fi, k)));
    }
  }
  for (int64_t k : {1, 3, 4}) {
    for (bool keepdim : {false, true}) {
      auto fv = [k](const Vals& s) { return s[stable_order(s, false)[size_t(k - 1)]]; };
      auto fi = [k](const Vals& s) { return double(stable_order(s, false)[size_t(k - 1)]); };
      auto r = tsr::kthvalue(x, k, 0, keepdim);
      EXPECT_TRUE(matches(r.first, ref_reduce(v, shape, {0}, keepdim, fv)));
      EXPECT_TRUE(matches(r.second, ref_reduce(v, shape, {0}, keepdim, fi)));
    }
  }
  EXPECT_TRUE(throws_with([&] { tsr::topk(x, 10, 1); }, {"topk", "k 10", "size 9"}));
  EXPECT_TRUE(throws_with([&] { tsr::kthvalue(x, 0, 1); }, {"kthvalue", "k 0"}));
  EXPECT_TRUE(throws_with([&] { tsr::kthvalue(x, 5, 0); }, {"kthvalue", "k 5", "size 4"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::topk(in[0], 3, 1).first; }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::kthvalue(in[0], 2, 0).first; }, {x}));
}

TEST(ReduceOps, Median) {
  Shape shape{5, 6};
  Tensor x = randu(shape, 44);
  Vals v = values(x);
  auto fv = [](const Vals& s) { return s[stable_order(s, false)[(s.size() - 1) / 2]]; };
  auto fi = [](const Vals& s) { return double(stable_order(s, false)[(s.size() - 1) / 2]); };
  for (int64_t d : {0, 1})
    for (bool keepdim : {false, true}) {
      auto r = tsr::median_dim(noncontig(x), d, keepdim);
      EXPECT_TRUE(matches(r.first, ref_reduce(v, shape, {d}, keepdim, fv)));
      EXPECT_TRUE(matches(r.second, ref_reduce(v, shape, {d}, keepdim, fi)));
    }
  EXPECT_TRUE(close(tsr::median(x), Vals{fv(v)}, {}, 0, 0));
  Tensor n = from_vector<double>({3, 1, kNaN, 2, kNaN, 0, 5, 4}, {2, 4});
  auto r = tsr::median_dim(n, 1);
  EXPECT_TRUE(close(r.first, Vals{kNaN, kNaN}, {2}, 0, 0));
  EXPECT_TRUE(close(r.second, Vals{2, 0}, {2}, 0, 0));
  EXPECT_TRUE(close(tsr::median(n), Vals{kNaN}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::median(n.slice(1, 0, 2).slice(0, 0, 1)), Vals{1}, {}, 0, 0));
  EXPECT_TRUE(close(tsr::median(randint({7}, 45, 0, 100)), Vals{fv(values(randint({7}, 45, 0, 100)))}, {}, 0, 0));
  EXPECT_TRUE(std::isnan(tsr::median(tsr::zeros({0})).item<double>()));
  EXPECT_TRUE(throws_with([] { tsr::median_dim(tsr::zeros({2, 0}), 1); }, {"median_dim", "[2, 0]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::median_dim(in[0], 1).first; }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::median(in[0]); }, {x}));
}

// ---- out= and autograd through the internal ops ------------------------------------------------

TEST(ReduceOps, OutVariantsCheckFirst) {
  Tensor x = randu({3, 4}, 46);
  Tensor out = tsr::full({3}, 7.0, TSR_F64);
  static const Op prod_op("prod");
  call_out(prod_op, out, {x, std::vector<int64_t>{1}, false, none});
  EXPECT_TRUE(matches(out, ref_reduce(values(x), {3, 4}, {1}, false, vprod)));
  Tensor bad = tsr::full({4}, 7.0, TSR_F64);
  EXPECT_TRUE(throws_with([&] { call_out(prod_op, bad, {x, std::vector<int64_t>{1}, false, none}); }, {"prod", "[4]"}));
  EXPECT_TRUE(close(bad, Vals(4, 7.0), {4}, 0, 0));
  static const Op sort_op("sort");
  Tensor vals = tsr::empty({3, 4}, TSR_F64), idx = tsr::empty({3, 4}, TSR_I64);
  call_multi(sort_op, {x, int64_t{1}, false, false}, {vals, idx});
  auto ref = tsr::sort(x, 1);
  EXPECT_TRUE(close(vals, ref.first, 0, 0));
  EXPECT_TRUE(close(idx, ref.second, 0, 0));
}

TEST(ReduceOps, Mode) {
  Shape shape{4, 9};
  Tensor x = randint(shape, 52, 0, 4);
  auto fv = [](const Vals& s) {
    Vals sorted = s;
    std::sort(sorted.begin(), sorted.end());
    double best = sorted[0];
    int64_t bc = 0;
    for (double v : sorted) {
      int64_t c = std::count(s.begin(), s.end(), v);
      if (c > bc) best = v, bc = c;
    }
    return best;
  };
  for (tsr_dtype_t dt : {TSR_I64, TSR_I8, TSR_F32, TSR_F16, TSR_F64}) {
    Tensor xd = x.to(dt);
    for (int64_t d : {0, 1})
      for (bool keepdim : {false, true}) {
        auto r = tsr::mode(noncontig(xd), d, keepdim);
        EXPECT_EQ(r.first.dtype(), dt);
        EXPECT_TRUE(matches(r.first, ref_reduce(values(x), shape, {d}, keepdim, fv))) << dtype_name(dt);
        // the index points at an occurrence of the mode
        Tensor at = tsr::max_dim(tsr::eq(xd, keepdim ? r.first : r.first.unsqueeze(d)).to(TSR_I64), d, keepdim).first;
        EXPECT_TRUE(close(at, Vals(size_t(numel_of(at.sizes())), 1.0), at.sizes(), 0, 0));
        Tensor picked = tsr::max_dim(tsr::eq(tsr::arange(shape[size_t(d)]).reshape(d == 0 ? Shape{4, 1} : Shape{1, 9}),
                                             keepdim ? r.second : r.second.unsqueeze(d))
                                             .to(TSR_I64) *
                                         tsr::eq(xd, keepdim ? r.first : r.first.unsqueeze(d)).to(TSR_I64),
                                     d, keepdim)
                            .first;
        EXPECT_TRUE(close(picked, Vals(size_t(numel_of(picked.sizes())), 1.0), picked.sizes(), 0, 0));
      }
  }
  EXPECT_TRUE(throws_with([] { tsr::mode(tsr::zeros({3, 0})); }, {"mode", "[3, 0]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tsr::mode(in[0], 1).first; }, {randu({3, 5}, 53)}));
}

TEST(ReduceOps, OrderStatisticsInEveryFloatDtype) {
  // distinct multiples of 1/4: exact in float16 and bfloat16, so no new ties appear
  Shape shape{3, 8};
  Vals base(24);
  std::iota(base.begin(), base.end(), 0.0);
  std::mt19937_64 g(49);
  std::shuffle(base.begin(), base.end(), g);
  for (double& b : base) b = (b - 12) * 0.25;
  Tensor x64 = from_vector(base, shape);
  for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16}) {
    Tensor x = noncontig(x64.to(dt));
    auto t = tsr::topk(x, 3, 1), t64 = tsr::topk(x64, 3, 1);
    EXPECT_EQ(t.first.dtype(), dt);
    EXPECT_TRUE(close(t.first, t64.first, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(t.second, t64.second, 0, 0)) << dtype_name(dt);
    auto m = tsr::median_dim(x, 0), m64 = tsr::median_dim(x64, 0);
    EXPECT_TRUE(close(m.first, m64.first, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(m.second, m64.second, 0, 0)) << dtype_name(dt);
    auto k = tsr::kthvalue(x, 5, 1, true), k64 = tsr::kthvalue(x64, 5, 1, true);
    EXPECT_TRUE(close(k.second, k64.second, 0, 0)) << dtype_name(dt);
    auto c = tsr::cummin(x, 1), c64 = tsr::cummin(x64, 1);
    EXPECT_TRUE(close(c.first, c64.first, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(c.second, c64.second, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(tsr::prod(x, {1}), tsr::prod(x64, {1}), 2e-2, 1e-3)) << dtype_name(dt);
    EXPECT_TRUE(close(tsr::logsumexp(x, {0}), tsr::logsumexp(x64, {0}), 2e-2, 2e-2)) << dtype_name(dt);
  }
}

TEST(ReduceOps, TwoOutputOutVariants) {
  Tensor x = randu({4, 6}, 50);
  static const Op topk_op("topk");
  Tensor v = tsr::empty({4, 2}, TSR_F64), i = tsr::empty({4, 2}, TSR_I64);
  call_multi(topk_op, {x, int64_t{2}, int64_t{1}, true, true}, {v, i});
  auto ref = tsr::topk(x, 2, 1);
  EXPECT_TRUE(close(v, ref.first, 0, 0));
  EXPECT_TRUE(close(i, ref.second, 0, 0));
  // a wrong index dtype is refused before anything is written
  Tensor v2 = tsr::full({4, 2}, 5.0, TSR_F64), i2 = tsr::full({4, 2}, 5.0, TSR_I32);
  EXPECT_TRUE(throws_with(
      [&] {
        call_multi(topk_op, {x, int64_t{2}, int64_t{1}, true, true}, {v2, i2});
      },
      {"topk", "int32"}));
  EXPECT_TRUE(close(v2, Vals(8, 5.0), {4, 2}, 0, 0));
  static const Op max_dim_op("max_dim");
  Tensor mv = tsr::empty({4}, TSR_F64), mi = tsr::empty({4}, TSR_I64);
  call_multi(max_dim_op, {x, int64_t{1}, false}, {mv, mi});
  EXPECT_TRUE(close(mi, tsr::argmax(x, 1), 0, 0));
}

TEST(ReduceOps, InternalRowOpsCheckTheirIndices) {
  Tensor x = randu({2, 4}, 51);
  static const Op gather_op("_gather_rows");
  Tensor bad = from_vector<int64_t>({0, 4, 1, 2}, {2, 2});
  EXPECT_TRUE(throws_with([&] { call(gather_op, {x, bad}); }, {"_gather_rows", "index 4", "size 4"}));
  EXPECT_TRUE(throws_with([&] { call(gather_op, {x, bad.to(TSR_I32)}); }, {"_gather_rows", "int64"}));
  static const Op scatter_op("_scatter_add_rows");
  EXPECT_TRUE(throws_with(
      [&] {
        call(scatter_op, {x, from_vector<int64_t>({0, 1}, {2, 1}), int64_t{3}});
      },
      {"_scatter_add_rows", "[2, 1]", "[2, 4]"}));
  Tensor s = call(scatter_op, {x, from_vector<int64_t>({0, 0, 1, 2, 2, 2, 2, 0}, {2, 4}), int64_t{3}});
  Vals v = values(x);
  EXPECT_TRUE(close(s, Vals{v[0] + v[1], v[2], v[3], v[7], 0, v[4] + v[5] + v[6]}, {2, 3}, 1e-12, 1e-12));
}

TEST(ReduceOps, SecondOrderThroughSort) {
  // sort's backward scatters the cotangent with _scatter_add_rows, whose own backward gathers: the
  // gradient of grad_x[:, 0] with respect to the cotangent is 1 where the sorted index is 0.
  Tensor x = randu({3, 5}, 47).requires_grad_(true);
  auto s = tsr::sort(x, 1);
  Tensor v = randu({3, 5}, 48).requires_grad_(true);
  auto g = autograd::grad({s.first}, {x}, {v}, true, true);
  auto gv = autograd::grad({tsr::sum(g[0].select(1, 0))}, {v});
  Vals idx = values(s.second), expect;
  for (double i : idx) expect.push_back(i == 0 ? 1.0 : 0.0);
  EXPECT_TRUE(close(gv[0], expect, {3, 5}, 0, 0));
}

}  // namespace
}  // namespace tsr::optest
