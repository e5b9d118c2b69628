// scaled_mm on the CPU in every mode (tensorwise, rowwise, MXFP8, NVFP4) against a float64
// reference computed here from the operands' and scales' codes: every accepted operand dtype
// pair and out dtype, bias and scale_result, odd shapes (M = 1, 3, 129; K = 32, 64, 96; N = 1, 5),
// empty M and N, and non-contiguous operands and scales (mat2 column-major as cuBLASLt wants it,
// scales as transposed views). Tolerance: one unit in the last place of the out dtype at the
// reference value (the kernel sums exactly in float64 and rounds once to float32, then to the out
// dtype).
#include <optional>

#include "quant_test_util.hpp"
#include "tessera/ops/quant.hpp"

namespace {

using tsr::Tensor;
using namespace tsr::qtest;

enum class Mode { Tensorwise, Rowwise, MX, NV };

struct Case {
  Mode mode;
  int64_t M, K, N;
  tsr_dtype_t a_dt, b_dt;
  std::optional<tsr_dtype_t> out_dt;
  std::optional<tsr_dtype_t> bias_dt;
  bool scale_result;
  bool noncontig;
  uint64_t seed;
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "mode " << int(c.mode) << " M=" << c.M << " K=" << c.K << " N=" << c.N << " " << tsr::dtype_name(c.a_dt) << "x"
    << tsr::dtype_name(c.b_dt) << " out=" << (c.out_dt ? tsr::dtype_name(*c.out_dt) : "default")
    << " bias=" << (c.bias_dt ? tsr::dtype_name(*c.bias_dt) : "none") << " sr=" << c.scale_result
    << " noncontig=" << c.noncontig;
  return s.str();
}

Tensor maybe_noncontig(const Tensor& t, bool on) { return on ? tsr::optest::noncontig(t) : t; }

std::vector<double> rand_positive(int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.25, 2.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<float>(u(g));
  return v;
}

void run_case(const Case& c) {
  SCOPED_TRACE(describe(c));
  const bool fp4 = c.mode == Mode::NV;
  const int64_t M = c.M, K = c.K, N = c.N, Kb = fp4 ? K / 2 : K;
  // Operands: self [M, Kb] row-major, mat2 [Kb, N] (codes), and their values [M, K], [K, N].
  const auto acodes = random_codes(M * Kb, c.a_dt, c.seed);
  const auto bcodes = random_codes(Kb * N, c.b_dt, c.seed + 1);
  auto aval = [&](int64_t m, int64_t k) {
    const uint8_t b = acodes[static_cast<size_t>(m * Kb + (fp4 ? k / 2 : k))];
    return decode(fp4 ? static_cast<uint8_t>(k % 2 ? b >> 4 : b & 0xf) : b, c.a_dt);
  };
  auto bval = [&](int64_t k, int64_t n) {
    const uint8_t b = bcodes[static_cast<size_t>((fp4 ? k / 2 : k) * N + n)];
    return decode(fp4 ? static_cast<uint8_t>(k % 2 ? b >> 4 : b & 0xf) : b, c.b_dt);
  };
  Tensor a = maybe_noncontig(from_codes(acodes, {M, Kb}, c.a_dt), c.noncontig);
  Tensor b = maybe_noncontig(from_codes(bcodes, {Kb, N}, c.b_dt), c.noncontig);

  // Scales and their values sa(m, k), sb(n, k).
  Tensor sa, sb;
  std::function<double(int64_t, int64_t)> saval, sbval;
  if (c.mode == Mode::Tensorwise) {
    const auto v = rand_positive(2, c.seed + 2);
    sa = tsr::from_vector(std::vector<float>{float(v[0])}, {});
    sb = tsr::from_vector(std::vector<float>{float(v[1])}, {1});
    saval = [v](int64_t, int64_t) { return v[0]; };
    sbval = [v](int64_t, int64_t) { return v[1]; };
  } else if (c.mode == Mode::Rowwise) {
    const auto va = rand_positive(M, c.seed + 2), vb = rand_positive(N, c.seed + 3);
    std::vector<float> fa(va.begin(), va.end()), fb(vb.begin(), vb.end());
    sa = maybe_noncontig(tsr::from_vector(fa, {M, 1}), c.noncontig);
    sb = maybe_noncontig(tsr::from_vector(fb, {1, N}), c.noncontig);
    saval = [va](int64_t m, int64_t) { return va[static_cast<size_t>(m)]; };
    sbval = [vb](int64_t n, int64_t) { return vb[static_cast<size_t>(n)]; };
  } else {
    const int64_t blk = c.mode == Mode::MX ? 32 : 16, nb = K / blk;
    const tsr_dtype_t sdt = c.mode == Mode::MX ? TSR_F8_E8M0FNU : TSR_F8_E4M3FN;
    const auto pa = random_scale_codes(M * nb, sdt, c.seed + 2), pb = random_scale_codes(N * nb, sdt, c.seed + 3);
    sa = maybe_noncontig(from_codes(swizzle_codes(pa, M, nb), {rup(M, 128), rup(nb, 4)}, sdt), c.noncontig);
    // scale_b as a flat 1-D tensor: only the numel and the row-major order matter.
    sb = from_codes(swizzle_codes(pb, N, nb), {rup(N, 128) * rup(nb, 4)}, sdt);
    saval = [pa, nb, blk, sdt](int64_t m, int64_t k) { return decode(pa[static_cast<size_t>(m * nb + k / blk)], sdt); };
    sbval = [pb, nb, blk, sdt](int64_t n, int64_t k) { return decode(pb[static_cast<size_t>(n * nb + k / blk)], sdt); };
  }
  std::optional<Tensor> bias, sr;
  std::vector<double> biasv;
  if (c.bias_dt) {
    Tensor bt = tsr::optest::randu({N}, c.seed + 4, -3, 3).to(*c.bias_dt);
    biasv = tsr::optest::values(bt);
    bias = maybe_noncontig(bt, c.noncontig);
  }
  double srv = 1.0;
  if (c.scale_result) {
    srv = 0.375;
    sr = tsr::from_vector(std::vector<float>{float(srv)}, {});
  }
  Tensor out = tsr::scaled_mm(a, b, sa, sb, bias, sr, c.out_dt);
  const bool block = c.mode == Mode::MX || c.mode == Mode::NV;
  const tsr_dtype_t want_dt = c.out_dt ? *c.out_dt : block ? TSR_BF16 : c.a_dt;
  ASSERT_EQ(out.dtype(), want_dt);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{M, N}));
  EXPECT_FALSE(out.requires_grad());
  const std::vector<double> got = tsr::optest::values(out);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += saval(m, k) * sbval(n, k) * aval(m, k) * bval(k, n);
      double ref = srv * acc + (bias ? biasv[static_cast<size_t>(n)] : 0.0);
      if (want_dt == TSR_F8_E4M3FN || want_dt == TSR_F8_E5M2) {  // float8 results saturate
        const double lim = want_dt == TSR_F8_E4M3FN ? 448 : 57344;
        ref = std::max(-lim, std::min(lim, ref));
      }
      const double g = got[static_cast<size_t>(m * N + n)];
      ASSERT_LE(std::fabs(g - ref), ulp(ref, want_dt))
          << "at (" << m << ", " << n << "): got " << g << ", want " << ref;
    }
}

