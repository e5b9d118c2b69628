// Elementwise op implementation shared by every elementwise family: promotion per rule,
// broadcasting, device checks, output allocation (out= checked first), one kernel launch over
// the canonical iteration. Kernels see inputs already in the compute dtype.
#pragma once

#include "ops/op_impl.hpp"

namespace tsr::core {

enum class ElementwiseRule {
  Promote,     // common dtype in, common dtype out
  IntToFloat,  // common dtype, ints/bool -> f32 (exp, sqrt, div, ...)
  Compare,     // common dtype in, bool out
  NoBool,      // common dtype, bool rejected
};

// Tensor arguments [0, n) of the call (no None), result dtype per `rule`.
tsr_status_t elementwise_op(CallCtx& ctx, ElementwiseRule rule, int n);
template <ElementwiseRule R, int N>
tsr_status_t elementwise_impl(CallCtx& ctx) {
  return elementwise_op(ctx, R, N);
}

// Lower level: inputs `in` (not nullptr), computed in `compute`, written as `out_dtype`;
// keep_dtype[i] (optional) leaves input i in its own dtype (e.g. where's bool condition).
tsr_status_t run_elementwise(CallCtx& ctx, Tensor* const* in, int n, tsr_dtype_t compute, tsr_dtype_t out_dtype,
                             const bool* keep_dtype);

// torch.result_type of the given tensors (wrapped numbers and 0-dim tensors weigh less).
tsr_dtype_t result_type(Tensor* const* in, int n);

}  // namespace tsr::core
