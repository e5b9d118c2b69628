// The swizzled block-scale layout: tessera/kernels/block_scale_layout.hpp's formula against the
// index replay of torchao's to_blocked (quant_test_util.hpp), swizzle_block_scales /
// unswizzle_block_scales against both, for odd R and C, padding (zero bytes) and every one-byte
// scale dtype; plus a tile drawn by hand.
#include "quant_test_util.hpp"
#include "tessera/kernels/block_scale_layout.hpp"
#include "tessera/ops/quant.hpp"

namespace {

using tsr::Tensor;
using namespace tsr::qtest;

const std::pair<int64_t, int64_t> kSizes[] = {{1, 1},   {3, 5},   {32, 4},  {33, 3},
                                              {128, 4}, {129, 7}, {200, 9}, {257, 12}};

TEST(QuantLayout, FormulaMatchesToBlocked) {
  for (auto [R, C] : kSizes) {
    std::vector<bool> seen(static_cast<size_t>(rup(R, 128) * rup(C, 4)), false);
    for (int64_t r = 0; r < rup(R, 128); ++r)
      for (int64_t c = 0; c < rup(C, 4); ++c) {
        const int64_t off = tsr::kernels::swizzled_scale_offset(r, c, C);
        ASSERT_EQ(off, blocked_index(r, c, C)) << "R=" << R << " C=" << C << " (" << r << ", " << c << ")";
        ASSERT_FALSE(seen[static_cast<size_t>(off)]) << "two scales at offset " << off;
        seen[static_cast<size_t>(off)] = true;
      }
  }
}

// Within the first 128x4 tile: rows 0, 32, 64, 96 share a 16-byte line; row r's four scales are
// 4 consecutive bytes; the second tile along C starts at byte 512.
TEST(QuantLayout, HandDrawnTile) {
  using tsr::kernels::swizzled_scale_offset;
  EXPECT_EQ(swizzled_scale_offset(0, 0, 8), 0);
  EXPECT_EQ(swizzled_scale_offset(0, 3, 8), 3);
  EXPECT_EQ(swizzled_scale_offset(32, 0, 8), 4);
  EXPECT_EQ(swizzled_scale_offset(64, 1, 8), 9);
  EXPECT_EQ(swizzled_scale_offset(96, 3, 8), 15);
  EXPECT_EQ(swizzled_scale_offset(1, 0, 8), 16);
  EXPECT_EQ(swizzled_scale_offset(31, 0, 8), 496);
  EXPECT_EQ(swizzled_scale_offset(127, 3, 8), 511);
  EXPECT_EQ(swizzled_scale_offset(0, 4, 8), 512);
  EXPECT_EQ(swizzled_scale_offset(128, 0, 8), 1024);
  EXPECT_EQ(swizzled_scale_offset(128, 0, 5), 1024);  // C = 5 pads to 8: two tiles per row of tiles
}

TEST(QuantLayout, SwizzleOpMatchesFormula) {
  uint64_t seed = 1;
  for (tsr_dtype_t dt : {TSR_F8_E8M0FNU, TSR_F8_E4M3FN, TSR_U8})
    for (auto [R, C] : kSizes)
      for (bool nc : {false, true}) {
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " R=" + std::to_string(R) + " C=" + std::to_string(C));
        std::vector<uint8_t> plain = random_scale_codes(R * C, dt == TSR_F8_E4M3FN ? dt : TSR_F8_E8M0FNU, ++seed);
        for (auto& b : plain) b = b == 0 ? 1 : b;  // nonzero, so padding is told apart
        Tensor s = from_codes(plain, {R, C}, dt);
        if (nc) s = tsr::optest::noncontig(s);
        Tensor sw = tsr::swizzle_block_scales(s);
        ASSERT_EQ(sw.dtype(), dt);
        ASSERT_EQ(sw.sizes(), (std::vector<int64_t>{rup(R, 128), rup(C, 4)}));
        EXPECT_EQ(codes(sw), swizzle_codes(plain, R, C));  // padding included: zero bytes
        Tensor back = tsr::unswizzle_block_scales(sw, R, C);
        ASSERT_EQ(back.sizes(), (std::vector<int64_t>{R, C}));
        EXPECT_EQ(codes(back), plain);
        // The inverse reads any shape with the right numel (a flat buffer too).
        EXPECT_EQ(codes(tsr::unswizzle_block_scales(sw.reshape({-1}), R, C)), plain);
      }
}

TEST(QuantLayout, FloatScalesAndEmpty) {
  Tensor s = tsr::optest::randu({3, 5}, 3).to(TSR_F32);
  Tensor sw = tsr::swizzle_block_scales(s);
  EXPECT_TRUE(tsr::optest::close(tsr::unswizzle_block_scales(sw, 3, 5), s, 0, 0));
  EXPECT_EQ(tsr::swizzle_block_scales(tsr::zeros({0, 3}, TSR_F8_E8M0FNU)).sizes(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(tsr::swizzle_block_scales(tsr::zeros({3, 0}, TSR_F8_E8M0FNU)).sizes(), (std::vector<int64_t>{128, 0}));
  EXPECT_EQ(tsr::unswizzle_block_scales(tsr::zeros({0}, TSR_F8_E8M0FNU), 0, 3).sizes(), (std::vector<int64_t>{0, 3}));
}

TEST(QuantLayout, Errors) {
  using tsr::optest::throws_with;
  EXPECT_TRUE(throws_with([] { tsr::swizzle_block_scales(tsr::zeros({4}, TSR_F8_E8M0FNU)); },
                          {"swizzle_block_scales", "2-D", "[4]"}));
  EXPECT_TRUE(throws_with(
      [] {
        tsr::unswizzle_block_scales(tsr::zeros({128, 4}, TSR_F8_E8M0FNU), 129, 4);
      },
      {"unswizzle_block_scales", "[129, 4]", "256 * 4", "[128, 4]"}));
  EXPECT_TRUE(throws_with(
      [] {
        tsr::unswizzle_block_scales(tsr::zeros({128, 4}, TSR_F8_E8M0FNU), -1, 4);
      },
      {"unswizzle_block_scales", "non-negative"}));
}

}  // namespace
