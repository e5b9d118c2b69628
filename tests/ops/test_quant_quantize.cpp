// quantize_mxfp8 / quantize_nvfp4 and their inverses on the CPU, against the recipes restated
// here (scales and codes bit for bit), with the round-trip error bounds of docs/low-precision.md:
//   MXFP8: |x - deq| <= 1/2 ulp_e4m3(x / s) * s, s the block's power-of-two scale (no element
//          saturates: amax / s <= 448); relative to the block, <= 2^-4 |x| for |x / s| >= 2^-6
//          and <= 2^-10 s below.
//   NVFP4: with y = |x| g / bs (bs the block's e4m3 scale as a float, g the global scale):
//          y <= 6: |x - deq| <= 1/2 spacing_e2m1(y) * bs / g (spacing 0.5 below 2, 1 below 4,
//          2 up to 6); y > 6 (bs rounded down by e4m3, at most 2^-4 relative): |x - deq| =
//          (y - 6) bs / g; bs = 0 (the block is below e4m3's range): deq = 0.
// Values already on a format's grid come back exactly. Shapes M = 1, 3, 129, K = 32, 64, 96, an
// empty M, non-contiguous inputs, every input dtype (f32, bf16, f16, f64) and output dtype.
#include "quant_test_util.hpp"
#include "tessera/kernels/quant_ops.hpp"
#include "tessera/ops/quant.hpp"

namespace {

using tsr::Tensor;
using namespace tsr::qtest;

const tsr_dtype_t kFloatDtypes[] = {TSR_F32, TSR_BF16, TSR_F16, TSR_F64};

// Values with a different magnitude per block of `blk` along K (2^-12..2^12), one all-zero block
// when there are several, never all zeros; as float (what the kernels compute with) after a
// round trip through `dt`.
std::vector<float> block_values(int64_t M, int64_t K, int64_t blk, uint64_t seed, tsr_dtype_t dt, Tensor* t) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(M * K));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t b = 0; b < K / blk; ++b) {
      const int e = static_cast<int>(g() % 25) - 12;
      const bool zero = (m * 7 + b) % 5 == 3 && M * K > blk;
      for (int64_t i = 0; i < blk; ++i) v[static_cast<size_t>(m * K + b * blk + i)] = zero ? 0 : std::ldexp(u(g), e);
    }
  if (!v.empty()) v[0] = 0.8125;
  *t = tsr::from_vector(v, {M, K}).to(dt);
  std::vector<float> f;
  for (double x : tsr::optest::values(*t)) f.push_back(static_cast<float>(x));
  return f;
}

// The MXFP8 scale exponent by its definition: the smallest e with amax <= 448 * 2^e, clamped.
int mx_exponent(double amax) {
  int e = -127;
  while (e < 127 && amax > std::ldexp(448.0, e)) ++e;
  return e;
}

float block_amax(const std::vector<float>& x, int64_t K, int64_t m, int64_t b, int64_t blk) {
  float a = 0;
  for (int64_t i = 0; i < blk; ++i) a = std::max(a, std::fabs(x[static_cast<size_t>(m * K + b * blk + i)]));
  return a;
}

void check_padding_zero(const std::vector<uint8_t>& sc, int64_t M, int64_t nb) {
  std::vector<bool> used(sc.size(), false);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t b = 0; b < nb; ++b) used[static_cast<size_t>(blocked_index(m, b, nb))] = true;
  for (size_t i = 0; i < sc.size(); ++i)
    if (!used[i]) {
      ASSERT_EQ(sc[i], 0) << "padding byte " << i;
    }
}

