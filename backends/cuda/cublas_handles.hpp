// Internal to the CUDA backend (blas family): cached library handles for cuBLAS, cuBLASLt,
// cuSOLVER and cuDNN, and error helpers for their status codes.
//
// Handles are per (thread, device): cuBLAS/cuSOLVER handles must not be used by two threads at
// once, and kernels run concurrently on several threads. A thread's handles are created on
// first use and returned to a process-wide pool when the thread exits, so later threads reuse
// them instead of paying cublasCreate again (as PyTorch's handle pools). The pool is never
// destroyed: tearing handles down in static destructors would race with the CUDA context's own
// teardown at exit.
//
// Callers make `device` current (DeviceGuard) before asking for a handle, and set the handle's
// stream for every call (the stream changes between calls; setting it is cheap).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cusolverDn.h>

#include "cuda_common.hpp"

namespace tsr::cuda {

// The calling thread's handles for `device` (thread-safe; never null; throws on failure).
cublasLtHandle_t cublaslt_handle(int device);
cublasHandle_t cublas_handle(int device);
cusolverDnHandle_t cusolver_handle(int device);
cudnnHandle_t cudnn_handle(int device);

// Throw tsr::Error (RESOURCE_EXHAUSTED for allocation failures, INVALID_ARGUMENT for
// NOT_SUPPORTED / INVALID_VALUE, INTERNAL otherwise) "OP: WHAT failed on cuda:DEV: <status>".
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* op, const char* what, int device);
[[noreturn]] void throw_cusolver_error(cusolverStatus_t st, const char* op, const char* what, int device);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t st, const char* op, const char* what, int device);

#define TSR_CUBLAS_CHECK(expr, op, device)                                    \
  do {                                                                        \
    const cublasStatus_t tsr_cublas_st_ = (expr);                             \
    if (tsr_cublas_st_ != CUBLAS_STATUS_SUCCESS)                              \
      ::tsr::cuda::throw_cublas_error(tsr_cublas_st_, (op), #expr, (device)); \
  } while (0)

#define TSR_CUSOLVER_CHECK(expr, op, device)                                      \
  do {                                                                            \
    const cusolverStatus_t tsr_cusolver_st_ = (expr);                             \
    if (tsr_cusolver_st_ != CUSOLVER_STATUS_SUCCESS)                              \
      ::tsr::cuda::throw_cusolver_error(tsr_cusolver_st_, (op), #expr, (device)); \
  } while (0)

#define TSR_CUDNN_CHECK(expr, op, device)                                                                            \
  do {                                                                                                               \
    const cudnnStatus_t tsr_cudnn_st_ = (expr);                                                                      \
    if (tsr_cudnn_st_ != CUDNN_STATUS_SUCCESS) ::tsr::cuda::throw_cudnn_error(tsr_cudnn_st_, (op), #expr, (device)); \
  } while (0)

}  // namespace tsr::cuda
