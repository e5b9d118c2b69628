// The binary family's logical and bitwise ops: logical_and/or/xor/not (any dtype, bool out),
// bitwise_and/or/xor/not (integers and bool), bitwise_left_shift/right_shift (integers;
// out-of-range shift counts behave as in PyTorch): the shared kernels of
// tessera/kernels/compare_ops.hpp.
#include "cpu_common.hpp"
#include "tessera/kernels/compare_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(binary_bitwise) { kernels::register_family<kernels::BitwiseFamily, CpuRun>(r, device_type, "cpu"); }

}  // namespace tsr::cpu
