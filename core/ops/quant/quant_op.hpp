// The call machinery of the quantization family (scaled_mm, quantize_*/dequantize_*): a meta
// function checks the call with the shared rules of tessera/kernels/quant_checks.hpp and
// describes the outputs; then one kernel runs on the tensors as given. Unlike nn's kernel_op,
// tensor arguments are NOT made contiguous: the kernels read any strides (the CPU references
// do; a GPU kernel that needs a layout checks it), and every tensor argument must be on one
// device (a 0-dim cpu scale does not join a cuda call: the GEMM reads scales on the device).
// Nothing is allocated or written when a check fails.
#pragma once

#include <string>
#include <vector>

#include "ops/op_impl.hpp"
#include "tessera/kernels/quant_checks.hpp"

namespace tsr::core::quant {

struct OutDesc {
  std::vector<int64_t> sizes;
  tsr_dtype_t dtype;
};
// Checks the call (throwing tsr::Error through fail/require), fills the outputs' descriptions
// and returns the dtype the kernel is dispatched on.
using ShapeFn = tsr_dtype_t (*)(CallCtx& ctx, std::vector<OutDesc>& outs);

// INVALID_ARGUMENT "<op>: <what>".
[[noreturn]] void fail(const CallCtx& ctx, const std::string& what);
// Fails with `err` unless it is empty (the shared checks return "" when valid).
inline void require(const CallCtx& ctx, const std::string& err) {
  if (!err.empty()) fail(ctx, err);
}
// The checks' view of tensor argument i (absent when None).
kernels::QTensor qtensor(const CallCtx& ctx, size_t i);
// Argument i, an optional ScalarType: TSR_DTYPE_UNDEFINED when None.
int32_t opt_dtype(const CallCtx& ctx, size_t i);

tsr_status_t run(CallCtx& ctx, ShapeFn shape);
template <ShapeFn F>
tsr_status_t op_impl(CallCtx& ctx) {
  return run(ctx, F);
}

}  // namespace tsr::core::quant
