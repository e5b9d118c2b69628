// CUDA backend: mm / bmm / matmul (cuBLASLt, cuBLAS fallback, integer kernel) and the cuSOLVER
// linear algebra (cholesky, inverse, linalg_solve, det, slogdet), each compared with a float64
// reference computed by the CPU backend from the same inputs. Transposed, padded, offset and
// broadcast (stride-0) operands, empty and odd sizes, and the TF32 switch.
// Every test skips, saying why, when the runtime has no "cuda" device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using tsr::Tensor;

// The precision switches are ABI 1.2: a core without them runs every test but the TF32 ones.
bool has_precision() {
  const tsr_api_t* a = tsr::api();
  return TSR_HAS_FIELD(a, tsr_api_t, precision_set) && a->precision_get && a->precision_set;
}

class CudaMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = tsr::runtime();
    auto* api = tsr::api();
    int32_t type = -1;
    if (tsr_status_t st = api->device_type_lookup(rt_, "cuda", &type)) {
      std::string why = api->status_message(st);
      api->status_free(st);
      GTEST_SKIP() << "no \"cuda\" device type in the runtime (" << why << ")";
    }
    if (api->device_count(rt_, type) == 0) GTEST_SKIP() << "the cuda device type has 0 devices";
    dev_ = tsr::Device(tsr_device_t{type, 0});
    if (has_precision()) {
      tf32_ = api->precision_get(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32);
      api->precision_set(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32, 0);
    }
    tsr::manual_seed(1234);
  }
  void TearDown() override {
    if (rt_ && tf32_ >= 0) tsr::api()->precision_set(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32, tf32_);
  }

  // Random values of dtype dt on the CPU (bounded so f16 products stay finite).
  Tensor rnd(std::vector<int64_t> sizes, tsr_dtype_t dt) const { return tsr::randn(std::move(sizes)).to(dt); }
  Tensor cuda(const Tensor& t) const { return t.to(dev_); }

  tsr_runtime_t* rt_ = nullptr;
  tsr::Device dev_;
  int32_t tf32_ = -1;
};

std::vector<double> host64(const Tensor& t) {
  return t.to(tsr::Device::cpu(), TSR_F64).contiguous().to_vector<double>();
}

// max |got - ref| / max(1, max |ref|): the error relative to the result's scale.
double rel_err(const Tensor& got, const Tensor& ref) {
  std::vector<double> g = host64(got), r = host64(ref);
  EXPECT_EQ(g.size(), r.size());
  double scale = 1, err = 0;
  for (double v : r) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < std::min(g.size(), r.size()); ++i) {
    const double d = std::fabs(g[i] - r[i]);
    if (std::isnan(d)) return INFINITY;
    err = std::max(err, d);
  }
  return err / scale;
}

// Tolerance of a k-long dot product in dtype dt (f32 accumulation for the reduced floats).
double tol(tsr_dtype_t dt, int64_t k, bool tf32 = false) {
  const double sk = std::sqrt(double(std::max<int64_t>(k, 1)));
  switch (dt) {
    case TSR_F64:
      return 1e-12 * sk;
    case TSR_F32:
      return (tf32 ? 2e-3 : 2e-6) * sk;
    case TSR_F16:
      return 2e-3 * sk + 1e-3;  // plus rounding of the result to f16
    case TSR_BF16:
      return 1e-2 * sk + 8e-3;
    default:
      return 0;
  }
}

// Checks a @ b on cuda against the f64 CPU product of the same (rounded) values; a and b are CPU
// tensors of any layout, moved to cuda with their layout kept (as_strided over a copy).
Tensor same_layout_on(const Tensor& t, const tsr::Device& dev) {
  // A dense copy of t's storage span on dev, then the same view over it.
  const std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  int64_t span = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 0) span = 0;
  if (span)
    for (size_t d = 0; d < sizes.size(); ++d) span += (sizes[d] - 1) * strides[d];
  const int64_t off = t.storage_offset();
  Tensor base = t.as_strided({off + span}, {1}, 0).to(dev);
  return base.as_strided(sizes, strides, off);
}

const tsr_dtype_t kFloatTypes[] = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};

