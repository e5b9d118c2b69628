#include "tensor/dtype.hpp"

#include <cstring>

namespace tsr::core {

tsr_dtype_t dtype_from_name(const char* n) {
  struct Alias {
    const char* name;
    tsr_dtype_t dt;
  };
  static const Alias aliases[] = {
      {"bool", TSR_BOOL}, {"uint8", TSR_U8},  {"u8", TSR_U8},         {"int8", TSR_I8},   {"i8", TSR_I8},
      {"int16", TSR_I16}, {"i16", TSR_I16},   {"short", TSR_I16},     {"int32", TSR_I32}, {"i32", TSR_I32},
      {"int", TSR_I32},   {"int64", TSR_I64}, {"i64", TSR_I64},       {"long", TSR_I64},  {"float16", TSR_F16},
      {"f16", TSR_F16},   {"half", TSR_F16},  {"bfloat16", TSR_BF16}, {"bf16", TSR_BF16}, {"float32", TSR_F32},
      {"f32", TSR_F32},   {"float", TSR_F32}, {"float64", TSR_F64},   {"f64", TSR_F64},   {"double", TSR_F64},
      {"float8_e4m3fn", TSR_F8_E4M3FN}, {"f8_e4m3fn", TSR_F8_E4M3FN}, {"float8_e5m2", TSR_F8_E5M2},
      {"f8_e5m2", TSR_F8_E5M2}, {"float8_e8m0fnu", TSR_F8_E8M0FNU}, {"f8_e8m0fnu", TSR_F8_E8M0FNU},
      {"float4_e2m1fn_x2", TSR_F4_E2M1FN_X2}, {"f4_e2m1fn_x2", TSR_F4_E2M1FN_X2}};
  if (!n) return TSR_DTYPE_UNDEFINED;
  for (const Alias& a : aliases)
    if (std::strcmp(a.name, n) == 0) return a.dt;
  return TSR_DTYPE_UNDEFINED;
}

static int int_rank(tsr_dtype_t d) {  // signed ints by width
  switch (d) {
    case TSR_I8:
      return 1;
    case TSR_I16:
      return 2;
    case TSR_I32:
      return 3;
    case TSR_I64:
      return 4;
    default:
      return 0;
  }
}

tsr_dtype_t promote_types(tsr_dtype_t a, tsr_dtype_t b) {
  if (a == TSR_DTYPE_UNDEFINED) return b;
  if (b == TSR_DTYPE_UNDEFINED || a == b) return a;
  // As PyTorch: no promotion rule mixes a low-precision float with another dtype (the caller
  // reports UNDEFINED as an error naming both).
  if (tsr::is_low_precision_float(a) || tsr::is_low_precision_float(b)) return TSR_DTYPE_UNDEFINED;
  if (a == TSR_BOOL) return b;
  if (b == TSR_BOOL) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if (a == TSR_F64 || b == TSR_F64) return TSR_F64;
    return TSR_F32;  // f16+bf16, f16+f32, bf16+f32
  }
  // both integral
  if (a == TSR_U8) return b == TSR_I8 ? TSR_I16 : b;
  if (b == TSR_U8) return a == TSR_I8 ? TSR_I16 : a;
  return int_rank(a) >= int_rank(b) ? a : b;
}

void ResultTypeState::add(tsr_dtype_t d, int ndim, bool wrapped_number) {
  if (wrapped_number && is_floating(d)) d = TSR_F32;  // the default dtype
  tsr_dtype_t& group = wrapped_number ? wrapped : ndim == 0 ? zero : dim;
  const tsr_dtype_t p = promote_types(group, d);
  // No rule (a low-precision float with another dtype) is sticky: a later operand must not make
  // the group look defined again. Across groups, combine() reports it as PyTorch does.
  if (p == TSR_DTYPE_UNDEFINED && group != TSR_DTYPE_UNDEFINED) invalid = true;
  group = p;
}

// PyTorch's combine_categories: a lower-priority group only matters when it is of a higher
// category than the higher-priority group.
static tsr_dtype_t combine(tsr_dtype_t higher, tsr_dtype_t lower) {
  if (higher == TSR_DTYPE_UNDEFINED) return lower;
  if (is_floating(higher)) return higher;
  if (higher == TSR_BOOL || (lower != TSR_DTYPE_UNDEFINED && is_floating(lower))) return promote_types(higher, lower);
  return higher;
}

tsr_dtype_t ResultTypeState::result() const {
  return invalid ? TSR_DTYPE_UNDEFINED : combine(dim, combine(zero, wrapped));
}

}  // namespace tsr::core
