// Dtype masks (tsr_kernel_info_t.dtype_mask) as names.
#include "cli.hpp"
#include "tessera/dtype.hpp"

namespace tessera_cli {

std::string dtype_full_name(int dtype) {
  if (tsr::is_valid_dtype(dtype)) return tsr::dtype_name(dtype);
  return "dtype" + std::to_string(dtype);
}

std::string dtype_short_name(int dtype) {
  switch (dtype) {
    case TSR_BOOL:
      return "bool";
    case TSR_U8:
      return "u8";
    case TSR_I8:
      return "i8";
    case TSR_I16:
      return "i16";
    case TSR_I32:
      return "i32";
    case TSR_I64:
      return "i64";
    case TSR_F16:
      return "f16";
    case TSR_BF16:
      return "bf16";
    case TSR_F32:
      return "f32";
    case TSR_F64:
      return "f64";
    case TSR_F8_E4M3FN:
      return "f8e4m3";
    case TSR_F8_E5M2:
      return "f8e5m2";
    case TSR_F8_E8M0FNU:
      return "f8e8m0";
    case TSR_F4_E2M1FN_X2:
      return "f4x2";
    default:
      return "dt" + std::to_string(dtype);
  }
}

std::vector<int> dtypes_in_mask(uint32_t mask) {
  std::vector<int> out;
  for (int d = 1; d < TSR_DTYPE_LIMIT; ++d)
    if (mask == 0 ? tsr::is_valid_dtype(d) : (mask & TSR_DTYPE_BIT(d)) != 0) out.push_back(d);
  return out;
}

std::string mask_to_names(uint32_t mask, bool short_names) {
  if (mask == 0) return "all";
  std::string s;
  for (int d : dtypes_in_mask(mask)) {
    if (!s.empty()) s += short_names ? " " : ", ";
    s += short_names ? dtype_short_name(d) : dtype_full_name(d);
  }
  return s;
}

}  // namespace tessera_cli
