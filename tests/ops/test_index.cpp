// Index family: index_select, gather, scatter*, index_add/copy/fill, masked_*, nonzero,
// take/put, advanced indexing. References are computed here on float64 host values.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_test.hpp"

namespace tsr::optest {
namespace {

const std::vector<tsr_dtype_t> kAllDtypes = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                             TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kNumDtypes = {TSR_U8,  TSR_I8,   TSR_I16, TSR_I32, TSR_I64,
                                             TSR_F16, TSR_BF16, TSR_F32, TSR_F64};

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}
Shape unravel(int64_t i, const Shape& s) {
  Shape c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}
int64_t ravel(const Shape& c, const Shape& s) {
  Shape st = strides_of(s);
  int64_t o = 0;
  for (size_t d = 0; d < c.size(); ++d) o += c[d] * st[d];
  return o;
}
int64_t wrapi(double v, int64_t n) { return v < 0 ? static_cast<int64_t>(v) + n : static_cast<int64_t>(v); }

// Random data of dtype dt (ints in a small range, bools mixed).
Tensor data(const Shape& s, uint64_t seed, tsr_dtype_t dt) {
  if (dt == TSR_BOOL) return randmask(s, seed);
  if (is_floating(dt)) return randu(s, seed, -3, 3, dt);
  return randint(s, seed, dt == TSR_U8 ? 0 : -8, dt == TSR_U8 ? 16 : 8, dt);
}

std::vector<double> ref_gather(const std::vector<double>& x, const Shape& xs, const std::vector<double>& idx,
                               const Shape& is, int64_t dim) {
  std::vector<double> out(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    Shape c = unravel(static_cast<int64_t>(i), is);
    c[dim] = wrapi(idx[i], xs[dim]);
    out[i] = x[ravel(c, xs)];
  }
  return out;
}

// reduce: assign, sum, prod, mean, amax, amin (floor division for integer means).
std::vector<double> ref_scatter(std::vector<double> x, const Shape& xs, const std::vector<double>& idx, const Shape& is,
                                const std::vector<double>& src, const Shape& ss, int64_t dim, const std::string& red,
                                bool include_self, bool integral) {
  std::vector<int> count(x.size(), 0);
  std::vector<bool> touched(x.size(), false);
  for (size_t i = 0; i < idx.size(); ++i) {
    Shape c = unravel(static_cast<int64_t>(i), is);
    c[dim] = wrapi(idx[i], xs[dim]);
    touched[ravel(c, xs)] = true;
  }
  if (!include_self)
    for (size_t o = 0; o < x.size(); ++o)
      if (touched[o]) {
        x[o] = red == "prod" ? 1 : red == "amax" ? -INFINITY : red == "amin" ? INFINITY : 0;
      }
  for (size_t o = 0; o < x.size(); ++o) count[o] = include_self ? 1 : 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    Shape c = unravel(static_cast<int64_t>(i), is);
    double s = src[ravel(c, ss)];
    c[dim] = wrapi(idx[i], xs[dim]);
    double& d = x[ravel(c, xs)];
    if (red == "assign")
      d = s;
    else if (red == "sum" || red == "mean")
      d += s;
    else if (red == "prod")
      d *= s;
    else if (red == "amax")
      d = std::max(d, s);
    else if (red == "amin")
      d = std::min(d, s);
    count[ravel(c, xs)]++;
  }
  if (red == "mean")
    for (size_t o = 0; o < x.size(); ++o)
      if (touched[o] && count[o] > 0) x[o] = integral ? std::floor(x[o] / count[o]) : x[o] / count[o];
  return x;
}

::testing::AssertionResult exact(const Tensor& t, const std::vector<double>& e, const Shape& s) {
  return close(t, e, s, 0, 0);
}

// ---- index_select ---------------------------------------------------------------------------

TEST(IndexOps, IndexSelectAllDtypesAndDims) {
  Shape xs{5, 7, 3};
  for (tsr_dtype_t dt : kAllDtypes) {
    Tensor x = data(xs, 1, dt);
    std::vector<double> xv = values(x);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Tensor idx = randint({6}, 2 + dim, -xs[dim], xs[dim]);
      std::vector<double> iv = values(idx);
      Shape os = xs;
      os[dim] = 6;
      std::vector<double> e(numel_of(os));
      for (size_t i = 0; i < e.size(); ++i) {
        Shape c = unravel(static_cast<int64_t>(i), os);
        c[dim] = wrapi(iv[c[dim]], xs[dim]);
        e[i] = xv[ravel(c, xs)];
      }
      EXPECT_TRUE(exact(index_select(x, dim, idx), e, os)) << dtype_name(dt) << " dim " << dim;
      EXPECT_TRUE(exact(index_select(noncontig(x), dim, noncontig(idx)), e, os)) << dtype_name(dt);
      EXPECT_TRUE(exact(index_select(x, dim, idx.to(TSR_I32)), e, os));
    }
  }
}

