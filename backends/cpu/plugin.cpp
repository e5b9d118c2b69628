// The CPU backend's plugin entry.
#include <utility>
#include <vector>

#include "cpu_common.hpp"

#ifndef TSR_CPU_PLUGIN_VERSION
#define TSR_CPU_PLUGIN_VERSION "0.0.0"
#endif

namespace tsr::cpu {

static std::vector<std::pair<const char*, KernelFamilyFn>>& families() {
  static std::vector<std::pair<const char*, KernelFamilyFn>> list;  // filled by static initializers
  return list;
}
bool register_kernel_family(const char* name, KernelFamilyFn fn) {
  families().emplace_back(name, fn);
  return true;
}
void register_kernel_families(Registrar& r, int32_t device_type) {
  for (const auto& f : families()) f.second(r, device_type);
}

}  // namespace tsr::cpu

namespace {

void cpu_init(tsr::Registrar& r) {
  const int32_t dt = tsr::cpu::register_device(r);
  if (dt != TSR_DEVICE_TYPE_CPU)
    tsr::fail(TSR_INTERNAL, "cpu: device type 'cpu' received id ", dt, ", expected ", TSR_DEVICE_TYPE_CPU);
  tsr::cpu::register_binary_kernels(r, dt);
  tsr::cpu::register_unary_kernels(r, dt);
  tsr::cpu::register_compare_where_clamp_kernels(r, dt);
  tsr::cpu::register_copy_fill_arange_kernels(r, dt);
  tsr::cpu::register_reduce_kernels(r, dt);
  tsr::cpu::register_softmax_kernels(r, dt);
  tsr::cpu::register_matmul_kernels(r, dt);
  tsr::cpu::register_random_kernels(r, dt);
  tsr::cpu::register_kernel_families(r, dt);
}

}  // namespace

TSR_DEFINE_PLUGIN("cpu", TSR_CPU_PLUGIN_VERSION,
                  "Tessera CPU backend: OpenMP kernels, OpenBLAS GEMM, huge-page allocator", nullptr, cpu_init, nullptr)