void expect_mm(const Tensor& a, const Tensor& b, const tsr::Device& dev, bool tf32 = false,
               const std::string& what = "") {
  const tsr_dtype_t dt = a.dtype();
  Tensor ga = same_layout_on(a, dev), gb = same_layout_on(b, dev);
  ASSERT_EQ(ga.strides(), a.strides());
  Tensor got = a.dim() == 2 ? tsr::mm(ga, gb) : tsr::bmm(ga, gb);
  ASSERT_EQ(got.device(), dev);
  Tensor ref = a.dim() == 2 ? tsr::mm(a.to(TSR_F64), b.to(TSR_F64)) : tsr::bmm(a.to(TSR_F64), b.to(TSR_F64));
  ASSERT_EQ(got.sizes(), ref.sizes()) << what;
  const int64_t k = a.size(-1);
  EXPECT_LE(rel_err(got, ref), tol(dt, k, tf32))
      << what << " dtype " << tsr::dtype_name(dt) << " a " << tsr::describe(a) << " b " << tsr::describe(b);
}

TEST_F(CudaMatmul, MmShapesAndDtypes) {
  const int64_t shapes[][3] = {{1, 1, 1},   {7, 13, 5},   {64, 64, 64}, {127, 255, 63},
                               {1, 300, 1}, {513, 17, 1}, {1, 17, 513}, {256, 1024, 128}};
  for (tsr_dtype_t dt : kFloatTypes)
    for (auto& s : shapes) expect_mm(rnd({s[0], s[1]}, dt), rnd({s[1], s[2]}, dt), dev_, false, "mm");
}

TEST_F(CudaMatmul, MmTransposedPaddedOffsetOperands) {
  const int64_t m = 37, k = 70, n = 29;
  for (tsr_dtype_t dt : kFloatTypes) {
    Tensor a = rnd({m, k}, dt), b = rnd({k, n}, dt);
    Tensor at = rnd({k, m}, dt).t(), bt = rnd({n, k}, dt).t();  // column-major operands
    expect_mm(at, b, dev_, false, "a^T");
    expect_mm(a, bt, dev_, false, "b^T");
    expect_mm(at, bt, dev_, false, "a^T b^T");
    // Leading dimension larger than the row (a column slice), and an element offset that breaks
    // 16-byte alignment.
    Tensor ap = rnd({m, k + 5}, dt).narrow(1, 1, k), bp = rnd({k, n + 3}, dt).narrow(1, 3, n);
    expect_mm(ap, bp, dev_, false, "padded+offset");
    Tensor atp = rnd({k + 2, m}, dt).narrow(0, 1, k).t();  // column-major with an offset
    expect_mm(atp, bp, dev_, false, "col-major offset");
    // Neither row- nor column-major: the core copies, the result must not care.
    Tensor as = rnd({m, 2 * k}, dt).slice(1, 0, 2 * k, 2);
    expect_mm(as, b, dev_, false, "stride-2 columns");
  }
}

TEST_F(CudaMatmul, MmEmpty) {
  for (tsr_dtype_t dt : kFloatTypes) {
    Tensor z = tsr::mm(cuda(rnd({5, 0}, dt)), cuda(rnd({0, 3}, dt)));  // k = 0: zeros
    ASSERT_EQ(z.sizes(), (std::vector<int64_t>{5, 3}));
    for (double v : host64(z)) EXPECT_EQ(v, 0.0);
    EXPECT_EQ(tsr::mm(cuda(rnd({0, 4}, dt)), cuda(rnd({4, 3}, dt))).sizes(), (std::vector<int64_t>{0, 3}));
    EXPECT_EQ(tsr::mm(cuda(rnd({2, 4}, dt)), cuda(rnd({4, 0}, dt))).sizes(), (std::vector<int64_t>{2, 0}));
    EXPECT_EQ(tsr::bmm(cuda(rnd({0, 2, 4}, dt)), cuda(rnd({0, 4, 3}, dt))).sizes(), (std::vector<int64_t>{0, 2, 3}));
    Tensor zb = tsr::bmm(cuda(rnd({3, 2, 0}, dt)), cuda(rnd({3, 0, 4}, dt)));
    for (double v : host64(zb)) EXPECT_EQ(v, 0.0);
  }
}

