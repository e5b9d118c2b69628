// Tessera SDK: C++ element types and dtype helpers (header-only; no core needed).
//
//  - tsr::Half (IEEE 754 binary16) and tsr::BFloat16 (bfloat16): storage types whose arithmetic
//    goes through float. Conversions from float round to nearest even; NaN stays NaN (quiet,
//    sign and top payload bits kept); overflow gives +-inf (Half) as IEEE requires.
//  - tsr::Float8_e4m3fn, Float8_e5m2, Float8_e8m0fnu and Float4_e2m1fn_x2: the low-precision
//    floats, declared in tessera/low_precision.hpp (their conversions are described there).
//  - tsr::itemsize / dtype_name / is_floating / is_integral / is_low_precision_float over
//    tsr_dtype_t.
//  - tsr::CppType<dtype>::type and tsr::dtype_of<T> map between tsr_dtype_t and C++ types:
//      bool->bool, u8->uint8_t, i8->int8_t, i16->int16_t, i32->int32_t, i64->int64_t,
//      f16->tsr::Half, bf16->tsr::BFloat16, f32->float, f64->double, and the low-precision
//      floats to their tsr:: types.
//  - dtype dispatch: tsr::dispatch_all(dtype, "op", [&](auto tag) {
//        using T = typename decltype(tag)::type; ... });
//    and dispatch_floating / dispatch_integral / dispatch_integral_and_bool / dispatch_numeric /
//    dispatch_castable (every dtype a cast can read or write) / dispatch_mask<MASK>, which throw tsr::Error(TSR_UNIMPLEMENTED, "<op>: unsupported dtype X")
//    for a dtype outside their set.
// Everything usable in CUDA device code is marked TSR_HOST_DEVICE.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "tessera/error.hpp"
#include "tessera/types.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_HOST_DEVICE __host__ __device__
#else
#define TSR_HOST_DEVICE
#endif

// Per-element helpers that must inline into vectorized loops whatever the inliner's budget.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_ALWAYS_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TSR_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TSR_ALWAYS_INLINE inline
#endif

namespace tsr {

namespace detail {
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint32_t f32_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The conversions below are branch-free (selects only) so that loops over them vectorize.
// They use only single float additions/multiplications, so FMA contraction cannot change them.

// float -> binary16 bits, round to nearest even; overflow -> inf; NaN -> quiet NaN keeping the
// sign and the top payload bits.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint16_t f32_to_f16_bits(float value) {
  const uint32_t w = f32_to_bits(value);
  const uint32_t sign = (w >> 16) & 0x8000u;
  const uint32_t a = w & 0x7fffffffu;
  const int32_t ai = static_cast<int32_t>(a);  // < 2^31: signed compares are exact (and vectorize)
  // Normal half: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even.
  uint32_t norm = a - 0x38000000u;
  norm = (norm + 0xfffu + ((norm >> 13) & 1u)) >> 13;
  // Subnormal half (|x| < 2^-14): adding 0.5f leaves round_even(|x| * 2^24) in the low bits.
  const uint32_t sub = f32_to_bits(bits_to_f32(a) + 0.5f) - 0x3f000000u;
  uint32_t r = ai < 0x38800000 ? sub : norm;
  r = ai >= 0x477ff000 ? 0x7c00u : r;                          // >= 65520 (and inf) -> inf
  r = ai > 0x7f800000 ? (0x7e00u | ((a >> 13) & 0x3ffu)) : r;  // NaN stays NaN
  return static_cast<uint16_t>(sign | r);
}

TSR_HOST_DEVICE TSR_ALWAYS_INLINE float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  const int32_t emi = static_cast<int32_t>(em);
  const uint32_t norm = (em << 13) + 0x38000000u;                                       // rebias 15 -> 127
  const uint32_t infnan = norm + 0x38000000u;                                           // exponent 31 -> 255
  const uint32_t sub = f32_to_bits(static_cast<float>(emi) * 5.9604644775390625e-08f);  // em * 2^-24
  uint32_t r = emi >= 0x7c00 ? infnan : norm;
  r = emi < 0x0400 ? sub : r;
  return bits_to_f32(sign | r);
}

