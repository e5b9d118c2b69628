// The cpu plugin's oneDNN side library (onednn/onednn_entry.h), opened on first use.
#pragma once

#include "onednn/onednn_entry.h"

namespace tsr::cpu {

struct OneDnn {
  tsr_cpu_onednn_sgemm_fn sgemm = nullptr;
  tsr_cpu_onednn_kernel_fn conv2d = nullptr, conv2d_bias = nullptr, conv2d_backward_input = nullptr,
                           conv2d_backward_weight = nullptr;
  tsr_cpu_onednn_kernel_fn bf16_mm = nullptr, bf16_bmm = nullptr, bf16_linear = nullptr, f32_linear = nullptr;
};

// Whether oneDNN may be used: TESSERA_CPU_ONEDNN=0 in the environment turns it off (f32 GEMM on
// OpenBLAS, convolutions as im2col + GEMM: for comparisons), and the side library must have been
// built beside the plugin. Checks the file only: nothing is loaded.
bool onednn_wanted();

// The side library's entry points, loaded once (thread-safe) from the cpu/ folder beside the
// plugin on the first call; nullptr when onednn_wanted() is false or the library cannot be
// loaded (libdnnl is missing). Never closed.
const OneDnn* onednn();

// The status of a kernel that declines because the side library cannot be loaded
// (UNIMPLEMENTED: the dispatcher then runs the next kernel of the op, or the caller falls back).
tsr_status_t onednn_missing(const tsr_kernel_call_t* c);

// The registered kernel of one kernel entry point of the side library: calls it, or declines
// when the library cannot be loaded. Opening it on the first call keeps libdnnl out of processes
// that never run such a kernel.
template <tsr_cpu_onednn_kernel_fn OneDnn::*Entry>
tsr_status_t forward_to(const tsr_kernel_call_t* c) {
  const OneDnn* d = onednn();
  return d && d->*Entry ? (d->*Entry)(c) : onednn_missing(c);
}

}  // namespace tsr::cpu
