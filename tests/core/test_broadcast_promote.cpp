// Broadcasting and type promotion as seen through ops.
#include <gtest/gtest.h>

#include <random>

#include "tessera/tessera.hpp"

using tsr::Tensor;

static std::vector<double> randv(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-3, 3);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

TEST(Broadcast, ThreeWayShapesAgainstReference) {
  // [3,1,5] + [4,1] -> [3,4,5]
  auto av = randv(15, 1), bv = randv(4, 2);
  Tensor a = tsr::from_vector(av, {3, 1, 5}), b = tsr::from_vector(bv, {4, 1});
  Tensor c = a + b;
  ASSERT_EQ(c.sizes(), (std::vector<int64_t>{3, 4, 5}));
  auto cv = c.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) EXPECT_DOUBLE_EQ(cv[(i * 4 + j) * 5 + k], av[i * 5 + k] + bv[j]);
}

TEST(Broadcast, IncompatibleShapesNameOpAndShapes) {
  Tensor a = tsr::zeros({2, 3}), b = tsr::zeros({4});
  try {
    tsr::mul(a, b);
    FAIL() << "expected an error";
  } catch (const tsr::Error& e) {
    std::string m = e.what();
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_NE(m.find("mul"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4]"), std::string::npos) << m;
  }
}

TEST(Broadcast, EmptyDimensionsBroadcast) {
  Tensor a = tsr::zeros({0, 3}), b = tsr::ones({1, 3});
  Tensor c = a + b;
  EXPECT_EQ(c.sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(c.numel(), 0);
}

TEST(Promotion, ThroughOps) {
  Tensor i32 = tsr::from_vector(std::vector<int32_t>{1, 2, 3});
  Tensor f16 = tsr::ones({3}, TSR_F16);
  Tensor i8 = tsr::from_vector(std::vector<int8_t>{1, 2, 3});
  Tensor u8 = tsr::from_vector(std::vector<uint8_t>{1, 2, 3});
  EXPECT_EQ((i32 + 1).dtype(), TSR_I32);    // python int keeps the tensor dtype
  EXPECT_EQ((i32 + 1.5).dtype(), TSR_F32);  // python float -> default float
  EXPECT_EQ((i32 * f16).dtype(), TSR_F16);
  EXPECT_EQ((i8 + u8).dtype(), TSR_I16);
  EXPECT_EQ(tsr::div(i32, i32).dtype(), TSR_F32);  // true division
  EXPECT_EQ(tsr::exp(i32).dtype(), TSR_F32);
  EXPECT_EQ(tsr::lt(i32, 2.5).dtype(), TSR_BOOL);
  EXPECT_EQ((i32 + 1.5).to_vector<float>(), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(tsr::sum(i8).dtype(), TSR_I64);
  EXPECT_EQ(tsr::sum(i8).item<int64_t>(), 6);
}