TEST(IndexOps, IndexSelectEdgeCases) {
  Tensor x = randu({4, 3}, 3);
  EXPECT_EQ(index_select(x, 0, from_vector<int64_t>({}, {0})).sizes(), (Shape{0, 3}));
  EXPECT_EQ(index_select(empty({0, 3}), 1, from_vector<int64_t>({2, 0}, {2})).sizes(), (Shape{0, 2}));
  Tensor r = index_select(x, 1, scalar_tensor_int(2, TSR_I64, false));
  EXPECT_TRUE(close(r, values(x.select(1, 2)), {4, 1}, 0, 0));
  Tensor s = scalar_tensor(5.0, TSR_F64, false);
  EXPECT_EQ(values(index_select(s, 0, scalar_tensor_int(0, TSR_I64, false)))[0], 5.0);
  // Large rows (memcpy path) in parallel.
  Tensor big = randu({300, 257}, 4, -1, 1, TSR_F32);
  Tensor bi = randint({500}, 5, 0, 300);
  std::vector<double> bv = values(big), iv = values(bi), e;
  for (double i : iv)
    e.insert(e.end(), bv.begin() + static_cast<int64_t>(i) * 257, bv.begin() + static_cast<int64_t>(i + 1) * 257);
  EXPECT_TRUE(exact(index_select(big, 0, bi), e, {500, 257}));
  // out=
  static const Op op("index_select");
  Tensor out = empty({2, 3}, TSR_F64);
  call_out(op, out, {x, int64_t{0}, from_vector<int64_t>({3, -4}, {2})});
  std::vector<double> xv = values(x);
  EXPECT_TRUE(exact(out, {xv[9], xv[10], xv[11], xv[0], xv[1], xv[2]}, {2, 3}));
}

TEST(IndexOps, IndexSelectErrors) {
  Tensor x = randu({5, 3}, 6);
  EXPECT_TRUE(throws_with(
      [&] {
        index_select(x, 0, from_vector<int64_t>({1, 5}, {2}));
      },
      {"index_select", "index 5", "dimension 0", "size 5"}));
  EXPECT_TRUE(
      throws_with([&] { index_select(x, 0, from_vector<int64_t>({-6}, {1})); }, {"index_select", "-6", "size 5"}));
  EXPECT_TRUE(
      throws_with([&] { index_select(x, 0, from_vector<double>({1.0}, {1})); }, {"index_select", "int64", "float64"}));
  EXPECT_TRUE(throws_with(
      [&] {
        index_select(x, 0, from_vector<int64_t>({1, 2}, {1, 2}));
      },
      {"index_select", "[1, 2]"}));
  EXPECT_TRUE(throws_with([&] { index_select(x, 2, from_vector<int64_t>({1}, {1})); },
                          {"index_select", "dimension out of range"}));
  // No partial write into out= on a bad index.
  static const Op op("index_select");
  Tensor out = full({3, 3}, 7.0, TSR_F64);
  EXPECT_TRUE(throws_with(
      [&] {
        call_out(op, out, {x, int64_t{0}, from_vector<int64_t>({0, 1, 9}, {3})});
      },
      {"index 9"}));
  for (double v : values(out)) EXPECT_EQ(v, 7.0);
}

// ---- gather / scatter -----------------------------------------------------------------------

TEST(IndexOps, GatherAllDtypes) {
  Shape xs{4, 5, 3}, is{3, 6, 2};  // index larger than self along dim 1, smaller elsewhere
  for (tsr_dtype_t dt : kAllDtypes) {
    Tensor x = data(xs, 7, dt);
    Tensor idx = randint(is, 8, -5, 5);
    auto e = ref_gather(values(x), xs, values(idx), is, 1);
    EXPECT_TRUE(exact(gather(x, 1, idx), e, is)) << dtype_name(dt);
    EXPECT_TRUE(exact(gather(noncontig(x), 1, noncontig(idx)), e, is)) << dtype_name(dt);
    Tensor i0 = randint({2, 5, 3}, 9, 0, 4);
    EXPECT_TRUE(exact(gather(x, 0, i0), ref_gather(values(x), xs, values(i0), {2, 5, 3}, 0), {2, 5, 3}));
    Tensor i2 = randint({4, 1, 7}, 10, -3, 3);
    EXPECT_TRUE(exact(gather(x, -1, i2), ref_gather(values(x), xs, values(i2), {4, 1, 7}, 2), {4, 1, 7}));
  }
  EXPECT_EQ(gather(randu({3, 4}, 1), 1, empty({3, 0}, TSR_I64)).sizes(), (Shape{3, 0}));
}

