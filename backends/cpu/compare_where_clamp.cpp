// eq, ne, lt, le, gt, ge (bool out), where, clamp: the shared kernels of
// tessera/kernels/compare_ops.hpp.
#include "cpu_common.hpp"
#include "tessera/kernels/compare_ops.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(compare_where_clamp) {
  kernels::register_family<kernels::CompareFamily, CpuRun>(r, device_type, "cpu");
}

}  // namespace tsr::cpu