TEST_F(CudaMatmul, BmmLayoutsAndBroadcast) {
  const int64_t B = 5, m = 33, k = 48, n = 17;
  for (tsr_dtype_t dt : kFloatTypes) {
    expect_mm(rnd({B, m, k}, dt), rnd({B, k, n}, dt), dev_, false, "bmm");
    expect_mm(rnd({B, k, m}, dt).transpose(1, 2), rnd({B, n, k}, dt).transpose(1, 2), dev_, false, "bmm transposed");
    // Batch stride 0 (one matrix broadcast over the batch).
    expect_mm(rnd({B, m, k}, dt), rnd({1, k, n}, dt).expand({B, k, n}), dev_, false, "bmm broadcast b");
    expect_mm(rnd({1, m, k}, dt).expand({B, m, k}), rnd({B, k, n}, dt), dev_, false, "bmm broadcast a");
    // Batch not outermost in memory: batch stride k, row stride B*k.
    expect_mm(rnd({m, B, k}, dt).permute({1, 0, 2}), rnd({B, k, n}, dt), dev_, false, "bmm permuted batch");
    expect_mm(rnd({1, 1, 1}, dt), rnd({1, 1, 1}, dt), dev_, false, "bmm 1x1x1");
  }
}

TEST_F(CudaMatmul, MatmulComposite) {
  // [B, T, C] @ [C, N] folds into one mm; [B, T, C] @ [B, C, N] is a bmm; vectors too.
  Tensor x = rnd({4, 9, 32}, TSR_F32), w = rnd({32, 24}, TSR_F32), wb = rnd({4, 32, 24}, TSR_F32),
         v = rnd({32}, TSR_F32);
  EXPECT_LE(rel_err(tsr::matmul(cuda(x), cuda(w)), tsr::matmul(x.to(TSR_F64), w.to(TSR_F64))), tol(TSR_F32, 32));
  EXPECT_LE(rel_err(tsr::matmul(cuda(x), cuda(wb)), tsr::matmul(x.to(TSR_F64), wb.to(TSR_F64))), tol(TSR_F32, 32));
  EXPECT_LE(rel_err(tsr::matmul(cuda(x), cuda(v)), tsr::matmul(x.to(TSR_F64), v.to(TSR_F64))), tol(TSR_F32, 32));
  // Through autograd: mm's backward runs mm on transposed views.
  Tensor a = cuda(rnd({6, 10}, TSR_F64)), b = cuda(rnd({10, 7}, TSR_F64));
  a.requires_grad_(true);
  b.requires_grad_(true);
  tsr::sum(tsr::mm(a, b)).backward();
  Tensor ac = a.detach().to(tsr::Device::cpu()), bc = b.detach().to(tsr::Device::cpu());
  // d sum(a b) / da = 1 b^T, / db = a^T 1.
  EXPECT_LE(rel_err(a.grad(), tsr::mm(tsr::ones({6, 7}, TSR_F64), bc.t())), 1e-12);
  EXPECT_LE(rel_err(b.grad(), tsr::mm(ac.t(), tsr::ones({6, 7}, TSR_F64))), 1e-12);
}

TEST_F(CudaMatmul, IntegerDtypesExact) {
  const tsr_dtype_t ints[] = {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};
  for (tsr_dtype_t dt : ints) {
    // Values that overflow the narrow types: the result must wrap exactly like the CPU's.
    Tensor a = tsr::randint(-100, 100, {13, 21}, TSR_I64).to(dt), b = tsr::randint(-100, 100, {21, 9}, TSR_I64).to(dt);
    Tensor bt = tsr::randint(-100, 100, {9, 21}, TSR_I64).to(dt).t();
    for (const Tensor& bb : {b, bt}) {
      Tensor got = tsr::mm(same_layout_on(a, dev_), same_layout_on(bb, dev_)).to(tsr::Device::cpu());
      Tensor ref = tsr::mm(a, bb);
      EXPECT_EQ(got.to(TSR_I64).to_vector<int64_t>(), ref.to(TSR_I64).to_vector<int64_t>()) << tsr::dtype_name(dt);
    }
    Tensor a3 = tsr::randint(-50, 50, {3, 5, 7}, TSR_I64).to(dt), b3 = tsr::randint(-50, 50, {3, 7, 4}, TSR_I64).to(dt);
    EXPECT_EQ(tsr::bmm(cuda(a3), cuda(b3)).to(tsr::Device::cpu()).to(TSR_I64).to_vector<int64_t>(),
              tsr::bmm(a3, b3).to(TSR_I64).to_vector<int64_t>())
        << tsr::dtype_name(dt);
  }
}

