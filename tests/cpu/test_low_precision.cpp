// sdk/tessera/low_precision.hpp: the float8 and float4 conversions, checked against references
// written from the formats' definitions (every code decoded from sign/exponent/mantissa; every
// rounding as "nearest representable value, ties to the even code" over a candidate list), on
// every float16 and bfloat16 value, every midpoint between codes and its neighbours, and random
// floats. No core needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

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

// The value of a sign/exponent/mantissa code with the given field widths and bias (IEEE-style
// subnormals at exponent 0). Special encodings are the caller's.
double decode_fields(uint32_t code, int ebits, int mbits, int bias) {
  const uint32_t m = code & ((1u << mbits) - 1);
  const uint32_t e = (code >> mbits) & ((1u << ebits) - 1);
  const bool neg = (code >> (ebits + mbits)) & 1u;
  const double mag = e == 0 ? std::ldexp(double(m), 1 - bias - mbits)
                            : std::ldexp(1.0 + double(m) / double(1u << mbits), int(e) - bias);
  return neg ? -mag : mag;
}

struct Candidate {
  double value;
  uint8_t code;
};

// Nearest candidate to |x| (non-negative candidates, sorted), ties to the even code.
uint8_t nearest(const std::vector<Candidate>& cands, double ax) {
  auto hi = std::lower_bound(cands.begin(), cands.end(), ax, [](const Candidate& c, double v) { return c.value < v; });
  if (hi == cands.begin()) return hi->code;
  if (hi == cands.end()) return cands.back().code;
  auto lo = hi - 1;
  const double dl = ax - lo->value, dh = hi->value - ax;
  if (dl < dh) return lo->code;
  if (dh < dl) return hi->code;
  return (lo->code & 1u) == 0 ? lo->code : hi->code;
}

// ---- references ----

double ref_e4m3fn_value(uint8_t b) {
  if ((b & 0x7fu) == 0x7fu) return std::numeric_limits<double>::quiet_NaN();
  return decode_fields(b, 4, 3, 7);
}
double ref_e5m2_value(uint8_t b) {
  const uint32_t e = (b >> 2) & 0x1fu, m = b & 3u;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : ((b & 0x80u) ? -INFINITY : INFINITY);
  return decode_fields(b, 5, 2, 15);
}
double ref_e8m0_value(uint8_t b) {
  return b == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(b) - 127);
}
double ref_e2m1_value(uint8_t nibble) { return decode_fields(nibble & 0xfu, 2, 1, 1); }

// PyTorch's e4m3fn cast: nearest with ties to even among the finite codes and the NaN code
// valued 480 (the next step), so that (464, 480) rounds to NaN; |x| >= 480, inf, NaN -> NaN.
uint8_t ref_to_e4m3fn(float x) {
  static const std::vector<Candidate> cands = [] {
    std::vector<Candidate> c;
    for (uint32_t b = 0; b < 0x7f; ++b) c.push_back({ref_e4m3fn_value(uint8_t(b)), uint8_t(b)});
    c.push_back({480.0, 0x7f});
    return c;
  }();
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double ax = std::fabs(double(x));
  if (std::isnan(x) || ax >= 480.0) return uint8_t(sign | 0x7f);
  return uint8_t(sign | nearest(cands, ax));
}
// e5m2: IEEE rounding, inf valued 65536 (the next step); NaN -> 0x7f with the sign.
uint8_t ref_to_e5m2(float x) {
  static const std::vector<Candidate> cands = [] {
    std::vector<Candidate> c;
    for (uint32_t b = 0; b < 0x7c; ++b) c.push_back({ref_e5m2_value(uint8_t(b)), uint8_t(b)});
    c.push_back({65536.0, 0x7c});
    return c;
  }();
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return uint8_t(sign | 0x7f);
  const double ax = std::fabs(double(x));
  if (ax >= 65536.0) return uint8_t(sign | 0x7c);
  return uint8_t(sign | nearest(cands, ax));
}
// e2m1: nearest, ties to even, saturating at 6; NaN -> +6.
uint8_t ref_to_e2m1(float x) {
  static const std::vector<Candidate> cands = [] {
    std::vector<Candidate> c;
    for (uint32_t b = 0; b < 8; ++b) c.push_back({ref_e2m1_value(uint8_t(b)), uint8_t(b)});
    return c;
  }();
  if (std::isnan(x)) return 7;
  return uint8_t((std::signbit(x) ? 8 : 0) | nearest(cands, std::fabs(double(x))));
}
// e8m0 (PyTorch): NaN/inf -> 0xff; a normal float 1.f x 2^E rounds to 2^E or 2^(E+1) at the
// linear midpoint 1.5 x 2^E, which rounds up; a float subnormal is 2^-127 when <= 2^-127 and
// 2^-126 above it. The sign is ignored.
uint8_t ref_to_e8m0(float x) {
  if (std::isnan(x) || std::isinf(x)) return 0xff;
  const double ax = std::fabs(double(x));
  if (ax < std::ldexp(1.0, -126)) return ax <= std::ldexp(1.0, -127) ? 0 : 1;
  int e = 0;
  const double frac = std::frexp(ax, &e);  // ax = frac * 2^e, frac in [0.5, 1)
  const int E = e - 1;                     // ax = (2 frac) * 2^E
  const int code = E + 127 + (2 * frac >= 1.5 ? 1 : 0);
  return uint8_t(std::min(code, 255));
}

