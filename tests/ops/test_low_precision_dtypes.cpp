// The low-precision dtypes through the core: casts to and from every castable dtype equal the
// SDK's scalar conversions byte for byte (contiguous and strided), fill, views, cat and clones
// move bytes untouched (float4_e2m1fn_x2 included), promotion refuses mixing them with another
// dtype, arithmetic without a kernel names the op and dtype, and safetensors files keep them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "op_test.hpp"
#include "tessera/serialize.hpp"

namespace {

using tsr::Device;
using tsr::Tensor;
using namespace tsr::optest;

const tsr_dtype_t kFloat8[] = {TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F8_E8M0FNU};

// The raw bytes of a 1-byte-element tensor (CPU, any layout).
std::vector<uint8_t> bytes_of(const Tensor& t) {
  Tensor c = t.to(Device::cpu()).contiguous();
  const uint8_t* p = static_cast<const uint8_t*>(c.data_ptr());
  return std::vector<uint8_t>(p, p + c.numel());
}

uint8_t scalar_cast(tsr_dtype_t dt, float v) {
  switch (dt) {
    case TSR_F8_E4M3FN:
      return tsr::Float8_e4m3fn(v).x;
    case TSR_F8_E5M2:
      return tsr::Float8_e5m2(v).x;
    default:
      return tsr::Float8_e8m0fnu(v).x;
  }
}
float scalar_value(tsr_dtype_t dt, uint8_t b) {
  switch (dt) {
    case TSR_F8_E4M3FN:
      return float(tsr::Float8_e4m3fn::from_raw(b));
    case TSR_F8_E5M2:
      return float(tsr::Float8_e5m2::from_raw(b));
    default:
      return float(tsr::Float8_e8m0fnu::from_raw(b));
  }
}

// Values spanning every regime: subnormals, normals, past e4m3's 448/480, past e5m2's range,
// zeros, infinities and NaN.
std::vector<float> probe_values(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> expo(-20, 18);
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    const double mag = std::exp2(expo(g));
    v.push_back(float((g() & 1) ? mag : -mag));
  }
  for (float s : {0.0f, -0.0f, 448.0f, 464.0f, 470.0f, 480.0f, 57344.0f, 61440.0f, 1.5f, INFINITY, -INFINITY, NAN})
    v.push_back(s);
  return v;
}

TEST(LowPrecisionDtypes, CastsFromEveryFloatMatchTheScalarConversions) {
  const std::vector<float> vals = probe_values(3000, 11);
  const Tensor src32 = tsr::from_vector(vals, {int64_t(vals.size())});
  for (tsr_dtype_t dt : kFloat8) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    // float32 source: exactly the scalar conversion.
    const std::vector<uint8_t> got = bytes_of(src32.to(dt));
    for (size_t i = 0; i < vals.size(); ++i)
      ASSERT_EQ(int(got[i]), int(scalar_cast(dt, vals[i]))) << vals[i];
    // float16, bfloat16 and float64 sources: through their float value (as PyTorch).
    for (tsr_dtype_t from : {TSR_F16, TSR_BF16, TSR_F64}) {
      const Tensor s = src32.to(from);
      const std::vector<double> sv = values(s);
      const std::vector<uint8_t> g2 = bytes_of(s.to(dt));
      for (size_t i = 0; i < sv.size(); ++i)
        ASSERT_EQ(int(g2[i]), int(scalar_cast(dt, float(sv[i])))) << tsr::dtype_name(from) << " " << sv[i];
    }
  }
}

