// sdk/tessera/dtype.hpp: Half/BFloat16 conversions (exhaustive where possible), dtype facts,
// type mapping and dispatch. No core needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "tessera/dtype.hpp"

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Half, ExhaustiveRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const tsr::Half h = tsr::Half::from_raw(static_cast<uint16_t>(b));
    const float f = h;
    const tsr::Half back(f);
    const bool is_nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(tsr::isnan(back)) << std::hex << b;
      ASSERT_EQ(back.x & 0x8000u, b & 0x8000u) << "sign of NaN " << std::hex << b;
      ASSERT_EQ(back.x & 0x3ffu & ~0x200u, b & 0x3ffu & ~0x200u) << "payload " << std::hex << b;
    } else {
      ASSERT_EQ(back.x, b) << std::hex << b << " -> " << f;
    }
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(tsr::Half(1.0f).x, 0x3c00);
  EXPECT_EQ(tsr::Half(-2.0f).x, 0xc000);
  EXPECT_EQ(tsr::Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(tsr::Half(0.0f).x, 0x0000);
  EXPECT_EQ(tsr::Half(-0.0f).x, 0x8000);
  EXPECT_EQ(tsr::Half(5.9604644775390625e-08f).x, 0x0001);  // smallest subnormal
  EXPECT_EQ(tsr::Half(6.103515625e-05f).x, 0x0400);         // smallest normal
  EXPECT_EQ(tsr::Half(std::numeric_limits<float>::infinity()).x, 0x7c00);
  EXPECT_EQ(tsr::Half(-std::numeric_limits<float>::infinity()).x, 0xfc00);
  EXPECT_EQ(tsr::Half(1e10f).x, 0x7c00);  // overflow -> inf
  EXPECT_EQ(tsr::Half(-1e10f).x, 0xfc00);
  EXPECT_EQ(tsr::Half(65519.99f).x, 0x7bff);  // below the midpoint to inf
  EXPECT_EQ(tsr::Half(65520.0f).x, 0x7c00);   // midpoint: ties to even = inf
  EXPECT_EQ(tsr::Half(1e-9f).x, 0x0000);      // underflow -> 0
  EXPECT_EQ(tsr::Half(-1e-9f).x, 0x8000);
  EXPECT_EQ(tsr::Half(2.98023223876953125e-08f).x, 0x0000);  // 2^-25: tie -> even (0)
  EXPECT_EQ(tsr::Half(2.9802326e-08f).x, 0x0001);            // just above 2^-25
  EXPECT_TRUE(tsr::isnan(tsr::Half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(float(tsr::Half(-std::numeric_limits<float>::quiet_NaN()))));
  // A float NaN whose payload sits only in the low bits must not become infinity.
  EXPECT_TRUE(tsr::isnan(tsr::Half(from_bits(0x7f800001u))));
  EXPECT_TRUE(tsr::isnan(tsr::BFloat16(from_bits(0x7f800001u))));
}

// Every rounding boundary: for adjacent halves a < b, the float midpoint rounds to the one with
// an even mantissa, and the floats just below/above it round to a/b.
TEST(Half, ExhaustiveRoundingBoundaries) {
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t m = 0; m < 0x7c00u; ++m) {
      const uint16_t ab = static_cast<uint16_t>(m | (sign << 15));
      const uint16_t bb = static_cast<uint16_t>((m + 1) | (sign << 15));  // 0x7c00 = inf for the last
      const float a = tsr::Half::from_raw(ab), b = tsr::Half::from_raw(bb);
      const float mid = m + 1 == 0x7c00u ? (sign ? -65520.0f : 65520.0f) : (a + b) / 2;  // exact in float
      const uint16_t even = (m & 1u) ? bb : ab;
      ASSERT_EQ(tsr::Half(mid).x, even) << std::hex << m;
      ASSERT_EQ(tsr::Half(std::nextafter(mid, a)).x, ab) << std::hex << m;
      ASSERT_EQ(tsr::Half(std::nextafter(mid, b)).x, bb) << std::hex << m;
      ASSERT_EQ(tsr::Half(a).x, ab);
    }
  }
}

#if defined(__FLT16_MAX__) && defined(__x86_64__) && !defined(__clang__)
// Cross-check against the compiler's own _Float16 conversion on random float bit patterns.
TEST(Half, MatchesCompilerFloat16) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i) {
    const float f = from_bits(rng());
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    ASSERT_EQ(tsr::Half(f).x, rb) << f;
  }
}
#endif

