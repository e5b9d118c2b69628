// mm/bmm/matmul, softmax/log_softmax, factories, dtype conversion and copies, rand/randn, and
// virtual cpu devices, on the cpu device against float64 references.
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <thread>

#include "op_test_util.hpp"
#include "tessera/philox.h"

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

TEST(CpuLinalg, ErrorsNameTheOp) {
  tt::expect_error_naming("mm", [] { tsr::mm(tsr::zeros({2, 3}), tsr::zeros({4, 2})); });
  tt::expect_error_naming("mm", [] { tsr::mm(tsr::zeros({2, 3, 1}), tsr::zeros({3, 2})); });
  tt::expect_error_naming("bmm", [] { tsr::bmm(tsr::zeros({2, 2, 3}), tsr::zeros({3, 3, 2})); });
  tt::expect_error_naming("softmax", [] { tsr::softmax(tsr::zeros({2, 3}), 2); });
  tt::expect_error_naming("log_softmax", [] { tsr::log_softmax(tsr::zeros({2, 3}), -3); });
}

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

TEST(CpuSoftmax, StableAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor big = tt::make({1000, 1001, 999}, {3}, TSR_F32);
  const double e1 = std::exp(-1.0), s = 1 + e1 + std::exp(-2.0);
  tt::expect_close(tsr::softmax(big, 0), {e1 / s, 1 / s, std::exp(-2.0) / s}, TSR_F32, {3});
  tt::expect_close(tsr::log_softmax(big, 0), {-1 - std::log(s), -std::log(s), -2 - std::log(s)}, TSR_F32, {3});
  tt::expect_close(tsr::softmax(tt::make({1, nan, 2, 0, 1, -inf}, {2, 3}, TSR_F32), 1),
                   {nan, nan, nan, 1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0)), 0}, TSR_F32, {2, 3});
  tt::expect_close(tsr::softmax(tsr::from_vector<int64_t>({1, 2}, {2}), 0, TSR_F64),
                   {1 / (1 + std::exp(1.0)), std::exp(1.0) / (1 + std::exp(1.0))}, TSR_F64, {2});
}

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

TEST(CpuRandom, StatisticsAndDeterminism) {
  for (tsr_dtype_t dt : tt::float_dtypes()) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    tsr::manual_seed(1234);
    Tensor u = tsr::rand({1000, 1000}, dt);
    Tensor n = tsr::randn({1000, 1000}, dt);
    EXPECT_EQ(u.dtype(), dt);
    EXPECT_EQ(u.sizes(), (Shape{1000, 1000}));
    const auto uv = tt::values(u), nv = tt::values(n);
    double su = 0, su2 = 0, sn = 0, sn2 = 0;
    double umin = 1, umax = 0;
    for (double x : uv) {
      su += x, su2 += x * x;
      umin = std::min(umin, x), umax = std::max(umax, x);
    }
    for (double x : nv) {
      ASSERT_TRUE(std::isfinite(x));
      sn += x, sn2 += x * x;
    }
    const double N = 1e6;
    EXPECT_NEAR(su / N, 0.5, 3e-3);
    EXPECT_NEAR(su2 / N - (su / N) * (su / N), 1.0 / 12, 2e-3);
    EXPECT_GE(umin, 0.0);
    EXPECT_LE(umax, 1.0);  // f16/bf16 may round up to 1
    if (dt == TSR_F32 || dt == TSR_F64) {
      EXPECT_LT(umax, 1.0);
    }
    EXPECT_NEAR(sn / N, 0.0, 5e-3);
    EXPECT_NEAR(sn2 / N - (sn / N) * (sn / N), 1.0, dt == TSR_BF16 ? 2e-2 : 1e-2);
    // same seed, same numbers; the stream advances between calls
    tsr::manual_seed(1234);
    EXPECT_EQ(tt::values(tsr::rand({1000, 1000}, dt)), uv);
    EXPECT_EQ(tt::values(tsr::randn({1000, 1000}, dt)), nv);
    tsr::manual_seed(1234);
    Tensor first = tsr::rand({10}, dt), second = tsr::rand({10}, dt);
    EXPECT_NE(tt::values(first), tt::values(second));
    tsr::manual_seed(4321);
    EXPECT_NE(tt::values(tsr::rand({10}, dt)), tt::values(first));
  }
}