TEST(IndexOps, GatherRowsAndStridedOperands) {
  for (tsr_dtype_t dt : {TSR_BOOL, TSR_I16, TSR_BF16, TSR_F32, TSR_F64}) {
    Tensor x = data({50, 33}, 12, dt);
    Tensor rows = randint({40}, 13, -50, 50);
    Tensor expanded = rows.reshape({40, 1}).expand({40, 33});  // embedding-style row lookup
    std::vector<double> want = values(index_select(x, 0, rows));
    EXPECT_TRUE(exact(gather(x, 0, expanded), want, {40, 33})) << dtype_name(dt);
    EXPECT_TRUE(
        exact(gather(x, 0, expanded), ref_gather(values(x), {50, 33}, values(expanded), {40, 33}, 0), {40, 33}));
    // Rows that are not dense in self take the element path.
    Tensor xs = x.slice(1, 0, 33, 2);
    Tensor e2 = rows.reshape({40, 1}).expand({40, 17});
    EXPECT_TRUE(exact(gather(xs, 0, e2), ref_gather(values(xs), {50, 17}, values(e2), {40, 17}, 0), {40, 17}));
  }
  // Scatter with an expanded index and a transposed src.
  Tensor self = randu({6, 4}, 14);
  Tensor src = randu({4, 9}, 15).transpose(0, 1);  // [9, 4], strided
  Tensor idx = randint({9}, 16, 0, 6).reshape({9, 1}).expand({9, 4});
  auto e = ref_scatter(values(self), {6, 4}, values(idx), {9, 4}, values(src), {9, 4}, 0, "sum", true, false);
  EXPECT_TRUE(close(scatter_add(self, 0, idx, src), e, {6, 4}, 1e-12, 1e-12));
  // Empty operands.
  EXPECT_EQ(gather(empty({0, 3}, TSR_F64), 0, empty({0, 3}, TSR_I64)).sizes(), (Shape{0, 3}));
  EXPECT_EQ(scatter_add(empty({0, 3}, TSR_F64), 0, empty({0, 3}, TSR_I64), empty({0, 3}, TSR_F64)).sizes(),
            (Shape{0, 3}));
  Tensor one = randu({1}, 17);
  EXPECT_TRUE(exact(scatter(one, 0, empty({0}, TSR_I64), empty({0}, TSR_F64)), values(one), {1}));
  // out= forms; a bad index leaves out= untouched.
  static const Op gop("gather"), sop("scatter_add");
  Tensor gout = empty({40, 33}, TSR_F64);
  Tensor xf = data({50, 33}, 12, TSR_F64);
  Tensor rows = randint({40}, 13, -50, 50);
  Tensor expanded = rows.reshape({40, 1}).expand({40, 33});
  call_out(gop, gout, {xf, int64_t{0}, expanded, false});
  EXPECT_EQ(values(gout), values(index_select(xf, 0, rows)));
  Tensor sout = full({6, 4}, 3.0, TSR_F64);
  EXPECT_TRUE(throws_with(
      [&] {
        call_out(sop, sout, {self, int64_t{0}, add(idx, 6), src});
      },
      {"scatter_add", "out of bounds"}));
  for (double v : values(sout)) EXPECT_EQ(v, 3.0);
  call_out(sop, sout, {self, int64_t{0}, idx, src});
  EXPECT_TRUE(close(sout, e, {6, 4}, 1e-12, 1e-12));
}

TEST(IndexOps, GatherErrors) {
  Tensor x = randu({3, 4}, 11);
  EXPECT_TRUE(throws_with(
      [&] {
        gather(x, 1, from_vector<int64_t>({0, 4}, {1, 2}));
      },
      {"gather", "index 4", "dimension 1", "size 4"}));
  EXPECT_TRUE(throws_with(
      [&] {
        gather(x, 1, randint({4, 2}, 1, 0, 4));
      },
      {"gather", "[4, 2]", "[3, 4]", "dimension 0"}));
  EXPECT_TRUE(throws_with([&] { gather(x, 1, randint({3}, 1, 0, 4)); }, {"gather", "number of dimensions"}));
}

