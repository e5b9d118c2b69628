// f32 _nn_linear (the bias in the GEMM's epilogue), and bf16 mm, bmm and _nn_linear, through
// oneDNN's matmul primitive (bf16 operands read in place,
// f32 accumulation, one rounding: onednn/onednn_matmul.cpp, in the side library, opened on the
// first call). Registered above the generic kernels of matmul.cpp, which widen bf16 to f32
// buffers for an f32 GEMM: a problem oneDNN has no fast kernel for is declined (UNIMPLEMENTED,
// nothing written) and the dispatcher runs the generic kernel, as it does when the library
// cannot be loaded.
//
// Only on CPUs with avx512_bf16 (checked by cpuid, without loading oneDNN): elsewhere oneDNN's
// bf16 matmul emulates the bf16 dot products and was measured about 10% slower than the generic
// kernel (onednn/onednn_matmul.cpp; the side library also checks oneDNN's effective ISA, which
// ONEDNN_MAX_CPU_ISA can lower). f16 stays on the
// generic kernels: oneDNN 2.6 computes f16 matmuls natively only with AVX512-FP16, which Zen 4
// lacks. TESSERA_CPU_ONEDNN=0 leaves these unregistered (comparisons).
#include "cpu_common.hpp"
#include "onednn_lib.hpp"

namespace tsr::cpu {

TSR_CPU_KERNELS(matmul_onednn) {
  if (!onednn_wanted()) return;
  constexpr int32_t kAboveGeneric = 1;  // matmul.cpp's kernels have the default priority, 0
  // f32 linear with the bias in the GEMM's epilogue (onednn/onednn_matmul.cpp): on every CPU
  // oneDNN runs f32 natively on.
  r.kernel("_nn_linear", "cpu::dnnl_linear_f32", device_type, TSR_DTYPE_BIT(TSR_F32), forward_to<&OneDnn::f32_linear>,
           kAboveGeneric);
  if (!__builtin_cpu_supports("avx512bf16")) return;
  r.kernel("mm", "cpu::dnnl_mm_bf16", device_type, TSR_DTYPE_BIT(TSR_BF16), forward_to<&OneDnn::bf16_mm>,
           kAboveGeneric);
  r.kernel("bmm", "cpu::dnnl_bmm_bf16", device_type, TSR_DTYPE_BIT(TSR_BF16), forward_to<&OneDnn::bf16_bmm>,
           kAboveGeneric);
  r.kernel("_nn_linear", "cpu::dnnl_linear_bf16", device_type, TSR_DTYPE_BIT(TSR_BF16),
           forward_to<&OneDnn::bf16_linear>, kAboveGeneric);
}

}  // namespace tsr::cpu