TEST_F(CudaMatmul, Tf32SwitchChangesPrecision) {
  if (!has_precision()) GTEST_SKIP() << "the core has no precision switches (ABI < 1.2)";
  auto* api = tsr::api();
  const int64_t n = 1024;
  Tensor a = rnd({n, n}, TSR_F32), b = rnd({n, n}, TSR_F32);
  Tensor ref = tsr::mm(a.to(TSR_F64), b.to(TSR_F64));
  Tensor ga = cuda(a), gb = cuda(b);
  api->precision_set(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32, 0);
  const double err_off = rel_err(tsr::mm(ga, gb), ref);
  api->precision_set(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32, 1);
  const double err_on = rel_err(tsr::mm(ga, gb), ref);
  api->precision_set(rt_, TSR_PRECISION_MATMUL_ALLOW_TF32, 0);
  EXPECT_LE(err_off, tol(TSR_F32, n, false)) << "full f32 with TF32 off";
  EXPECT_LE(err_on, tol(TSR_F32, n, true)) << "TF32 on";
  // TF32 keeps 10 mantissa bits: with it on, the error must be visibly larger (the switch is read).
  EXPECT_GT(err_on, 4 * err_off) << "TF32 on gave f32-exact results: is the switch ignored?";
  // And off again is exact again (the algorithm cache keys on the switch).
  EXPECT_LE(rel_err(tsr::mm(ga, gb), ref), tol(TSR_F32, n, false));
}

TEST_F(CudaMatmul, ReducedPrecisionReductionSwitches) {
  // Both settings must give f32-accumulated accuracy on a long reduction (split-K may change).
  if (!has_precision()) GTEST_SKIP() << "the core has no precision switches (ABI < 1.2)";
  auto* api = tsr::api();
  const int64_t k = 8192;
  for (auto [dt, setting] : {std::pair{TSR_F16, TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION},
                             std::pair{TSR_BF16, TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION}}) {
    Tensor a = rnd({16, k}, dt), b = rnd({k, 16}, dt);
    Tensor ref = tsr::mm(a.to(TSR_F64), b.to(TSR_F64));
    const int32_t prev = api->precision_get(rt_, setting);
    for (int32_t on : {0, 1}) {
      api->precision_set(rt_, setting, on);
      EXPECT_LE(rel_err(tsr::mm(cuda(a), cuda(b)), ref), tol(dt, k)) << tsr::dtype_name(dt) << " reduced=" << on;
    }
    api->precision_set(rt_, setting, prev);
  }
}

// ---- linear algebra (cuSOLVER) ----------------------------------------------------------------

// Well-conditioned random matrices [*, n, n]: A + n I.
Tensor well_conditioned(std::vector<int64_t> batch, int64_t n, tsr_dtype_t dt) {
  std::vector<int64_t> s = batch;
  s.push_back(n);
  s.push_back(n);
  std::vector<double> diag(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) diag[size_t(i * n + i)] = double(n);
  Tensor a = tsr::randn(s, TSR_F64);
  return tsr::add(a, tsr::from_vector(diag, {n, n})).to(dt);
}

Tensor spd(std::vector<int64_t> batch, int64_t n, tsr_dtype_t dt) {
  Tensor a = well_conditioned(batch, n, TSR_F64);
  Tensor s = tsr::matmul(a, a.transpose(-2, -1));
  return s.to(dt);
}

double lin_tol(tsr_dtype_t dt) { return dt == TSR_F64 ? 1e-9 : 2e-3; }