TEST(QuantQuantize, Mxfp8RecipeAndBound) {
  uint64_t seed = 1;
  for (tsr_dtype_t dt : kFloatDtypes)
    for (int64_t M : {1, 3, 129, 0})
      for (int64_t K : {32, 64, 96})
        for (bool nc : {false, true}) {
          SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " M=" + std::to_string(M) + " K=" + std::to_string(K) +
                       " noncontig=" + std::to_string(nc));
          Tensor x;
          const auto xv = block_values(M, K, 32, ++seed, dt, &x);
          if (nc) x = tsr::optest::noncontig(x);
          auto [data, scale] = tsr::quantize_mxfp8(x);
          const int64_t nb = K / 32;
          ASSERT_EQ(data.dtype(), TSR_F8_E4M3FN);
          ASSERT_EQ(data.sizes(), (std::vector<int64_t>{M, K}));
          ASSERT_EQ(scale.dtype(), TSR_F8_E8M0FNU);
          ASSERT_EQ(scale.sizes(), (std::vector<int64_t>{rup(M, 128), rup(nb, 4)}));
          const auto dc = codes(data), sc = codes(scale);
          check_padding_zero(sc, M, nb);
          const Tensor deq = tsr::dequantize_mxfp8(data, scale);
          ASSERT_EQ(deq.dtype(), TSR_F32);
          const auto dv = tsr::optest::values(deq);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t b = 0; b < nb; ++b) {
              const int e = mx_exponent(block_amax(xv, K, m, b, 32));
              const uint8_t sbyte = sc[static_cast<size_t>(blocked_index(m, b, nb))];
              ASSERT_EQ(sbyte, e + 127) << "scale of block (" << m << ", " << b << ")";
              const float s = std::ldexp(1.0f, e);
              for (int64_t i = b * 32; i < (b + 1) * 32; ++i) {
                const size_t at = static_cast<size_t>(m * K + i);
                ASSERT_EQ(dc[at], tsr::f32_to_e4m3fn_sat_bits(xv[at] / s)) << "data at (" << m << ", " << i << ")";
                const double y = double(xv[at]) / s;
                ASSERT_LE(std::fabs(y), 448.0);
                ASSERT_LE(std::fabs(dv[at] - xv[at]), 0.5 * ulp(y, TSR_F8_E4M3FN) * s)
                    << "at (" << m << ", " << i << ")";
              }
            }
          // Other output dtypes: the float64 result rounded once.
          for (tsr_dtype_t odt : {TSR_BF16, TSR_F16, TSR_F64}) {
            const auto ov = tsr::optest::values(tsr::dequantize_mxfp8(data, scale, odt));
            for (size_t i = 0; i < ov.size(); ++i) ASSERT_LE(std::fabs(ov[i] - dv[i]), 0.5 * ulp(dv[i], odt));
          }
        }
}

TEST(QuantQuantize, Mxfp8OnGridRoundTripsExactly) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    const int64_t M = 3, K = 96, nb = 3;
    std::mt19937_64 g(5);
    std::vector<double> v(static_cast<size_t>(M * K));
    std::vector<int> exps;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t b = 0; b < nb; ++b) {
        const int e = static_cast<int>(g() % 41) - 20;
        exps.push_back(e);
        for (int64_t i = 0; i < 32; ++i) {
          uint8_t c = static_cast<uint8_t>(g() % 0x7e);          // any finite magnitude
          if (i == 5) c = static_cast<uint8_t>(0x78 + g() % 6);  // |v| in [256, 448]: the block's scale is 2^e
          const double val = tsr::detail::e4m3fn_bits_to_f32(c) * ((g() & 1) ? -1 : 1);
          v[static_cast<size_t>(m * K + b * 32 + i)] = std::ldexp(val, e);
        }
      }
    Tensor x = tsr::from_vector(v, {M, K}).to(dt);
    auto [data, scale] = tsr::quantize_mxfp8(x);
    const auto sc = codes(scale);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t b = 0; b < nb; ++b)
        EXPECT_EQ(sc[static_cast<size_t>(blocked_index(m, b, nb))], exps[static_cast<size_t>(m * nb + b)] + 127);
    EXPECT_EQ(tsr::optest::values(tsr::dequantize_mxfp8(data, scale, TSR_F64)), v);
  }
}

// Saturation never happens, infinities and NaN give the NaN scale, an all-zero block 2^-127.
TEST(QuantQuantize, Mxfp8SpecialValues) {
  std::vector<float> v(32 * 3, 0.5f);
  v[3] = 448.0f * 1024;                                         // block 0: amax 448 * 2^10 -> scale 2^10 exactly
  v[32 + 1] = INFINITY;                                         // block 1: inf -> NaN scale
  for (int i = 64; i < 96; ++i) v[static_cast<size_t>(i)] = 0;  // block 2: zeros
  auto [data, scale] = tsr::quantize_mxfp8(tsr::from_vector(v, {1, 96}));
  const auto sc = codes(scale), dc = codes(data);
  EXPECT_EQ(sc[0], 127 + 10);
  EXPECT_EQ(dc[3], 0x7e);  // 448
  EXPECT_EQ(sc[1], 0xff);
  EXPECT_EQ(sc[2], 0);
  EXPECT_EQ(dc[70], 0);
}

// The exact scale rule (read from amax's bits) against its definition on every float exponent,
// subnormals included, at the mantissas around 1.75 where the answer changes.
TEST(QuantQuantize, Mxfp8ScaleRuleOnEveryExponent) {
  for (uint32_t e = 0; e < 255; ++e)
    for (uint32_t m : {0u, 1u, 0x1u << 21, 0x5fffffu, 0x600000u, 0x600001u, 0x7fffffu}) {
      const float amax = tsr::detail::bits_to_f32(e << 23 | m);
      if (amax == 0) {
        EXPECT_EQ(tsr::kernels::mx_scale_bits(amax), 0);
        continue;
      }
      ASSERT_EQ(tsr::kernels::mx_scale_bits(amax), mx_exponent(amax) + 127) << "amax " << amax;
      ASSERT_EQ(tsr::kernels::mx_scale_bits(-amax), mx_exponent(amax) + 127) << "amax " << -amax;
    }
  EXPECT_EQ(tsr::kernels::mx_scale_bits(INFINITY), 0xff);
  EXPECT_EQ(tsr::kernels::mx_scale_bits(NAN), 0xff);
}

