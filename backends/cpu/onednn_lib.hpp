// The cpu plugin's oneDNN side library (onednn/onednn_entry.h), opened on first use.
#pragma once

#include "onednn/onednn_entry.h"

namespace tsr::cpu {

struct OneDnn {
  tsr_cpu_onednn_sgemm_fn sgemm = nullptr;
};

// The side library's entry points, loaded once (thread-safe) from the cpu/ folder beside the
// plugin; nullptr when it was not built (no oneDNN at build time), cannot be loaded (libdnnl is
// missing), or TESSERA_CPU_SGEMM=openblas asks for OpenBLAS (for comparisons). Never closed.
const OneDnn* onednn();

}  // namespace tsr::cpu
