// sign, sgn, square, floor, ceil, trunc, round, hardtanh, nan_to_num and the float predicates: the shared kernels of
// tessera/kernels/unary_ops.hpp (the same per-element code and dtype rules as the CPU backend), launched by
// elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(unary_exact) { kernels::register_family<kernels::UnaryExactFamily, CudaRun>(r, device_type, "cuda"); }

}  // namespace tsr::cuda
