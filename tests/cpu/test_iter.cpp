// sdk/tessera/iter.hpp on hand-built tsr_iter_t: contiguous, transposed, broadcast (stride 0),
// partial ranges, the parallel split, and reductions. No core needed.
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "tessera/iter.hpp"

namespace {

// sizes fastest first; strides[op][dim] in bytes.
tsr_iter_t make_iter(std::vector<int64_t> sizes, std::vector<std::vector<int64_t>> strides, std::vector<void*> data,
                     std::vector<int32_t> dtypes, int nreduce = 0, int noutputs = 1) {
  tsr_iter_t it{};
  it.struct_size = sizeof(it);
  it.ndim = static_cast<int32_t>(sizes.size());
  it.noperands = static_cast<int32_t>(data.size());
  it.noutputs = noutputs;
  it.nreduce = nreduce;
  it.numel = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    it.sizes[d] = sizes[d];
    it.numel *= sizes[d];
  }
  for (size_t k = 0; k < data.size(); ++k) {
    it.data[k] = static_cast<char*>(data[k]);
    it.dtypes[k] = dtypes[k];
    for (size_t d = 0; d < sizes.size(); ++d) it.strides[k][d] = strides[k][d];
  }
  bool contig = true;
  for (size_t k = 0; k < data.size(); ++k) {
    int64_t expect = static_cast<int64_t>(tsr::itemsize(dtypes[k]));
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != 1 && strides[k][d] != expect) contig = false;
      expect *= sizes[d];
    }
  }
  it.contiguous = contig && nreduce == 0;
  return it;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(Iter, ContiguousAdd) {
  for (int64_t n : {0, 1, 7, 13, 1031}) {
    auto a = random_floats(size_t(n), 1), b = random_floats(size_t(n), 2);
    std::vector<float> out(size_t(n), -1.0f);
    tsr_iter_t it = make_iter({n}, {{4}, {4}, {4}}, {out.data(), a.data(), b.data()}, {TSR_F32, TSR_F32, TSR_F32});
    EXPECT_TRUE(it.contiguous);
    tsr::elementwise<float, float, float>(it, [](float x, float y) { return x + y; });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(i)], a[size_t(i)] + b[size_t(i)]);
  }
}

TEST(Iter, TransposedAndBroadcast) {
  const int64_t R = 7, C = 13;
  auto at = random_floats(size_t(R * C), 3);  // a stored transposed: at[c * R + r]
  auto brow = random_floats(size_t(C), 4);    // b broadcast along rows
  std::vector<float> out(size_t(R * C), 0.0f);
  // dims fastest first: (C, R)
  tsr_iter_t it = make_iter({C, R}, {{4, 4 * C}, {4 * R, 4}, {4, 0}}, {out.data(), at.data(), brow.data()},
                            {TSR_F32, TSR_F32, TSR_F32});
  EXPECT_FALSE(it.contiguous);
  tsr::elementwise<float, float, float>(it, [](float x, float y) { return x * 2 + y; });
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      ASSERT_EQ(out[size_t(r * C + c)], at[size_t(c * R + r)] * 2 + brow[size_t(c)]) << r << "," << c;
}

TEST(Iter, ScalarBroadcastInnerDim) {
  // b is a scalar broadcast everywhere (stride 0), a and out contiguous 2-D.
  const int64_t R = 5, C = 33;
  auto a = random_floats(size_t(R * C), 5);
  float s = 3.5f;
  std::vector<double> out(static_cast<size_t>(R * C));
  tsr_iter_t it =
      make_iter({C, R}, {{8, 8 * C}, {4, 4 * C}, {0, 0}}, {out.data(), a.data(), &s}, {TSR_F64, TSR_F32, TSR_F32});
  tsr::elementwise<double, float, float>(it, [](float x, float y) { return double(x) - y; });
  for (int64_t i = 0; i < R * C; ++i) ASSERT_EQ(out[size_t(i)], double(a[size_t(i)]) - s);
  // scalar first operand
  tsr_iter_t it2 =
      make_iter({C, R}, {{8, 8 * C}, {0, 0}, {4, 4 * C}}, {out.data(), &s, a.data()}, {TSR_F64, TSR_F32, TSR_F32});
  tsr::elementwise<double, float, float>(it2, [](float x, float y) { return double(x) - y; });
  for (int64_t i = 0; i < R * C; ++i) ASSERT_EQ(out[size_t(i)], double(s) - a[size_t(i)]);
}

TEST(Iter, WhereWithThreeInputsAndFill) {
  const int64_t n = 100;
  std::vector<uint8_t> cond(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) cond[size_t(i)] = uint8_t(i % 3 == 0);
  std::vector<int32_t> a(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  std::iota(a.begin(), a.end(), 0);
  int32_t other = -7;
  tsr_iter_t it = make_iter({n}, {{4}, {1}, {4}, {0}}, {out.data(), cond.data(), a.data(), &other},
                            {TSR_I32, TSR_BOOL, TSR_I32, TSR_I32});
  tsr::elementwise<int32_t, uint8_t, int32_t, int32_t>(it, [](uint8_t c, int32_t x, int32_t y) { return c ? x : y; });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(i)], i % 3 == 0 ? int32_t(i) : -7);
  // zero inputs (fill), strided output
  std::vector<int32_t> big(size_t(2 * n), 0);
  tsr_iter_t f = make_iter({n}, {{8}}, {big.data()}, {TSR_I32});
  tsr::elementwise<int32_t>(f, []() { return 9; });
  for (int64_t i = 0; i < 2 * n; ++i) ASSERT_EQ(big[size_t(i)], i % 2 == 0 ? 9 : 0);
}

