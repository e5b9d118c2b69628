// Every refusal of scaled_mm and the (de)quantization ops: INVALID_ARGUMENT naming the op, the
// arguments' shapes and dtypes, and nothing returned.
#include "quant_test_util.hpp"
#include "tessera/ops/quant.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::throws_with;
using namespace tsr::qtest;

Tensor f8(const tsr::optest::Shape& s, tsr_dtype_t dt = TSR_F8_E4M3FN) {
  return from_codes(random_codes(tsr::optest::numel_of(s), dt, 1), s, dt);
}
Tensor one(float v = 1.0f) { return tsr::from_vector(std::vector<float>{v}, {}); }
Tensor e8m0(int64_t n) { return from_codes(std::vector<uint8_t>(static_cast<size_t>(n), 127), {n}, TSR_F8_E8M0FNU); }
Tensor e4m3s(int64_t n) { return from_codes(std::vector<uint8_t>(static_cast<size_t>(n), 0x38), {n}, TSR_F8_E4M3FN); }

// The error's code is INVALID_ARGUMENT and its message holds every part.
::testing::AssertionResult refused(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_INVALID_ARGUMENT)
      return ::testing::AssertionFailure() << "code " << e.code() << ": " << e.what();
  } catch (...) {
  }
  return throws_with(fn, parts);
}

TEST(QuantErrors, ScaledMmOperands) {
  Tensor a = f8({3, 64}), b = f8({64, 5});
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a.to(TSR_F32), b, one(), one()); },
                      {"scaled_mm", "float8_e4m3fn or float8_e5m2", "[3, 64] float32", "[64, 5] float8_e4m3fn"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({3, 64}, TSR_F8_E5M2), f8({64, 5}, TSR_F8_E5M2), one(), one());
      },
      {"scaled_mm", "both operands are float8_e5m2", "[3, 64]"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(a, f8({32, 5}), one(), one());
      },
      {"scaled_mm", "cannot be multiplied", "[3, 64] float8_e4m3fn", "[32, 5]"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(f8({2, 3, 64}), b, one(), one()); }, {"scaled_mm", "2-D", "[2, 3, 64]"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(a, f8({32, 5}, TSR_F4_E2M1FN_X2), one(), one());
      },
      {"scaled_mm", "NVFP4 needs both operands float4_e2m1fn_x2", "[32, 5] float4_e2m1fn_x2"}));
}

TEST(QuantErrors, ScaledMmScales) {
  Tensor a = f8({3, 64}), b = f8({64, 5});
  // float32 scales of the wrong shapes, or a dtype that is none of the modes'.
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(a, b, tsr::ones({3, 1}), tsr::ones({5, 1}));
      },
      {"scaled_mm", "rowwise", "scale_a [3, 1] float32", "scale_b [5, 1] float32"}));
  EXPECT_TRUE(
      refused([&] { tsr::scaled_mm(a, b, tsr::ones({1}, TSR_F64), one()); }, {"scaled_mm", "scale_a [1] float64"}));
  // MXFP8: numel, dtype of the other scale, K % 32.
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, e8m0(128 * 2), e8m0(512)); },
                      {"scaled_mm", "MXFP8", "scale_a [256] float8_e8m0fnu", "must hold 512", "M=3", "K/32=2"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, e8m0(512), one()); },
                      {"scaled_mm", "MXFP8", "scale_b", "must be float8_e8m0fnu"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({3, 48}), f8({48, 5}), e8m0(512), e8m0(512));
      },
      {"scaled_mm", "K divisible by 32", "K=48", "[3, 48]"}));
  // NVFP4: e4m3 scales, numel for K/16, K % 16.
  Tensor a4 = f8({3, 32}, TSR_F4_E2M1FN_X2), b4 = f8({32, 5}, TSR_F4_E2M1FN_X2);
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a4, b4, e8m0(512), e8m0(512)); },
                      {"scaled_mm", "NVFP4", "scale_a", "must be float8_e4m3fn"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a4, b4, e4m3s(512), e4m3s(128)); },
                      {"scaled_mm", "NVFP4", "scale_b [128] float8_e4m3fn", "must hold 512", "N=5"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({3, 4}, TSR_F4_E2M1FN_X2), f8({4, 5}, TSR_F4_E2M1FN_X2), e4m3s(512), e4m3s(512));
      },
      {"scaled_mm", "K divisible by 16", "K=8"}));
}

TEST(QuantErrors, ScaledMmBiasResultOutDtype) {
  Tensor a = f8({3, 64}), b = f8({64, 5});
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, one(), one(), tsr::ones({3})); },
                      {"scaled_mm", "bias must be 1-D [N] = [5]", "[3] float32"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, one(), one(), tsr::ones({5}, TSR_F64)); },
                      {"scaled_mm", "bias must be bfloat16, float16 or float32", "[5] float64"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, one(), one(), std::nullopt, tsr::ones({2})); },
                      {"scaled_mm", "scale_result", "[2] float32"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, one(), one(), std::nullopt, std::nullopt, TSR_F64); },
                      {"scaled_mm", "out_dtype float64", "tensorwise"}));
  // float8 results are tensorwise only; rowwise's default (self's dtype) is then refused too.
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(a, b, tsr::ones({3, 1}), tsr::ones({1, 5}));
      },
      {"scaled_mm", "out_dtype float8_e4m3fn (the default)", "rowwise"}));
  EXPECT_TRUE(refused([&] { tsr::scaled_mm(a, b, e8m0(512), e8m0(512), std::nullopt, std::nullopt, TSR_F8_E4M3FN); },
                      {"scaled_mm", "out_dtype float8_e4m3fn", "MXFP8"}));
}