// Inputs: every f16 and bf16 value as float, plus midpoints of a code list and their neighbours.
std::vector<float> inputs_with_midpoints(const std::vector<double>& codes_values) {
  std::vector<float> in;
  for (uint32_t b = 0; b < 65536; ++b) {
    in.push_back(float(tsr::Half::from_raw(uint16_t(b))));
    in.push_back(float(tsr::BFloat16::from_raw(uint16_t(b))));
  }
  std::vector<double> v;
  for (double d : codes_values)
    if (std::isfinite(d)) v.push_back(std::fabs(d));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const float mid = float((v[i] + v[i + 1]) / 2);  // exact in float for these formats
    for (float m : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      in.push_back(m);
      in.push_back(-m);
    }
  }
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) in.push_back(from_bits(any(rng)));
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()})
    in.push_back(s);
  return in;
}

std::vector<double> all_values(double (*value)(uint8_t), int ncodes) {
  std::vector<double> v;
  for (int b = 0; b < ncodes; ++b) v.push_back(value(uint8_t(b)));
  return v;
}

void expect_same_value(double want, float got, int code) {
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got)) << "code 0x" << std::hex << code;
  } else {
    ASSERT_EQ(double(got), want) << "code 0x" << std::hex << code;
    ASSERT_EQ(std::signbit(got), std::signbit(want)) << "code 0x" << std::hex << code;
  }
}

// ---- decoding: every code ----

TEST(LowPrecision, DecodeEveryCode) {
  for (int b = 0; b < 256; ++b) {
    expect_same_value(ref_e4m3fn_value(uint8_t(b)), float(tsr::Float8_e4m3fn::from_raw(uint8_t(b))), b);
    expect_same_value(ref_e5m2_value(uint8_t(b)), float(tsr::Float8_e5m2::from_raw(uint8_t(b))), b);
    expect_same_value(ref_e8m0_value(uint8_t(b)), float(tsr::Float8_e8m0fnu::from_raw(uint8_t(b))), b);
    const tsr::Float4_e2m1fn_x2 pair = tsr::Float4_e2m1fn_x2::from_raw(uint8_t(b));
    expect_same_value(ref_e2m1_value(uint8_t(b & 0xf)), pair.lo(), b);
    expect_same_value(ref_e2m1_value(uint8_t(b >> 4)), pair.hi(), b);
  }
  // The documented landmarks.
  EXPECT_EQ(float(tsr::Float8_e4m3fn::from_raw(0x7e)), 448.0f);
  EXPECT_EQ(float(tsr::Float8_e4m3fn::from_raw(0x01)), std::ldexp(1.0f, -9));
  EXPECT_EQ(float(tsr::Float8_e5m2::from_raw(0x7b)), 57344.0f);
  EXPECT_TRUE(std::isinf(float(tsr::Float8_e5m2::from_raw(0x7c))));
  EXPECT_EQ(float(tsr::Float8_e8m0fnu::from_raw(0)), std::ldexp(1.0f, -127));
  EXPECT_EQ(float(tsr::Float8_e8m0fnu::from_raw(127)), 1.0f);
  EXPECT_EQ(float(tsr::Float8_e8m0fnu::from_raw(254)), std::ldexp(1.0f, 127));
  EXPECT_EQ(tsr::Float4_e2m1fn_x2::from_raw(0x7f).lo(), -6.0f);
  EXPECT_EQ(tsr::Float4_e2m1fn_x2::from_raw(0x7f).hi(), 6.0f);
}

