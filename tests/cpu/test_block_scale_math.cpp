// The block-scale arithmetic of the MXFP8 and NVFP4 recipes (sdk/tessera/kernels/quant_ops.hpp,
// the __host__ __device__ functions the CPU reference kernels and the sm100 kernels both call),
// checked against the definitions: the MXFP8 scale is the smallest power of two s with
// amax / s <= 448 (over ~35M floats and every boundary), the amax over |x| bits is NaN-sticky,
// and the NVFP4 scales. The swizzled layout is checked by tests/ops/test_quant_layout.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/kernels/quant_ops.hpp"

namespace {

using tsr::kernels::mx_scale_bits;

// The scale's exponent (finite amax).
int mx_scale_exponent(float amax) { return int(mx_scale_bits(amax)) - 127; }
uint8_t nvfp4_block_scale(float amax, float g) { return tsr::kernels::nvfp4_block_scale_bits(amax, g); }
float nvfp4_global(float amax) { return tsr::kernels::nvfp4_global_scale(amax); }

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Every 61st positive finite float (about 35 million), subnormals included, plus the boundaries.
TEST(BlockScaleMath, MxExponentIsTheSmallestPowerOfTwoFittingE4m3) {
  int failures = 0;
  auto check = [&failures](float amax) {
    const int e = mx_scale_exponent(amax);
    const double a = amax;
    const bool ok = e >= -127 && e <= 127 && (e == -127 || a > std::ldexp(448.0, e - 1)) &&
                    (e == 127 || a <= std::ldexp(448.0, e));
    if (!ok && ++failures <= 5) ADD_FAILURE() << "amax " << amax << " gave 2^" << e;
  };
  for (uint64_t b = 1; b < 0x7f800000u; b += 61) check(from_bits(uint32_t(b)));
  for (int k = -140; k < 120; ++k) {
    const float edge = std::ldexp(448.0f, k);
    if (edge == 0.f || std::isinf(edge)) continue;
    check(edge);
    check(std::nextafter(edge, 0.f));
    check(std::nextafter(edge, INFINITY));
    if (k > -127 && k < 127) {
      EXPECT_EQ(mx_scale_exponent(edge), k) << "448 * 2^" << k << " needs exactly 2^" << k;
      EXPECT_EQ(mx_scale_exponent(std::nextafter(edge, INFINITY)), k + 1);
    }
  }
  EXPECT_EQ(mx_scale_exponent(0.f), -127);
  EXPECT_EQ(mx_scale_exponent(448.f), 0);
  EXPECT_EQ(mx_scale_exponent(1.f), -8);  // 1 / 2^-8 = 256 <= 448, 1 / 2^-9 = 512 > 448
  EXPECT_EQ(mx_scale_bits(0.f), 0);
  EXPECT_EQ(mx_scale_bits(448.f), 127);
  EXPECT_EQ(mx_scale_bits(INFINITY), 0xff);
  EXPECT_EQ(mx_scale_bits(NAN), 0xff);
  EXPECT_EQ(mx_scale_bits(3.402823466e38f), 127 + 120);  // FLT_MAX = 1.99.. * 2^127 > 1.75 * 2^127: 2^(127 - 7)
}

// The amax over |x| bits is NaN-sticky and orders inf above every finite value (the reference's
// amax: a NaN anywhere in the block gives NaN).
TEST(BlockScaleMath, AbsBitsMaxIsNanStickyAmax) {
  using tsr::kernels::abs_bits;
  using tsr::kernels::from_abs_bits;
  auto amax = [](std::initializer_list<float> xs) {
    uint32_t m = 0;
    for (float x : xs) m = std::max(m, abs_bits(x));
    return from_abs_bits(m);
  };
  EXPECT_EQ(amax({1.f, -3.f, 2.f}), 3.f);
  EXPECT_EQ(amax({-0.f, 0.f}), 0.f);
  EXPECT_EQ(amax({1.f, -INFINITY, 2.f}), INFINITY);
  EXPECT_TRUE(std::isnan(amax({1.f, NAN, INFINITY})));
  EXPECT_TRUE(std::isnan(amax({-NAN, 5.f})));
  EXPECT_EQ(amax({1e-45f, 0.f}), 1e-45f);
}

TEST(BlockScaleMath, Nvfp4Scales) {
  EXPECT_EQ(nvfp4_block_scale(6.f, 1.f), 0x38);    // 1.0 in e4m3
  EXPECT_EQ(nvfp4_block_scale(0.f, 1.f), 0x00);
  EXPECT_EQ(nvfp4_block_scale(1e30f, 1.f), 0x7e);  // saturates to 448
  EXPECT_EQ(nvfp4_global(0.f), 1.f);
  EXPECT_EQ(nvfp4_global(2688.f), 1.f);
  // With the default global scale the largest block scale is 448: every block fits.
  EXPECT_EQ(nvfp4_block_scale(2688.f, nvfp4_global(2688.f)), 0x7e);
}

}  // namespace