TEST(QuantErrors, ScaledMmMixedDevices) {
  Tensor b1;
  try {
    b1 = f8({64, 5}).to(tsr::Device::cpu(1));
  } catch (const tsr::Error&) {
    GTEST_SKIP() << "needs a second cpu device (TESSERA_CPU_DEVICES=2)";
  }
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({3, 64}), b1, one(), one());
      },
      {"scaled_mm", "one device", "self", "mat2", "cpu:1"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({3, 64}).to(tsr::Device::cpu(1)), b1, one(), one());
      },
      {"scaled_mm", "one device", "scale_a", "cpu:0"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::quantize_nvfp4(tsr::ones({2, 16}), one().to(tsr::Device::cpu(1)));
      },
      {"quantize_nvfp4", "one device", "global_scale"}));
}

TEST(QuantErrors, Quantize) {
  EXPECT_TRUE(refused(
      [] {
        tsr::quantize_mxfp8(tsr::ones({3, 48}));
      },
      {"quantize_mxfp8", "divisible by 32", "[3, 48] float32"}));
  EXPECT_TRUE(refused([] { tsr::quantize_mxfp8(tsr::ones({64})); }, {"quantize_mxfp8", "2-D", "[64] float32"}));
  EXPECT_TRUE(refused([] { tsr::quantize_mxfp8(tsr::ones({2, 32}, TSR_I32)); }, {"quantize_mxfp8", "[2, 32] int32"}));
  EXPECT_TRUE(refused(
      [] {
        tsr::quantize_nvfp4(tsr::ones({3, 24}));
      },
      {"quantize_nvfp4", "divisible by 16", "[3, 24] float32"}));
  EXPECT_TRUE(refused(
      [] {
        tsr::quantize_nvfp4(tsr::ones({3, 32}), tsr::ones({2}));
      },
      {"quantize_nvfp4", "global_scale", "[2] float32"}));
  EXPECT_TRUE(refused(
      [] {
        tsr::quantize_nvfp4(tsr::ones({3, 32}), tsr::ones({}, TSR_F64));
      },
      {"quantize_nvfp4", "global_scale", "[] float64"}));
}

// Sizes no real tensor has but an empty one may: refused before any tile arithmetic overflows.
TEST(QuantErrors, HugeEmptyDims) {
  const int64_t huge = int64_t(1) << 60;
  EXPECT_TRUE(refused([&] { tsr::quantize_mxfp8(tsr::zeros({huge, 0})); }, {"quantize_mxfp8", "larger than 2^56"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::scaled_mm(f8({0, huge}), f8({huge, 0}), one(), one());
      },
      {"scaled_mm", "larger than 2^56"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::swizzle_block_scales(tsr::zeros({huge, 0}, TSR_F8_E8M0FNU));
      },
      {"swizzle_block_scales", "larger than 2^56"}));
  EXPECT_TRUE(refused([&] { tsr::unswizzle_block_scales(tsr::zeros({0}, TSR_F8_E8M0FNU), huge, 0); },
                      {"unswizzle_block_scales", "at most 2^56"}));
}

TEST(QuantErrors, Dequantize) {
  Tensor d = f8({3, 64});
  EXPECT_TRUE(refused([&] { tsr::dequantize_mxfp8(d, e8m0(256)); },
                      {"dequantize_mxfp8", "scale [256] float8_e8m0fnu", "must hold 512", "[3, 64] float8_e4m3fn"}));
  EXPECT_TRUE(refused([&] { tsr::dequantize_mxfp8(d, e4m3s(512)); },
                      {"dequantize_mxfp8", "must be float8_e8m0fnu", "[512] float8_e4m3fn"}));
  EXPECT_TRUE(refused([&] { tsr::dequantize_mxfp8(d.to(TSR_F32), e8m0(512)); },
                      {"dequantize_mxfp8", "data must be", "[3, 64] float32"}));
  EXPECT_TRUE(refused(
      [&] {
        tsr::dequantize_mxfp8(f8({3, 40}), e8m0(512));
      },
      {"dequantize_mxfp8", "divisible by 32", "[3, 40]"}));
  EXPECT_TRUE(
      refused([&] { tsr::dequantize_mxfp8(d, e8m0(512), TSR_I32); }, {"dequantize_mxfp8", "dtype must be", "int32"}));
  Tensor d4 = f8({3, 16}, TSR_F4_E2M1FN_X2);
  EXPECT_TRUE(refused([&] { tsr::dequantize_nvfp4(d4, e4m3s(512), tsr::ones({2})); },
                      {"dequantize_nvfp4", "global_scale", "[2] float32"}));
  EXPECT_TRUE(refused([&] { tsr::dequantize_nvfp4(d4, e4m3s(100), one()); },
                      {"dequantize_nvfp4", "must hold 512", "[3, 16] float4_e2m1fn_x2"}));
  EXPECT_TRUE(refused([&] { tsr::dequantize_nvfp4(d, e4m3s(512), one()); },
                      {"dequantize_nvfp4", "data must be float4_e2m1fn_x2", "[3, 64] float8_e4m3fn"}));
}

}  // namespace