// Every code converts back to itself through float (NaNs to a NaN).
TEST(LowPrecision, EveryCodeRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    const uint8_t c = uint8_t(b);
    const bool e4_nan = (c & 0x7f) == 0x7f;
    EXPECT_EQ(tsr::Float8_e4m3fn(float(tsr::Float8_e4m3fn::from_raw(c))).x, e4_nan ? uint8_t(c | 0x7f) : c) << b;
    const bool e5_nan = (c & 0x7c) == 0x7c && (c & 3);
    EXPECT_EQ(tsr::Float8_e5m2(float(tsr::Float8_e5m2::from_raw(c))).x, e5_nan ? uint8_t((c & 0x80) | 0x7f) : c) << b;
    EXPECT_EQ(tsr::Float8_e8m0fnu(float(tsr::Float8_e8m0fnu::from_raw(c))).x, c) << b;
    const tsr::Float4_e2m1fn_x2 pair = tsr::Float4_e2m1fn_x2::from_raw(c);
    EXPECT_EQ(tsr::Float4_e2m1fn_x2::pack(pair.lo(), pair.hi()).x, c) << b;
  }
}

// ---- encoding: against the references ----

TEST(LowPrecision, E4m3fnMatchesReference) {
  for (float x : inputs_with_midpoints(all_values(ref_e4m3fn_value, 256)))
    ASSERT_EQ(int(tsr::Float8_e4m3fn(x).x), int(ref_to_e4m3fn(x))) << x << " (0x" << std::hex << bits(x) << ")";
  EXPECT_EQ(tsr::Float8_e4m3fn(448.0f).x, 0x7e);
  EXPECT_EQ(tsr::Float8_e4m3fn(464.0f).x, 0x7e);  // the tie rounds to even (448)
  EXPECT_EQ(tsr::Float8_e4m3fn(470.0f).x, 0x7f);  // PyTorch: NaN, a cast does not saturate
  EXPECT_EQ(tsr::Float8_e4m3fn(-1e9f).x, 0xff);
  EXPECT_EQ(tsr::Float8_e4m3fn(INFINITY).x, 0x7f);
  EXPECT_EQ(tsr::Float8_e4m3fn(std::ldexp(1.0f, -10)).x, 0x00);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(tsr::Float8_e4m3fn(std::ldexp(3.0f, -10)).x, 0x02);  // 1.5 steps: tie to even (2)
}

TEST(LowPrecision, E5m2MatchesReference) {
  for (float x : inputs_with_midpoints(all_values(ref_e5m2_value, 256)))
    ASSERT_EQ(int(tsr::Float8_e5m2(x).x), int(ref_to_e5m2(x))) << x << " (0x" << std::hex << bits(x) << ")";
  EXPECT_EQ(tsr::Float8_e5m2(57344.0f).x, 0x7b);
  EXPECT_EQ(tsr::Float8_e5m2(61440.0f).x, 0x7c);  // the tie rounds to even: inf
  EXPECT_EQ(tsr::Float8_e5m2(-1e30f).x, 0xfc);
  EXPECT_EQ(tsr::Float8_e5m2(-std::numeric_limits<float>::quiet_NaN()).x, 0xff);
}

TEST(LowPrecision, E5m2IsTheHighByteOfHalf) {
  // For every binary16 value whose low byte is zero, e5m2 and f16 agree bit for bit.
  for (uint32_t hi = 0; hi < 256; ++hi) {
    const float f = float(tsr::Half::from_raw(uint16_t(hi << 8)));
    const bool nan = (hi & 0x7c) == 0x7c && (hi & 3);
    EXPECT_EQ(tsr::Float8_e5m2(f).x, nan ? uint8_t((hi & 0x80) | 0x7f) : uint8_t(hi)) << hi;
  }
}

TEST(LowPrecision, E8m0MatchesReference) {
  std::vector<double> pow2;
  for (int b = 0; b < 255; ++b) pow2.push_back(ref_e8m0_value(uint8_t(b)));
  for (float x : inputs_with_midpoints(pow2))
    ASSERT_EQ(int(tsr::Float8_e8m0fnu(x).x), int(ref_to_e8m0(x))) << x << " (0x" << std::hex << bits(x) << ")";
  EXPECT_EQ(tsr::Float8_e8m0fnu(1.0f).x, 127);
  EXPECT_EQ(tsr::Float8_e8m0fnu(-1.0f).x, 127);     // the sign is ignored
  EXPECT_EQ(tsr::Float8_e8m0fnu(1.5f).x, 128);      // the midpoint rounds up
  EXPECT_EQ(tsr::Float8_e8m0fnu(1.4999f).x, 127);
  EXPECT_EQ(tsr::Float8_e8m0fnu(0.0f).x, 0);        // no zero: 2^-127
  EXPECT_EQ(tsr::Float8_e8m0fnu(std::numeric_limits<float>::max()).x, 0xff);  // rounds up to 2^128: NaN
  EXPECT_EQ(tsr::Float8_e8m0fnu(INFINITY).x, 0xff);
}

