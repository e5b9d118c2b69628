// logical_and/or/xor/not, bitwise_and/or/xor/not, bitwise shifts: the shared kernels of tessera/kernels/compare_ops.hpp
// (the same per-element code and dtype rules as the CPU backend), launched by elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/compare_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(binary_bitwise) { kernels::register_family<kernels::BitwiseFamily, CudaRun>(r, device_type, "cuda"); }

}  // namespace tsr::cuda
