// add, sub, mul, div, maximum, minimum, pow: the shared kernels of tessera/kernels/binary_ops.hpp (the same per-element
// code and dtype rules as the CPU backend), launched by elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/binary_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(binary) { kernels::register_family<kernels::BinaryFamily, CudaRun>(r, device_type, "cuda"); }

}  // namespace tsr::cuda