TEST(LowPrecisionDtypes, CastsToEveryDtypeAreExactFromEveryCode) {
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[size_t(i)] = uint8_t(i);
  for (tsr_dtype_t dt : kFloat8) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor t = tsr::empty({16, 16}, dt);
    std::memcpy(t.data_ptr(), codes.data(), 256);
    const std::vector<double> as64 = values(t);
    for (int i = 0; i < 256; ++i) {
      const float want = scalar_value(dt, uint8_t(i));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(as64[size_t(i)])) << i;
      } else {
        ASSERT_EQ(as64[size_t(i)], double(want)) << i;
      }
    }
    // Narrower targets round once from the exact value; a strided (transposed) source too.
    for (tsr_dtype_t to : {TSR_F32, TSR_F16, TSR_BF16}) {
      const std::vector<double> got = values(t.t().to(to));
      const std::vector<double> want = values(Tensor(t.t().to(TSR_F64)).to(to));
      for (size_t i = 0; i < got.size(); ++i)
        if (!(std::isnan(got[i]) && std::isnan(want[i]))) {
          ASSERT_EQ(got[i], want[i]) << tsr::dtype_name(to) << " " << i;
        }
    }
    // Between float8 formats: through float (e4m3fn -> e5m2 rounds the extra mantissa bit); to
    // itself: the bytes, NaN payloads included.
    for (tsr_dtype_t other : kFloat8) {
      const std::vector<uint8_t> got = bytes_of(t.to(other));
      for (int i = 0; i < 256; ++i)
        ASSERT_EQ(int(got[size_t(i)]), other == dt ? i : int(scalar_cast(other, scalar_value(dt, uint8_t(i)))))
            << tsr::dtype_name(other) << " code " << i;
    }
  }
  // Integers and bool: truncation toward zero and x != 0, as for other floats.
  Tensor e4 = tsr::from_vector(std::vector<float>{-7.5f, 2.75f, 0.0f, 300.0f}, {4}).to(TSR_F8_E4M3FN);
  EXPECT_EQ(e4.to(TSR_I32).to_vector<int32_t>(), (std::vector<int32_t>{-7, 2, 0, 288}));
  EXPECT_EQ(values(e4.to(TSR_BOOL)), (std::vector<double>{1, 1, 0, 1}));
  EXPECT_EQ(values(tsr::from_vector(std::vector<int64_t>{3, -9, 1000}, {3}).to(TSR_F8_E5M2)),
            (std::vector<double>{3, -8, 1024}));
}

TEST(LowPrecisionDtypes, FillViewsCatAndClonesKeepBytes) {
  EXPECT_EQ(bytes_of(tsr::full({2, 3}, 470.0, TSR_F8_E4M3FN)), std::vector<uint8_t>(6, 0x7f));  // NaN, as a cast
  EXPECT_EQ(bytes_of(tsr::full({3}, 0.3, TSR_F8_E5M2)), std::vector<uint8_t>(3, tsr::Float8_e5m2(0.3f).x));
  EXPECT_EQ(bytes_of(tsr::ones({2}, TSR_F8_E8M0FNU)), std::vector<uint8_t>(2, 127));
  for (tsr_dtype_t dt : {TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F8_E8M0FNU, TSR_F4_E2M1FN_X2}) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor a = tsr::empty({5, 7}, dt);
    std::vector<uint8_t> raw(35);
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = uint8_t(i * 37 + 5);
    std::memcpy(a.data_ptr(), raw.data(), raw.size());
    // transpose + contiguous is a strided byte copy
    const std::vector<uint8_t> tr = bytes_of(a.t().contiguous());
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < 7; ++c) ASSERT_EQ(tr[size_t(c * 5 + r)], raw[size_t(r * 7 + c)]);
    EXPECT_EQ(bytes_of(a.clone()), raw);
    EXPECT_EQ(a.slice(1, 2, 5).contiguous().sizes(), (std::vector<int64_t>{5, 3}));
    Tensor c = tsr::cat({a, a.slice(0, 1, 3)}, 0);
    EXPECT_EQ(c.dtype(), dt);
    const std::vector<uint8_t> cb = bytes_of(c);
    ASSERT_EQ(cb.size(), 49u);
    EXPECT_TRUE(std::equal(raw.begin(), raw.end(), cb.begin()));
    EXPECT_TRUE(std::equal(raw.begin() + 7, raw.begin() + 21, cb.begin() + 35));
    // index_select moves elements by size
    const std::vector<uint8_t> sel = bytes_of(tsr::index_select(a, 0, tsr::from_vector(std::vector<int64_t>{4, 0}, {2})));
    ASSERT_EQ(sel.size(), 14u);
    EXPECT_TRUE(std::equal(raw.begin() + 28, raw.begin() + 35, sel.begin()));
    EXPECT_TRUE(std::equal(raw.begin(), raw.begin() + 7, sel.begin() + 7));
    Tensor dst = tsr::empty({7, 5}, dt);
    dst.copy_(a.t());
    EXPECT_EQ(bytes_of(dst), tr);
  }
}

