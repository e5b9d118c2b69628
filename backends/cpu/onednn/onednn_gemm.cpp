// tessera_cpu_onednn.so: f32 GEMM through oneDNN's sgemm (onednn_entry.h). Its JIT kernels use
// the widest vectors the CPU has; on AVX-512 machines that is about twice OpenBLAS 0.3.21's speed
// (which runs its AVX2 kernel there).
#include <dnnl.h>

#include "onednn_entry.h"
#include "tessera/version.h"

extern "C" TSR_EXPORT int tsr_cpu_onednn_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                                               const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                                               float* c, int64_t ldc) {
  return dnnl_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success ? 0 : 1;
}
