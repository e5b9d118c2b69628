// See probe.hpp. The loader's score hook receives no runtime, so the capability cannot be read
// through the core's device properties of the "cuda" type here (the kernels' predicate does
// that, tsr::ComputeCapabilityGate); the CUDA runtime answers instead, as it does for the cuda
// plugin's own score, which has already initialised the driver in this process.
#include "probe.hpp"

#include <cuda_runtime.h>

namespace tsr::sm100 {

int32_t score(const tsr_api_t*, std::string& reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count <= 0) {
    (void)cudaGetLastError();
    reason = "no CUDA device (cudaGetDeviceCount: ";
    reason += err != cudaSuccess ? std::string(cudaGetErrorString(err)) : std::string("0 devices");
    reason += ")";
    return 0;
  }
  std::string seen;
  for (int d = 0; d < count; ++d) {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    if (major == 10) {
      reason.clear();
      return 100;
    }
    cudaDeviceProp prop{};
    const std::string name =
        cudaGetDeviceProperties(&prop, d) == cudaSuccess ? std::string(prop.name) : std::string("unknown GPU");
    (void)cudaGetLastError();
    if (!seen.empty()) seen += "; ";
    seen += "cuda:" + std::to_string(d) + " is " + name + ", " + std::to_string(major) + "." + std::to_string(minor);
  }
  reason = "no compute capability 10.x device (" + (seen.empty() ? std::string("no device answered") : seen) + ")";
  return 0;
}

}  // namespace tsr::sm100
