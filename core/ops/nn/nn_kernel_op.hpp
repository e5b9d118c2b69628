// Internal nn ops backed by kernels that take dense views (im2col, col2im, embedding gather and
// scatter) or row-strided ones (the attention: KernelViews below): tensor arguments are made
// contiguous (row-strided: only those whose innermost stride is not 1), outputs are allocated
// from a shape function,
// and the kernel sees the call's scalar arguments unchanged. The public nn ops validate their
// arguments with PyTorch's messages, but op_find reaches the internal ops directly, so each
// shape function also states its kernel's contract (ranks, dtypes, list lengths, geometry, the
// sizes that must agree) with the k* checks below; kernels refuse data-dependent indices.
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::nn {

struct OutDesc {
  std::vector<int64_t> sizes;
  tsr_dtype_t dtype;
  // Where the op allocates the output (no out= given): dims in memory order, outermost first
  // (empty: row-major). The attention's outputs are [B, H, L, E] views of [B, L, H, E] memory, so
  // that a transformer's transpose(1, 2).reshape of them is a view. Only with row-strided views.
  std::vector<int> order = {};
};
// Checks the arguments against the kernel's contract, fills the outputs' shapes and returns the
// dtype the kernel is dispatched on. Refusals throw tsr::Error (the k* checks), which kernel_op
// returns as a status.
using KernelShapeFn = tsr_dtype_t (*)(CallCtx& ctx, std::vector<OutDesc>& outs);

// Contract checks for shape functions; each throws INVALID_ARGUMENT naming the op.
[[noreturn]] void kfail(const CallCtx& ctx, const std::string& what);
inline void krequire(const CallCtx& ctx, bool ok, const std::string& what) {
  if (!ok) kfail(ctx, what);
}
// Tensor argument i with `ndim` dims (-1: any); nullptr when an optional argument is None.
core::Tensor* ktensor(CallCtx& ctx, size_t i, int ndim = -1);
// Tensor argument i with a floating dtype, or the dtype of `like` when given.
core::Tensor* kfloat(CallCtx& ctx, size_t i, int ndim = -1, const core::Tensor* like = nullptr);
// Tensor argument i of int64 indices (what the index kernels read).
core::Tensor* kindex(CallCtx& ctx, size_t i, int ndim = -1);
// The largest geometry value (kernel size, stride, padding, dilation, output size) accepted:
// kernels compute o * stride + k * dilation in int64, which cannot overflow below this.
constexpr int64_t kMaxGeometry = INT32_MAX;
// List argument i: exactly `len` values, each in [min, kMaxGeometry].
const int64_t* kints(CallCtx& ctx, size_t i, int64_t len, int64_t min);
// a * b, refused on overflow.
int64_t kmul(const CallCtx& ctx, int64_t a, int64_t b);

// How the kernel sees its tensors. kDense: every tensor argument and output contiguous (copied
// when not). kRowStrided: tensors whose innermost stride is 1 (or whose last dim has at most one
// element) pass as they are, any other strides (a transposed head, a narrowed projection); the
// rest go through dense copies, as do outputs given with out= that are not contiguous.
enum class KernelViews { kDense, kRowStrided };

tsr_status_t kernel_op(CallCtx& ctx, KernelShapeFn shape, KernelViews views = KernelViews::kDense);
template <KernelShapeFn F, KernelViews V = KernelViews::kDense>
tsr_status_t kernel_op_impl(CallCtx& ctx) {
  return kernel_op(ctx, F, V);
}

// True when `op` has a kernel registered for the device type of `t` whose dtype mask includes
// `dtype`: how a composite picks a backend's direct kernel (cuDNN convolution, a GEMM with a bias
// epilogue) over its generic formulation. One look at the op's kernels for that device type (the
// registration snapshot), no lock, no allocation: it runs on every linear and conv2d call.
bool has_device_kernel(const tsr::Op& op, const tsr::Tensor& t, tsr_dtype_t dtype);

// A direct kernel's result, or nothing when every kernel declined the call (UNIMPLEMENTED, having
// written nothing: a library that cannot be loaded, a problem it has no algorithm for); the
// caller then runs its composite formulation. Other errors propagate.
template <class F>
auto declinable(F&& call) -> std::optional<std::decay_t<decltype(call())>> {
  try {
    return call();
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
    return std::nullopt;
  }
}

// A fused backward kernel's result (one pass instead of a formula's ops) when no graph of the
// backward is being built (grad mode is off inside a backward without create_graph) and the
// gradient's device has the kernel; nothing otherwise, or when the kernel declines: the caller
// runs its formula. Checking the registry first spares a device without the kernel an exception
// per call.
std::optional<tsr::Tensor> fused_backward(const tsr::Op& op, const tsr::Tensor& g, std::initializer_list<tsr::Arg> args);

}  // namespace tsr::core::nn
