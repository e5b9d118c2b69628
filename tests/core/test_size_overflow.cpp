// Sizes, strides, element counts and byte counts near the int64 range: every view and every
// output whose shape comes from arguments must be refused with INVALID_ARGUMENT instead of
// wrapping into a view past its storage or an under-allocated buffer (issue 18, items 1 and 2).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

constexpr int64_t k2p61 = int64_t{1} << 61;
constexpr int64_t k2p62 = int64_t{1} << 62;

// Runs f and expects a refusal with INVALID_ARGUMENT whose message names `op`.
void expect_invalid(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << op << ": expected INVALID_ARGUMENT, the call succeeded";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

Tensor counting(int64_t n) { return tsr::arange(0.0, static_cast<double>(n), 1.0, TSR_F32); }

}  // namespace

TEST(SizeOverflow, AsStridedExtentThatWrapsIsRefusedAndNeighboursKeepTheirValues) {
  Tensor a = counting(4), neighbour = counting(64);
  std::vector<float> before = neighbour.to_vector<float>();
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{7}})
    expect_invalid([&] { a.as_strided({3}, {k2p62 + k}, 0).copy_(tsr::full({3}, 5.0)); }, "as_strided");
  expect_invalid([&] { a.as_strided({2, 2}, {INT64_MAX, 1}, 0); }, "as_strided");
  expect_invalid([&] { a.as_strided({2}, {1}, INT64_MAX); }, "as_strided");
  EXPECT_EQ(neighbour.to_vector<float>(), before);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
  // In-bounds strided views still work, empty ones with any stride too.
  EXPECT_EQ(a.as_strided({2}, {3}, 0).to_vector<float>(), (std::vector<float>{0, 3}));
  EXPECT_EQ(a.as_strided({0, 3}, {k2p62, 1}, 0).numel(), 0);
}

TEST(SizeOverflow, ReshapeAndViewWhoseElementCountWrapsAreRefused) {
  Tensor a = counting(4);
  // 4 * (2^62 + 1) wraps to 4: the element count would match the input's.
  expect_invalid([&] { a.reshape({4, k2p62 + 1}); }, "reshape");
  expect_invalid([&] { a.view({4, k2p62 + 1}); }, "view");
  expect_invalid([&] { a.reshape({-1, k2p62, 4}); }, "reshape");
  EXPECT_EQ(a.reshape({2, -1}).sizes(), (std::vector<int64_t>{2, 2}));
}

TEST(SizeOverflow, SliceWithAHugeStepHasANonNegativeSize) {
  Tensor a = counting(5);
  Tensor s = a.slice(0, 0, 5, INT64_MAX);
  EXPECT_EQ(s.sizes(), (std::vector<int64_t>{1}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{0}));
  Tensor t = a.slice(0, 1, INT64_MAX, INT64_MAX - 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(a.slice(0, INT64_MIN, INT64_MAX, 2).to_vector<float>(), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(a.slice(0, 5, INT64_MAX, INT64_MAX).numel(), 0);
  // A step whose stride product overflows is refused when it would address a second element.
  Tensor wide = counting(12).as_strided({3}, {4}, 0);
  EXPECT_EQ(wide.slice(0, 0, 3, INT64_MAX / 2).to_vector<float>(), (std::vector<float>{0}));
}

TEST(SizeOverflow, ExpandAndNarrowThatOverflowAreRefused) {
  Tensor a = counting(1).reshape({1, 1});
  expect_invalid([&] { a.expand({k2p62, k2p62}); }, "expand");
  expect_invalid([&] { a.expand({8, k2p62, k2p62}); }, "expand");
  Tensor b = counting(6);
  expect_invalid([&] { b.narrow(0, 2, INT64_MAX); }, "narrow");
  expect_invalid([&] { tsr::narrow_copy(b, 0, 2, INT64_MAX); }, "narrow_copy");
  EXPECT_EQ(tsr::narrow_copy(b, 0, 2, 3).to_vector<float>(), (std::vector<float>{2, 3, 4}));
}

TEST(SizeOverflow, FactoriesWhoseByteCountWrapsAreRefused) {
  // 2^61 + 1 int64 elements: 2^64 + 8 bytes wrap to 8.
  expect_invalid([] { tsr::arange(k2p61 + 1); }, "arange");
  expect_invalid([] { tsr::call("arange", {INT64_MIN, INT64_MAX, int64_t{1}}); }, "arange");
  expect_invalid([] { tsr::call("arange", {int64_t{0}, INT64_MAX, INT64_MIN}); }, "arange");
  expect_invalid([] { tsr::arange(0.0, 1e30, 1.0, TSR_F32); }, "arange");
  EXPECT_EQ(tsr::call("arange", {INT64_MAX - 3, INT64_MAX, int64_t{2}}).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MAX - 3, INT64_MAX - 1}));
  EXPECT_EQ(tsr::call("arange", {int64_t{10}, int64_t{0}, int64_t{-4}}).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 6, 2}));
  expect_invalid([] { tsr::full({k2p61, 4}, 1.0); }, "full");
  expect_invalid([] { tsr::zeros({k2p62, k2p62, 0, -1}); }, "full");
}

TEST(SizeOverflow, OneHotMultinomialAndRepeatWithHugeCountsAreRefused) {
  Tensor cls = tsr::from_vector(std::vector<int64_t>{0, 3, 1}, {3});
  expect_invalid([&] { tsr::nn::one_hot(cls, k2p61 + 1); }, "one_hot");
  Tensor p = tsr::from_vector(std::vector<float>{0.2f, 0.3f, 0.5f}, {3});
  expect_invalid([&] { tsr::multinomial(p, k2p62, true); }, "multinomial");
  Tensor x = counting(6).reshape({2, 3});
  expect_invalid([&] { tsr::repeat(x, {k2p62, 4}); }, "repeat");
  expect_invalid([&] { tsr::tile(x, {k2p62, k2p62}); }, "tile");
  expect_invalid([&] { tsr::diag_embed(counting(3), INT64_MIN); }, "diag_embed");
  expect_invalid([&] { tsr::diag_embed(counting(3), INT64_MAX); }, "diag_embed");
  EXPECT_EQ(tsr::repeat(x, {1, 2}).sizes(), (std::vector<int64_t>{2, 6}));
}
