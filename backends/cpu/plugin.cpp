// The CPU backend's plugin entry: init registers the device type, then every kernel family
// (each kernel file registers its own with TSR_CPU_KERNELS; see cpu_common.hpp).
#include "cpu_common.hpp"

#ifndef TSR_CPU_PLUGIN_VERSION
#define TSR_CPU_PLUGIN_VERSION "0.0.0"
#endif

namespace {

void cpu_init(tsr::Registrar& r) {
  const int32_t dt = tsr::cpu::register_device(r);
  if (dt != TSR_DEVICE_TYPE_CPU)
    tsr::fail(TSR_INTERNAL, "cpu: device type 'cpu' received id ", dt, ", expected ", TSR_DEVICE_TYPE_CPU);
  for (const auto& f : tsr::cpu::CpuFamilies::all()) f.fn(r, dt);
}

}  // namespace

TSR_DEFINE_PLUGIN("cpu", TSR_CPU_PLUGIN_VERSION,
                  "Tessera CPU backend: OpenMP kernels, OpenBLAS GEMM, huge-page allocator", nullptr, cpu_init, nullptr)