void check_scatter(const std::string& red, bool include_self, tsr_dtype_t dt, uint64_t seed) {
  Shape xs{4, 5, 3}, is{3, 7, 2}, ss{4, 8, 3};
  Tensor x = data(xs, seed, dt), src = data(ss, seed + 1, dt);
  if (red == "prod" && !is_floating(dt)) {  // keep integer products in range
    x = randint(xs, seed, dt == TSR_U8 ? 0 : -2, 3, dt);
    src = randint(ss, seed + 1, dt == TSR_U8 ? 0 : -1, 2, dt);
  }
  Tensor idx = randint(is, seed + 2, -5, 5);
  bool integral = !is_floating(dt);
  auto e = ref_scatter(values(x), xs, values(idx), is, values(src), ss, 1, red, include_self, integral);
  if (dt != TSR_F64 && is_floating(dt)) e = values(from_vector(e, xs).to(dt));  // one rounding
  auto tol = default_tol(dt);
  if (red == "mean" || red == "sum" || red == "prod") tol = {tol.first * 4, tol.second * 4};
  if (dt == TSR_F16 || dt == TSR_BF16) tol = {tol.first * 8, tol.second * 8};
  Tensor r;
  if (red == "assign")
    r = scatter(x, 1, idx, src);
  else
    r = scatter_reduce(noncontig(x), 1, noncontig(idx), noncontig(src), red, include_self);
  EXPECT_TRUE(close(r, e, xs, tol.first, tol.second))
      << red << " include_self " << include_self << " " << dtype_name(dt);
}

TEST(IndexOps, ScatterAndScatterReduceAllDtypes) {
  for (tsr_dtype_t dt : kAllDtypes) {
    // Plain scatter with duplicates: the last write wins (deterministic CPU order).
    check_scatter("assign", true, dt, 20);
    if (dt == TSR_BOOL) continue;
    for (const char* red : {"sum", "prod", "mean", "amax", "amin"})
      for (bool inc : {true, false}) check_scatter(red, inc, dt, 30);
  }
}

TEST(IndexOps, ScatterAddValueAndInplace) {
  Tensor x = randu({3, 5}, 40), src = randu({3, 5}, 41);
  Tensor idx = from_vector<int64_t>({0, 0, 4, 4, 4, 1, 2, 3, 0, 1}, {2, 5});
  auto e = ref_scatter(values(x), {3, 5}, values(idx), {2, 5}, values(src), {3, 5}, 1, "sum", true, false);
  EXPECT_TRUE(close(scatter_add(x, 1, idx, src), e, {3, 5}, 1e-12, 1e-12));
  Tensor y = x.clone();
  scatter_add_(y, 1, idx, src);
  EXPECT_TRUE(close(y, e, {3, 5}, 1e-12, 1e-12));
  auto ev = ref_scatter(values(x), {3, 5}, values(idx), {2, 5}, std::vector<double>(15, 2.5), {3, 5}, 1, "assign", true,
                        false);
  EXPECT_TRUE(exact(scatter(x, 1, idx, 2.5), ev, {3, 5}));
  Tensor z = x.clone();
  scatter_(z, 1, idx, 2.5);
  EXPECT_TRUE(exact(z, ev, {3, 5}));
  Tensor w = x.clone();
  scatter_reduce_(w, 0, from_vector<int64_t>({2, 2, 0, 1, 2}, {1, 5}), src, "amax", false);
  auto ew = ref_scatter(values(x), {3, 5}, {2, 2, 0, 1, 2}, {1, 5}, values(src), {3, 5}, 0, "amax", false, false);
  EXPECT_TRUE(exact(w, ew, {3, 5}));
  // Determinism of float sums with many duplicates.
  Tensor big = randu({1000, 16}, 42, -1, 1, TSR_F32), bi = randint({1000, 16}, 43, 0, 3);
  Tensor r1 = scatter_add(zeros({3, 16}), 0, bi, big), r2 = scatter_add(zeros({3, 16}), 0, bi, big);
  EXPECT_EQ(values(r1), values(r2));
}

