// The sm100 plugin's score (shared by the shell the loader scores, shell/plugin_shell.cpp, and
// the backend library behind it): whether this machine has a GPU of compute capability 10.x
// (Blackwell: B200/GB200 10.0, B300/GB300 10.3). Needs only the CUDA runtime, as the cuda
// shell's probe: no cuBLAS is loaded to score. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/api.h"

namespace tsr::sm100 {

// 100 when CUDA reports a device of compute capability 10.x; else 0 with the reason, e.g.
// "no compute capability 10.x device (cuda:0 is NVIDIA H200, 9.0)" or "no CUDA device
// (cudaGetDeviceCount: ...)".
int32_t score(const tsr_api_t* api, std::string& reason);

}  // namespace tsr::sm100
