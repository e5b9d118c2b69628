// rand and randn on the cpu device: statistics, determinism and the Philox mapping.
#include <cmath>

#include "op_test_util.hpp"
#include "tessera/philox.h"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

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

}  // namespace