struct Shape3 {
  int64_t M, K, N;
};
const Shape3 kShapes[] = {{1, 32, 5}, {3, 64, 5}, {129, 96, 5}, {2, 96, 1}, {0, 32, 5}, {3, 32, 0}};

TEST(QuantScaledMm, TensorwiseAndRowwiseEveryDtype) {
  const std::pair<tsr_dtype_t, tsr_dtype_t> pairs[] = {
      {TSR_F8_E4M3FN, TSR_F8_E4M3FN}, {TSR_F8_E4M3FN, TSR_F8_E5M2}, {TSR_F8_E5M2, TSR_F8_E4M3FN}};
  uint64_t seed = 100;
  for (Mode mode : {Mode::Tensorwise, Mode::Rowwise})
    for (auto [adt, bdt] : pairs)
      for (const Shape3& s : kShapes)
        for (bool nc : {false, true}) {
          std::vector<std::optional<tsr_dtype_t>> outs = {TSR_BF16, TSR_F16, TSR_F32};
          if (mode == Mode::Tensorwise) outs.insert(outs.end(), {std::nullopt, TSR_F8_E4M3FN});
          for (auto odt : outs) run_case({mode, s.M, s.K, s.N, adt, bdt, odt, std::nullopt, false, nc, ++seed});
        }
}

