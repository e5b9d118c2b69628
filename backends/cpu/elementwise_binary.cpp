// add, sub, mul, div, maximum, minimum, pow: the shared kernels of
// tessera/kernels/binary_ops.hpp (f16/bf16 run through the multiversioned loops: they are bound
// by the conversions).
#include "cpu_common.hpp"
#include "tessera/kernels/binary_ops.hpp"

namespace tsr::cpu {

void register_binary_kernels(Registrar& r, int32_t dt) {
  kernels::register_family<kernels::BinaryFamily, CpuRun>(r, dt, "cpu");
}

}  // namespace tsr::cpu
