// Internal to the CPU backend: strided element access for the quantization kernels
// (quant_scaled_mm.cpp, quant.cpp), which read their views with any strides.
#pragma once

#include <cstdint>

#include "cpu_common.hpp"

namespace tsr::cpu::quant {

// Element (i, j) of a 2-D view of one-byte elements.
inline uint8_t byte_at(const tsr_tensor_view_t& v, int64_t i, int64_t j) {
  return static_cast<const uint8_t*>(v.data)[i * v.strides[0] + j * v.strides[1]];
}

// Element offset (in elements) of the element at row-major position `flat` of a view of any rank.
inline int64_t flat_offset(const tsr_tensor_view_t& v, int64_t flat) {
  int64_t off = 0;
  for (int32_t d = v.ndim - 1; d >= 0; --d) {
    off += (flat % v.sizes[d]) * v.strides[d];
    flat /= v.sizes[d];
  }
  return off;
}

// A float16/bfloat16/float32/float64 element at element offset `off`, as double.
inline double load_float(const tsr_tensor_view_t& v, int64_t off) {
  switch (v.dtype) {
    case TSR_F16:
      return static_cast<float>(static_cast<const Half*>(v.data)[off]);
    case TSR_BF16:
      return static_cast<float>(static_cast<const BFloat16*>(v.data)[off]);
    case TSR_F32:
      return static_cast<const float*>(v.data)[off];
    case TSR_F64:
      return static_cast<const double*>(v.data)[off];
    default:
      fail(TSR_INTERNAL, "quantization kernel: unexpected dtype ", dtype_name(v.dtype));
  }
}

}  // namespace tsr::cpu::quant
