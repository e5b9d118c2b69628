// The cpu backend's direct convolution kernels (_nn_conv2d, _nn_conv2d_bias with the bias fused,
// and the two backward ops), whose
// bodies are oneDNN's, in the side library (onednn/onednn_conv.cpp): registered here when the
// library was built beside the plugin, it is opened on the first convolution, so a process that
// never convolves never maps oneDNN. When it cannot be loaded, or oneDNN has no primitive for a
// problem, the kernel declines (UNIMPLEMENTED, nothing written) and the core's conv2d runs
// im2col + GEMM instead (core/ops/nn/nn_conv.cpp). f32 always; bf16 on CPUs with AVX-512, where
// oneDNN has bf16 convolutions. TESSERA_CPU_ONEDNN=0 leaves them unregistered (comparisons).
#include "cpu_common.hpp"
#include "onednn_lib.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(conv_onednn) {
  if (!onednn_wanted()) return;
  // oneDNN 2.6 has bf16 convolutions from avx512_core (F, BW, VL, DQ) on; checked without loading it.
  const bool bf16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const uint32_t mask = TSR_DTYPE_BIT(TSR_F32) | (bf16 ? TSR_DTYPE_BIT(TSR_BF16) : 0u);
  const struct {
    const char* op;
    const char* kernel;
    tsr_kernel_fn_t fn;
  } defs[] = {{"_nn_conv2d", "cpu::dnnl_conv2d", forward_to<&OneDnn::conv2d>},
              {"_nn_conv2d_bias", "cpu::dnnl_conv2d_bias", forward_to<&OneDnn::conv2d_bias>},
              {"_nn_conv2d_backward_input", "cpu::dnnl_conv2d_backward_input",
               forward_to<&OneDnn::conv2d_backward_input>},
              {"_nn_conv2d_backward_weight", "cpu::dnnl_conv2d_backward_weight",
               forward_to<&OneDnn::conv2d_backward_weight>}};
  for (const auto& d : defs)
    if (r.has_op(d.op)) r.kernel(d.op, d.kernel, device_type, mask, d.fn);
}

}  // namespace tsr::cpu
