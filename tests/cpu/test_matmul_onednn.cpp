// bf16 mm, bmm and linear, and f32 linear, on the cpu device (backends/cpu/matmul_onednn.cpp:
// oneDNN's matmul primitive: bf16 on CPUs with avx512_bf16, f32 linear with its bias in the
// epilogue; else the generic kernels of matmul.cpp) against
// float64 references computed from the bf16 inputs: odd shapes, k = 0 and empty outputs,
// transposed, sliced and doubly strided operands, batch strides and a batch shared by every
// product, bias on and off; and that the oneDNN kernels really run when they should (a counter
// in the side library) and leave the problems they decline to the generic kernels. With
// TESSERA_CPU_ONEDNN=0 (CTest cpu.onednn_off) the same value tests check the generic kernels.
#include <dlfcn.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

// out[t] = a[t] @ b[t] (+ bias) and the same sum over |terms| (the error scale), float64.
struct Ref {
  std::vector<double> value, scale;
};
Ref reference(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>* bias,
              int64_t batch, int64_t m, int64_t k, int64_t n) {
  Ref r;
  r.value.assign(size_t(batch * m * n), 0.0);
  r.scale.assign(size_t(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bias ? (*bias)[size_t(j)] : 0.0, as = std::fabs(s);
        for (int64_t p = 0; p < k; ++p) {
          const double x = a[size_t((t * m + i) * k + p)] * b[size_t((t * k + p) * n + j)];
          s += x;
          as += std::fabs(x);
        }
        r.value[size_t((t * m + i) * n + j)] = s;
        r.scale[size_t((t * m + i) * n + j)] = as;
      }
  return r;
}

// The contract: bf16 products are exact in f32, the k (+ bias) terms are summed in f32 and the
// sum is rounded once to bf16. So |got - ref| <= u_bf16 |ref| + (1 + u_bf16) k u_f32 scale, with
// u the unit roundoffs (2^-8, 2^-24) and scale the sum of |terms|; 2 (k + 1) u_f32 scale bounds
// the second term with the bias. Rounding a partial sum to bf16 would err by about u_bf16 scale,
// far more than u_bf16 |ref| when the random signs cancel, so this catches a double rounding.
void expect_bf16_product(const Tensor& got, const Ref& ref, const Shape& shape, int64_t k) {
  ASSERT_EQ(got.dtype(), TSR_BF16);
  ASSERT_EQ(got.sizes(), shape);
  const std::vector<double> g = tt::values(got);
  ASSERT_EQ(g.size(), ref.value.size());
  const double u_out = std::ldexp(1.0, -8), u_acc = std::ldexp(1.0, -24);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = u_out * std::fabs(ref.value[i]) + 2.0 * double(k + 1) * u_acc * ref.scale[i];
    if (!(std::fabs(g[i] - ref.value[i]) <= tol) && ++bad <= 5)
      ADD_FAILURE() << "at " << i << ": got " << g[i] << ", expected " << ref.value[i] << " (tol " << tol << ")";
  }
  EXPECT_EQ(bad, 0) << bad << " of " << g.size() << " elements off";
}

Tensor bf16(std::mt19937& rng, const Shape& shape, Layout layout = Layout::Contiguous) {
  return tt::random_tensor(shape, TSR_BF16, rng, Kind::Any, layout);
}

// A [rows, cols] view whose strides are both > 1: every other column of every other row.
Tensor doubly_strided(std::mt19937& rng, int64_t rows, int64_t cols) {
  return bf16(rng, {2 * rows, 2 * cols}).slice(0, 0, 2 * rows, 2).slice(1, 0, 2 * cols, 2);
}

void check_mm(const Tensor& a, const Tensor& b) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  SCOPED_TRACE("mm " + tt::str(a.sizes()) + " strides " + tt::str(a.strides()) + " @ " + tt::str(b.sizes()) +
               " strides " + tt::str(b.strides()));
  expect_bf16_product(tsr::mm(a, b), reference(tt::values(a), tt::values(b), nullptr, 1, m, k, n), {m, n}, k);
}

