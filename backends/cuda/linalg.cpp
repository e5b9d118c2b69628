// cholesky, inverse, _linalg_solve, det, slogdet on CUDA through cuSOLVER (getrf/getrs/potrf,
// one call per batch element on the kernel's stream). Inputs and outputs are dense row-major
// batches (the core makes them so). As on the CPU, a row-major matrix is the column-major
// storage of its transpose:
//  - inverse: LU of A^T, then getrs(N) against the identity gives (A^T)^-1 column-major, which
//    read row-major is A^-1.
//  - _linalg_solve: LU of A^T, getrs(T) solves A X = B for a column-major B (B transposed into
//    scratch and the solution transposed back).
//  - cholesky: the symmetric matrix from A's lower triangle, potrf with the opposite fill mode
//    (column-major U with A = U^T U is row-major L), then the other triangle zeroed.
//  - det / slogdet: LU, then a kernel multiplies the diagonal and counts pivot swaps (no host
//    round trip; a singular matrix gives det 0, sign 0, log|det| -inf, as the CPU kernel).
// A singular or non-positive-definite input is an INVALID_ARGUMENT naming the op and the first
// failing batch index, as the CPU kernel reports it. Finding that out needs cuSOLVER's info
// values on the host: those ops copy them back and wait for the stream (refused while the
// stream is capturing a CUDA graph, which could not read them).
#include <algorithm>
#include <vector>

#include "cublas_handles.hpp"
#include "linalg_kernels.hpp"
#include "tessera/kernels/linalg_checks.hpp"

namespace tsr::cuda {
namespace {

constexpr uint32_t kF32F64 = TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64);

// Batch geometry, the int size check and the error messages are the CPU kernels'
// (tessera/kernels/linalg_checks.hpp).
using kernels::batch_dims;
using kernels::fail_not_positive_definite;
using kernels::fail_singular;
using kernels::fail_solver_argument;

void check_size(const KernelCall& c, int64_t n) { kernels::check_solver_size(c, n, "cuSOLVER"); }

// The typed legacy cuSOLVER entry points.
template <class T>
struct Solver;
template <>
struct Solver<float> {
  static cusolverStatus_t getrf_ws(cusolverDnHandle_t h, int n, float* a, int* lw) {
    return cusolverDnSgetrf_bufferSize(h, n, n, a, n, lw);
  }
  static cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float* a, float* w, int* piv, int* info) {
    return cusolverDnSgetrf(h, n, n, a, n, w, piv, info);
  }
  static cusolverStatus_t getrs(cusolverDnHandle_t h, cublasOperation_t t, int n, int k, const float* a, const int* piv,
                                float* b, int* info) {
    return cusolverDnSgetrs(h, t, n, k, a, n, piv, b, n, info);
  }
  static cusolverStatus_t potrf_ws(cusolverDnHandle_t h, cublasFillMode_t u, int n, float* a, int* lw) {
    return cusolverDnSpotrf_bufferSize(h, u, n, a, n, lw);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, float* a, float* w, int lw,
                                int* info) {
    return cusolverDnSpotrf(h, u, n, a, n, w, lw, info);
  }
};
template <>
struct Solver<double> {
  static cusolverStatus_t getrf_ws(cusolverDnHandle_t h, int n, double* a, int* lw) {
    return cusolverDnDgetrf_bufferSize(h, n, n, a, n, lw);
  }
  static cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double* a, double* w, int* piv, int* info) {
    return cusolverDnDgetrf(h, n, n, a, n, w, piv, info);
  }
  static cusolverStatus_t getrs(cusolverDnHandle_t h, cublasOperation_t t, int n, int k, const double* a,
                                const int* piv, double* b, int* info) {
    return cusolverDnDgetrs(h, t, n, k, a, n, piv, b, n, info);
  }
  static cusolverStatus_t potrf_ws(cusolverDnHandle_t h, cublasFillMode_t u, int n, double* a, int* lw) {
    return cusolverDnDpotrf_bufferSize(h, u, n, a, n, lw);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, double* a, double* w, int lw,
                                int* info) {
    return cusolverDnDpotrf(h, u, n, a, n, w, lw, info);
  }
};

// Per-call state: device, stream, the thread's cuSOLVER handle bound to the stream.
struct SolverCall {
  KernelCall& c;
  int dev;
  DeviceGuard guard;
  cudaStream_t stream;
  cusolverDnHandle_t h;
  explicit SolverCall(KernelCall& call)
      : c(call), dev(call.device().index), guard(dev), stream(stream_of(call)), h(cusolver_handle(dev)) {
    TSR_CUSOLVER_CHECK(cusolverDnSetStream(h, stream), c.op_name(), dev);
  }

