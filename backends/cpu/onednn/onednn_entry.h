/* The C entry points of tessera_cpu_onednn.so, the cpu plugin's oneDNN side library
 * (backends/cpu/onednn/, loaded by backends/cpu/onednn_lib.cpp on first use). Only this library
 * links oneDNN, so a process that never runs an f32 GEMM, a bf16 matmul or a convolution never
 * maps it (loading libdnnl costs about 6 ms of process start-up). Private to the cpu plugin: not
 * part of the ABI. */
#ifndef TESSERA_CPU_ONEDNN_ENTRY_H
#define TESSERA_CPU_ONEDNN_ENTRY_H

#include <stdint.h>

#include "tessera/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * op(A) op(B) + beta * C, row-major, transa/transb 'N' or 'T' (dnnl_sgemm). Returns
 * 0 on success; non-zero when oneDNN refused the arguments (C is then unchanged). */
typedef int (*tsr_cpu_onednn_sgemm_fn)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                       int64_t ldc);

/* The bodies of the kernels for _nn_conv2d, _nn_conv2d_bias, _nn_conv2d_backward_input and
 * _nn_conv2d_backward_weight (onednn_conv.cpp), and of bf16 mm, bmm and _nn_linear
 * (onednn_matmul.cpp), with the kernel ABI's signature. A problem oneDNN has no primitive for
 * (or, for matmul, only a slow one) returns UNIMPLEMENTED having written nothing. */
typedef tsr_status_t (*tsr_cpu_onednn_kernel_fn)(const tsr_kernel_call_t* call);

/* How many products the bf16 matmul kernels have computed through oneDNN in this process
 * (tsr_cpu_onednn_matmul_runs): lets a test prove that dispatch reached oneDNN rather than the
 * plugin's f32-buffer fallback, which computes the same values. */
typedef int64_t (*tsr_cpu_onednn_counter_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CPU_ONEDNN_ENTRY_H */
