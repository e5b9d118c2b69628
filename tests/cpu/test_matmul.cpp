// mm, bmm and matmul on the cpu device against float64 references: every dtype, layouts, sliced
// operands, and the errors naming the op.
#include <array>
#include <cmath>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

// C[b][m][n] = sum_k A[b][m][k] B[b][k][n]; also sum |A||B| per element as the tolerance scale.
void ref_bmm(const std::vector<double>& a, const std::vector<double>& b, int64_t batch, int64_t m, int64_t k, int64_t n,
             std::vector<double>& c, std::vector<double>& scale) {
  c.assign(size_t(batch * m * n), 0.0);
  scale.assign(size_t(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, as = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a[size_t((t * m + i) * k + p)], y = b[size_t((t * k + p) * n + j)];
          s += x * y;
          as += std::fabs(x * y);
        }
        c[size_t((t * m + i) * n + j)] = s;
        scale[size_t((t * m + i) * n + j)] = as;
      }
}

TEST(CpuLinalg, MmAllDtypesAndLayouts) {
  const std::vector<std::array<int64_t, 3>> sizes = {{1, 1, 1},     {7, 13, 5}, {33, 17, 29},
                                                     {64, 129, 65}, {3, 0, 4},  {0, 5, 2}};
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I32, TSR_I64, TSR_I8, TSR_U8}) {
    std::mt19937 rng(300 + unsigned(dt));
    for (const auto& mkn : sizes) {
      const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
      for (Layout la : {Layout::Contiguous, Layout::Transposed})
        for (Layout lb : {Layout::Contiguous, Layout::Transposed}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                       std::to_string(n) + " A " + tt::layout_name(la) + " B " + tt::layout_name(lb));
          Tensor a = tt::random_tensor({m, k}, dt, rng, Kind::SmallInt, la);
          Tensor b = tt::random_tensor({k, n}, dt, rng, Kind::Any, lb);
          std::vector<double> ref, scale;
          ref_bmm(tt::values(a), tt::values(b), 1, m, k, n, ref, scale);
          tt::expect_close(tsr::mm(a, b), ref, dt, {m, n}, 0, &scale);
          if (dt == TSR_F32) tt::expect_close(tsr::matmul(a, b), ref, dt, {m, n}, 0, &scale);
        }
    }
  }
}

TEST(CpuLinalg, MmSlicedOperands) {
  // Row stride larger than the row (a column slice) and a step-2 row slice: still BLAS layouts.
  std::mt19937 rng(310);
  Tensor big = tt::random_tensor({40, 50}, TSR_F32, rng);
  Tensor a = big.slice(1, 3, 20);                    // [40, 17], row stride 50
  Tensor b = big.slice(0, 0, 34, 2).slice(1, 0, 9);  // [17, 9], row stride 100
  std::vector<double> ref, scale;
  ref_bmm(tt::values(a), tt::values(b), 1, 40, 17, 9, ref, scale);
  tt::expect_close(tsr::mm(a, b), ref, TSR_F32, {40, 9}, 0, &scale);
  tt::expect_close(tsr::mm(a.to(TSR_F64), b.to(TSR_F64)), ref, TSR_F64, {40, 9}, 0, &scale);
}

