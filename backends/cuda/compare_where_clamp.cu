// eq, ne, lt, le, gt, ge, where, clamp: the shared kernels of tessera/kernels/compare_ops.hpp (the same per-element
// code and dtype rules as the CPU backend), launched by elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/compare_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(compare_where_clamp) {
  kernels::register_family<kernels::CompareFamily, CudaRun>(r, device_type, "cuda");
}

}  // namespace tsr::cuda
