// Shared by the nn op files (ops/nn/*.cpp): argument parsing and SDK helpers for ops whose
// forward is written with SDK ops but which are registered as primitives with closed-form
// backward formulas (so their gradients never depend on other families' formulas).
#pragma once

#include <string>
#include <vector>

#include "ops/composite.hpp"
#include "tessera/checked_math.hpp"
#include "tensor/dtype.hpp"

namespace tsr::core::nn {

// "[2, 3]": the core's shape_str (runtime/status.hpp) for SDK tensors and size lists.
inline std::string shp(const std::vector<int64_t>& sz) { return shape_str(sz.data(), static_cast<int>(sz.size())); }
inline std::string shp(const tsr::Tensor& t) { return shp(t.sizes()); }

[[noreturn]] inline void fail(const char* op, const std::string& msg) {
  throw tsr::Error(TSR_INVALID_ARGUMENT, std::string(op) + ": " + msg);
}

enum class Reduction { None, Mean, Sum, BatchMean };

inline Reduction parse_reduction(const char* op, const std::string& r, bool allow_batchmean = false) {
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (allow_batchmean && r == "batchmean") return Reduction::BatchMean;
  fail(op, "reduction must be 'none', 'mean' or 'sum'" + std::string(allow_batchmean ? " or 'batchmean'" : "") +
               ", got '" + r + "'");
}

// Floating dtype the fused math runs in: f16/bf16 compute in f32 (as PyTorch's CPU kernels).
inline tsr_dtype_t acc_dtype(tsr_dtype_t dt) { return (dt == TSR_F16 || dt == TSR_BF16) ? TSR_F32 : dt; }

// Expands an int[] argument of `n` entries (a single int applies to every spatial dim).
inline std::vector<int64_t> expand_param(const char* op, const char* what, std::vector<int64_t> v, size_t n) {
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  if (v.size() != n) fail(op, std::string(what) + " must have " + std::to_string(n) + " elements, got " + shp(v));
  return v;
}

inline void require_floating(const char* op, const char* what, const tsr::Tensor& t) {
  if (!is_floating(t.dtype()))
    fail(op, std::string("expected a floating point ") + what + ", got " + dtype_name(t.dtype()) + " " + shp(t));
}

// Resampling and adaptive pooling are separable maps over the last two dims with [out, in]
// matrices built on the host: `out` (output_size) must keep those matrices (as doubles) and the
// result countable. An output_size near 2^62 wrapped in * out and under-allocated the matrix.
inline void check_separable_output(const char* op, const tsr::Tensor& x, const std::vector<int64_t>& out) {
  std::vector<int64_t> result = x.sizes();
  result[result.size() - 2] = out[0];
  result[result.size() - 1] = out[1];
  int64_t n = 0, bytes = 0;
  bool ok = checked_numel(static_cast<int>(result.size()), result.data(), &n) && checked_nbytes(n, 8, &bytes);
  for (int i = 0; ok && i < 2; ++i)
    ok = checked_mul(x.size(x.dim() - 2 + i), out[static_cast<size_t>(i)], &n) && checked_nbytes(n, 8, &bytes);
  if (!ok) fail(op, "output_size " + shp(out) + " is too large for input " + shp(x));
}

// Shape [1, C, 1, ...] (ndim entries) for per-channel parameters.
inline std::vector<int64_t> channel_shape(int64_t c, int64_t ndim, int64_t cdim = 1) {
  std::vector<int64_t> s(static_cast<size_t>(ndim), 1);
  s[static_cast<size_t>(cdim)] = c;
  return s;
}

inline std::vector<int64_t> range_dims(int64_t from, int64_t to) {
  std::vector<int64_t> d;
  for (int64_t i = from; i < to; ++i) d.push_back(i);
  return d;
}

// Sign as a tensor of t's dtype: -1, 0, 1.
inline tsr::Tensor sign_of(const tsr::Tensor& t) { return tsr::gt(t, 0).to(t.dtype()) - tsr::lt(t, 0).to(t.dtype()); }

}  // namespace tsr::core::nn

namespace tsr::core::nn {
inline tsr::Arg opt(const std::optional<tsr::Tensor>& t) { return tsr::detail::opt_tensor_arg(t); }
}  // namespace tsr::core::nn

namespace tsr::core::nn {
// A primitive (recorded as one node) whose forward may be written with SDK ops.
inline OpSpec prim(const char* schema, OpImplFn impl, Formula bwd, uint32_t save = kSaveInputs,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return OpSpec(schema, impl, bwd, save, file, line);
}
}  // namespace tsr::core::nn

namespace tsr::core::nn {
// tsr::matmul for operands of rank >= 2 that also handles empty operands (zeros of the result
// shape) without reaching a GEMM with a zero dimension.
inline tsr::Tensor matmul(const tsr::Tensor& a, const tsr::Tensor& b) {
  if (a.numel() != 0 && b.numel() != 0) return tsr::matmul(a, b);
  auto as = a.sizes(), bs = b.sizes();
  size_t ba = as.size() - 2, bb = bs.size() - 2, nb = std::max(ba, bb);
  std::vector<int64_t> s;
  for (size_t i = 0; i < nb; ++i) {
    int64_t sa = i >= nb - ba ? as[i - (nb - ba)] : 1, sb = i >= nb - bb ? bs[i - (nb - bb)] : 1;
    s.push_back(sa == 1 ? sb : sa);
  }
  s.push_back(as[ba]);
  s.push_back(bs[bb + 1]);
  return tsr::zeros(s, a.dtype(), a.device());
}

// softmax's backward, g the gradient of y = softmax(x) along the normalized `dim`:
// y * (g - sum(g * y, dim)), as one `_softmax_backward_data` kernel where the device has it and
// no graph of the backward is built (fused_backward), else as those ops (nn_softmax.cpp).
// softmax's formula and the attention's backward use it.
tsr::Tensor softmax_backward_data(const tsr::Tensor& g, const tsr::Tensor& y, int64_t dim);
}  // namespace tsr::core::nn