void check_bmm(const Tensor& a, const Tensor& b) {
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  SCOPED_TRACE("bmm " + tt::str(a.sizes()) + " strides " + tt::str(a.strides()) + " @ " + tt::str(b.sizes()) +
               " strides " + tt::str(b.strides()));
  expect_bf16_product(tsr::bmm(a, b), reference(tt::values(a), tt::values(b), nullptr, batch, m, k, n), {batch, m, n},
                      k);
}

// linear(x [m, k], w [n, k], bias [n] or none): with a bias, the fused _nn_linear kernel; without,
// matmul with w transposed.
void check_linear(const Tensor& x, const Tensor& w, const Tensor* bias) {
  const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  SCOPED_TRACE("linear " + tt::str(x.sizes()) + " " + tt::str(w.sizes()) + (bias ? " bias" : " no bias"));
  static const tsr::Op linear("linear");
  const Tensor y = bias ? tsr::call(linear, {x, w, *bias}) : tsr::call(linear, {x, w, tsr::none});
  std::vector<double> bv;
  if (bias) bv = tt::values(*bias);
  expect_bf16_product(y, reference(tt::values(x), tt::values(w.t().contiguous()), bias ? &bv : nullptr, 1, m, k, n),
                      {m, n}, k);
}

const std::vector<std::array<int64_t, 3>>& shapes() {  // m, k, n
  static const std::vector<std::array<int64_t, 3>> v = {{1, 1, 1},    {1, 7, 33},    {7, 33, 1},   {33, 129, 7},
                                                        {129, 7, 33}, {64, 300, 65}, {17, 1, 129}, {2, 1000, 3}};
  return v;
}

TEST(CpuMatmulBf16, MmMatchesFloat64) {
  std::mt19937 rng(41);
  for (const auto& s : shapes())
    for (Layout la : {Layout::Contiguous, Layout::Transposed})
      for (Layout lb : {Layout::Contiguous, Layout::Transposed})
        check_mm(bf16(rng, {s[0], s[1]}, la), bf16(rng, {s[1], s[2]}, lb));
}

TEST(CpuMatmulBf16, MmNonContiguousOperands) {
  std::mt19937 rng(42);
  Tensor big = bf16(rng, {80, 70});
  check_mm(big.slice(1, 3, 40), big.slice(0, 0, 74, 2).slice(1, 5, 26));                   // row strides 70 and 140
  check_mm(big.slice(1, 3, 40).t().slice(0, 0, 33), big.slice(0, 0, 80).slice(1, 1, 30));  // transposed slice
  // Both strides > 1 (no BLAS layout: the core copies the operand dense before the kernel).
  check_mm(doubly_strided(rng, 9, 13), bf16(rng, {13, 5}));
  check_mm(bf16(rng, {9, 13}), doubly_strided(rng, 13, 5));
  // A row broadcast along the rows (row stride 0: copied dense by the core too).
  check_mm(bf16(rng, {1, 12}).expand({6, 12}), bf16(rng, {12, 5}));
}

TEST(CpuMatmulBf16, MmEmptyAndKZero) {
  std::mt19937 rng(43);
  for (const auto& s : std::vector<std::array<int64_t, 3>>{{3, 0, 4}, {0, 5, 2}, {4, 5, 0}, {0, 0, 0}}) {
    const Tensor y = tsr::mm(bf16(rng, {s[0], s[1]}), bf16(rng, {s[1], s[2]}));
    ASSERT_EQ(y.sizes(), (Shape{s[0], s[2]}));
    for (double v : tt::values(y)) EXPECT_EQ(v, 0.0) << tt::str({s[0], s[1], s[2]});  // sums over nothing
  }
  const Tensor z = tsr::bmm(bf16(rng, {3, 2, 0}), bf16(rng, {3, 0, 4}));
  ASSERT_EQ(z.sizes(), (Shape{3, 2, 4}));
  for (double v : tt::values(z)) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(tsr::bmm(bf16(rng, {0, 2, 3}), bf16(rng, {0, 3, 4})).sizes(), (Shape{0, 2, 4}));
}

TEST(CpuMatmulBf16, BmmMatchesFloat64) {
  std::mt19937 rng(44);
  for (const auto& s : std::vector<std::array<int64_t, 4>>{
           {1, 3, 4, 5}, {5, 7, 13, 3}, {64, 8, 8, 8}, {2, 65, 70, 33}, {3, 1, 129, 1}, {7, 33, 1, 17}})
    for (Layout la : {Layout::Contiguous, Layout::Transposed})
      for (Layout lb : {Layout::Contiguous, Layout::Transposed})
        check_bmm(bf16(rng, {s[0], s[1], s[2]}, la), bf16(rng, {s[0], s[2], s[3]}, lb));
}