TEST(BFloat16, ExhaustiveRoundTripAndBoundaries) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const tsr::BFloat16 h = tsr::BFloat16::from_raw(static_cast<uint16_t>(b));
    const float f = h;
    ASSERT_EQ(bits(f), b << 16);
    const bool is_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    if (is_nan) {
      ASSERT_TRUE(tsr::isnan(tsr::BFloat16(f)));
      continue;
    }
    ASSERT_EQ(tsr::BFloat16(f).x, b);
    // Midpoint to the next pattern (within finite values of the same sign).
    if ((b & 0x7fffu) < 0x7f7fu) {
      const uint32_t mid = (b << 16) | 0x8000u;
      const uint16_t even = (b & 1u) ? static_cast<uint16_t>(b + 1) : static_cast<uint16_t>(b);
      ASSERT_EQ(tsr::BFloat16(from_bits(mid)).x, even) << std::hex << b;
      ASSERT_EQ(tsr::BFloat16(from_bits(mid - 1)).x, b);
      ASSERT_EQ(tsr::BFloat16(from_bits(mid + 1)).x, b + 1);
    }
  }
  EXPECT_EQ(tsr::BFloat16(1.0f).x, 0x3f80);
  EXPECT_EQ(tsr::BFloat16(std::numeric_limits<float>::max()).x, 0x7f80);  // rounds to inf
  EXPECT_EQ(tsr::BFloat16(-std::numeric_limits<float>::infinity()).x, 0xff80);
}

TEST(Half, Arithmetic) {
  const tsr::Half a(1.5f), b(2.25f);
  EXPECT_EQ(float(a + b), 3.75f);
  EXPECT_EQ(float(a - b), -0.75f);
  EXPECT_EQ(float(a * b), 3.375f);
  EXPECT_EQ(float(b / a), 1.5f);
  EXPECT_EQ(float(-a), -1.5f);
  tsr::Half c = a;
  c += b;
  EXPECT_EQ(float(c), 3.75f);
  static_assert(std::is_same<decltype(a + b), tsr::Half>::value, "Half + Half");
  static_assert(std::is_same<decltype(a + 1.0f), float>::value, "Half + float");
  static_assert(std::is_same<decltype(a + 1.0), double>::value, "Half + double");
  static_assert(std::is_same<decltype(a + 1), tsr::Half>::value, "Half + int");
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a == tsr::Half(1.5f));
  EXPECT_EQ(float(tsr::Half(1.0f) + tsr::Half(0.0004f)), float(tsr::Half(1.0f + 0.0004f)));
  const tsr::BFloat16 x(3.0f), y(0.5f);
  EXPECT_EQ(float(x * y), 1.5f);
  EXPECT_EQ(float(x + 2), 5.0f);
}

TEST(Half, NumericLimits) {
  EXPECT_EQ(float(std::numeric_limits<tsr::Half>::max()), 65504.0f);
  EXPECT_EQ(float(std::numeric_limits<tsr::Half>::lowest()), -65504.0f);
  EXPECT_EQ(float(std::numeric_limits<tsr::Half>::epsilon()), 0.0009765625f);
  EXPECT_TRUE(std::isinf(float(std::numeric_limits<tsr::Half>::infinity())));
  EXPECT_TRUE(std::isnan(float(std::numeric_limits<tsr::Half>::quiet_NaN())));
  EXPECT_EQ(float(std::numeric_limits<tsr::BFloat16>::max()), 3.3895313892515355e38f);
  EXPECT_EQ(float(std::numeric_limits<tsr::BFloat16>::epsilon()), 0.0078125f);
}