// reduce='mean' in int8/uint8 counts in the dtype, as PyTorch's count tensor: 256 updates of one
// element wrap the count to 0, which leaves the (wrapped) sum, where a division by zero used to
// kill the process; 257 values (include_self) divide by 1.
TEST(IndexOps, ScatterReduceMeanCountWrapsInSmallIntegers) {
  for (tsr_dtype_t dt : {TSR_I8, TSR_U8}) {
    Tensor src = randint({256}, 60, 0, 5, dt), idx = zeros({256}, TSR_I64);
    int64_t sum = 0;
    for (double v : values(src)) sum += int64_t(v);
    const double wrapped = dt == TSR_I8 ? double(int8_t(uint8_t(sum & 0xff))) : double(sum & 0xff);
    Tensor self = from_vector<int64_t>({3, 7}, {2}).to(dt);
    EXPECT_EQ(values(scatter_reduce(self, 0, idx, src, "mean", false)), (std::vector<double>{wrapped, 7}))
        << dtype_name(dt);
    const int64_t with_self = sum + 3;
    const double wrapped_self = dt == TSR_I8 ? double(int8_t(uint8_t(with_self & 0xff))) : double(with_self & 0xff);
    EXPECT_EQ(values(scatter_reduce(self, 0, idx, src, "mean", true)), (std::vector<double>{wrapped_self, 7}))
        << dtype_name(dt);
  }
}

TEST(IndexOps, ScatterErrorsLeaveSelfUntouched) {
  Tensor x = randu({3, 4}, 50);
  std::vector<double> before = values(x);
  Tensor bad = from_vector<int64_t>({0, 1, 4}, {1, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        scatter_add_(x, 1, bad, randu({1, 3}, 51));
      },
      {"scatter_add", "index 4", "dimension 1", "size 4"}));
  EXPECT_TRUE(throws_with(
      [&] {
        scatter_(x, 1, from_vector<int64_t>({-5}, {1, 1}), 1.0);
      },
      {"scatter", "-5", "size 4"}));
  EXPECT_EQ(values(x), before);
  EXPECT_TRUE(throws_with(
      [&] {
        scatter(x, 1, from_vector<int64_t>({0, 1, 3}, {1, 3}), randu({1, 3}, 1).to(TSR_F32));
      },
      {"scatter", "float64", "float32"}));
  EXPECT_TRUE(throws_with(
      [&] {
        scatter_reduce(x, 1, from_vector<int64_t>({0, 1, 3}, {1, 3}), randu({1, 3}, 1), "max");
      },
      {"scatter_reduce", "'max'"}));
  EXPECT_TRUE(throws_with(
      [&] {
        scatter(x, 1, randint({1, 3}, 1, 0, 3), randu({1, 2}, 1));
      },
      {"scatter", "src", "[1, 2]"}));
}

// ---- index_add / index_copy / index_fill ----------------------------------------------------

TEST(IndexOps, IndexAddCopyFill) {
  Shape xs{4, 6, 3};
  for (tsr_dtype_t dt : kNumDtypes) {
    Tensor x = data(xs, 60, dt), src = data({4, 5, 3}, 61, dt);
    Tensor idx = from_vector<int64_t>({5, 0, 5, -1, 2}, {5});
    Tensor ie = idx.reshape({1, 5, 1}).expand({4, 5, 3}).contiguous();
    auto tol = default_tol(dt);
    if (dt == TSR_F16 || dt == TSR_BF16) tol = {tol.first * 4, tol.second * 4};
    auto ea = ref_scatter(values(x), xs, values(ie), {4, 5, 3}, values(src), {4, 5, 3}, 1, "sum", true, false);
    if (is_floating(dt)) ea = values(from_vector(ea, xs).to(dt));
    EXPECT_TRUE(close(index_add(x, 1, idx, src), ea, xs, tol.first, tol.second)) << dtype_name(dt);
    auto ec = ref_scatter(values(x), xs, values(ie), {4, 5, 3}, values(src), {4, 5, 3}, 1, "assign", true, false);
    EXPECT_TRUE(exact(index_copy(noncontig(x), 1, idx, noncontig(src)), ec, xs)) << dtype_name(dt);
    auto ef = values(x);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t k : {5, 0, 2})
        for (int64_t j = 0; j < 3; ++j) ef[ravel({i, k, j}, xs)] = 3;
    EXPECT_TRUE(exact(index_fill(x, 1, idx, 3), ef, xs)) << dtype_name(dt);
    Tensor y = x.clone();
    index_fill_(y, 1, idx, 3);
    EXPECT_TRUE(exact(y, ef, xs));
  }
  Tensor x = randu({4, 2}, 62), s = randu({3, 2}, 63);
  Tensor idx = from_vector<int64_t>({1, 1, 3}, {3});
  auto e = values(x), sv = values(s);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 2; ++j) e[ravel({values(idx)[k] == 1 ? 1 : 3, j}, {4, 2})] += -2.5 * sv[k * 2 + j];
  EXPECT_TRUE(close(index_add(x, 0, idx, s, -2.5), e, {4, 2}, 1e-12, 1e-12));
  Tensor y = x.clone();
  index_add_(y, 0, idx, s, -2.5);
  EXPECT_TRUE(close(y, e, {4, 2}, 1e-12, 1e-12));
  Tensor c = x.clone();
  index_copy_(c, 0, from_vector<int64_t>({2, 0, 3}, {3}), s);
  EXPECT_TRUE(close(c.select(0, 0), {sv[2], sv[3]}, {2}, 0, 0));
  EXPECT_TRUE(throws_with([&] { index_add(x, 0, idx, randu({2, 2}, 1)); }, {"index_add", "[2, 2]", "[4, 2]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        index_add(x, 0, from_vector<int64_t>({4, 0, 0}, {3}), s);
      },
      {"index_add", "index 4", "size 4"}));
  EXPECT_TRUE(throws_with(
      [&] { index_add(randint({3}, 1, 0, 5), 0, from_vector<int64_t>({1}, {1}), randint({1}, 1, 0, 5), 0.5); },
      {"index_add", "alpha"}));
}