TEST(CpuMatmulBf16, BmmBatchStrides) {
  std::mt19937 rng(45);
  // Every other matrix (batch stride twice the matrix), and matrices sliced inside a larger batch.
  check_bmm(bf16(rng, {6, 4, 5}).slice(0, 0, 6, 2), bf16(rng, {3, 5, 2}));
  check_bmm(bf16(rng, {3, 9, 11}).slice(1, 2, 9).slice(2, 1, 6), bf16(rng, {3, 5, 7}, Layout::Transposed));
  // One matrix for every product (batch stride 0), on either side, through bmm and through
  // matmul's broadcasting.
  const Tensor a = bf16(rng, {5, 7, 13}), b1 = bf16(rng, {1, 13, 3}), a1 = bf16(rng, {1, 7, 13});
  check_bmm(a, b1.expand({5, 13, 3}));
  check_bmm(a1.expand({5, 7, 13}), bf16(rng, {5, 13, 3}, Layout::Transposed));
  const Ref ref = reference(tt::values(a), tt::values(b1.expand({5, 13, 3}).contiguous()), nullptr, 5, 7, 13, 3);
  expect_bf16_product(tsr::matmul(a, b1), ref, {5, 7, 3}, 13);
  // Both operands shared (oneDNN wants the output's batch to be one of theirs: declined to the
  // generic kernel), and doubly strided matrices in a batch (copied dense by the core).
  check_bmm(a1.expand({4, 7, 13}), b1.expand({4, 13, 3}));
  check_bmm(bf16(rng, {3, 8, 10}).slice(1, 0, 8, 2).slice(2, 0, 10, 2), bf16(rng, {3, 5, 6}));
}

TEST(CpuMatmulBf16, LinearBiasOnAndOff) {
  std::mt19937 rng(46);
  for (const auto& s : shapes()) {
    const int64_t m = s[0], k = s[1], n = s[2];
    const Tensor x = bf16(rng, {m, k}), w = bf16(rng, {n, k}), b = bf16(rng, {n});
    check_linear(x, w, &b);
    check_linear(x, w, nullptr);
  }
  // k = 0: every row is the bias; empty batch.
  const Tensor b = bf16(rng, {5});
  const std::vector<double> bv = tt::values(b);
  static const tsr::Op linear("linear");
  const std::vector<double> y = tt::values(tsr::call(linear, {bf16(rng, {3, 0}), bf16(rng, {5, 0}), b}));
  ASSERT_EQ(y.size(), size_t(15));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], bv[i % 5]) << i;
  EXPECT_EQ(tsr::call(linear, {bf16(rng, {0, 4}), bf16(rng, {5, 4}), b}).sizes(), (Shape{0, 5}));
  // A 3-D input (folded into rows) and a non-contiguous one (the core makes it dense).
  const Tensor x3 = bf16(rng, {2, 3, 9}), w = bf16(rng, {5, 9});
  const Tensor y3 = tsr::call(linear, {x3, w, b});
  ASSERT_EQ(y3.sizes(), (Shape{2, 3, 5}));
  expect_bf16_product(y3.reshape({6, 5}), reference(tt::values(x3), tt::values(w.t().contiguous()), &bv, 1, 6, 9, 5),
                      {6, 5}, 9);
  check_linear(bf16(rng, {9, 6}).t(), bf16(rng, {5, 9}), &b);
}

