// See probe.hpp.
#include "probe.hpp"

#include <cuda_runtime.h>

#include "tessera/plugin.hpp"

namespace tsr::cuda {
namespace {

std::string version_text(int v) {
  if (v <= 0) return "not installed";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

int32_t score(const tsr_api_t*, std::string& reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) (void)cudaGetLastError();
  if (err != cudaSuccess || count <= 0) {
    int driver = 0, runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaGetLastError();
    reason = "no usable CUDA device: cudaGetDeviceCount: ";
    reason += err != cudaSuccess ? str_cat(cudaGetErrorString(err), " (", cudaGetErrorName(err), ")")
                                 : std::string("0 devices");
    reason += " (driver " + version_text(driver) + ", CUDA runtime " + version_text(runtime) + ")";
    return 0;
  }
  reason.clear();
  return 100;
}

}  // namespace tsr::cuda