// Inputs that require grad: float8 data and e8m0/e4m3 scales are not differentiable dtypes (no
// history); NVFP4's float32 global scale and dequantize's results fail in backward, naming the op.
TEST(QuantQuantize, NoDerivative) {
  Tensor x = tsr::optest::randu({2, 32}, 1).to(TSR_F32);
  x.requires_grad_();
  auto [d, s] = tsr::quantize_mxfp8(x);
  EXPECT_FALSE(d.requires_grad());
  EXPECT_FALSE(s.requires_grad());
  auto [q, bs, g] = tsr::quantize_nvfp4(x);
  EXPECT_FALSE(q.requires_grad());
  Tensor global = g;  // a lambda cannot capture a structured binding in C++17
  EXPECT_TRUE(tsr::optest::throws_with([&] { global.backward(); }, {"quantize_nvfp4", "not implemented"}));
  Tensor gs = tsr::from_vector(std::vector<float>{2.0f}, {});
  gs.requires_grad_();
  Tensor y = tsr::dequantize_nvfp4(q, bs, gs);
  EXPECT_TRUE(tsr::optest::throws_with([&] { tsr::sum(y).backward(); }, {"dequantize_nvfp4", "not implemented"}));
}

TEST(QuantQuantize, Nvfp4RecipeAndBound) {
  uint64_t seed = 50;
  for (tsr_dtype_t dt : kFloatDtypes)
    for (int64_t M : {1, 3, 129, 0})
      for (int64_t K : {32, 64, 96})
        for (int given = 0; given < 2; ++given)
          for (bool nc : {false, true}) {
            SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " M=" + std::to_string(M) + " K=" + std::to_string(K) +
                         " given=" + std::to_string(given) + " noncontig=" + std::to_string(nc));
            Tensor x;
            const auto xv = block_values(M, K, 16, ++seed, dt, &x);
            if (nc) x = tsr::optest::noncontig(x);
            float amax = 0;
            for (float f : xv) amax = std::max(amax, std::fabs(f));
            const float g = given ? 3.5f : (amax == 0 ? 1.0f : 2688.0f / amax);
            std::optional<Tensor> gs;
            if (given) gs = tsr::from_vector(std::vector<float>{g}, {});
            auto [data, scale, gout] = tsr::quantize_nvfp4(x, gs);
            const int64_t nb = K / 16;
            ASSERT_EQ(data.dtype(), TSR_F4_E2M1FN_X2);
            ASSERT_EQ(data.sizes(), (std::vector<int64_t>{M, K / 2}));
            ASSERT_EQ(scale.dtype(), TSR_F8_E4M3FN);
            ASSERT_EQ(scale.sizes(), (std::vector<int64_t>{rup(M, 128), rup(nb, 4)}));
            ASSERT_EQ(gout.dtype(), TSR_F32);
            ASSERT_EQ(gout.dim(), 0);
            ASSERT_EQ(gout.item<float>(), g);
            const auto dc = codes(data), sc = codes(scale);
            check_padding_zero(sc, M, nb);
            const auto dv = tsr::optest::values(tsr::dequantize_nvfp4(data, scale, gout, TSR_F64));
            for (int64_t m = 0; m < M; ++m)
              for (int64_t b = 0; b < nb; ++b) {
                const float ab = block_amax(xv, K, m, b, 16);
                const uint8_t sbyte = sc[static_cast<size_t>(blocked_index(m, b, nb))];
                ASSERT_EQ(sbyte, tsr::f32_to_e4m3fn_sat_bits(ab / 6.0f * g)) << "scale of block " << m << ", " << b;
                const float bs = tsr::detail::e4m3fn_bits_to_f32(sbyte);
                for (int64_t i = b * 16; i < (b + 1) * 16; ++i) {
                  const size_t at = static_cast<size_t>(m * K + i);
                  const uint8_t byte = dc[static_cast<size_t>(m * (K / 2) + i / 2)];
                  const uint8_t nib = static_cast<uint8_t>(i % 2 ? byte >> 4 : byte & 0xf);
                  const uint8_t want = bs == 0 ? 0 : tsr::detail::f32_to_e2m1_bits(xv[at] * g / bs);
                  ASSERT_EQ(nib, want) << "data at (" << m << ", " << i << ")";
                  const double err = std::fabs(dv[at] - xv[at]);
                  if (bs == 0) {
                    ASSERT_EQ(dv[at], 0.0);
                    continue;
                  }
                  const double y = std::fabs(double(xv[at]) * g / bs);
                  const double slack = 1e-6 * std::fabs(xv[at]);  // y and deq are computed in float32
                  const double bound = y <= 6 ? 0.5 * e2m1_spacing(y) * bs / g : (y - 6) * bs / g;
                  ASSERT_LE(err, bound + slack) << "at (" << m << ", " << i << "), y = " << y;
                }
              }
            for (tsr_dtype_t odt : {TSR_F32, TSR_BF16, TSR_F16}) {
              const auto ov = tsr::optest::values(tsr::dequantize_nvfp4(data, scale, gout, odt));
              for (size_t i = 0; i < ov.size(); ++i)
                // float32 (one rounding), then the dtype: half an ulp of the dtype plus one of float32.
                ASSERT_LE(std::fabs(ov[i] - dv[i]), 0.5 * ulp(dv[i], odt) + ulp(dv[i], TSR_F32));
            }
          }
}

