// Tessera SDK: the argument rules of scaled_mm and of the MXFP8/NVFP4 (de)quantization ops,
// written once: the core's meta functions check calls with them (and prefix the op name), and
// the kernels of every backend derive the same plan (mode, M, N, K) from their views. Host only.
// Each check returns "" when the arguments are valid, else what is wrong, naming the arguments
// with their shapes and dtypes.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/checked_math.hpp"
#include "tessera/dtype.hpp"
#include "tessera/kernels/block_scale_layout.hpp"

namespace tsr::kernels {

// What the checks need of a tensor argument (absent: an optional argument that is None).
struct QTensor {
  bool present = false;
  int32_t dtype = TSR_DTYPE_UNDEFINED;
  int32_t ndim = 0;
  const int64_t* sizes = nullptr;

  QTensor() = default;
  QTensor(int32_t dt, int32_t nd, const int64_t* s) : present(true), dtype(dt), ndim(nd), sizes(s) {}
  int64_t size(int32_t d) const { return sizes[d]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; ++d) n *= sizes[d];
    return n;
  }
  // "[3, 64] float8_e4m3fn"
  std::string str() const {
    std::string s = "[";
    for (int32_t d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(sizes[d]);
    return s + "] " + dtype_name(dtype);
  }
};

inline bool is_fp8_operand(int32_t d) { return d == TSR_F8_E4M3FN || d == TSR_F8_E5M2; }
inline bool is_matmul_out_dtype(int32_t d) { return d == TSR_BF16 || d == TSR_F16 || d == TSR_F32; }

// How scaled_mm scales the product (chosen from the operands' and scales' dtypes and shapes).
enum class ScaleMode { Tensorwise, Rowwise, MXFP8, NVFP4 };

inline const char* scale_mode_name(ScaleMode m) {
  switch (m) {
    case ScaleMode::Tensorwise:
      return "tensorwise";
    case ScaleMode::Rowwise:
      return "rowwise";
    case ScaleMode::MXFP8:
      return "MXFP8 block-scaled";
    default:
      return "NVFP4 block-scaled";
  }
}

struct ScaledMmPlan {
  ScaleMode mode = ScaleMode::Tensorwise;
  int64_t M = 0, N = 0, K = 0;  // K counts values (twice the bytes for float4_e2m1fn_x2)
  int32_t out_dtype = TSR_DTYPE_UNDEFINED;
};

// Elements along K per scale of a block-scaled mode.
inline int64_t scale_block(ScaleMode m) { return m == ScaleMode::MXFP8 ? kMxBlock : kNvfp4Block; }

// The largest size of one dimension these ops accept: rounding it up to a tile and doubling it
// (packed float4) cannot overflow int64. Only an empty tensor can have such a size.
constexpr int64_t kMaxQuantDim = int64_t(1) << 56;

// The numel a swizzled block-scale tensor must have for `rows` operand rows and K values; -1
// when it overflows int64.
inline int64_t swizzled_scale_numel(int64_t rows, int64_t K, int64_t block) {
  int64_t n = 0;
  if (rows > kMaxQuantDim || K > kMaxQuantDim ||
      !checked_mul(scale_padded_rows(rows), scale_padded_cols(K / block), &n))
    return -1;
  return n;
}

// "" when every size of t is at most kMaxQuantDim.
inline std::string check_dims(const char* name, const QTensor& t) {
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.sizes[d] > kMaxQuantDim)
      return std::string(name) + " " + t.str() + " has a dimension larger than 2^56, which these ops do not support";
  return "";
}

namespace detail {
inline std::string operands(const QTensor& a, const QTensor& b) { return "self " + a.str() + " and mat2 " + b.str(); }
// A block scale: dtype `dt`, numel of the swizzled layout for `rows` rows.
inline std::string check_block_scale(const char* name, const QTensor& s, int32_t dt, int64_t rows, int64_t K,
                                     int64_t block, const char* rows_name) {
  if (s.dtype != dt) return std::string(name) + " must be " + dtype_name(dt) + " for this mode, got " + s.str();
  const int64_t want = swizzled_scale_numel(rows, K, block);
  if (want < 0) return std::string(name) + ": the swizzled layout's size overflows int64";
  if (s.numel() != want)
    return std::string(name) + " " + s.str() + " must hold " + std::to_string(want) + " scales: round_up(" + rows_name +
           "=" + std::to_string(rows) + ", 128) * round_up(K/" + std::to_string(block) + "=" +
           std::to_string(K / block) + ", 4), in the swizzled layout (swizzle_block_scales makes it)";
  return "";
}
}  // namespace detail

// scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?): see
// docs/low-precision.md. out_dtype TSR_DTYPE_UNDEFINED takes the mode's default.
inline std::string check_scaled_mm(const QTensor& a, const QTensor& b, const QTensor& sa, const QTensor& sb,
                                   const QTensor& bias, const QTensor& sr, int32_t out_dtype, ScaledMmPlan* plan) {
  if (a.ndim != 2 || b.ndim != 2) return "expected 2-D operands, got " + detail::operands(a, b);
  for (const std::string& e : {check_dims("self", a), check_dims("mat2", b)})
    if (!e.empty()) return e;
  const bool fp4 = a.dtype == TSR_F4_E2M1FN_X2 || b.dtype == TSR_F4_E2M1FN_X2;
  if (fp4 && a.dtype != b.dtype) return "NVFP4 needs both operands float4_e2m1fn_x2, got " + detail::operands(a, b);
  if (!fp4 && (!is_fp8_operand(a.dtype) || !is_fp8_operand(b.dtype)))
    return "expected float8_e4m3fn or float8_e5m2 operands (or float4_e2m1fn_x2 for NVFP4), got " +
           detail::operands(a, b);
  if (a.size(1) != b.size(0))
    return detail::operands(a, b) + " cannot be multiplied (" + std::to_string(a.size(1)) +
           " != " + std::to_string(b.size(0)) + ")";
  ScaledMmPlan p;
  p.M = a.size(0);
  p.N = b.size(1);
  p.K = a.size(1);
  if (fp4) {
    p.mode = ScaleMode::NVFP4;
    p.K = 2 * a.size(1);
  } else {
    if (a.dtype == TSR_F8_E5M2 && b.dtype == TSR_F8_E5M2)
      return "both operands are float8_e5m2, which is not supported (as in PyTorch): " + detail::operands(a, b);
    if (sa.dtype == TSR_F8_E8M0FNU || sb.dtype == TSR_F8_E8M0FNU) {
      p.mode = ScaleMode::MXFP8;
    } else if (sa.dtype != TSR_F32 || sb.dtype != TSR_F32) {
      return "scale_a and scale_b must be float32 (tensorwise, rowwise) or float8_e8m0fnu (MXFP8), got scale_a " +
             sa.str() + " and scale_b " + sb.str();
    } else if (sa.numel() == 1 && sb.numel() == 1) {
      p.mode = ScaleMode::Tensorwise;
    } else if (sa.ndim == 2 && sa.size(0) == p.M && sa.size(1) == 1 && sb.ndim == 2 && sb.size(0) == 1 &&
               sb.size(1) == p.N) {
      p.mode = ScaleMode::Rowwise;
    } else {
      return "float32 scales must both have one element (tensorwise) or be scale_a [M, 1] and scale_b [1, N] "
             "(rowwise) for " +
             detail::operands(a, b) + ", got scale_a " + sa.str() + " and scale_b " + sb.str();
    }
  }
  if (p.mode == ScaleMode::MXFP8 || p.mode == ScaleMode::NVFP4) {
    const int64_t block = scale_block(p.mode);
    if (p.K % block != 0)
      return std::string(scale_mode_name(p.mode)) + " needs K divisible by " + std::to_string(block) +
             ", got K=" + std::to_string(p.K) + " for " + detail::operands(a, b);
    const int32_t sdt = p.mode == ScaleMode::MXFP8 ? TSR_F8_E8M0FNU : TSR_F8_E4M3FN;
    std::string e = detail::check_block_scale("scale_a", sa, sdt, p.M, p.K, block, "M");
    if (e.empty()) e = detail::check_block_scale("scale_b", sb, sdt, p.N, p.K, block, "N");
    if (!e.empty()) return std::string(scale_mode_name(p.mode)) + " (" + detail::operands(a, b) + "): " + e;
  }
  if (bias.present) {
    if (bias.ndim != 1 || bias.size(0) != p.N)
      return "bias must be 1-D [N] = [" + std::to_string(p.N) + "] for " + detail::operands(a, b) + ", got " +
             bias.str();
    if (!is_matmul_out_dtype(bias.dtype)) return "bias must be bfloat16, float16 or float32, got " + bias.str();
  }
  if (sr.present && (sr.dtype != TSR_F32 || sr.numel() != 1))
    return "scale_result must be a float32 tensor of one element, got " + sr.str();
  const bool block = p.mode == ScaleMode::MXFP8 || p.mode == ScaleMode::NVFP4;
  p.out_dtype = out_dtype != TSR_DTYPE_UNDEFINED ? out_dtype : block ? int32_t(TSR_BF16) : a.dtype;
  const bool fp8_out = is_fp8_operand(p.out_dtype) && p.mode == ScaleMode::Tensorwise;
  if (!is_matmul_out_dtype(p.out_dtype) && !fp8_out)
    return std::string("out_dtype ") + dtype_name(p.out_dtype) +
           (out_dtype == TSR_DTYPE_UNDEFINED ? " (the default)" : "") + " is not supported with " +
           scale_mode_name(p.mode) +
           " scaling: expected bfloat16, float16 or float32 (float8_e4m3fn or float8_e5m2 for tensorwise only)";
  *plan = p;
  return "";
}

