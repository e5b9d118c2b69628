// Float-only unary math (exp2 ... softplus, sin, cos): the shared kernels of
// tessera/kernels/unary_ops.hpp (the same per-element code and dtype rules as the CPU backend),
// launched by elementwise.cuh. sin/cos of float32 use the CPU's polynomial (kernels::sincos).
#include "elementwise.cuh"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cuda {
namespace {

template <bool COS>
void sincos_kernel(KernelCall& c) {
  const CudaRun run(c);
  kernels::sincos<COS>(c, run);
}

}  // namespace

TSR_CUDA_KERNELS(unary_math) {
  kernels::register_family<kernels::UnaryMathFamily, CudaRun>(r, device_type, "cuda");
  r.kernel("sin", "cuda::sin", device_type, kFloatingMask, TSR_KERNEL(sincos_kernel<false>));
  r.kernel("cos", "cuda::cos", device_type, kFloatingMask, TSR_KERNEL(sincos_kernel<true>));
}

}  // namespace tsr::cuda
