// softmax and log_softmax on the cpu device against float64 references: every dim, dtype and
// layout, stability and NaN propagation.
#include <cmath>
#include <limits>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

TEST(CpuSoftmax, AllDimsDtypesLayouts) {
  for (tsr_dtype_t dt : tt::float_dtypes()) {
    std::mt19937 rng(400 + unsigned(dt));
    for (const Shape& s :
         {Shape{1}, Shape{7}, Shape{1031}, Shape{3, 5, 7}, Shape{13, 1031}, Shape{2, 300, 3}, Shape{4, 0}}) {
      for (int64_t dim = -1; dim < int64_t(s.size()); ++dim) {
        for (Layout l : {Layout::Contiguous, Layout::Transposed}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str(s) + " dim " + std::to_string(dim) + " " +
                       tt::layout_name(l));
          Tensor a = tt::random_tensor(s, dt, rng, Kind::Wide, l);
          const auto av = tt::values(a);
          const int64_t nd = int64_t(s.size()), d = dim < 0 ? dim + nd : dim;
          int64_t outer = 1, inner = 1;
          for (int64_t i = 0; i < nd; ++i) {
            if (i < d) outer *= s[size_t(i)];
            if (i > d) inner *= s[size_t(i)];
          }
          const int64_t D = s[size_t(d)];
          std::vector<double> sm(av.size()), lsm(av.size());
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < inner; ++j) {
              double mx = -std::numeric_limits<double>::infinity(), sum = 0;
              for (int64_t q = 0; q < D; ++q) mx = std::max(mx, av[size_t((o * D + q) * inner + j)]);
              for (int64_t q = 0; q < D; ++q) sum += std::exp(av[size_t((o * D + q) * inner + j)] - mx);
              for (int64_t q = 0; q < D; ++q) {
                const size_t idx = size_t((o * D + q) * inner + j);
                lsm[idx] = av[idx] - mx - std::log(sum);
                sm[idx] = std::exp(lsm[idx]);
              }
            }
          tt::expect_close(tsr::softmax(a, dim), sm, dt, s, tt::rtol(dt) * 4);
          tt::expect_close(tsr::log_softmax(a, dim), lsm, dt, s, tt::rtol(dt) * 4);
        }
      }
    }
  }
}

// 9 MiB outputs (written with streaming stores under the cpu.stream_stores CTest entry, which
// lowers the bound; plainly where the last-level cache holds them): rows of 1001 floats start at
// every 16-byte alignment, rows of 5000 are long, and a NaN row stays NaN.
TEST(CpuSoftmax, LargeOutputs) {
  for (int64_t D : {int64_t(1001), int64_t(5000)}) {
    SCOPED_TRACE("D " + std::to_string(D));
    const int64_t rows = ((int64_t(9) << 20) / 4 + D - 1) / D;
    std::mt19937 rng(77 + unsigned(D));
    Tensor a = tt::random_tensor({rows, D}, TSR_F32, rng, Kind::Wide, Layout::Contiguous);
    float* p = static_cast<float*>(a.data_ptr());
    p[3 * D + 5] = std::numeric_limits<float>::quiet_NaN();  // row 3 becomes all NaN
    const auto av = tt::values(a);
    std::vector<double> sm(av.size()), lsm(av.size());
    for (int64_t o = 0; o < rows; ++o) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      bool has_nan = false;
      for (int64_t q = 0; q < D; ++q) {
        const double v = av[size_t(o * D + q)];
        has_nan = has_nan || std::isnan(v);
        mx = std::max(mx, v);
      }
      for (int64_t q = 0; q < D; ++q) sum += std::exp(av[size_t(o * D + q)] - mx);
      for (int64_t q = 0; q < D; ++q) {
        const size_t i = size_t(o * D + q);
        lsm[i] = has_nan ? std::numeric_limits<double>::quiet_NaN() : av[i] - mx - std::log(sum);
        sm[i] = std::exp(lsm[i]);
      }
    }
    tt::expect_close(tsr::softmax(a, 1), sm, TSR_F32, {rows, D}, tt::rtol(TSR_F32) * 4);
    tt::expect_close(tsr::log_softmax(a, 1), lsm, TSR_F32, {rows, D}, tt::rtol(TSR_F32) * 4);
  }
}

TEST(CpuSoftmax, StableAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor big = tt::make({1000, 1001, 999}, {3}, TSR_F32);
  const double e1 = std::exp(-1.0), s = 1 + e1 + std::exp(-2.0);
  tt::expect_close(tsr::softmax(big, 0), {e1 / s, 1 / s, std::exp(-2.0) / s}, TSR_F32, {3});
  tt::expect_close(tsr::log_softmax(big, 0), {-1 - std::log(s), -std::log(s), -2 - std::log(s)}, TSR_F32, {3});
  tt::expect_close(tsr::softmax(tt::make({1, nan, 2, 0, 1, -inf}, {2, 3}, TSR_F32), 1),
                   {nan, nan, nan, 1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0)), 0}, TSR_F32, {2, 3});
  // A +inf anywhere (inf - inf), and a NaN among -infs, make the row NaN, as in PyTorch; rows of
  // 70 reach the kernels' vector steps.
  for (int64_t D : {int64_t(3), int64_t(70)}) {
    std::vector<double> v(size_t(2 * D), -1.5);
    v[1] = inf;
    for (int64_t j = 0; j < D; ++j) v[size_t(D + j)] = -inf;
    v[size_t(D + D / 2)] = nan;
    const Tensor x = tt::make(v, {2, D}, TSR_F32);
    const std::vector<double> all_nan(size_t(2 * D), nan);
    tt::expect_close(tsr::softmax(x, 1), all_nan, TSR_F32, {2, D});
    tt::expect_close(tsr::log_softmax(x, 1), all_nan, TSR_F32, {2, D});
  }
  tt::expect_close(tsr::softmax(tsr::from_vector<int64_t>({1, 2}, {2}), 0, TSR_F64),
                   {1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0))}, TSR_F64, {2});
}

}  // namespace