// quantize_mxfp8(self [M, K]): K % 32 == 0, a floating dtype.
inline std::string check_quantize(const QTensor& x, int64_t block) {
  if (x.ndim != 2) return "expected a 2-D tensor [M, K], got " + x.str();
  if (std::string e = check_dims("self", x); !e.empty()) return e;
  if (!is_floating(x.dtype)) return "expected float32, bfloat16, float16 or float64, got " + x.str();
  if (x.size(1) % block != 0)
    return "K (the last dimension) must be divisible by " + std::to_string(block) + ", got " + x.str();
  return "";
}

// dequantize_mxfp8(data [M, K] float8, scale e8m0 swizzled) and dequantize_nvfp4(data [M, K/2]
// float4_e2m1fn_x2, scale e4m3fn swizzled, global_scale f32 of one element); out_dtype floating.
inline std::string check_dequantize(const QTensor& data, const QTensor& scale, const QTensor& global_scale, bool nvfp4,
                                    int32_t out_dtype) {
  if (data.ndim != 2) return "expected 2-D data, got " + data.str();
  if (std::string e = check_dims("data", data); !e.empty()) return e;
  const int64_t block = nvfp4 ? kNvfp4Block : kMxBlock;
  const int64_t K = nvfp4 ? 2 * data.size(1) : data.size(1);
  if (nvfp4 ? data.dtype != TSR_F4_E2M1FN_X2 : !is_fp8_operand(data.dtype))
    return std::string("data must be ") + (nvfp4 ? "float4_e2m1fn_x2" : "float8_e4m3fn or float8_e5m2") + ", got " +
           data.str();
  if (K % block != 0)
    return "K must be divisible by " + std::to_string(block) + ", got K=" + std::to_string(K) + " for data " +
           data.str();
  std::string e =
      detail::check_block_scale("scale", scale, nvfp4 ? TSR_F8_E4M3FN : TSR_F8_E8M0FNU, data.size(0), K, block, "M");
  if (!e.empty()) return e + " (data " + data.str() + ")";
  if (nvfp4 && (global_scale.dtype != TSR_F32 || global_scale.numel() != 1))
    return "global_scale must be a float32 tensor of one element, got " + global_scale.str();
  if (!is_floating(out_dtype))
    return std::string("dtype must be float32, bfloat16, float16 or float64, got ") + dtype_name(out_dtype);
  return "";
}

}  // namespace tsr::kernels