// Every partial range [b, e) visits exactly its elements, in order.
TEST(Iter, PartialRunsCoverRange) {
  const std::vector<int64_t> sizes = {3, 4, 5};
  const int64_t numel = 60;
  std::vector<int64_t> out(size_t(numel), -1);
  // output stored with dims permuted: linear index l = i0 + 3*i1 + 12*i2 lives at i2 + 5*i0 + 15*i1
  tsr_iter_t it = make_iter(sizes, {{5 * 8, 15 * 8, 8}}, {out.data()}, {TSR_I64});
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t b = rng() % (numel + 1), e = rng() % (numel + 1);
    if (b > e) std::swap(b, e);
    std::fill(out.begin(), out.end(), -1);
    int64_t next = b;
    tsr::for_each_run<1>(it, b, e, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<int64_t*>(p[0] + i * s[0]) = next++;
    });
    ASSERT_EQ(next, e);
    for (int64_t l = 0; l < numel; ++l) {
      const int64_t i0 = l % 3, i1 = (l / 3) % 4, i2 = l / 12;
      const int64_t v = out[size_t(i2 + 5 * i0 + 15 * i1)];
      ASSERT_EQ(v, (l >= b && l < e) ? l : -1) << "l=" << l << " b=" << b << " e=" << e;
    }
  }
}

TEST(Iter, ParallelMatchesSerial) {
  // 3-D, non-contiguous input (every other element), > grain so threads are used.
  const int64_t A = 37, B = 41, Cn = 61;  // 92537 elements
  const int64_t n = A * B * Cn;
  auto src = random_floats(size_t(2 * n), 11);
  std::vector<float> out1(static_cast<size_t>(n)), out2(static_cast<size_t>(n));
  tsr_iter_t it = make_iter({A, B, Cn}, {{4, 4 * A, 4 * A * B}, {8, 8 * A, 8 * A * B}}, {out1.data(), src.data()},
                            {TSR_F32, TSR_F32});
  tsr::elementwise<float, float>(
      it, [](float x) { return x * x; }, /*grain=*/1000);
  it.data[0] = reinterpret_cast<char*>(out2.data());
  tsr::elementwise_serial<float, float>(it, [](float x) { return x * x; });
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out1[size_t(i)], src[size_t(2 * i)] * src[size_t(2 * i)]);
    ASSERT_EQ(out1[size_t(i)], out2[size_t(i)]);
  }
  std::atomic<int64_t> count{0};
  tsr::parallel_for_each_element<2>(
      it, [&](char* const*, const int64_t*, int64_t k) { count += k; }, 1000);
  EXPECT_EQ(count.load(), n);
}

// Large contiguous outputs take the streaming-store path (with TESSERA_CPU_STREAM_BYTES below
// their size: the cpu.stream_stores_sdk CTest entry): check misaligned starts, the tile body and
// the tail, and in-place use (output aliasing an input).
TEST(Iter, LargeContiguousStreamingStores) {
  const int64_t n = (int64_t(3) << 20) + 77;  // 12 MiB of floats
  for (int64_t shift : {0, 1, 3}) {
    std::vector<float> a(static_cast<size_t>(n + 4)), out(static_cast<size_t>(n + 4), -1.0f);
    for (int64_t i = 0; i < n + 4; ++i) a[size_t(i)] = float(i % 1000) * 0.5f;
    tsr_iter_t it = make_iter({n}, {{4}, {4}}, {out.data() + shift, a.data()}, {TSR_F32, TSR_F32});
    ASSERT_TRUE(it.contiguous);
    tsr::elementwise<float, float>(it, [](float x) { return x + 1.0f; });
    for (int64_t i = 0; i < shift; ++i) ASSERT_EQ(out[size_t(i)], -1.0f);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(i + shift)], a[size_t(i)] + 1.0f) << i;
    ASSERT_EQ(out[size_t(n + shift)], -1.0f);
    // in place: a = a * 2
    tsr_iter_t ip = make_iter({n}, {{4}, {4}}, {a.data() + shift, a.data() + shift}, {TSR_F32, TSR_F32});
    tsr::elementwise<float, float>(ip, [](float x) { return x * 2.0f; });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a[size_t(i + shift)], float((i + shift) % 1000) * 1.0f) << i;
  }
  // 1-byte outputs (bool) and 8-byte outputs
  const int64_t m = int64_t(9) << 20;
  std::vector<float> x(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) x[size_t(i)] = float(i % 7) - 3.0f;
  std::vector<uint8_t> gt(static_cast<size_t>(m));
  tsr_iter_t ib = make_iter({m}, {{1}, {4}}, {gt.data(), x.data()}, {TSR_BOOL, TSR_F32});
  tsr::elementwise<uint8_t, float>(ib, [](float v) { return uint8_t(v > 0); });
  for (int64_t i = 0; i < m; ++i) ASSERT_EQ(gt[size_t(i)], uint8_t(i % 7 > 3)) << i;
  std::vector<double> d(static_cast<size_t>(m / 4));
  tsr_iter_t id = make_iter({m / 4}, {{8}, {4}}, {d.data(), x.data()}, {TSR_F64, TSR_F32});
  tsr::elementwise<double, float>(id, [](float v) { return double(v) * 0.25; });
  for (int64_t i = 0; i < m / 4; ++i) ASSERT_EQ(d[size_t(i)], double(x[size_t(i)]) * 0.25) << i;
}