TEST(LowPrecisionDtypes, PackedFloat4ConvertsToNothingElse) {
  Tensor p = tsr::empty({4}, TSR_F4_E2M1FN_X2);
  EXPECT_TRUE(throws_with([&] { (void)p.to(TSR_F32); }, {"float4_e2m1fn_x2", "float32"}));
  EXPECT_TRUE(throws_with([&] { (void)tsr::ones({4}).to(TSR_F4_E2M1FN_X2); }, {"float4_e2m1fn_x2"}));
  EXPECT_TRUE(throws_with([&] { (void)tsr::full({2}, 1.0, TSR_F4_E2M1FN_X2); }, {"_fill", "float4_e2m1fn_x2"}));
}

TEST(LowPrecisionDtypes, PromotionAndArithmeticAreRefusedWithTheDtypes) {
  Tensor a = tsr::ones({3}, TSR_F8_E4M3FN);
  Tensor b = tsr::ones({3}, TSR_F8_E5M2);
  Tensor f = tsr::ones({3});
  EXPECT_TRUE(throws_with([&] { (void)tsr::add(a, f); }, {"add", "float8_e4m3fn", "float32", "no promotion rule"}));
  EXPECT_TRUE(throws_with([&] { (void)tsr::mul(a, b); }, {"mul", "float8_e4m3fn", "float8_e5m2"}));
  EXPECT_TRUE(throws_with([&] { (void)tsr::add(tsr::add(f, f), a); }, {"add", "no promotion rule"}));
  // Same dtype: no arithmetic kernel (as PyTorch on the CPU); the message names op and dtype.
  EXPECT_TRUE(throws_with([&] { (void)tsr::add(a, a); }, {"add", "float8_e4m3fn"}));
  // The explicit way works.
  EXPECT_EQ(values(tsr::add(a.to(TSR_F32), f)), (std::vector<double>{2, 2, 2}));
}

TEST(LowPrecisionDtypes, SafetensorsKeepsFloat8) {
  char path[] = "/tmp/tessera_lowp_XXXXXX.safetensors";
  const int fd = mkstemps(path, 12);
  ASSERT_GE(fd, 0);
  ::close(fd);
  tsr::StateDict sd;
  const std::vector<float> vals = probe_values(88, 3);  // 100 values with the specials
  for (tsr_dtype_t dt : kFloat8)
    sd.insert(tsr::dtype_name(dt), tsr::from_vector(vals, {10, int64_t(vals.size() / 10)}).to(dt));
  tsr::save_safetensors(path, sd);
  tsr::StateDict back = tsr::load_safetensors(path);
  ASSERT_EQ(back.size(), sd.size());
  for (const auto& kv : sd) {
    EXPECT_EQ(back.at(kv.first).dtype(), kv.second.dtype());
    EXPECT_EQ(bytes_of(back.at(kv.first)), bytes_of(kv.second));
  }
  tsr::StateDict packed;
  packed.insert("w", tsr::empty({2, 2}, TSR_F4_E2M1FN_X2));
  EXPECT_TRUE(throws_with([&] { tsr::save_safetensors(path, packed); }, {"float4_e2m1fn_x2"}));
  std::remove(path);
}

}  // namespace