// Several threads running the same and different problems at once share the plan cache.
TEST(CpuMatmulBf16, ConcurrentCallsAgree) {
  std::mt19937 rng(47);
  const Tensor a = bf16(rng, {33, 65}), b = bf16(rng, {65, 17}), c = bf16(rng, {17, 65});
  const std::vector<double> want1 = tt::values(tsr::mm(a, b)), want2 = tt::values(tsr::mm(c, a.t()));
  std::vector<int> ok(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      bool good = true;
      for (int i = 0; i < 20; ++i)
        good = good && ((t + i) % 2 ? tt::values(tsr::mm(c, a.t())) == want2 : tt::values(tsr::mm(a, b)) == want1);
      ok[size_t(t)] = good;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_TRUE(ok[size_t(t)]) << "thread " << t;
}

// ---- dispatch ------------------------------------------------------------------------------------

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

// Whether the oneDNN kernels should be registered: built with oneDNN, not switched off, a CPU
// with avx512_bf16.
bool onednn_bf16_expected() {
  const char* off = std::getenv("TESSERA_CPU_ONEDNN");
  return TSR_TEST_CPU_HAS_DNNL && !(off && std::string(off) == "0") && cpu_has_avx512_bf16();
}

// The cpu kernels of `op`: name -> (dtype mask, priority).
std::vector<tsr_kernel_info_t> cpu_kernels(const char* op_name) {
  tsr_op_t* op = nullptr;
  tsr::check(tsr::api()->op_find(tsr::runtime(), op_name, &op));
  std::vector<tsr_kernel_info_t> v;
  for (size_t k = 0; k < tsr::api()->op_kernel_count(op); ++k) {
    tsr_kernel_info_t info{};
    info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
    tsr::check(tsr::api()->op_kernel_info(op, k, &info));
    if (info.device_type == 0) v.push_back(info);
  }
  return v;
}

// How many products the side library's bf16 matmul has run in this process; -1 when the
// library is not loaded (or not built).
int64_t onednn_matmul_runs() {
#if TSR_TEST_CPU_HAS_DNNL
  void* h = dlopen(TSR_TEST_CPU_ONEDNN_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -1;
  auto fn = reinterpret_cast<int64_t (*)()>(dlsym(h, "tsr_cpu_onednn_matmul_runs"));
  const int64_t n = fn ? fn() : -1;
  dlclose(h);
  return n;
#else
  return -1;
#endif
}

TEST(CpuMatmulBf16, KernelsRegistered) {
  for (const auto& [op, kernel] : {std::pair<const char*, std::string>{"mm", "cpu::dnnl_mm_bf16"},
                                   {"bmm", "cpu::dnnl_bmm_bf16"},
                                   {"_nn_linear", "cpu::dnnl_linear_bf16"}}) {
    const tsr_kernel_info_t* ours = nullptr;
    int32_t generic_priority = 0;
    const std::vector<tsr_kernel_info_t> kernels = cpu_kernels(op);
    for (const tsr_kernel_info_t& k : kernels) {
      if (kernel == k.kernel_name)
        ours = &k;
      else
        generic_priority = k.priority;
    }
    const bool found = ours != nullptr;
    if (ours) {
      EXPECT_EQ(ours->dtype_mask, TSR_DTYPE_BIT(TSR_BF16)) << op << ": bf16 only (no f16: oneDNN lacks it here)";
      EXPECT_GT(ours->priority, generic_priority) << op << ": must be tried before the generic kernel";
    }
    EXPECT_EQ(found, onednn_bf16_expected()) << op << ": registered only with oneDNN on and avx512_bf16";
  }
}

// The values tests above pass on either path; this proves which one ran: the side library
// counts its products, and the layouts it declines leave the count alone.
TEST(CpuMatmulBf16, RunsOnOneDnnWhereItShould) {
  if (!onednn_bf16_expected())
    GTEST_SKIP() << "no oneDNN bf16 matmul here: tessera_cpu without oneDNN, TESSERA_CPU_ONEDNN=0, or a CPU without "
                    "avx512_bf16 (oneDNN would emulate bf16, slower than the f32 path)";
  // The kernels are registered by cpuid but decline when oneDNN's ISA is capped below avx512_bf16.
  for (const char* cap : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* v = std::getenv(cap))
      GTEST_SKIP() << cap << "=" << v << " may keep oneDNN from running bf16 natively: the kernels then decline";
  std::mt19937 rng(48);
  const Tensor a = bf16(rng, {7, 33}), b = bf16(rng, {33, 5}), w = bf16(rng, {5, 33}), bias = bf16(rng, {5});
  Tensor y = tsr::mm(a, b);  // loads the side library
  const int64_t n0 = onednn_matmul_runs();
  ASSERT_GE(n0, 1) << "the first bf16 mm did not run on oneDNN";
  y = tsr::mm(a.t().contiguous().t(), b);  // column-major a: still oneDNN
  EXPECT_EQ(onednn_matmul_runs(), n0 + 1) << "mm";
  y = tsr::bmm(bf16(rng, {3, 7, 33}), b.unsqueeze(0).expand({3, 33, 5}));
  EXPECT_EQ(onednn_matmul_runs(), n0 + 2) << "bmm with a shared operand";
  static const tsr::Op linear("linear");
  y = tsr::call(linear, {a, w, bias});
  EXPECT_EQ(onednn_matmul_runs(), n0 + 3) << "linear with a bias (_nn_linear)";
  // Declined to the generic kernels: both operands shared by the batch, k = 0; f16 never
  // reaches oneDNN.
  y = tsr::bmm(a.unsqueeze(0).expand({4, 7, 33}), b.unsqueeze(0).expand({4, 33, 5}));
  EXPECT_EQ(y.sizes(), (Shape{4, 7, 5}));
  y = tsr::mm(bf16(rng, {7, 0}), bf16(rng, {0, 5}));
  y = tsr::mm(a.to(TSR_F16), b.to(TSR_F16));
  EXPECT_EQ(onednn_matmul_runs(), n0 + 3) << "declined or f16 problems must not run on oneDNN";
}

// f32 linear with a bias: oneDNN's matmul primitive adds the bias in its epilogue (or, with
// TESSERA_CPU_ONEDNN=0 or without oneDNN, the generic kernel writes bias rows and accumulates
// onto them). Values against float64 with an f32 accumulation bound, including a transposed
// input, k = 0 (the output is the bias) and an empty batch; and that it runs on oneDNN where built.
TEST(CpuLinearF32, MatchesFloat64AndRunsOnOneDnnWhereBuilt) {
  std::mt19937 rng(61);
  auto f32 = [&](const Shape& shape) { return tt::random_tensor(shape, TSR_F32, rng, Kind::Any, Layout::Contiguous); };
  static const tsr::Op linear("linear");
  const int64_t runs0 = onednn_matmul_runs();
  int products = 0;
  for (const auto& [m, k, n] : shapes()) {
    const Tensor x = f32({m, k}), w = f32({n, k}), b = f32({n});
    for (bool transposed : {false, true}) {
      const Tensor xi = transposed ? x.t().contiguous().t() : x;
      SCOPED_TRACE("f32 linear " + tt::str(xi.sizes()) + " strides " + tt::str(xi.strides()));
      const Tensor y = tsr::call(linear, {xi, w, b});
      ++products;
      std::vector<double> bv = tt::values(b);
      const Ref ref = reference(tt::values(x), tt::values(w.t().contiguous()), &bv, 1, m, k, n);
      const std::vector<double> g = tt::values(y);
      ASSERT_EQ(y.sizes(), (Shape{m, n}));
      for (size_t i = 0; i < g.size(); ++i)
        ASSERT_LE(std::fabs(g[i] - ref.value[i]), 2.0 * double(k + 1) * std::ldexp(1.0, -24) * ref.scale[i] + 1e-30)
            << "at " << i << ": got " << g[i] << ", expected " << ref.value[i];
    }
  }
  const Tensor b = f32({5});
  const std::vector<double> y0 = tt::values(tsr::call(linear, {f32({3, 0}), f32({5, 0}), b}));
  for (size_t i = 0; i < y0.size(); ++i) EXPECT_EQ(y0[i], tt::values(b)[i % 5]) << "k = 0: the output is the bias";
  EXPECT_EQ(tsr::call(linear, {f32({0, 4}), f32({5, 4}), b}).sizes(), (Shape{0, 5}));
  const char* off = std::getenv("TESSERA_CPU_ONEDNN");
  if (!TSR_TEST_CPU_HAS_DNNL || (off && std::string(off) == "0")) return;
  EXPECT_EQ(onednn_matmul_runs() - std::max<int64_t>(runs0, 0), products) << "every f32 linear with a bias on oneDNN";
  bool registered = false;
  for (const tsr_kernel_info_t& k : cpu_kernels("_nn_linear"))
    if (std::string(k.kernel_name) == "cpu::dnnl_linear_f32") {
      registered = true;
      EXPECT_EQ(k.dtype_mask, TSR_DTYPE_BIT(TSR_F32));
    }
  EXPECT_TRUE(registered);
}

}  // namespace
