// neg, abs, relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu, gelu, _gelu_backward: the shared kernels of
// tessera/kernels/unary_ops.hpp (the same per-element code and dtype rules as the CPU backend), launched by
// elementwise.cuh.
#include "elementwise.cuh"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cuda {

TSR_CUDA_KERNELS(unary) { kernels::register_family<kernels::UnaryFamily, CudaRun>(r, device_type, "cuda"); }

}  // namespace tsr::cuda
