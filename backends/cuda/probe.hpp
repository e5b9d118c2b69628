// The CUDA backend's device probe (the plugin score): shared by the plugin shell (shell/), which
// the loader scores without loading the CUDA libraries, and the backend library behind it.
// Needs only the CUDA runtime. Thread-safe (CUDA's own calls are).
#pragma once

#include <cstdint>
#include <string>

#include "tessera/api.h"

namespace tsr::cuda {

// 100 when CUDA reports at least one device; else 0 with the reason in CUDA's words, the driver
// and the runtime versions, e.g. "no usable CUDA device: cudaGetDeviceCount: CUDA driver version
// is insufficient for CUDA runtime version (cudaErrorInsufficientDriver) (driver not installed,
// CUDA runtime 13.0)".
int32_t score(const tsr_api_t* api, std::string& reason);

}  // namespace tsr::cuda
