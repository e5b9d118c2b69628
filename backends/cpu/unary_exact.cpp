// Unary ops that keep integer dtypes or answer bool: sign, sgn, square, floor, ceil, trunc,
// round (with decimals), hardtanh, nan_to_num, and the predicates isnan, isinf, isposinf,
// isneginf, isfinite, signbit: the shared kernels of tessera/kernels/unary_ops.hpp.
#include "cpu_common.hpp"
#include "tessera/kernels/unary_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(unary_exact) { kernels::register_family<kernels::UnaryExactFamily, CpuRun>(r, device_type, "cpu"); }

}  // namespace tsr::cpu