// ---- masks ----------------------------------------------------------------------------------

TEST(IndexOps, NonzeroAndArgwhere) {
  for (tsr_dtype_t dt : kAllDtypes) {
    Tensor x = dt == TSR_BOOL ? randmask({3, 1, 5}, 70) : randint({3, 1, 5}, 70, -1, 2).to(dt);  // plenty of zeros
    std::vector<double> xv = values(x), e;
    for (int64_t i = 0; i < 15; ++i)
      if (xv[i] != 0) {
        Shape c = unravel(i, {3, 1, 5});
        e.insert(e.end(), c.begin(), c.end());
      }
    Shape es{static_cast<int64_t>(e.size() / 3), 3};
    EXPECT_TRUE(exact(nonzero(x), e, es)) << dtype_name(dt);
    EXPECT_TRUE(exact(argwhere(noncontig(x)), e, es)) << dtype_name(dt);
  }
  Tensor f = from_vector<double>({0.0, -0.0, std::nan(""), 2.0}, {4});
  EXPECT_TRUE(exact(nonzero(f), {2, 3}, {2, 1}));
  EXPECT_EQ(nonzero(empty({0, 3})).sizes(), (Shape{0, 2}));
  EXPECT_EQ(nonzero(scalar_tensor(2.0, TSR_F64, false)).sizes(), (Shape{1, 0}));
}

TEST(IndexOps, MaskedFillSelectScatter) {
  for (tsr_dtype_t dt : kAllDtypes) {
    Tensor x = data({4, 5}, 80, dt);
    Tensor m = randmask({5}, 81);  // broadcasts over rows
    std::vector<double> xv = values(x), mv = values(m);
    std::vector<double> ef = xv, es;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        if (mv[j]) {
          ef[i * 5 + j] = dt == TSR_BOOL ? 1 : 1.0;
          es.push_back(xv[i * 5 + j]);
        }
    EXPECT_TRUE(exact(masked_fill(x, m, 1.0), ef, {4, 5})) << dtype_name(dt);
    EXPECT_TRUE(exact(masked_fill(noncontig(x), m, scalar_tensor(1.0, TSR_F64, false)), ef, {4, 5}));
    Tensor y = x.clone();
    masked_fill_(y, m, 1.0);
    EXPECT_TRUE(exact(y, ef, {4, 5}));
    EXPECT_TRUE(exact(masked_select(noncontig(x), m), es, {static_cast<int64_t>(es.size())})) << dtype_name(dt);
    Tensor src = data({30}, 82, dt);
    std::vector<double> sv = values(src), esc = xv;
    size_t k = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        if (mv[j]) esc[i * 5 + j] = sv[k++];
    EXPECT_TRUE(exact(masked_scatter(x, m, src), esc, {4, 5})) << dtype_name(dt);
    Tensor z = x.clone();
    masked_scatter_(z, m, src);
    EXPECT_TRUE(exact(z, esc, {4, 5}));
  }
  // mask larger than self: the result broadcasts (out-of-place).
  Tensor x = randu({5}, 83);
  Tensor m = randmask({2, 5}, 84);
  std::vector<double> mv = values(m);
  EXPECT_EQ(masked_select(x, m).numel(), static_cast<int64_t>(std::count(mv.begin(), mv.end(), 1.0)));
  EXPECT_TRUE(throws_with([&] { masked_fill(x, randint({5}, 1, 0, 2), 1.0); }, {"masked_fill", "bool", "int64"}));
  EXPECT_TRUE(throws_with([&] { masked_fill(x, randmask({4}, 1), 1.0); }, {"masked_fill", "[5]", "[4]"}));
  EXPECT_TRUE(
      throws_with([&] { masked_fill(x, randmask({5}, 1), randu({1}, 1)); }, {"masked_fill_tensor", "0-dimensional"}));
  EXPECT_TRUE(throws_with(
      [&] {
        masked_scatter(x, from_bools({true, true, true, false, false}, {5}), randu({2}, 1));
      },
      {"masked_scatter", "at least 3", "got 2"}));
  Tensor before = x.clone();
  EXPECT_TRUE(throws_with([&] { masked_fill_(x, randmask({2, 5}, 3), 1.0); }, {"masked_fill_", "[5]", "[2, 5]"}));
  EXPECT_EQ(values(x), values(before));
}