  // cuSOLVER's info values [n] on the host (waits for the stream).
  std::vector<int> host_info(const int* dinfo, int64_t n) {
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    TSR_CUDA_CHECK(cudaStreamIsCapturing(stream, &cap), c.op_name(), dev);
    if (cap != cudaStreamCaptureStatusNone)
      fail(TSR_FAILED_PRECONDITION, c.op_name(), ": cannot run while the stream of cuda:", dev,
           " is capturing a CUDA graph (the factorization's status must be read on the host)");
    std::vector<int> info(static_cast<size_t>(n));
    TSR_CUDA_CHECK(cudaMemcpyAsync(info.data(), dinfo, sizeof(int) * size_t(n), cudaMemcpyDeviceToHost, stream),
                   c.op_name(), dev);
    TSR_CUDA_CHECK(cudaStreamSynchronize(stream), c.op_name(), dev);
    return info;
  }
};

// LU factorizations of lu[b] (n x n each, in place) with pivots piv[b * n ..] and info[b].
template <class T>
void getrf_batch(SolverCall& s, T* lu, int* piv, int* info, int64_t batch, int n) {
  int lwork = 0;
  TSR_CUSOLVER_CHECK(Solver<T>::getrf_ws(s.h, n, lu, &lwork), s.c.op_name(), s.dev);
  Scratch work(s.c, sizeof(T) * size_t(std::max(lwork, 1)));
  for (int64_t b = 0; b < batch; ++b)
    TSR_CUSOLVER_CHECK(Solver<T>::getrf(s.h, n, lu + b * n * n, static_cast<T*>(work.data()), piv + b * n, info + b),
                       s.c.op_name(), s.dev);
}

template <class T>
void inverse_impl(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_size(c, n);
  if (n == 0 || batch == 0) return;
  SolverCall s(c);
  const size_t bytes = sizeof(T) * size_t(batch * n * n);
  Scratch lu(c, bytes), piv(c, sizeof(int) * size_t(batch * n)), info(c, sizeof(int) * size_t(2 * batch));
  TSR_CUDA_CHECK(cudaMemcpyAsync(lu.data(), A.data, bytes, cudaMemcpyDeviceToDevice, s.stream), c.op_name(), s.dev);
  launch_fill_identity(sizeof(T) == 8, O.data, batch, n, s.stream);
  after_launch(c);
  T* lup = static_cast<T*>(lu.data());
  int* pivp = static_cast<int*>(piv.data());
  int* infop = static_cast<int*>(info.data());
  getrf_batch<T>(s, lup, pivp, infop, batch, int(n));
  for (int64_t b = 0; b < batch; ++b)
    TSR_CUSOLVER_CHECK(Solver<T>::getrs(s.h, CUBLAS_OP_N, int(n), int(n), lup + b * n * n, pivp + b * n,
                                        static_cast<T*>(O.data) + b * n * n, infop + batch + b),
                       c.op_name(), s.dev);
  const std::vector<int> inf = s.host_info(infop, batch);
  for (int64_t b = 0; b < batch; ++b) {
    if (inf[size_t(b)] > 0) fail_singular(c, "", b, inf[size_t(b)]);
    if (inf[size_t(b)] < 0) fail_solver_argument(c, "getrf", inf[size_t(b)]);
  }
}

template <class T>
void solve_impl(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t& O = c.output(0);
  int64_t batch, n, n2, k;
  batch_dims(A, &batch, &n, &n2);
  batch_dims(B, &batch, &n2, &k);
  check_size(c, n);
  check_size(c, k);
  if (batch == 0 || n == 0 || k == 0) return;
  SolverCall s(c);
  const bool f64 = sizeof(T) == 8;
  const size_t abytes = sizeof(T) * size_t(batch * n * n);
  Scratch lu(c, abytes), x(c, sizeof(T) * size_t(batch * n * k)), piv(c, sizeof(int) * size_t(batch * n)),
      info(c, sizeof(int) * size_t(2 * batch));
  TSR_CUDA_CHECK(cudaMemcpyAsync(lu.data(), A.data, abytes, cudaMemcpyDeviceToDevice, s.stream), c.op_name(), s.dev);
  launch_transpose(f64, B.data, x.data(), batch, n, k, s.stream);  // B [n, k] -> column-major
  after_launch(c);
  T* lup = static_cast<T*>(lu.data());
  T* xp = static_cast<T*>(x.data());
  int* pivp = static_cast<int*>(piv.data());
  int* infop = static_cast<int*>(info.data());
  getrf_batch<T>(s, lup, pivp, infop, batch, int(n));
  for (int64_t b = 0; b < batch; ++b)
    TSR_CUSOLVER_CHECK(Solver<T>::getrs(s.h, CUBLAS_OP_T, int(n), int(k), lup + b * n * n, pivp + b * n, xp + b * n * k,
                                        infop + batch + b),
                       c.op_name(), s.dev);
  launch_transpose(f64, xp, O.data, batch, k, n, s.stream);  // column-major X -> row-major [n, k]
  after_launch(c);
  const std::vector<int> inf = s.host_info(infop, batch);
  for (int64_t b = 0; b < batch; ++b) {
    if (inf[size_t(b)] > 0) fail_singular(c, " A", b, inf[size_t(b)]);
    if (inf[size_t(b)] < 0) fail_solver_argument(c, "getrf", inf[size_t(b)]);
  }
}

