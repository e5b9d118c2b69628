// sdk/tessera/kernels/math.hpp: the float exps of the row kernels (softmax, log-sum-exp, cross
// entropy), checked against double-precision exp over a stride through every float of their
// range, plus the special values; erfc; GELU (erf form) and its gradient with their tails. No core
// needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/kernels/math.hpp"

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// |y - e^x| in units of the float spacing at e^x.
double ulps(float y, float x) {
  const double ref = std::exp(double(x));
  const double spacing = std::ldexp(1.0, std::ilogb(float(ref)) - 23);
  return std::fabs(double(y) - ref) / spacing;
}

// exp_f32_no_overflow (the argument x - max(row) <= 0): within 2 ulp where e^x is a normal float,
// exactly 0 below FLT_MIN (x < -87.3365, the documented flush), NaN for NaN, 1 at 0, and
// exp_f32's value within 2 ulp of its own wherever both are normal.
TEST(KernelMath, ExpNoOverflowOverItsRange) {
  const float flush_below = -87.3365478515625f;
  double worst = 0, worst_full = 0;
  int64_t checked = 0;
  // Every 61st float from -0 down to -104 (0x80000000 .. 0xC2D00000), both ends included.
  for (uint64_t u = 0x80000000u; u <= 0xC2D00000u; u += 61) {
    const float x = from_bits(static_cast<uint32_t>(u));
    const float y = tsr::kernels::exp_f32_no_overflow(x);
    if (x < flush_below) {
      ASSERT_EQ(y, 0.0f) << x;
      continue;
    }
    worst = std::max(worst, ulps(y, x));
    worst_full = std::max(worst_full, ulps(tsr::kernels::exp_f32(x), x));
    ++checked;
  }
  EXPECT_GT(checked, 10000000);
  EXPECT_LE(worst, 2.0);
  EXPECT_LE(worst_full, 2.0);
  for (float x : {flush_below, -87.0f, -1e-30f, 1.0f, 10.0f, 88.0f})  // normal results, x > 0 too
    EXPECT_LE(ulps(tsr::kernels::exp_f32_no_overflow(x), x), 2.0) << x;
  EXPECT_EQ(tsr::kernels::exp_f32_no_overflow(0.0f), 1.0f);
  EXPECT_EQ(tsr::kernels::exp_f32_no_overflow(-0.0f), 1.0f);
  EXPECT_EQ(tsr::kernels::exp_f32_no_overflow(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(tsr::kernels::exp_f32_no_overflow(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(tsr::kernels::exp_f32_no_overflow(-std::numeric_limits<float>::quiet_NaN())));
}

// GELU (erf form) and its gradient in float against double, over [-20, 20]: relative 1e-5 (GELU)
// and 2e-5 (gradient) where the value is normal and not in the documented tail, the tail past |x| = 12.5 exactly (0 and x,
// gradients 0 and 1), NaN for NaN; and no step denormal in between (every value checked here is
// 0 or a normal float).
TEST(KernelMath, GeluErfAndGradientIncludingTheTails) {
  auto gelu = [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); };
  auto grad = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); };
  for (int i = -200000; i <= 200000; ++i) {
    const float x = float(i) * 1e-4f;
    const float y = tsr::kernels::gelu_erf_f32(x), d = tsr::kernels::gelu_erf_grad_f32(x);
    ASSERT_TRUE(y == 0.0f || std::fabs(y) >= std::numeric_limits<float>::min()) << x << " gives a denormal " << y;
    if (x > 12.5f) {
      ASSERT_EQ(y, x) << x;
      ASSERT_EQ(d, 1.0f) << x;
    } else if (x < -12.5f) {
      ASSERT_EQ(y, 0.0f) << x;
      ASSERT_EQ(d, 0.0f) << x;
    } else {
      const double gy = gelu(double(x)), gd = grad(double(x));
      ASSERT_LE(std::fabs(double(y) - gy), 1e-5 * std::fabs(gy) + 1e-37) << x;
      ASSERT_LE(std::fabs(double(d) - gd), 2e-5 * std::fabs(gd) + 1e-7) << x;
    }
  }
  EXPECT_TRUE(std::isnan(tsr::kernels::gelu_erf_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(tsr::kernels::gelu_erf_grad_f32(std::numeric_limits<float>::quiet_NaN())));
}

// erfc in float (the erfc op's CPU kernel, and GELU's through its erfcx fit) against double
// erfc over [-11, 11]: relative 1e-5 where the result is a normal float, below FLT_MIN and not
// negative in the denormal tail, exactly 0 past z = 10.2, 2 - erfc(|x|) for x < 0, 1 at 0, and the
// special values.
TEST(KernelMath, ErfcOverItsRangeAndTail) {
  double worst = 0;
  for (int i = -1100000; i <= 1100000; ++i) {
    const float x = float(i) * 1e-5f;
    const float y = tsr::kernels::erfc_f32(x);
    const double ref = std::erfc(double(x));
    if (ref >= std::numeric_limits<float>::min()) {
      worst = std::max(worst, std::fabs(double(y) - ref) / ref);
    } else {
      ASSERT_GE(y, 0.0f) << x;
      ASSERT_LT(y, std::numeric_limits<float>::min()) << x;
      if (x > 10.2f) {
        ASSERT_EQ(y, 0.0f) << x;
      }
    }
  }
  EXPECT_LE(worst, 1e-5);
  EXPECT_EQ(tsr::kernels::erfc_f32(0.0f), 1.0f);
  EXPECT_EQ(tsr::kernels::erfc_f32(std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(tsr::kernels::erfc_f32(-std::numeric_limits<float>::infinity()), 2.0f);
  EXPECT_TRUE(std::isnan(tsr::kernels::erfc_f32(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