// ---- take / put -----------------------------------------------------------------------------

TEST(IndexOps, TakePut) {
  Tensor x = randu({3, 4}, 90);
  Tensor idx = from_vector<int64_t>({0, 11, -1, 5, 5, -12}, {2, 3});
  std::vector<double> xv = values(x);
  EXPECT_TRUE(exact(take(noncontig(x), idx), {xv[0], xv[11], xv[11], xv[5], xv[5], xv[0]}, {2, 3}));
  EXPECT_TRUE(throws_with([&] { take(x, from_vector<int64_t>({12}, {1})); }, {"take", "index 12", "size 12"}));
  Tensor src = randu({2, 3}, 91);
  std::vector<double> sv = values(src), ea = xv;
  std::vector<int64_t> iv = {0, 11, 11, 5, 5, 0};
  for (size_t k = 0; k < 6; ++k) ea[iv[k]] += sv[k];
  EXPECT_TRUE(close(put(x, idx, src, true), ea, {3, 4}, 1e-12, 1e-12));
  Tensor y = x.clone();
  put_(y, idx, src, true);
  EXPECT_TRUE(close(y, ea, {3, 4}, 1e-12, 1e-12));
  std::vector<double> ec = xv;
  for (size_t k = 0; k < 6; ++k) ec[iv[k]] = sv[k];
  EXPECT_TRUE(exact(put(x, idx, src), ec, {3, 4}));
  EXPECT_TRUE(throws_with([&] { put(x, idx, randu({5}, 1)); }, {"put", "same number of elements"}));
}

// ---- advanced indexing ----------------------------------------------------------------------