TEST_F(CudaMatmul, LinalgAgainstCpu) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    for (int64_t n : {1, 3, 17, 64}) {
      for (std::vector<int64_t> batch : {std::vector<int64_t>{}, std::vector<int64_t>{4}, std::vector<int64_t>{2, 3}}) {
        const std::string what =
            std::string(tsr::dtype_name(dt)) + " n=" + std::to_string(n) + " batch=" + std::to_string(batch.size());
        Tensor a = well_conditioned(batch, n, dt);
        Tensor a64 = a.to(TSR_F64);
        EXPECT_LE(rel_err(tsr::inverse(cuda(a)), tsr::inverse(a64)), lin_tol(dt)) << "inverse " << what;
        // det(A + n I) grows like n^n: scale to I + A/n so that f32 does not overflow.
        Tensor ad = tsr::true_divide(a64, double(n)).to(dt), ad64 = ad.to(TSR_F64);
        EXPECT_LE(rel_err(tsr::det(cuda(ad)), tsr::det(ad64)), lin_tol(dt)) << "det " << what;
        auto [sg, la] = tsr::slogdet(cuda(ad));
        auto [sg64, la64] = tsr::slogdet(ad64);
        EXPECT_EQ(host64(sg), host64(sg64)) << "slogdet sign " << what;
        EXPECT_LE(rel_err(la, la64), lin_tol(dt)) << "slogdet " << what;
        std::vector<int64_t> bs = batch;
        bs.push_back(n);
        bs.push_back(5);
        Tensor b = tsr::randn(bs, TSR_F64).to(dt);
        EXPECT_LE(rel_err(tsr::linalg_solve(cuda(a), cuda(b)), tsr::linalg_solve(a64, b.to(TSR_F64))), lin_tol(dt))
            << "solve " << what;
        Tensor s = spd(batch, n, dt);
        for (bool upper : {false, true})
          EXPECT_LE(rel_err(tsr::cholesky(cuda(s), upper), tsr::cholesky(s.to(TSR_F64), upper)), lin_tol(dt))
              << "cholesky upper=" << upper << " " << what;
      }
    }
  }
}

TEST_F(CudaMatmul, LinalgTransposedInputAndVectorRhs) {
  Tensor a = well_conditioned({3}, 9, TSR_F64).transpose(1, 2);  // non-contiguous input
  EXPECT_LE(rel_err(tsr::inverse(same_layout_on(a, dev_)), tsr::inverse(a)), 1e-10);
  Tensor v = tsr::randn({3, 9}, TSR_F64);  // batch of vectors
  EXPECT_LE(rel_err(tsr::linalg_solve(same_layout_on(a, dev_), cuda(v)), tsr::linalg_solve(a, v)), 1e-10);
}

TEST_F(CudaMatmul, LinalgEmpty) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    EXPECT_EQ(tsr::inverse(cuda(tsr::empty({0, 0}, dt))).sizes(), (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(tsr::inverse(cuda(tsr::empty({0, 3, 3}, dt))).sizes(), (std::vector<int64_t>{0, 3, 3}));
    Tensor d = tsr::det(cuda(tsr::empty({2, 0, 0}, dt)));  // det of 0x0 is 1
    EXPECT_EQ(host64(d), (std::vector<double>{1.0, 1.0}));
    EXPECT_EQ(tsr::cholesky(cuda(tsr::empty({4, 0, 0}, dt))).sizes(), (std::vector<int64_t>{4, 0, 0}));
  }
}

