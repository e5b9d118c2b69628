// Factories (arange, full, zeros, ones), dtype conversion and copies on the cpu device.
#include <cmath>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

TEST(CpuFactories, ArangeFullZerosOnes) {
  tt::expect_close(tsr::arange(0, 1, 0.125, TSR_F32), {0, .125, .25, .375, .5, .625, .75, .875}, TSR_F32, {8});
  tt::expect_close(tsr::arange(5), {0, 1, 2, 3, 4}, TSR_I64, {5});
  tt::expect_close(tsr::arange(2.5, -1, -1, TSR_F64), {2.5, 1.5, 0.5, -0.5}, TSR_F64, {4});
  tt::expect_close(tsr::call("arange", {int64_t(-3), int64_t(10), int64_t(4), TSR_I16}), {-3, 1, 5, 9}, TSR_I16, {4});
  tt::expect_close(tsr::arange(0, 5, 1, TSR_BF16), {0, 1, 2, 3, 4}, TSR_BF16, {5});
  Tensor big = tsr::arange(100000);
  const auto bv = big.to_vector<int64_t>();
  for (int64_t i = 0; i < 100000; i += 997) ASSERT_EQ(bv[size_t(i)], i);
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    tt::expect_close(tsr::full({2, 3}, 3.0, dt), std::vector<double>(6, dt == TSR_BOOL ? 1 : 3), dt, {2, 3});
    tt::expect_close(tsr::zeros({1031}, dt), std::vector<double>(1031, 0), dt, {1031});
    tt::expect_close(tsr::ones({0, 4}, dt), {}, dt, {0, 4});
    tt::expect_close(tsr::ones({5}, dt), std::vector<double>(5, 1), dt, {5});
  }
}

// Float bounds into an integer dtype, as PyTorch: start, end and step truncate to int64, the
// values step by the truncated step, an int64 range is sized from the truncated bounds and a
// narrower one from the float bounds, and a step that truncates to 0 is refused.
TEST(CpuFactories, ArangeFloatBoundsIntoIntegers) {
  auto ar = [](double s, double e, double st, tsr_dtype_t dt) { return tsr::call("arange", {s, e, st, dt}); };
  tt::expect_close(ar(1, 12, 2.5, TSR_I64), {1, 3, 5, 7, 9, 11}, TSR_I64, {6});
  for (tsr_dtype_t dt : {TSR_I32, TSR_I16, TSR_I8, TSR_U8})
    tt::expect_close(ar(1, 12, 2.5, dt), {1, 3, 5, 7, 9}, dt, {5});
  tt::expect_close(ar(-3.7, 5.2, 2.9, TSR_I64), {-3, -1, 1, 3}, TSR_I64, {4});
  tt::expect_close(ar(-3.7, 5.2, 2.9, TSR_I32), {-3, -1, 1, 3}, TSR_I32, {4});
  tt::expect_close(ar(6.9, 0.5, -2.2, TSR_I64), {6, 4, 2}, TSR_I64, {3});
  for (tsr_dtype_t dt : {TSR_I64, TSR_I32, TSR_U8}) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    try {
      ar(0.5, 3, 0.25, dt);
      ADD_FAILURE() << "a step truncating to 0 was accepted";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("step must be nonzero"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ar(0, 1e30, 1, TSR_I64), tsr::Error);
  tt::expect_close(ar(0, 1, 0.25, TSR_F32), {0, .25, .5, .75}, TSR_F32, {4});  // floats unchanged
}

TEST(CpuCopy, EveryDtypeToEveryDtype) {
  const std::vector<double> src = {0, 1, -1, 2.75, -2.75, 100, 0.5, -0.5, 3};
  for (tsr_dtype_t from : tt::all_dtypes()) {
    std::vector<double> vals = src;
    for (auto& v : vals) v = tt::cast_to(tsr::is_floating(from) || from == TSR_BOOL ? v : std::trunc(v), from);
    if (from == TSR_U8)
      for (auto& v : vals) v = std::fabs(v);
    Tensor t = tt::make(vals, {3, 3}, from);
    ASSERT_EQ(tt::values(t), vals) << tsr::dtype_name(from);
    for (tsr_dtype_t to : tt::all_dtypes()) {
      SCOPED_TRACE(std::string(tsr::dtype_name(from)) + " -> " + tsr::dtype_name(to));
      std::vector<double> ref(vals.size());
      for (size_t i = 0; i < vals.size(); ++i)
        ref[i] =
            to == TSR_BOOL ? (vals[i] != 0) : tt::cast_to(tsr::is_floating(to) ? vals[i] : std::trunc(vals[i]), to);
      tt::expect_close(t.to(to), ref, to, {3, 3});
      // non-contiguous source
      std::vector<double> tref(9);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) tref[size_t(i * 3 + j)] = ref[size_t(j * 3 + i)];
      tt::expect_close(t.t().to(to), tref, to, {3, 3});
    }
  }
}

