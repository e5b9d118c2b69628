// Internal to the CUDA backend (blas family): small device kernels around the cuSOLVER calls of
// linalg.cpp (linalg_kernels.cu). Matrices are dense row-major batches [batch, rows, cols] of
// float (f64 = false) or double (f64 = true). All launch on `stream` without synchronizing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tsr::cuda {

// dst[b] = the symmetric matrix whose lower triangle is src[b]'s (as the CPU's cholesky reads).
void launch_sym_from_lower(bool f64, const void* src, void* dst, int64_t batch, int64_t n, cudaStream_t stream);
// Zeroes the strict upper (upper = false) or strict lower (upper = true) triangle of m[b].
void launch_zero_triangle(bool f64, void* m, int64_t batch, int64_t n, bool upper, cudaStream_t stream);
// m[b] = identity.
void launch_fill_identity(bool f64, void* m, int64_t batch, int64_t n, cudaStream_t stream);
// dst[b] [cols, rows] = src[b] [rows, cols]^T.
void launch_transpose(bool f64, const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols,
                      cudaStream_t stream);
// From LU factors lu[b] (getrf's output, n x n, 1-based pivots ipiv[b * n + i], info[b]):
// det (out1 == nullptr) or sign and log|det| (slogdet), computed in double, as the CPU kernel:
// info > 0 (exactly singular) gives det 0, sign 0, log|det| -inf. n = 0 gives det 1.
void launch_det_from_lu(bool f64, const void* lu, const int* ipiv, const int* info, int64_t batch, int64_t n,
                        void* out0, void* out1, cudaStream_t stream);

}  // namespace tsr::cuda
