// scaled_mm on CUDA (generic, any GPU cuBLASLt has fp8 kernels for: compute capability 8.9, 9.0
// and later): fp8 operands with torch._scaled_mm's tensorwise and rowwise scaling, through
// cuBLASLt (tessera/cuda/cublaslt_scaled_mm.hpp, shared with the sm100 plugin, says how). The
// block-scaled modes (MXFP8, NVFP4) need Blackwell's block-scaled MMAs: the sm100 plugin
// overrides this kernel on compute capability 10.x with one that has them; here they are an
// UNIMPLEMENTED error that says so.
#include "cublas_handles.hpp"
#include "tessera/cuda/cublaslt_scaled_mm.hpp"

namespace tsr::cuda {
namespace {

void scaled_mm_kernel(KernelCall& c) {
  const int dev = c.device().index;
  DeviceGuard guard(dev);
  cublaslt::scaled_mm<Scratch>(c, cublaslt_handle(dev), stream_of(c), /*allow_block_scaled=*/false);
}

}  // namespace

TSR_CUDA_KERNELS(scaled_mm) {
  // Every dispatch dtype (mask 0): the kernel decides by the operand and scale dtypes. A core
  // without the op (older than the low-precision ops) gets no kernel.
  if (r.has_op("scaled_mm")) r.kernel("scaled_mm", "cuda::scaled_mm_cublaslt", device_type, 0, TSR_KERNEL(scaled_mm_kernel));
}

}  // namespace tsr::cuda
