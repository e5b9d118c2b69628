// div_mode, remainder, fmod, atan2, hypot, copysign, xlogy, logaddexp(2), fmax, fmin, lerp: the shared kernels of
// tessera/kernels/binary_ops.hpp (the same per-element code and dtype rules as the CPU backend), launched by
// elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/binary_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(binary_arith) {
  kernels::register_family<kernels::BinaryArithFamily, CudaRun>(r, device_type, "cuda");
}

}  // namespace tsr::cuda