// float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint16_t f32_to_bf16_bits(float value) {
  const uint32_t u = f32_to_bits(value);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x0040u;
  return static_cast<uint16_t>(static_cast<int32_t>(u & 0x7fffffffu) > 0x7f800000 ? nan : rounded);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float bf16_bits_to_f32(uint16_t b) {
  return bits_to_f32(static_cast<uint32_t>(b) << 16);
}
}  // namespace detail

struct from_bits_t {};
constexpr from_bits_t from_bits{};

// Arithmetic operators shared by Half and BFloat16: same-type -> same type (computed in float),
// mixed with float/double -> float/double, mixed with an integer -> the 16-bit type.
// Comparisons use the implicit conversion to float.
#define TSR_DETAIL_HALF_LIKE_OPS(H)                                                                     \
  TSR_HOST_DEVICE inline H operator+(H a, H b) { return H(float(a) + float(b)); }                       \
  TSR_HOST_DEVICE inline H operator-(H a, H b) { return H(float(a) - float(b)); }                       \
  TSR_HOST_DEVICE inline H operator*(H a, H b) { return H(float(a) * float(b)); }                       \
  TSR_HOST_DEVICE inline H operator/(H a, H b) { return H(float(a) / float(b)); }                       \
  TSR_HOST_DEVICE inline H operator-(H a) { return H::from_raw(static_cast<uint16_t>(a.x ^ 0x8000u)); } \
  TSR_HOST_DEVICE inline H& operator+=(H& a, H b) { return a = a + b; }                                 \
  TSR_HOST_DEVICE inline H& operator-=(H& a, H b) { return a = a - b; }                                 \
  TSR_HOST_DEVICE inline H& operator*=(H& a, H b) { return a = a * b; }                                 \
  TSR_HOST_DEVICE inline H& operator/=(H& a, H b) { return a = a / b; }                                 \
  TSR_HOST_DEVICE inline float operator+(H a, float b) { return float(a) + b; }                         \
  TSR_HOST_DEVICE inline float operator-(H a, float b) { return float(a) - b; }                         \
  TSR_HOST_DEVICE inline float operator*(H a, float b) { return float(a) * b; }                         \
  TSR_HOST_DEVICE inline float operator/(H a, float b) { return float(a) / b; }                         \
  TSR_HOST_DEVICE inline float operator+(float a, H b) { return a + float(b); }                         \
  TSR_HOST_DEVICE inline float operator-(float a, H b) { return a - float(b); }                         \
  TSR_HOST_DEVICE inline float operator*(float a, H b) { return a * float(b); }                         \
  TSR_HOST_DEVICE inline float operator/(float a, H b) { return a / float(b); }                         \
  TSR_HOST_DEVICE inline double operator+(H a, double b) { return double(float(a)) + b; }               \
  TSR_HOST_DEVICE inline double operator-(H a, double b) { return double(float(a)) - b; }               \
  TSR_HOST_DEVICE inline double operator*(H a, double b) { return double(float(a)) * b; }               \
  TSR_HOST_DEVICE inline double operator/(H a, double b) { return double(float(a)) / b; }               \
  TSR_HOST_DEVICE inline double operator+(double a, H b) { return a + double(float(b)); }               \
  TSR_HOST_DEVICE inline double operator-(double a, H b) { return a - double(float(b)); }               \
  TSR_HOST_DEVICE inline double operator*(double a, H b) { return a * double(float(b)); }               \
  TSR_HOST_DEVICE inline double operator/(double a, H b) { return a / double(float(b)); }               \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator+(H a, I b) {                                                        \
    return a + H(static_cast<float>(b));                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator-(H a, I b) {                                                        \
    return a - H(static_cast<float>(b));                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator*(H a, I b) {                                                        \
    return a * H(static_cast<float>(b));                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator/(H a, I b) {                                                        \
    return a / H(static_cast<float>(b));                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator+(I a, H b) {                                                        \
    return H(static_cast<float>(a)) + b;                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator-(I a, H b) {                                                        \
    return H(static_cast<float>(a)) - b;                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator*(I a, H b) {                                                        \
    return H(static_cast<float>(a)) * b;                                                                \
  }                                                                                                     \
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>                             \
  TSR_HOST_DEVICE inline H operator/(I a, H b) {                                                        \
    return H(static_cast<float>(a)) / b;                                                                \
  }

// IEEE 754 binary16.
struct alignas(2) Half {
  uint16_t x;
  Half() = default;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Half(float f) : x(detail::f32_to_f16_bits(f)) {}  // NOLINT: implicit by design
  TSR_HOST_DEVICE constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE operator float() const { return detail::f16_bits_to_f32(x); }  // NOLINT
  TSR_HOST_DEVICE static constexpr Half from_raw(uint16_t bits) { return Half(bits, from_bits); }
  TSR_HOST_DEVICE constexpr uint16_t bits() const { return x; }
};

// bfloat16: the upper half of a float.
struct alignas(2) BFloat16 {
  uint16_t x;
  BFloat16() = default;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE BFloat16(float f) : x(detail::f32_to_bf16_bits(f)) {}  // NOLINT
  TSR_HOST_DEVICE constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE operator float() const { return detail::bf16_bits_to_f32(x); }  // NOLINT
  TSR_HOST_DEVICE static constexpr BFloat16 from_raw(uint16_t bits) { return BFloat16(bits, from_bits); }
  TSR_HOST_DEVICE constexpr uint16_t bits() const { return x; }
};

TSR_DETAIL_HALF_LIKE_OPS(Half)
TSR_DETAIL_HALF_LIKE_OPS(BFloat16)
#undef TSR_DETAIL_HALF_LIKE_OPS

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit float types");

}  // namespace tsr

#include "tessera/low_precision.hpp"  // NOLINT: needs the helpers above

namespace tsr {

static_assert(std::is_trivially_copyable<Half>::value && std::is_trivially_copyable<BFloat16>::value,
              "16-bit float types must be trivially copyable");

// ---- type traits -----------------------------------------------------------------------------

template <class T>
struct is_reduced_float : std::false_type {};
template <>
struct is_reduced_float<Half> : std::true_type {};
template <>
struct is_reduced_float<BFloat16> : std::true_type {};
template <>
struct is_reduced_float<Float8_e4m3fn> : std::true_type {};
template <>
struct is_reduced_float<Float8_e5m2> : std::true_type {};
template <>
struct is_reduced_float<Float8_e8m0fnu> : std::true_type {};

template <class T>
struct is_float_type : std::integral_constant<bool, std::is_floating_point<T>::value || is_reduced_float<T>::value> {};

// The type arithmetic on T is done in: float for Half, BFloat16 and the float8 types, T
// otherwise.
template <class T>
struct compute_type {
  using type = std::conditional_t<is_reduced_float<T>::value, float, T>;
};
template <class T>
using compute_t = typename compute_type<T>::type;

// Converts between any two element types (through float for Half/BFloat16; float -> integer
// truncates toward zero; anything -> bool is x != 0).
template <class To, class From>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE To convert(From v) {
  if constexpr (std::is_same<To, From>::value) {
    return v;
  } else if constexpr (std::is_same<To, bool>::value) {
    return static_cast<compute_t<From>>(v) != compute_t<From>(0);
  } else if constexpr (is_reduced_float<From>::value) {
    return static_cast<To>(static_cast<float>(v));
  } else if constexpr (is_reduced_float<To>::value) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class T>
TSR_HOST_DEVICE inline bool isnan(T v) {
  if constexpr (is_float_type<T>::value) {
    compute_t<T> c = static_cast<compute_t<T>>(v);
    return c != c;
  } else {
    (void)v;
    return false;
  }
}

// ---- dtype facts -----------------------------------------------------------------------------

constexpr inline size_t itemsize(tsr_dtype_t d) {
  switch (d) {
    case TSR_BOOL:
    case TSR_U8:
    case TSR_I8:
    case TSR_F8_E4M3FN:
    case TSR_F8_E5M2:
    case TSR_F8_E8M0FNU:
    case TSR_F4_E2M1FN_X2:
      return 1;
    case TSR_I16:
    case TSR_F16:
    case TSR_BF16:
      return 2;
    case TSR_I32:
    case TSR_F32:
      return 4;
    case TSR_I64:
    case TSR_F64:
      return 8;
    default:
      return 0;
  }
}
constexpr inline size_t itemsize(int32_t d) { return itemsize(static_cast<tsr_dtype_t>(d)); }

constexpr inline const char* dtype_name(tsr_dtype_t d) {
  switch (d) {
    case TSR_BOOL:
      return "bool";
    case TSR_U8:
      return "uint8";
    case TSR_I8:
      return "int8";
    case TSR_I16:
      return "int16";
    case TSR_I32:
      return "int32";
    case TSR_I64:
      return "int64";
    case TSR_F16:
      return "float16";
    case TSR_BF16:
      return "bfloat16";
    case TSR_F32:
      return "float32";
    case TSR_F64:
      return "float64";
    case TSR_F8_E4M3FN:
      return "float8_e4m3fn";
    case TSR_F8_E5M2:
      return "float8_e5m2";
    case TSR_F8_E8M0FNU:
      return "float8_e8m0fnu";
    case TSR_F4_E2M1FN_X2:
      return "float4_e2m1fn_x2";
    default:
      return "undefined";
  }
}
constexpr inline const char* dtype_name(int32_t d) { return dtype_name(static_cast<tsr_dtype_t>(d)); }

constexpr inline bool is_low_precision_float(int32_t d) {
  return d == TSR_F8_E4M3FN || d == TSR_F8_E5M2 || d == TSR_F8_E8M0FNU || d == TSR_F4_E2M1FN_X2;
}

constexpr inline bool is_valid_dtype(int32_t d) { return (d >= TSR_BOOL && d <= TSR_F64) || is_low_precision_float(d); }

constexpr inline bool is_floating(tsr_dtype_t d) {
  return d == TSR_F16 || d == TSR_BF16 || d == TSR_F32 || d == TSR_F64;
}
constexpr inline bool is_floating(int32_t d) { return is_floating(static_cast<tsr_dtype_t>(d)); }

// u8..i64; bool too when include_bool.
constexpr inline bool is_integral(tsr_dtype_t d, bool include_bool = false) {
  return (d >= TSR_U8 && d <= TSR_I64) || (include_bool && d == TSR_BOOL);
}
constexpr inline bool is_integral(int32_t d, bool include_bool = false) {
  return is_integral(static_cast<tsr_dtype_t>(d), include_bool);
}

// Dtype masks (for kernel registration and dispatch_mask). kFloatingMask and kAllMask are the
// dtypes arithmetic is defined on; the low-precision floats have masks of their own.
constexpr uint32_t kFloatingMask =
    TSR_DTYPE_BIT(TSR_F16) | TSR_DTYPE_BIT(TSR_BF16) | TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64);
constexpr uint32_t kIntegralMask = TSR_DTYPE_BIT(TSR_U8) | TSR_DTYPE_BIT(TSR_I8) | TSR_DTYPE_BIT(TSR_I16) |
                                   TSR_DTYPE_BIT(TSR_I32) | TSR_DTYPE_BIT(TSR_I64);
constexpr uint32_t kBoolMask = TSR_DTYPE_BIT(TSR_BOOL);
constexpr uint32_t kNumericMask = kFloatingMask | kIntegralMask;  // all but bool
constexpr uint32_t kAllMask = kNumericMask | kBoolMask;
constexpr uint32_t kFloat8Mask =
    TSR_DTYPE_BIT(TSR_F8_E4M3FN) | TSR_DTYPE_BIT(TSR_F8_E5M2) | TSR_DTYPE_BIT(TSR_F8_E8M0FNU);
constexpr uint32_t kFloat4Mask = TSR_DTYPE_BIT(TSR_F4_E2M1FN_X2);
// What casts convert between (float8 included; float4_e2m1fn_x2 holds two values per element,
// so it only copies to itself: kMovableMask).
constexpr uint32_t kCastableMask = kAllMask | kFloat8Mask;
// What moves bytes without looking at them (same-dtype copies, views, gathers): every dtype.
constexpr uint32_t kMovableMask = kCastableMask | kFloat4Mask;

// ---- C++ type <-> dtype ----------------------------------------------------------------------

template <tsr_dtype_t D>
struct CppType;
#define TSR_DETAIL_MAP(D, T) \
  template <>                \
  struct CppType<D> {        \
    using type = T;          \
  };
TSR_DETAIL_MAP(TSR_BOOL, bool)
TSR_DETAIL_MAP(TSR_U8, uint8_t)
TSR_DETAIL_MAP(TSR_I8, int8_t)
TSR_DETAIL_MAP(TSR_I16, int16_t)
TSR_DETAIL_MAP(TSR_I32, int32_t)
TSR_DETAIL_MAP(TSR_I64, int64_t)
TSR_DETAIL_MAP(TSR_F16, Half)
TSR_DETAIL_MAP(TSR_BF16, BFloat16)
TSR_DETAIL_MAP(TSR_F32, float)
TSR_DETAIL_MAP(TSR_F64, double)
TSR_DETAIL_MAP(TSR_F8_E4M3FN, Float8_e4m3fn)
TSR_DETAIL_MAP(TSR_F8_E5M2, Float8_e5m2)
TSR_DETAIL_MAP(TSR_F4_E2M1FN_X2, Float4_e2m1fn_x2)
TSR_DETAIL_MAP(TSR_F8_E8M0FNU, Float8_e8m0fnu)
#undef TSR_DETAIL_MAP
template <tsr_dtype_t D>
using cpp_type_t = typename CppType<D>::type;

template <class T>
struct DtypeOf {
  static constexpr tsr_dtype_t value = TSR_DTYPE_UNDEFINED;
};
#define TSR_DETAIL_MAP(D, T)                \
  template <>                               \
  struct DtypeOf<T> {                       \
    static constexpr tsr_dtype_t value = D; \
  };
TSR_DETAIL_MAP(TSR_BOOL, bool)
TSR_DETAIL_MAP(TSR_U8, uint8_t)
TSR_DETAIL_MAP(TSR_I8, int8_t)
TSR_DETAIL_MAP(TSR_I16, int16_t)
TSR_DETAIL_MAP(TSR_I32, int32_t)
TSR_DETAIL_MAP(TSR_I64, int64_t)
TSR_DETAIL_MAP(TSR_F16, Half)
TSR_DETAIL_MAP(TSR_BF16, BFloat16)
TSR_DETAIL_MAP(TSR_F32, float)
TSR_DETAIL_MAP(TSR_F64, double)
TSR_DETAIL_MAP(TSR_F8_E4M3FN, Float8_e4m3fn)
TSR_DETAIL_MAP(TSR_F8_E5M2, Float8_e5m2)
TSR_DETAIL_MAP(TSR_F4_E2M1FN_X2, Float4_e2m1fn_x2)
TSR_DETAIL_MAP(TSR_F8_E8M0FNU, Float8_e8m0fnu)
#undef TSR_DETAIL_MAP
template <class T>
constexpr tsr_dtype_t dtype_of = DtypeOf<std::remove_cv_t<T>>::value;

// ---- dispatch ----------------------------------------------------------------------------------

template <class T>
struct TypeTag {
  using type = T;
};

[[noreturn]] inline void throw_unsupported_dtype(const char* name, int32_t dtype) {
  throw Error(TSR_UNIMPLEMENTED, std::string(name ? name : "dispatch") + ": unsupported dtype " + dtype_name(dtype));
}

// Calls f(TypeTag<T>{}) for the C++ type of `dtype` when TSR_DTYPE_BIT(dtype) is in MASK; throws
// tsr::Error(TSR_UNIMPLEMENTED) otherwise. Every instantiated branch must return the same type.
namespace detail {
constexpr int lowest_dtype_in(uint32_t mask) {
  int i = 0;
  while (i < 31 && !(mask & (1u << i))) ++i;
  return i;
}
}  // namespace detail
// The C++ type of the lowest dtype in MASK (dispatch's result type is f's result for it).
template <uint32_t MASK>
using first_type_in_mask = cpp_type_t<static_cast<tsr_dtype_t>(detail::lowest_dtype_in(MASK))>;

template <uint32_t MASK, class F>
inline auto dispatch_mask(int32_t dtype, const char* name, F&& f) -> decltype(f(TypeTag<first_type_in_mask<MASK>>{})) {
#define TSR_DETAIL_CASE(D, T)                                             \
  case D:                                                                 \
    if constexpr ((MASK & TSR_DTYPE_BIT(D)) != 0) return f(TypeTag<T>{}); \
    break;
  switch (dtype) {
    TSR_DETAIL_CASE(TSR_BOOL, bool)
    TSR_DETAIL_CASE(TSR_U8, uint8_t)
    TSR_DETAIL_CASE(TSR_I8, int8_t)
    TSR_DETAIL_CASE(TSR_I16, int16_t)
    TSR_DETAIL_CASE(TSR_I32, int32_t)
    TSR_DETAIL_CASE(TSR_I64, int64_t)
    TSR_DETAIL_CASE(TSR_F16, Half)
    TSR_DETAIL_CASE(TSR_BF16, BFloat16)
    TSR_DETAIL_CASE(TSR_F32, float)
    TSR_DETAIL_CASE(TSR_F64, double)
    TSR_DETAIL_CASE(TSR_F8_E4M3FN, Float8_e4m3fn)
    TSR_DETAIL_CASE(TSR_F8_E5M2, Float8_e5m2)
    TSR_DETAIL_CASE(TSR_F4_E2M1FN_X2, Float4_e2m1fn_x2)
    TSR_DETAIL_CASE(TSR_F8_E8M0FNU, Float8_e8m0fnu)
    default:
      break;
  }
#undef TSR_DETAIL_CASE
  throw_unsupported_dtype(name, dtype);
}

template <class F>
inline auto dispatch_all(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kAllMask>(dtype, name, std::forward<F>(f));
}
template <class F>
inline auto dispatch_floating(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kFloatingMask>(dtype, name, std::forward<F>(f));
}
// u8, i8, i16, i32, i64 (not bool).
template <class F>
inline auto dispatch_integral(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kIntegralMask>(dtype, name, std::forward<F>(f));
}
template <class F>
inline auto dispatch_integral_and_bool(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kIntegralMask | kBoolMask>(dtype, name, std::forward<F>(f));
}
// Every dtype but bool.
template <class F>
inline auto dispatch_numeric(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kNumericMask>(dtype, name, std::forward<F>(f));
}
// kAllMask and the float8 types (what casts read and write).
template <class F>
inline auto dispatch_castable(int32_t dtype, const char* name, F&& f) {
  return dispatch_mask<kCastableMask>(dtype, name, std::forward<F>(f));
}

}  // namespace tsr

// numeric_limits for the 16-bit float types (host and device).
namespace std {
template <>
class numeric_limits<tsr::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = true;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int max_exponent = 16;
  static constexpr float_round_style round_style = round_to_nearest;
  TSR_HOST_DEVICE static constexpr tsr::Half min() { return tsr::Half::from_raw(0x0400); }
  TSR_HOST_DEVICE static constexpr tsr::Half lowest() { return tsr::Half::from_raw(0xfbff); }
  TSR_HOST_DEVICE static constexpr tsr::Half max() { return tsr::Half::from_raw(0x7bff); }
  TSR_HOST_DEVICE static constexpr tsr::Half epsilon() { return tsr::Half::from_raw(0x1400); }
  TSR_HOST_DEVICE static constexpr tsr::Half round_error() { return tsr::Half::from_raw(0x3800); }
  TSR_HOST_DEVICE static constexpr tsr::Half infinity() { return tsr::Half::from_raw(0x7c00); }
  TSR_HOST_DEVICE static constexpr tsr::Half quiet_NaN() { return tsr::Half::from_raw(0x7e00); }
  TSR_HOST_DEVICE static constexpr tsr::Half signaling_NaN() { return tsr::Half::from_raw(0x7d00); }
  TSR_HOST_DEVICE static constexpr tsr::Half denorm_min() { return tsr::Half::from_raw(0x0001); }
};
template <>
class numeric_limits<tsr::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int max_exponent = 128;
  static constexpr float_round_style round_style = round_to_nearest;
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 min() { return tsr::BFloat16::from_raw(0x0080); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 lowest() { return tsr::BFloat16::from_raw(0xff7f); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 max() { return tsr::BFloat16::from_raw(0x7f7f); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 epsilon() { return tsr::BFloat16::from_raw(0x3c00); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 round_error() { return tsr::BFloat16::from_raw(0x3f00); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 infinity() { return tsr::BFloat16::from_raw(0x7f80); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 quiet_NaN() { return tsr::BFloat16::from_raw(0x7fc0); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 signaling_NaN() { return tsr::BFloat16::from_raw(0x7f80 | 0x0020); }
  TSR_HOST_DEVICE static constexpr tsr::BFloat16 denorm_min() { return tsr::BFloat16::from_raw(0x0001); }
};
}  // namespace std
