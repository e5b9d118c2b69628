// Internal nn ops backed by kernels that take dense views (im2col, col2im, embedding gather and
// scatter): tensor arguments are made contiguous, outputs are allocated from a shape function,
// and the kernel sees the call's scalar arguments unchanged. Callers (the public nn ops) have
// validated the arguments; kernels still refuse indices out of range.
#pragma once

#include <vector>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::nn {

struct OutDesc {
  std::vector<int64_t> sizes;
  tsr_dtype_t dtype;
};
// Fills the outputs' shapes; returns the dtype the kernel is dispatched on.
using KernelShapeFn = tsr_dtype_t (*)(CallCtx& ctx, std::vector<OutDesc>& outs);

tsr_status_t kernel_op(CallCtx& ctx, KernelShapeFn shape);
template <KernelShapeFn F>
tsr_status_t kernel_op_impl(CallCtx& ctx) {
  return kernel_op(ctx, F);
}

// True when `op` has a kernel registered for the device type of `t` whose dtype mask includes
// `dtype`: how a composite picks a backend's direct kernel (cuDNN convolution, a GEMM with a bias
// epilogue) over its generic formulation. One look at the op's kernels for that device type (the
// registration snapshot), no lock, no allocation: it runs on every linear and conv2d call.
bool has_device_kernel(const tsr::Op& op, const tsr::Tensor& t, tsr_dtype_t dtype);

}  // namespace tsr::core::nn