TEST_F(CudaMatmul, LinalgErrorsLikeCpu) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    // Batch element 1 singular (a zero matrix), element 0 fine.
    Tensor a = well_conditioned({3}, 4, dt);
    Tensor sing = tsr::zeros({4, 4}, dt);
    Tensor batch = tsr::stack({a[0], sing, a[2]}, 0);
    for (auto call : {+[](const Tensor& t) { (void)tsr::inverse(t); },
                      +[](const Tensor& t) {
                        (void)tsr::linalg_solve(t, tsr::ones({3, 4, 2}, t.dtype(), t.device()));
                      }}) {
      std::string msg;
      try {
        call(cuda(batch));
        tsr::check(tsr::api()->device_synchronize(tsr::runtime(), batch.device().d));
      } catch (const tsr::Error& e) {
        msg = e.what();
        EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << msg;
      }
      EXPECT_NE(msg.find("singular"), std::string::npos) << msg;
      EXPECT_NE(msg.find("batch index 1"), std::string::npos) << msg;
    }
    // det of a singular matrix is 0 (no error), slogdet gives sign 0 and -inf.
    EXPECT_EQ(host64(tsr::det(cuda(batch)))[1], 0.0);
    auto [sg, la] = tsr::slogdet(cuda(batch));
    EXPECT_EQ(host64(sg)[1], 0.0);
    EXPECT_TRUE(std::isinf(host64(la)[1]) && host64(la)[1] < 0);
    // Not positive-definite at batch index 2.
    Tensor s = spd({3}, 4, dt);
    Tensor bad = tsr::stack({s[0], s[1], -s[2]}, 0);
    std::string msg;
    try {
      (void)tsr::cholesky(cuda(bad));
    } catch (const tsr::Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("not positive-definite"), std::string::npos) << msg;
    EXPECT_NE(msg.find("batch index 2"), std::string::npos) << msg;
  }
}

// ---- convolution (cuDNN through _nn_conv2d* when the core defines them, else im2col + GEMM) --------

TEST_F(CudaMatmul, Conv2dForwardBackwardAgainstCpu) {
  auto* api = tsr::api();
  const bool prec = has_precision();
  const int32_t prev = prec ? api->precision_get(rt_, TSR_PRECISION_CONV_ALLOW_TF32) : 1;
  struct Case {
    std::vector<int64_t> x, w;
    std::vector<int64_t> stride, padding, dilation;
    int64_t groups;
  };
  const Case cases[] = {
      {{2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 4, 8, 8}, {6, 2, 3, 2}, {2, 1}, {0, 1}, {1, 2}, 2},  // groups, asymmetric everything
      {{3, 6, 7, 5}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 6},  // depthwise
      {{2, 5, 6, 6}, {7, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},  // 1x1
  };
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
    for (int32_t tf32 : {0, 1}) {
      if (tf32 && dt != TSR_F32) continue;
      if (!prec && tf32 != prev) continue;
      if (prec) api->precision_set(rt_, TSR_PRECISION_CONV_ALLOW_TF32, tf32);
      for (const Case& cs : cases) {
        Tensor x = rnd(cs.x, dt), w = rnd(cs.w, dt), b = rnd({cs.w[0]}, dt);
        Tensor gx = cuda(x).clone(), gw = cuda(w).clone(), gb = cuda(b).clone();  // fresh leaves
        gx.requires_grad_(true);
        gw.requires_grad_(true);
        gb.requires_grad_(true);
        Tensor y = tsr::nn::conv2d(gx, gw, gb, cs.stride, cs.padding, cs.dilation, cs.groups);
        Tensor x64 = x.to(TSR_F64).clone(), w64 = w.to(TSR_F64).clone(), b64 = b.to(TSR_F64).clone();
        x64.requires_grad_(true);
        w64.requires_grad_(true);
        b64.requires_grad_(true);
        Tensor y64 = tsr::nn::conv2d(x64, w64, b64, cs.stride, cs.padding, cs.dilation, cs.groups);
        const int64_t red = cs.w[1] * cs.w[2] * cs.w[3];
        const double t = dt == TSR_F32 ? tol(TSR_F32, red, tf32 != 0) : tol(dt, red);
        EXPECT_LE(rel_err(y, y64), t) << "conv2d " << tsr::dtype_name(dt) << " tf32=" << tf32;
        // Backward with the same upstream gradient on both sides.
        Tensor g = tsr::randn(y64.sizes(), TSR_F64);
        tsr::sum(tsr::mul(y, cuda(g.to(dt)))).backward();
        tsr::sum(tsr::mul(y64, g.to(dt).to(TSR_F64))).backward();
        const double tb = dt == TSR_F32 ? tol(TSR_F32, 64 * red, tf32 != 0) : tol(dt, 64 * red);
        EXPECT_LE(rel_err(gx.grad(), x64.grad()), tb) << "conv2d dx " << tsr::dtype_name(dt);
        EXPECT_LE(rel_err(gw.grad(), w64.grad()), tb) << "conv2d dw " << tsr::dtype_name(dt);
        EXPECT_LE(rel_err(gb.grad(), b64.grad()), tb) << "conv2d db " << tsr::dtype_name(dt);
      }
    }
  }
  if (prec) api->precision_set(rt_, TSR_PRECISION_CONV_ALLOW_TF32, prev);
}

