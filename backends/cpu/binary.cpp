// add, sub, mul, div, maximum, minimum, pow: the shared kernels of
// tessera/kernels/binary_ops.hpp (f16/bf16 run through the multiversioned loops: they are bound
// by the conversions).
#include "cpu_common.hpp"
#include "tessera/kernels/binary_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(binary) { kernels::register_family<kernels::BinaryFamily, CpuRun>(r, device_type, "cpu"); }

}  // namespace tsr::cpu