TEST(CpuRandom, FollowsThePhiloxMapping) {
  const uint64_t seed = 0xfeedbeefcafeull;
  tsr::manual_seed(seed);
  const auto a = tsr::rand({13}, TSR_F32).to_vector<float>();  // blocks 0..3
  const auto b = tsr::rand({3}, TSR_F64).to_vector<double>();  // blocks 4..5
  const auto c = tsr::randn({5}, TSR_F32).to_vector<float>();  // blocks 6..7
  for (int64_t i = 0; i < 13; ++i)
    EXPECT_EQ(a[size_t(i)], tsr_philox_uniform_f32(tsr_philox_block(seed, uint64_t(i / 4)).v[i % 4]));
  for (int64_t i = 0; i < 3; ++i) {
    const tsr_philox4x32_t r = tsr_philox_block(seed, 4 + uint64_t(i / 2));
    EXPECT_EQ(b[size_t(i)], tsr_philox_uniform_f64(r.v[2 * (i % 2)], r.v[2 * (i % 2) + 1]));
  }
  for (int64_t i = 0; i < 5; ++i) {
    float z[4];
    tsr_philox_normal4_f32(tsr_philox_block(seed, 6 + uint64_t(i / 4)), z);
    EXPECT_EQ(c[size_t(i)], z[i % 4]);
  }
}

TEST(CpuConcurrency, OpsFromSeveralThreads) {
  // Kernels are re-entrant: several host threads run large (OpenMP) and small ops at once.
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      std::mt19937 rng(900 + unsigned(t));
      Tensor a = tt::random_tensor({300, 700}, TSR_F32, rng), b = tt::random_tensor({700}, TSR_F32, rng);
      const auto av = tt::values(a), bv = tt::values(b);
      bool good = true;
      for (int it = 0; it < 5; ++it) {
        const auto s = tsr::sum(a * b + 1.0, {1}).to_vector<float>();
        for (int64_t r = 0; r < 300 && good; r += 37) {
          double ref = 0;
          for (int64_t c = 0; c < 700; ++c) ref += double(float(av[size_t(r * 700 + c)] * bv[size_t(c)])) + 1.0;
          good = std::fabs(s[size_t(r)] - ref) <= 1e-4 * (1 + std::fabs(ref));
        }
        const auto one = (tsr::ones({1}) + tsr::ones({1})).to_vector<float>();
        good = good && one[0] == 2.0f;
      }
      ok[size_t(t)] = good ? 1 : 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST(CpuDevices, VirtualDevicesFromEnvironment) {
  const tsr_api_t* api = tsr::api();
  setenv("TESSERA_CPU_DEVICES", "3", 1);
  tsr_runtime_t* rt = nullptr;
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof(opts);
  tsr_status_t st = api->runtime_create(&opts, &rt);
  unsetenv("TESSERA_CPU_DEVICES");
  ASSERT_EQ(st, nullptr) << api->status_message(st);
  EXPECT_EQ(api->device_count(rt, TSR_DEVICE_TYPE_CPU), 3);
  tsr::set_runtime(rt);
  {
    Tensor a = tsr::from_vector<float>({1, 2, 3}, {3}, tsr::Device::cpu(2));
    Tensor b = tsr::ones({3}, TSR_F32, tsr::Device::cpu(2));
    Tensor c = a + b;
    EXPECT_EQ(c.device(), tsr::Device::cpu(2));
    Tensor d = c.to(tsr::Device::cpu(1));
    EXPECT_EQ(d.device(), tsr::Device::cpu(1));
    EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  }
  tsr::set_runtime(nullptr);
  api->runtime_destroy(rt);

  setenv("TESSERA_CPU_DEVICES", "lots", 1);
  rt = nullptr;
  st = api->runtime_create(&opts, &rt);
  unsetenv("TESSERA_CPU_DEVICES");
  // The cpu plugin refuses to load; the runtime reports why.
  if (st == nullptr) {
    bool found = false;
    for (size_t i = 0; i < api->plugin_count(rt); ++i) {
      tsr_plugin_record_t rec{};
      rec.struct_size = sizeof(rec);
      ASSERT_EQ(api->plugin_record(rt, i, &rec), nullptr);
      if (std::string(rec.name) == "cpu" && !rec.loaded) {
        found = true;
        EXPECT_NE(std::string(rec.reason).find("TESSERA_CPU_DEVICES"), std::string::npos) << rec.reason;
      }
    }
    EXPECT_TRUE(found);
    api->runtime_destroy(rt);
  } else {
    EXPECT_NE(std::string(api->status_message(st)).find("TESSERA_CPU_DEVICES"), std::string::npos);
    api->status_free(st);
  }
}

}  // namespace