TEST(Dtype, Facts) {
  EXPECT_EQ(tsr::itemsize(TSR_BOOL), 1u);
  EXPECT_EQ(tsr::itemsize(TSR_I16), 2u);
  EXPECT_EQ(tsr::itemsize(TSR_BF16), 2u);
  EXPECT_EQ(tsr::itemsize(TSR_F32), 4u);
  EXPECT_EQ(tsr::itemsize(TSR_I64), 8u);
  EXPECT_EQ(tsr::itemsize(int32_t(TSR_F64)), 8u);
  EXPECT_EQ(tsr::itemsize(TSR_DTYPE_UNDEFINED), 0u);
  EXPECT_STREQ(tsr::dtype_name(TSR_F32), "float32");
  EXPECT_STREQ(tsr::dtype_name(TSR_BF16), "bfloat16");
  EXPECT_STREQ(tsr::dtype_name(TSR_F16), "float16");
  EXPECT_STREQ(tsr::dtype_name(TSR_I64), "int64");
  EXPECT_STREQ(tsr::dtype_name(TSR_U8), "uint8");
  EXPECT_STREQ(tsr::dtype_name(TSR_BOOL), "bool");
  EXPECT_STREQ(tsr::dtype_name(int32_t(99)), "undefined");
  EXPECT_TRUE(tsr::is_floating(TSR_F16));
  EXPECT_TRUE(tsr::is_floating(TSR_BF16));
  EXPECT_FALSE(tsr::is_floating(TSR_I32));
  EXPECT_TRUE(tsr::is_integral(TSR_U8));
  EXPECT_FALSE(tsr::is_integral(TSR_BOOL));
  EXPECT_TRUE(tsr::is_integral(TSR_BOOL, true));
  EXPECT_FALSE(tsr::is_integral(TSR_F32, true));
  static_assert(std::is_same<tsr::cpp_type_t<TSR_BOOL>, bool>::value, "");
  static_assert(std::is_same<tsr::cpp_type_t<TSR_U8>, uint8_t>::value, "");
  static_assert(std::is_same<tsr::cpp_type_t<TSR_F16>, tsr::Half>::value, "");
  static_assert(std::is_same<tsr::CppType<TSR_BF16>::type, tsr::BFloat16>::value, "");
  static_assert(tsr::dtype_of<int64_t> == TSR_I64, "");
  static_assert(tsr::dtype_of<const float> == TSR_F32, "");
  static_assert(tsr::dtype_of<tsr::Half> == TSR_F16, "");
  static_assert(tsr::dtype_of<char32_t> == TSR_DTYPE_UNDEFINED, "");
}

TEST(Dtype, Convert) {
  EXPECT_EQ(tsr::convert<int32_t>(-2.7f), -2);  // truncates toward zero
  EXPECT_EQ(tsr::convert<bool>(0.5f), true);
  EXPECT_EQ(tsr::convert<bool>(tsr::Half(0.0f)), false);
  EXPECT_EQ(tsr::convert<bool>(std::numeric_limits<double>::quiet_NaN()), true);
  EXPECT_EQ(float(tsr::convert<tsr::Half>(int64_t(3))), 3.0f);
  EXPECT_EQ(float(tsr::convert<tsr::BFloat16>(tsr::Half(0.5f))), 0.5f);
  EXPECT_EQ(tsr::convert<int64_t>(true), 1);
  EXPECT_EQ(tsr::convert<double>(tsr::BFloat16(2.0f)), 2.0);
}

TEST(Dtype, Dispatch) {
  for (int d = TSR_BOOL; d <= TSR_F64; ++d) {
    const size_t sz = tsr::dispatch_all(d, "test", [](auto tag) {
      using T = typename decltype(tag)::type;
      return sizeof(T);
    });
    EXPECT_EQ(sz, tsr::itemsize(d));
    const tsr_dtype_t back =
        tsr::dispatch_all(d, "test", [](auto tag) { return tsr::dtype_of<typename decltype(tag)::type>; });
    EXPECT_EQ(back, d);
  }
  EXPECT_EQ(tsr::dispatch_floating(TSR_BF16, "f", [](auto tag) { return tsr::dtype_of<typename decltype(tag)::type>; }),
            TSR_BF16);
  int calls = 0;
  tsr::dispatch_integral(TSR_I16, "i", [&](auto tag) {
    static_assert(std::is_integral<typename decltype(tag)::type>::value, "");
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  try {
    tsr::dispatch_floating(TSR_I32, "myop", [](auto) {});
    FAIL() << "expected tsr::Error";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
    EXPECT_EQ(std::string(e.what()), "myop: unsupported dtype int32");
  }
  EXPECT_THROW(tsr::dispatch_integral(TSR_BOOL, "x", [](auto) {}), tsr::Error);
  EXPECT_NO_THROW(tsr::dispatch_integral_and_bool(TSR_BOOL, "x", [](auto) {}));
  EXPECT_THROW(tsr::dispatch_numeric(TSR_BOOL, "x", [](auto) {}), tsr::Error);
  EXPECT_THROW(tsr::dispatch_all(0, "x", [](auto) {}), tsr::Error);
  EXPECT_THROW(tsr::dispatch_all(11, "x", [](auto) {}), tsr::Error);
}

}  // namespace
