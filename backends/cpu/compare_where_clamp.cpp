// eq, ne, lt, le, gt, ge (bool out), where, clamp: the shared kernels of
// tessera/kernels/compare_ops.hpp.
#include "cpu_common.hpp"
#include "tessera/kernels/compare_ops.hpp"

namespace tsr::cpu {

void register_compare_where_clamp_kernels(Registrar& r, int32_t dt) {
  kernels::register_family<kernels::CompareFamily, CpuRun>(r, dt, "cpu");
}

}  // namespace tsr::cpu