// Values v * bs with v on the e2m1 grid (6 in every block) and bs on e4m3's: with the global
// scale 1 (given, or computed because the largest block scale is 448), everything comes back.
TEST(QuantQuantize, Nvfp4OnGridRoundTripsExactly) {
  for (bool given : {true, false}) {
    const int64_t M = 3, K = 64, nb = 4;
    std::mt19937_64 g(9);
    std::vector<double> v(static_cast<size_t>(M * K));
    std::vector<uint8_t> bss;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t bsc = m == 1 && b == 2 ? 0x7e : static_cast<uint8_t>(0x08 + g() % 0x70);  // one 448
        bss.push_back(bsc);
        const double bs = tsr::detail::e4m3fn_bits_to_f32(bsc);
        for (int64_t i = 0; i < 16; ++i) {
          const uint8_t nib = i == 7 ? (g() & 8) | 7 : static_cast<uint8_t>(g() % 16);
          v[static_cast<size_t>(m * K + b * 16 + i)] = tsr::detail::e2m1_bits_to_f32(nib) * bs;
        }
      }
    Tensor x = tsr::from_vector(v, {M, K}).to(TSR_F32);
    std::optional<Tensor> gs;
    if (given) gs = tsr::from_vector(std::vector<float>{1.0f}, {});
    auto [data, scale, gout] = tsr::quantize_nvfp4(x, gs);
    EXPECT_EQ(gout.item<float>(), 1.0f);
    const auto sc = codes(scale);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t b = 0; b < nb; ++b)
        EXPECT_EQ(sc[static_cast<size_t>(blocked_index(m, b, nb))], bss[static_cast<size_t>(m * nb + b)]);
    EXPECT_EQ(tsr::optest::values(tsr::dequantize_nvfp4(data, scale, gout, TSR_F64)), v);
  }
}

TEST(QuantQuantize, Nvfp4AllZeros) {
  auto [data, scale, g] = tsr::quantize_nvfp4(tsr::zeros({2, 16}));
  EXPECT_EQ(g.item<float>(), 1.0f);
  for (uint8_t c : codes(data)) EXPECT_EQ(c, 0);
  for (uint8_t c : codes(scale)) EXPECT_EQ(c, 0);
}

// quantize -> scaled_mm -> the product of the dequantized operands (the recipe's intended use).
TEST(QuantQuantize, QuantizedOperandsMultiply) {
  Tensor x = tsr::optest::randu({3, 64}, 3), w = tsr::optest::randu({5, 64}, 4);
  auto [xd, xs] = tsr::quantize_mxfp8(x);
  auto [wd, ws] = tsr::quantize_mxfp8(w);
  Tensor out = tsr::scaled_mm(xd, wd.t(), xs, ws, std::nullopt, std::nullopt, TSR_F32);
  Tensor ref = tsr::mm(tsr::dequantize_mxfp8(xd, xs, TSR_F64), tsr::dequantize_mxfp8(wd, ws, TSR_F64).t());
  EXPECT_TRUE(tsr::optest::close(out, ref, 1e-6, 1e-6));
  auto [xq, xbs, xg] = tsr::quantize_nvfp4(x);
  auto [wq, wbs, wg] = tsr::quantize_nvfp4(w);
  Tensor gg = tsr::from_vector(std::vector<float>{1.0f / (xg.item<float>() * wg.item<float>())}, {});
  Tensor out4 = tsr::scaled_mm(xq, wq.t(), xbs, wbs, std::nullopt, gg, TSR_F32);
  Tensor ref4 = tsr::mm(tsr::dequantize_nvfp4(xq, xbs, xg, TSR_F64), tsr::dequantize_nvfp4(wq, wbs, wg, TSR_F64).t());
  EXPECT_TRUE(tsr::optest::close(out4, ref4, 1e-5, 1e-6));
}

}  // namespace
