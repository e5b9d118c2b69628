// sdk/tessera/kernels/math.hpp: the float exps of the row kernels (softmax, log-sum-exp, cross
// entropy), checked against double-precision exp over a stride through every float of their
// range, plus the special values. No core needed.
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

}  // namespace