TEST(Iter, ParallelForCoversAndRethrows) {
  std::vector<std::atomic<int>> hits(100000);
  tsr::parallel_for(0, 100000, 100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_THROW(tsr::parallel_for(0, 100000, 100, [](int64_t, int64_t) { throw std::runtime_error("x"); }),
               std::runtime_error);
  int calls = 0;
  tsr::parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(Iter, ReductionInnerAndOuter) {
  // input [R=6][C=5][D=4] row-major; reduce over D (fastest) and R: out[C].
  const int64_t R = 6, C = 5, D = 4;
  std::vector<double> in(static_cast<size_t>(R * C * D));
  std::iota(in.begin(), in.end(), 1.0);
  std::vector<double> out(size_t(C), 0.0);
  // dims fastest first: D (reduced), R (reduced), C (kept)
  tsr_iter_t it = make_iter({D, R, C}, {{0, 0, 8}, {8, 8 * C * D, 8 * D}}, {out.data(), in.data()}, {TSR_F64, TSR_F64},
                            /*nreduce=*/2);
  EXPECT_EQ(tsr::reduction_num_outputs(it), C);
  EXPECT_EQ(tsr::reduction_block_numel(it), R * D);
  tsr::for_each_reduction(it, [&](char* o, const tsr::ReduceBlock& b) {
    double s = 0;
    int64_t cnt = 0;
    b.for_each_run([&](const char* p, int64_t n, int64_t st) {
      for (int64_t i = 0; i < n; ++i) s += *reinterpret_cast<const double*>(p + i * st);
      cnt += n;
    });
    EXPECT_EQ(cnt, R * D);
    *reinterpret_cast<double*>(o) = s;
  });
  for (int64_t c = 0; c < C; ++c) {
    double ref = 0;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t d = 0; d < D; ++d) ref += in[size_t((r * C + c) * D + d)];
    EXPECT_EQ(out[size_t(c)], ref);
  }
}

TEST(Iter, ParallelReductionManyOutputs) {
  const int64_t rows = 3000, cols = 50;  // 150k elements, 3000 outputs
  auto in = random_floats(size_t(rows * cols), 9);
  std::vector<float> out(static_cast<size_t>(rows));
  tsr_iter_t it = make_iter({cols, rows}, {{0, 4}, {4, 4 * cols}}, {out.data(), in.data()}, {TSR_F32, TSR_F32}, 1);
  tsr::parallel_for_each_reduction(
      it,
      [](char* o, const tsr::ReduceBlock& b) {
        float m = -1e30f;
        b.for_each_run([&](const char* p, int64_t n, int64_t st) {
          for (int64_t i = 0; i < n; ++i) m = std::max(m, *reinterpret_cast<const float*>(p + i * st));
        });
        *reinterpret_cast<float*>(o) = m;
      },
      /*grain=*/1000);
  for (int64_t r = 0; r < rows; ++r) {
    float ref = -1e30f;
    for (int64_t c = 0; c < cols; ++c) ref = std::max(ref, in[size_t(r * cols + c)]);
    ASSERT_EQ(out[size_t(r)], ref);
  }
}

TEST(Iter, EmptyAndZeroDimReductions) {
  float out[3] = {1, 1, 1};
  float dummy = 0;
  // reduce an empty dim: 3 outputs, blocks of 0 elements
  tsr_iter_t it = make_iter({0, 3}, {{0, 4}, {4, 0}}, {out, &dummy}, {TSR_F32, TSR_F32}, 1);
  int calls = 0;
  tsr::for_each_reduction(it, [&](char* o, const tsr::ReduceBlock& b) {
    ++calls;
    int runs = 0;
    b.for_each_run([&](const char*, int64_t, int64_t) { ++runs; });
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(b.numel, 0);
    *reinterpret_cast<float*>(o) = 0;
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(out[2], 0.0f);
  // 0-dim iteration: one element
  float x = 2.0f, y = 0.0f;
  tsr_iter_t z = make_iter({}, {{}, {}}, {&y, &x}, {TSR_F32, TSR_F32});
  EXPECT_EQ(z.numel, 1);
  tsr::elementwise<float, float>(z, [](float v) { return v + 1; });
  EXPECT_EQ(y, 3.0f);
}

}  // namespace