TEST(IndexOps, AdvancedIndex) {
  Shape xs{4, 5, 3};
  for (tsr_dtype_t dt : {TSR_BOOL, TSR_I32, TSR_F16, TSR_F64}) {
    Tensor x = data(xs, 100, dt);
    std::vector<double> xv = values(x);
    Tensor i = randint({2, 1}, 101, -4, 4), j = randint({3}, 102, -5, 5);
    std::vector<double> iv = values(i), jv = values(j), e;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 3; ++c) e.push_back(xv[ravel({wrapi(iv[a], 4), wrapi(jv[b], 5), c}, xs)]);
    EXPECT_TRUE(exact(index(x, {i, j}), e, {2, 3, 3})) << dtype_name(dt);
    EXPECT_TRUE(exact(index(noncontig(x), {i, j.to(TSR_I32)}), e, {2, 3, 3}));
    // x[:, j]
    std::vector<double> e2;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 3; ++c) e2.push_back(xv[ravel({a, wrapi(jv[b], 5), c}, xs)]);
    EXPECT_TRUE(exact(index(x, {j}, 1), e2, {4, 3, 3}));
  }
  // A bool mask is its nonzero().
  Tensor x = randu({3, 4}, 103);
  Tensor m = randmask({3, 4}, 104);
  EXPECT_EQ(values(index(x, {m})), values(masked_select(x, m)));
  Tensor rm = from_bools({true, false, true}, {3});
  EXPECT_TRUE(exact(index(x, {rm}), values(index_select(x, 0, from_vector<int64_t>({0, 2}, {2}))), {2, 4}));
  // A uint8 tensor is a mask too, as in PyTorch 1.13 (deprecated there, not an index list).
  EXPECT_EQ(values(index(x, {m.to(TSR_U8)})), values(masked_select(x, m)));
  EXPECT_TRUE(exact(index(noncontig(x), {rm.to(TSR_U8)}), values(index(x, {rm})), {2, 4}));
  EXPECT_TRUE(
      exact(index(x, {from_vector<int64_t>({2, 0}, {2}), from_bools({false, true, true, false}, {4}).to(TSR_U8)}),
            {values(x)[9], values(x)[2]}, {2}));
  Tensor put = index_put(x, {m.to(TSR_U8)}, scalar_tensor(7.0, TSR_F64, false));
  EXPECT_EQ(values(put), values(masked_fill(x, m, 7.0)));
  EXPECT_TRUE(throws_with([&] { index(x, {from_vector<int64_t>({1}, {}).to(TSR_U8)}); }, {"index", "0-dim uint8"}));
  EXPECT_EQ(index(x, {from_vector<int64_t>({}, {0})}).sizes(), (Shape{0, 4}));
  EXPECT_TRUE(throws_with(
      [&] {
        index(x, {from_vector<int64_t>({0}, {1}), from_vector<int64_t>({4}, {1})});
      },
      {"index", "index 4", "dimension 1", "size 4"}));
  EXPECT_TRUE(
      throws_with([&] { index(x, {from_vector<int64_t>({-4}, {1})}); }, {"index", "-4", "dimension 0", "size 3"}));
  EXPECT_TRUE(throws_with([&] { index(x, {randint({2}, 1, 0, 3), randint({3}, 1, 0, 3)}); }, {"index", "[2]", "[3]"}));
  EXPECT_TRUE(throws_with([&] { index(x, {randmask({4}, 1)}); }, {"index", "mask", "[4]", "[3, 4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        index(x, {randint({1}, 1, 0, 3), randint({1}, 1, 0, 3), randint({1}, 1, 0, 3)});
      },
      {"index", "too many indices"}));
}

TEST(IndexOps, IndexPutAccumulate) {
  Tensor x = randu({4, 3}, 110);
  Tensor i = from_vector<int64_t>({1, 1, 3, 1, -4}, {5});
  Tensor v = randu({5, 3}, 111);
  std::vector<double> e = values(x), vv = values(v);
  std::vector<int64_t> iv{1, 1, 3, 1, 0};
  for (int k = 0; k < 5; ++k)
    for (int c = 0; c < 3; ++c) e[iv[k] * 3 + c] += vv[k * 3 + c];
  EXPECT_TRUE(close(index_put(x, {i}, v, true), e, {4, 3}, 1e-12, 1e-12));
  Tensor y = x.clone();
  index_put_(y, {i}, v, true);
  EXPECT_TRUE(close(y, e, {4, 3}, 1e-12, 1e-12));
  // x[i, j] = scalar-like broadcast values
  Tensor z = x.clone();
  index_put_(z, {from_vector<int64_t>({0, 2}, {2}), from_vector<int64_t>({1, -1}, {2})},
             scalar_tensor(9.0, TSR_F64, false));
  std::vector<double> ez = values(x);
  ez[1] = 9;
  ez[8] = 9;
  EXPECT_TRUE(exact(z, ez, {4, 3}));
  // Bool mask assignment, integer dtype.
  Tensor n = randint({3, 4}, 112, -5, 5);
  Tensor m = randmask({3, 4}, 113);
  Tensor r = index_put(n, {m}, scalar_tensor_int(0, TSR_I64, false));
  EXPECT_EQ(values(r), values(masked_fill(n, m, 0)));
  Tensor before = x.clone();
  EXPECT_TRUE(throws_with(
      [&] {
        index_put_(x, {from_vector<int64_t>({4}, {1})}, randu({1, 3}, 1));
      },
      {"index_put", "index 4", "size 4"}));
  EXPECT_TRUE(throws_with(
      [&] {
        index_put_(x, {from_vector<int64_t>({0, 1}, {2})}, randu({3, 3}, 1));
      },
      {"index_put", "shape mismatch", "[3, 3]", "[2, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        index_put_(x, {from_vector<int64_t>({0}, {1})}, randu({1, 3}, 1).to(TSR_F32));
      },
      {"index_put", "float32"}));
  EXPECT_EQ(values(x), values(before));
}

}  // namespace
}  // namespace tsr::optest