template <class T>
void cholesky_impl(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  const bool upper = c.arg_bool(1);
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_size(c, n);
  if (n == 0 || batch == 0) return;
  SolverCall s(c);
  const bool f64 = sizeof(T) == 8;
  launch_sym_from_lower(f64, A.data, O.data, batch, n, s.stream);
  after_launch(c);
  T* m = static_cast<T*>(O.data);
  // Row-major lower L is column-major upper U = L^T: ask for the opposite triangle.
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  int lwork = 0;
  TSR_CUSOLVER_CHECK(Solver<T>::potrf_ws(s.h, uplo, int(n), m, &lwork), c.op_name(), s.dev);
  Scratch work(c, sizeof(T) * size_t(std::max(lwork, 1))), info(c, sizeof(int) * size_t(batch));
  int* infop = static_cast<int*>(info.data());
  for (int64_t b = 0; b < batch; ++b)
    TSR_CUSOLVER_CHECK(
        Solver<T>::potrf(s.h, uplo, int(n), m + b * n * n, static_cast<T*>(work.data()), lwork, infop + b), c.op_name(),
        s.dev);
  launch_zero_triangle(f64, m, batch, n, upper, s.stream);
  after_launch(c);
  const std::vector<int> inf = s.host_info(infop, batch);
  for (int64_t b = 0; b < batch; ++b) {
    if (inf[size_t(b)] > 0) fail_not_positive_definite(c, b, inf[size_t(b)]);
    if (inf[size_t(b)] < 0) fail_solver_argument(c, "potrf", inf[size_t(b)]);
  }
}

template <class T>
void det_impl(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const bool slog = c.num_outputs() == 2;
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_size(c, n);
  if (batch == 0) return;
  SolverCall s(c);
  void* out0 = c.output(0).data;
  void* out1 = slog ? c.output(1).data : nullptr;
  if (n == 0) {  // 0x0: det 1, sign 1, log|det| 0
    launch_det_from_lu(sizeof(T) == 8, nullptr, nullptr, nullptr, batch, 0, out0, out1, s.stream);
    after_launch(c);
    return;
  }
  const size_t bytes = sizeof(T) * size_t(batch * n * n);
  Scratch lu(c, bytes), piv(c, sizeof(int) * size_t(batch * n)), info(c, sizeof(int) * size_t(batch));
  TSR_CUDA_CHECK(cudaMemcpyAsync(lu.data(), A.data, bytes, cudaMemcpyDeviceToDevice, s.stream), c.op_name(), s.dev);
  getrf_batch<T>(s, static_cast<T*>(lu.data()), static_cast<int*>(piv.data()), static_cast<int*>(info.data()), batch,
                 int(n));
  // det(A^T) = det(A): the LU of the row-major buffer serves.
  launch_det_from_lu(sizeof(T) == 8, lu.data(), static_cast<const int*>(piv.data()),
                     static_cast<const int*>(info.data()), batch, n, out0, out1, s.stream);
  after_launch(c);
}

template <template <class> class F>
void by_dtype(KernelCall& c) {
  switch (c.dtype()) {
    case TSR_F32:
      return F<float>::run(c);
    case TSR_F64:
      return F<double>::run(c);
    default:
      c.unsupported_dtype();
  }
}
template <class T>
struct Inverse {
  static void run(KernelCall& c) { inverse_impl<T>(c); }
};
template <class T>
struct Solve {
  static void run(KernelCall& c) { solve_impl<T>(c); }
};
template <class T>
struct Cholesky {
  static void run(KernelCall& c) { cholesky_impl<T>(c); }
};
template <class T>
struct Det {
  static void run(KernelCall& c) { det_impl<T>(c); }
};

void inverse_kernel(KernelCall& c) { by_dtype<Inverse>(c); }
void solve_kernel(KernelCall& c) { by_dtype<Solve>(c); }
void cholesky_kernel(KernelCall& c) { by_dtype<Cholesky>(c); }
void det_kernel(KernelCall& c) { by_dtype<Det>(c); }

}  // namespace

TSR_CUDA_KERNELS(linalg) {
  r.kernel("det", "cuda::det", device_type, kF32F64, TSR_KERNEL(det_kernel));
  r.kernel("slogdet", "cuda::slogdet", device_type, kF32F64, TSR_KERNEL(det_kernel));
  r.kernel("inverse", "cuda::inverse", device_type, kF32F64, TSR_KERNEL(inverse_kernel));
  r.kernel("_linalg_solve", "cuda::linalg_solve", device_type, kF32F64, TSR_KERNEL(solve_kernel));
  r.kernel("cholesky", "cuda::cholesky", device_type, kF32F64, TSR_KERNEL(cholesky_kernel));
}

}  // namespace tsr::cuda
