// The sm100 quantize kernels' scale arithmetic (backends/sm100/block_scale.hpp, the same
// __host__ __device__ functions the kernels call), checked on the CPU against the definitions:
// the MXFP8 scale is the smallest power of two s with amax / s <= 448, and the swizzled layout
// is cuBLASLt's (the [rows, cols] scale matrix padded to 128x4 tiles, each tile's (128, 4) block
// viewed as (4, 32, 4) and transposed to (32, 4, 4), tiles in row-block-major order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "block_scale.hpp"

namespace {

using tsr::sm100::mx_scale_bits;
using tsr::sm100::mx_scale_exponent;
using tsr::sm100::nvfp4_default_global_scale;
using tsr::sm100::nvfp4_scale_bits;
using tsr::sm100::swizzled_numel;
using tsr::sm100::swizzled_offset;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Every 61st positive finite float (about 35 million), subnormals included, plus the boundaries.
TEST(Sm100BlockScale, MxExponentIsTheSmallestPowerOfTwoFittingE4m3) {
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
TEST(Sm100BlockScale, AbsBitsMaxIsNanStickyAmax) {
  using tsr::sm100::abs_bits;
  using tsr::sm100::from_abs_bits;
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

// Reference: torchao's to_blocked, written as loops in the order it lays elements out.
std::vector<int64_t> reference_swizzle(int64_t rows, int64_t cols) {
  const int64_t rb = (rows + 127) / 128, cb = (cols + 3) / 4;
  std::vector<int64_t> where(size_t(rows * cols), -1);
  int64_t pos = 0;
  for (int64_t i = 0; i < rb; ++i)
    for (int64_t j = 0; j < cb; ++j)            // permute(0, 2, 1, 3): tiles row-block-major
      for (int64_t lo = 0; lo < 32; ++lo)       // (4, 32, 4).transpose(0, 1) = (32, 4, 4)
        for (int64_t hi = 0; hi < 4; ++hi)
          for (int64_t c = 0; c < 4; ++c, ++pos) {
            const int64_t r = i * 128 + hi * 32 + lo, col = j * 4 + c;
            if (r < rows && col < cols) where[size_t(r * cols + col)] = pos;
          }
  EXPECT_EQ(pos, swizzled_numel(rows, cols));
  return where;
}

TEST(Sm100BlockScale, SwizzledOffsetIsCublasLtLayout) {
  for (int64_t rows : {1, 31, 32, 33, 127, 128, 129, 300, 512})
    for (int64_t cols : {1, 3, 4, 5, 8, 9, 16}) {
      const std::vector<int64_t> ref = reference_swizzle(rows, cols);
      const int64_t col_tiles = (cols + 3) / 4;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          ASSERT_EQ(swizzled_offset(r, c, col_tiles), ref[size_t(r * cols + c)])
              << "rows " << rows << " cols " << cols << " at (" << r << ", " << c << ")";
    }
  EXPECT_EQ(swizzled_numel(1, 1), 512);
  EXPECT_EQ(swizzled_numel(129, 5), 256 * 8);
}

TEST(Sm100BlockScale, Nvfp4Scales) {
  EXPECT_EQ(nvfp4_scale_bits(6.f, 1.f), 0x38);    // 1.0 in e4m3
  EXPECT_EQ(nvfp4_scale_bits(0.f, 1.f), 0x00);
  EXPECT_EQ(nvfp4_scale_bits(1e30f, 1.f), 0x7e);  // saturates to 448
  EXPECT_EQ(nvfp4_default_global_scale(0.f), 1.f);
  EXPECT_EQ(nvfp4_default_global_scale(2688.f), 1.f);
  // With the default global scale the largest block scale is 448: every block fits.
  EXPECT_EQ(nvfp4_scale_bits(2688.f, nvfp4_default_global_scale(2688.f)), 0x7e);
}

}  // namespace
