// The binary family's arithmetic ops: div_mode (trunc/floor rounding), remainder, fmod, atan2,
// hypot, copysign, xlogy, logaddexp, logaddexp2, fmax, fmin, lerp: the shared kernels of
// tessera/kernels/binary_ops.hpp. Integer division by zero is reported as an error before
// anything is written (CpuRun::any_zero pre-scans the divisor), so out= tensors are never
// partially written and nothing traps.
#include "cpu_common.hpp"
#include "tessera/kernels/binary_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(binary_arith) { kernels::register_family<kernels::BinaryArithFamily, CpuRun>(r, device_type, "cpu"); }

}  // namespace tsr::cpu
