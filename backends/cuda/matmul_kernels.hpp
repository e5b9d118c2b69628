// Internal to the CUDA backend (blas family): the device kernels behind mm/bmm that are not
// library calls (matmul_kernels.cu), declared for the host code in matmul.cpp and linalg*.cpp.
// All launch on `stream` and return without synchronizing; the caller calls after_launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/types.h"

namespace tsr::cuda {

// A strided [batch, rows, cols] matrix (element strides bs, rs, cs) of elem_size-byte
// elements (1, 2, 4 or 8) copied into dense row-major dst [batch, rows, cols].
void launch_pack_matrix(const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t rs,
                        int64_t cs, int elem_size, cudaStream_t stream);

// out[b] (dense row-major [batch, m, n]) = a[b] @ b[b] for integer dtypes (wrapping, as the
// dtype's arithmetic) and bool (logical or of ands), with arbitrary element strides.
struct IntGemmArgs {
  const void* a;
  const void* b;
  void* out;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;
  int64_t b_bs, b_rs, b_cs;
};
void launch_int_gemm(tsr_dtype_t dtype, const IntGemmArgs& args, cudaStream_t stream);

}  // namespace tsr::cuda