TEST(LowPrecision, E2m1MatchesReference) {
  for (float x : inputs_with_midpoints(all_values(ref_e2m1_value, 16))) {
    const uint8_t want = ref_to_e2m1(x);
    ASSERT_EQ(int(tsr::detail::f32_to_e2m1_bits(x)), int(want)) << x;
    // Packing puts element 0 in the low nibble.
    ASSERT_EQ(int(tsr::Float4_e2m1fn_x2::pack(x, 1.0f).x), int(want | 0x20)) << x;
    ASSERT_EQ(int(tsr::Float4_e2m1fn_x2::pack(0.5f, x).x), int(0x01 | (want << 4))) << x;
  }
  EXPECT_EQ(tsr::detail::f32_to_e2m1_bits(1.25f), 2);   // tie between 1 (code 2) and 1.5: even
  EXPECT_EQ(tsr::detail::f32_to_e2m1_bits(2.5f), 4);    // tie between 2 and 3: 2
  EXPECT_EQ(tsr::detail::f32_to_e2m1_bits(5.0f), 6);    // tie between 4 and 6: 4
  EXPECT_EQ(tsr::detail::f32_to_e2m1_bits(100.0f), 7);  // saturates at 6
  EXPECT_EQ(tsr::detail::f32_to_e2m1_bits(-INFINITY), 15);
}

TEST(LowPrecision, SaturatingCasts) {
  EXPECT_EQ(tsr::f32_to_e4m3fn_sat_bits(1e6f), 0x7e);
  EXPECT_EQ(tsr::f32_to_e4m3fn_sat_bits(-470.0f), 0xfe);
  EXPECT_EQ(tsr::f32_to_e4m3fn_sat_bits(INFINITY), 0x7e);
  EXPECT_EQ(tsr::f32_to_e4m3fn_sat_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7f, 0x7f);
  EXPECT_EQ(tsr::f32_to_e5m2_sat_bits(1e6f), 0x7b);
  EXPECT_EQ(tsr::f32_to_e5m2_sat_bits(-INFINITY), 0xfb);
  // Inside the range they are the plain casts.
  for (float x : {0.3f, -17.5f, 447.0f, 1e-3f}) {
    EXPECT_EQ(tsr::f32_to_e4m3fn_sat_bits(x), tsr::Float8_e4m3fn(x).x);
    EXPECT_EQ(tsr::f32_to_e5m2_sat_bits(x), tsr::Float8_e5m2(x).x);
  }
}

TEST(LowPrecision, DtypeFacts) {
  for (tsr_dtype_t d : {TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F8_E8M0FNU, TSR_F4_E2M1FN_X2}) {
    EXPECT_TRUE(tsr::is_valid_dtype(d));
    EXPECT_TRUE(tsr::is_low_precision_float(d));
    EXPECT_FALSE(tsr::is_floating(d));  // not an arithmetic dtype: kFloatingMask excludes it
    EXPECT_EQ(tsr::itemsize(d), 1u);
  }
  EXPECT_STREQ(tsr::dtype_name(TSR_F8_E4M3FN), "float8_e4m3fn");
  EXPECT_STREQ(tsr::dtype_name(TSR_F8_E5M2), "float8_e5m2");
  EXPECT_STREQ(tsr::dtype_name(TSR_F8_E8M0FNU), "float8_e8m0fnu");
  EXPECT_STREQ(tsr::dtype_name(TSR_F4_E2M1FN_X2), "float4_e2m1fn_x2");
  EXPECT_FALSE(tsr::is_valid_dtype(15));
  EXPECT_EQ(tsr::dtype_of<tsr::Float8_e4m3fn>, TSR_F8_E4M3FN);
  EXPECT_EQ(tsr::dtype_of<tsr::Float4_e2m1fn_x2>, TSR_F4_E2M1FN_X2);
  // Casts convert through float.
  EXPECT_EQ(float(tsr::convert<tsr::Float8_e5m2>(tsr::Half(3.0f))), 3.0f);
  EXPECT_EQ(tsr::convert<int32_t>(tsr::Float8_e4m3fn(-7.5f)), -7);
  EXPECT_TRUE(tsr::convert<bool>(tsr::Float8_e8m0fnu::from_raw(0)));  // 2^-127 is not zero
  // Dispatch: castable includes float8, not float4; the arithmetic masks include neither.
  EXPECT_EQ(tsr::dispatch_castable(TSR_F8_E5M2, "t", [](auto tag) { return int(sizeof(typename decltype(tag)::type)); }),
            1);
  EXPECT_THROW(tsr::dispatch_castable(TSR_F4_E2M1FN_X2, "t", [](auto) { return 0; }), tsr::Error);
  EXPECT_THROW(tsr::dispatch_floating(TSR_F8_E4M3FN, "t", [](auto) { return 0; }), tsr::Error);
}

}  // namespace
