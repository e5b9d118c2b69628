// neg, abs, relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu, gelu, and gelu's fused backward:
// the shared kernels of tessera/kernels/unary_ops.hpp run with the CPU loops.
#include "cpu_common.hpp"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(unary) { kernels::register_family<kernels::UnaryFamily, CpuRun>(r, device_type, "cpu"); }

}  // namespace tsr::cpu