// linear with a bias runs the fused _nn_linear (one cuBLASLt GEMM with EPILOGUE_BIAS, or bias rows
// + beta = 1 where Lt has no algorithm): values and gradients against float64 on the CPU, for odd
// and empty shapes, a misaligned bias (an offset view), a transposed weight, and a batch of
// leading dims; the graph records the fused op.
TEST_F(CudaMatmul, LinearWithBiasEpilogueAgainstFloat64) {
  struct Case {
    std::vector<int64_t> x;
    int64_t n;
  };
  const Case cases[] = {{{7, 13}, 5},    {{64, 64}, 64}, {{2, 3, 33}, 17}, {{1, 1}, 1},
                        {{300, 1}, 513}, {{0, 8}, 4},    {{5, 0}, 3},      {{4, 6}, 0}};
  for (tsr_dtype_t dt : kFloatTypes) {
    for (const Case& cs : cases) {
      const int64_t K = cs.x.back();
      Tensor x = rnd(cs.x, dt), w = rnd({cs.n, K}, dt);
      Tensor bias_base = rnd({cs.n + 1}, dt);
      for (bool offset_bias : {false, true}) {
        // An offset of one element misaligns the bias for the epilogue's vector loads.
        Tensor b = offset_bias ? bias_base.narrow(0, 1, cs.n) : bias_base.narrow(0, 0, cs.n);
        Tensor gx = cuda(x), gw = cuda(w), gb = same_layout_on(b, dev_);  // keeps the offset
        Tensor y = tsr::linear(gx, gw, gb);
        ASSERT_EQ(y.device(), dev_);
        Tensor y64 = tsr::linear(x.to(TSR_F64), w.to(TSR_F64), b.to(TSR_F64));
        ASSERT_EQ(y.sizes(), y64.sizes());
        EXPECT_LE(rel_err(y, y64), tol(dt, K) + (dt == TSR_BF16 || dt == TSR_F16 ? 1e-2 : 0))
            << "linear " << tsr::dtype_name(dt) << " x " << tsr::describe(x) << " offset bias " << offset_bias;
      }
    }
  }
  // A weight stored transposed ([K, N] parameter used as w.t()), and gradients.
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    Tensor x = rnd({9, 24}, dt), wt = rnd({24, 10}, dt), b = rnd({10}, dt);
    Tensor gx = cuda(x), gwt = cuda(wt), gb = cuda(b);
    gx.requires_grad_(true);
    gwt.requires_grad_(true);
    gb.requires_grad_(true);
    Tensor y = tsr::linear(gx, gwt.t(), gb);
    EXPECT_STREQ(y.grad_fn_name(), "Linear_biasBackward");
    Tensor x64 = x.to(TSR_F64), wt64 = wt.to(TSR_F64), b64 = b.to(TSR_F64);
    x64.requires_grad_(true);
    wt64.requires_grad_(true);
    b64.requires_grad_(true);
    Tensor y64 = tsr::linear(x64, wt64.t(), b64);
    EXPECT_LE(rel_err(y, y64), tol(dt, 24));
    Tensor g = tsr::randn({9, 10}, TSR_F64);
    tsr::sum(tsr::mul(y, cuda(g.to(dt)))).backward();
    tsr::sum(tsr::mul(y64, g)).backward();
    EXPECT_LE(rel_err(gx.grad(), x64.grad()), tol(dt, 10)) << "dx";
    EXPECT_LE(rel_err(gwt.grad(), wt64.grad()), tol(dt, 9)) << "dw";
    EXPECT_LE(rel_err(gb.grad(), b64.grad()), tol(dt, 9)) << "db";
  }
}

}  // namespace