TEST(CpuLinalg, BmmAndMatmulBatched) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_BF16, TSR_I32}) {
    std::mt19937 rng(320 + unsigned(dt));
    for (const auto& s : std::vector<std::array<int64_t, 4>>{
             {1, 3, 4, 5}, {5, 7, 13, 3}, {64, 8, 8, 8}, {2, 65, 70, 33}, {3, 2, 0, 2}}) {
      const int64_t batch = s[0], m = s[1], k = s[2], n = s[3];
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str({batch, m, k, n}));
      Tensor a = tt::random_tensor({batch, m, k}, dt, rng, Kind::SmallInt, Layout::Contiguous);
      Tensor b = tt::random_tensor({batch, k, n}, dt, rng, Kind::Any, Layout::Transposed);
      std::vector<double> ref, scale;
      ref_bmm(tt::values(a), tt::values(b), batch, m, k, n, ref, scale);
      tt::expect_close(tsr::bmm(a, b), ref, dt, {batch, m, n}, 0, &scale);
      tt::expect_close(tsr::matmul(a, b), ref, dt, {batch, m, n}, 0, &scale);
    }
  }
  // Batch dim taken with a step (arbitrary batch stride).
  std::mt19937 rng(330);
  Tensor a = tt::random_tensor({6, 4, 5}, TSR_F32, rng).slice(0, 0, 6, 2);
  Tensor b = tt::random_tensor({3, 5, 2}, TSR_F32, rng);
  std::vector<double> ref, scale;
  ref_bmm(tt::values(a), tt::values(b), 3, 4, 5, 2, ref, scale);
  tt::expect_close(tsr::bmm(a, b), ref, TSR_F32, {3, 4, 2}, 0, &scale);
}

// Batches of small products (at most 2^14 multiply-adds each: the cpu kernel's own small_gemm,
// not BLAS): rows not a multiple of its 4-row groups, columns below, at and above one 64-byte
// vector (its padded blocks, whose padding spills into the next row), every operand layout, a
// batch shared by every product, k = 1, and products too wide for its local buffers (BLAS then).
TEST(CpuLinalg, BmmOfSmallProducts) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    std::mt19937 rng(340 + unsigned(dt));
    for (const auto& s : std::vector<std::array<int64_t, 4>>{{7, 11, 16, 11},
                                                             {3, 1, 5, 1},
                                                             {4, 5, 1, 17},
                                                             {2, 6, 9, 16},
                                                             {3, 9, 7, 33},
                                                             {2, 3, 40, 70},
                                                             {2, 100, 1, 100},
                                                             {1024, 11, 16, 11}}) {
      const int64_t batch = s[0], m = s[1], k = s[2], n = s[3];
      for (Layout la : {Layout::Contiguous, Layout::Transposed})
        for (Layout lb : {Layout::Contiguous, Layout::Transposed}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str({batch, m, k, n}) + " A " +
                       tt::layout_name(la) + " B " + tt::layout_name(lb));
          Tensor a = tt::random_tensor({batch, m, k}, dt, rng, Kind::Any, la);
          Tensor b = tt::random_tensor({batch, k, n}, dt, rng, Kind::Any, lb);
          std::vector<double> ref, scale;
          ref_bmm(tt::values(a), tt::values(b), batch, m, k, n, ref, scale);
          tt::expect_close(tsr::bmm(a, b), ref, dt, {batch, m, n}, 0, &scale);
        }
    }
    // One matrix serving every product of the batch (batch stride 0).
    Tensor a = tt::random_tensor({5, 6, 7}, dt, rng);
    Tensor b1 = tt::random_tensor({1, 7, 9}, dt, rng);
    Tensor b = b1.expand({5, 7, 9});
    std::vector<double> bv = tt::values(b1), bexp;
    for (int i = 0; i < 5; ++i) bexp.insert(bexp.end(), bv.begin(), bv.end());
    std::vector<double> ref, scale;
    ref_bmm(tt::values(a), bexp, 5, 6, 7, 9, ref, scale);
    tt::expect_close(tsr::bmm(a, b), ref, dt, {5, 6, 9}, 0, &scale);
  }
}

TEST(CpuLinalg, ErrorsNameTheOp) {
  tt::expect_error_naming("mm", [] { tsr::mm(tsr::zeros({2, 3}), tsr::zeros({4, 2})); });
  tt::expect_error_naming("mm", [] { tsr::mm(tsr::zeros({2, 3, 1}), tsr::zeros({3, 2})); });
  tt::expect_error_naming("bmm", [] { tsr::bmm(tsr::zeros({2, 2, 3}), tsr::zeros({3, 3, 2})); });
  tt::expect_error_naming("softmax", [] { tsr::softmax(tsr::zeros({2, 3}), 2); });
  tt::expect_error_naming("log_softmax", [] { tsr::log_softmax(tsr::zeros({2, 3}), -3); });
}

}  // namespace
