// sdk/tessera/philox.h: Random123 known answers and the rand/randn mapping. No core needed.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/philox.h"

namespace {

void expect_block(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4]) {
  const tsr_philox4x32_t r = tsr_philox4x32_10(ctr, key);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], want[i]) << "lane " << i;
}

// Known-answer vectors of Philox4x32-10 from the Random123 distribution (kat_vectors).
TEST(Philox, KnownAnswers) {
  {
    const uint32_t c[4] = {0, 0, 0, 0}, k[2] = {0, 0};
    const uint32_t w[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
    expect_block(c, k, w);
  }
  {
    const uint32_t c[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    const uint32_t k[2] = {0xffffffffu, 0xffffffffu};
    const uint32_t w[4] = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu};
    expect_block(c, k, w);
  }
  {
    const uint32_t c[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
    const uint32_t k[2] = {0xa4093822u, 0x299f31d0u};
    const uint32_t w[4] = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
    expect_block(c, k, w);
  }
}

TEST(Philox, BlockIsCounterAndKeyFromSeed) {
  const uint64_t seed = 0x0123456789abcdefull, j = 0x00000005deadbeefull;
  const uint32_t c[4] = {0xdeadbeefu, 0x5u, 0, 0}, k[2] = {0x89abcdefu, 0x01234567u};
  const tsr_philox4x32_t a = tsr_philox_block(seed, j), b = tsr_philox4x32_10(c, k);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.v[i], b.v[i]);
}

TEST(Philox, Uniforms) {
  EXPECT_EQ(tsr_philox_uniform_f32(0u), 0.0f);
  EXPECT_EQ(tsr_philox_uniform_f32(0xffffffffu), 1.0f - 5.9604644775390625e-08f);
  EXPECT_LT(tsr_philox_uniform_f32(0xffffffffu), 1.0f);
  EXPECT_EQ(tsr_philox_uniform_f32(0x80000000u), 0.5f);
  EXPECT_EQ(tsr_philox_uniform_f32_open0(0u), 5.9604644775390625e-08f);
  EXPECT_EQ(tsr_philox_uniform_f32_open0(0xffffffffu), 1.0f);
  EXPECT_EQ(tsr_philox_uniform_f64(0, 0), 0.0);
  EXPECT_LT(tsr_philox_uniform_f64(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(tsr_philox_uniform_f64(0x80000000u, 0), 0.5);
  EXPECT_EQ(tsr_philox_blocks_used(0, 0, 0), 0u);
  EXPECT_EQ(tsr_philox_blocks_used(5, 0, 0), 2u);
  EXPECT_EQ(tsr_philox_blocks_used(5, 0, 1), 3u);
  EXPECT_EQ(tsr_philox_blocks_used(5, 1, 1), 2u);
  EXPECT_EQ(tsr_philox_blocks_used(8, 1, 0), 2u);
}

TEST(Philox, NormalsMatchBoxMuller) {
  const tsr_philox4x32_t b = tsr_philox_block(42, 7);
  float z[4];
  double zd[4];
  tsr_philox_normal4_f32(b, z);
  tsr_philox_normal4_f64(b, zd);
  const double u1 = ((b.v[0] >> 8) + 1) * std::ldexp(1.0, -24), u2 = (b.v[1] >> 8) * std::ldexp(1.0, -24);
  const double r = std::sqrt(-2 * std::log(u1));
  EXPECT_NEAR(zd[0], r * std::cos(2 * M_PI * u2), 1e-12);
  EXPECT_NEAR(zd[1], r * std::sin(2 * M_PI * u2), 1e-12);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(z[i], zd[i], 1e-5 * (1 + std::fabs(zd[i])));
}

TEST(Philox, Statistics) {
  const int nblocks = 1 << 18;  // 1M uniforms and 1M normals
  double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0;
  for (int j = 0; j < nblocks; ++j) {
    const tsr_philox4x32_t b = tsr_philox_block(2024, static_cast<uint64_t>(j));
    float z[4];
    tsr_philox_normal4_f32(b, z);
    for (int l = 0; l < 4; ++l) {
      const double u = tsr_philox_uniform_f32(b.v[l]);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      su += u;
      su2 += u * u;
      ASSERT_TRUE(std::isfinite(z[l]));
      sn += z[l];
      sn2 += double(z[l]) * z[l];
      sn4 += double(z[l]) * z[l] * z[l] * z[l];
    }
  }
  const double n = 4.0 * nblocks;
  EXPECT_NEAR(su / n, 0.5, 2e-3);
  EXPECT_NEAR(su2 / n - (su / n) * (su / n), 1.0 / 12, 1e-3);
  EXPECT_NEAR(sn / n, 0.0, 5e-3);
  EXPECT_NEAR(sn2 / n, 1.0, 5e-3);
  EXPECT_NEAR(sn4 / n, 3.0, 5e-2);  // kurtosis of a normal
}

}  // namespace