TEST(QuantScaledMm, TensorwiseKZeroGivesBias) {
  for (Mode mode : {Mode::Tensorwise, Mode::Rowwise})
    run_case({mode, 3, 0, 4, TSR_F8_E4M3FN, TSR_F8_E4M3FN, TSR_F32, TSR_F32, true, false, 7});
}

TEST(QuantScaledMm, BiasAndScaleResultEveryDtype) {
  uint64_t seed = 500;
  for (Mode mode : {Mode::Tensorwise, Mode::Rowwise, Mode::MX, Mode::NV})
    for (tsr_dtype_t bdt : {TSR_BF16, TSR_F16, TSR_F32})
      for (bool nc : {false, true}) {
        const tsr_dtype_t op = mode == Mode::NV ? TSR_F4_E2M1FN_X2 : TSR_F8_E4M3FN;
        run_case({mode, 3, 64, 5, op, op, TSR_F32, bdt, true, nc, ++seed});
        run_case({mode, 129, 32, 5, op, op, TSR_BF16, bdt, false, nc, ++seed});
      }
}

TEST(QuantScaledMm, Mxfp8EveryDtype) {
  const std::pair<tsr_dtype_t, tsr_dtype_t> pairs[] = {
      {TSR_F8_E4M3FN, TSR_F8_E4M3FN}, {TSR_F8_E4M3FN, TSR_F8_E5M2}, {TSR_F8_E5M2, TSR_F8_E4M3FN}};
  uint64_t seed = 200;
  for (auto [adt, bdt] : pairs)
    for (const Shape3& s : kShapes)
      for (bool nc : {false, true})
        for (std::optional<tsr_dtype_t> odt :
             {std::optional<tsr_dtype_t>(), std::optional<tsr_dtype_t>(TSR_F16), std::optional<tsr_dtype_t>(TSR_F32)})
          run_case({Mode::MX, s.M, s.K, s.N, adt, bdt, odt, std::nullopt, false, nc, ++seed});
}

TEST(QuantScaledMm, Nvfp4) {
  uint64_t seed = 300;
  for (const Shape3& s : kShapes)
    for (bool nc : {false, true})
      for (std::optional<tsr_dtype_t> odt :
           {std::optional<tsr_dtype_t>(), std::optional<tsr_dtype_t>(TSR_F16), std::optional<tsr_dtype_t>(TSR_F32)})
        run_case({Mode::NV, s.M, s.K, s.N, TSR_F4_E2M1FN_X2, TSR_F4_E2M1FN_X2, odt, std::nullopt, true, nc, ++seed});
  run_case({Mode::NV, 5, 16, 3, TSR_F4_E2M1FN_X2, TSR_F4_E2M1FN_X2, TSR_F32, std::nullopt, false, false, 9});
}

// Scales that require grad: scaled_mm has no derivative (as torch._scaled_mm); the forward
// works and backward names the op.
TEST(QuantScaledMm, NoDerivative) {
  Tensor a = from_codes(random_codes(6, TSR_F8_E4M3FN, 1), {2, 3}, TSR_F8_E4M3FN);
  Tensor b = from_codes(random_codes(12, TSR_F8_E4M3FN, 2), {3, 4}, TSR_F8_E4M3FN);
  Tensor sa = tsr::from_vector(std::vector<float>{2.0f}, {});
  sa.requires_grad_();
  Tensor sb = tsr::from_vector(std::vector<float>{0.5f}, {});
  Tensor out = tsr::scaled_mm(a, b, sa, sb, std::nullopt, std::nullopt, TSR_F32);
  Tensor loss = tsr::sum(out);
  EXPECT_TRUE(tsr::optest::throws_with([&] { loss.backward(); }, {"scaled_mm", "not implemented"}));
}

}  // namespace