TEST(CpuCopy, ContiguousAndCopyInto) {
  std::mt19937 rng(500);
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor a = tt::random_tensor({3, 5, 7}, dt, rng);
    Tensor p = a.permute({2, 0, 1});
    Tensor c = p.contiguous();
    EXPECT_TRUE(c.is_contiguous());
    EXPECT_EQ(tt::values(c), tt::values(p));
    Tensor big = tt::random_tensor({600, 700}, dt, rng);
    Tensor bt = big.t().contiguous();
    const auto bv = tt::values(big), btv = tt::values(bt);
    for (int64_t i = 0; i < 700; i += 37)
      for (int64_t j = 0; j < 600; j += 41) ASSERT_EQ(btv[size_t(i * 600 + j)], bv[size_t(j * 700 + i)]);
    Tensor dst = tsr::zeros({5, 7}, dt);
    dst.copy_(a.select(0, 1));
    EXPECT_EQ(tt::values(dst), tt::values(a.select(0, 1)));
    Tensor bc = tsr::zeros({4, 7}, dt);
    bc.copy_(a.select(0, 2).select(0, 3));  // broadcast a row
    const auto row = tt::values(a.select(0, 2).select(0, 3)), bcv = tt::values(bc);
    for (size_t i = 0; i < bcv.size(); ++i) ASSERT_EQ(bcv[i], row[i % 7]);
  }
}

// Copies whose innermost dim is dense in both tensors (the copy kernel's run-by-run path):
// permuted outer dims, narrowed rows, a permuted destination, runs of one element, a copy large
// enough to be split across threads, empty views. Expected values come from the contiguous
// source by index arithmetic, never through another strided copy.
TEST(CpuCopy, ViewsWithDenseRows) {
  std::mt19937 rng(510);
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor a = tt::random_tensor({3, 4, 5, 6}, dt, rng);
    const std::vector<double> av = tt::values(a);
    auto at = [&](int64_t i, int64_t j, int64_t k, int64_t l) { return av[size_t(((i * 4 + j) * 5 + k) * 6 + l)]; };
    const std::vector<double> pv = tt::values(a.permute({0, 2, 1, 3}).contiguous());  // [3, 5, 4, 6]
    const std::vector<double> nv = tt::values(a.narrow(3, 1, 4).contiguous());         // [3, 4, 5, 4]
    Tensor dst = tsr::zeros({3, 5, 4, 6}, dt);
    dst.permute({0, 2, 1, 3}).copy_(a);  // strided destination
    const std::vector<double> dv = tt::values(dst);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 5; ++k)
          for (int64_t l = 0; l < 6; ++l) {
            ASSERT_EQ(pv[size_t(((i * 5 + k) * 4 + j) * 6 + l)], at(i, j, k, l));
            ASSERT_EQ(dv[size_t(((i * 5 + k) * 4 + j) * 6 + l)], at(i, j, k, l));
            if (l >= 1 && l < 5) {
              ASSERT_EQ(nv[size_t(((i * 4 + j) * 5 + k) * 4 + l - 1)], at(i, j, k, l));
            }
          }
    // Runs of one element: a [4, 1] column of every other row.
    const std::vector<double> cv = tt::values(a.reshape({12, 30}).slice(0, 0, 12, 3).narrow(1, 7, 1).contiguous());
    ASSERT_EQ(cv.size(), 4u);
    for (int64_t r = 0; r < 4; ++r) ASSERT_EQ(cv[size_t(r)], av[size_t(r * 3 * 30 + 7)]);
    // Large enough to split across threads (>= 1 MiB for every dtype).
    Tensor b = tt::random_tensor({64, 40, 8, 72}, dt, rng);
    const std::vector<double> bv = tt::values(b), bp = tt::values(b.permute({0, 2, 1, 3}).contiguous());
    for (int64_t i = 0; i < 64; i += 7)
      for (int64_t j = 0; j < 40; j += 3)
        for (int64_t k = 0; k < 8; ++k)
          for (int64_t l = 0; l < 72; l += 5)
            ASSERT_EQ(bp[size_t(((i * 8 + k) * 40 + j) * 72 + l)], bv[size_t(((i * 40 + j) * 8 + k) * 72 + l)]);
    EXPECT_EQ(tsr::zeros({0, 4, 5, 6}, dt).permute({0, 2, 1, 3}).contiguous().sizes(), (Shape{0, 5, 4, 6}));
  }
}

}  // namespace
