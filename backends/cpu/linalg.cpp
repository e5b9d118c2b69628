// inverse, _linalg_solve, cholesky through the Fortran LAPACK that OpenBLAS exports. Inputs
// and outputs are dense row-major batches (the core makes them so). A row-major matrix is the
// column-major storage of its transpose, which each kernel uses instead of copying where the
// algebra allows (inverse, cholesky); solve transposes explicitly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_common.hpp"
#include "tessera/kernels/linalg_checks.hpp"

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b, const int* ldb, int* info);
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
}

namespace tsr::cpu {
namespace {

constexpr uint32_t kF32F64 = TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64);

void getrf(int n, float* a, int* piv, int* info) { sgetrf_(&n, &n, a, &n, piv, info); }
void getrf(int n, double* a, int* piv, int* info) { dgetrf_(&n, &n, a, &n, piv, info); }
void getri(int n, float* a, const int* piv, float* w, int lw, int* info) { sgetri_(&n, a, &n, piv, w, &lw, info); }
void getri(int n, double* a, const int* piv, double* w, int lw, int* info) { dgetri_(&n, a, &n, piv, w, &lw, info); }
void gesv(int n, int k, float* a, int* piv, float* b, int* info) { sgesv_(&n, &k, a, &n, piv, b, &n, info); }
void gesv(int n, int k, double* a, int* piv, double* b, int* info) { dgesv_(&n, &k, a, &n, piv, b, &n, info); }
void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info); }
void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info); }

// Batch geometry, the int size check and the error messages are shared with the CUDA
// backend (tessera/kernels/linalg_checks.hpp).
using kernels::batch_dims;
using kernels::fail_not_positive_definite;
using kernels::fail_singular;
using kernels::fail_solver_argument;

void check_lapack_size(const KernelCall& c, int64_t n) { kernels::check_solver_size(c, n, "LAPACK"); }

void inverse_kernel(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_lapack_size(c, n);
  if (n == 0 || batch == 0) return;
  dispatch_mask<kF32F64>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(A.data);
    T* dst = static_cast<T*>(O.data);
    std::memcpy(dst, src, sizeof(T) * size_t(batch * n * n));
    std::vector<int> piv(static_cast<size_t>(n));
    // inv(A^T) stored column-major is inv(A) row-major.
    int info = 0;
    T wq = 0;
    getri(int(n), dst, piv.data(), &wq, -1, &info);
    std::vector<T> work(std::max<size_t>(1, size_t(wq)));
    for (int64_t b = 0; b < batch; ++b) {
      T* m = dst + b * n * n;
      getrf(int(n), m, piv.data(), &info);
      if (info > 0) fail_singular(c, "", b, info);
      if (info < 0) fail_solver_argument(c, "getrf", info);
      getri(int(n), m, piv.data(), work.data(), int(work.size()), &info);
      if (info != 0) fail(TSR_INVALID_ARGUMENT, c.op_name(), ": the matrix at batch index ", b, " is singular");
    }
  });
}

void solve_kernel(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t& O = c.output(0);
  int64_t batch, n, n2, k;
  batch_dims(A, &batch, &n, &n2);
  batch_dims(B, &batch, &n2, &k);
  check_lapack_size(c, n);
  check_lapack_size(c, k);
  if (batch == 0 || n == 0 || k == 0) return;
  dispatch_mask<kF32F64>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = static_cast<const T*>(A.data);
    const T* b = static_cast<const T*>(B.data);
    T* x = static_cast<T*>(O.data);
    std::vector<T> ac(size_t(n * n)), bc(size_t(n * k));
    std::vector<int> piv(static_cast<size_t>(n));
    for (int64_t bi = 0; bi < batch; ++bi) {
      const T* ab = a + bi * n * n;
      const T* bb = b + bi * n * k;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) ac[size_t(j * n + i)] = ab[i * n + j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) bc[size_t(j * n + i)] = bb[i * k + j];
      int info = 0;
      gesv(int(n), int(k), ac.data(), piv.data(), bc.data(), &info);
      if (info > 0) fail_singular(c, " A", bi, info);
      if (info < 0) fail_solver_argument(c, "gesv", info);
      T* xb = x + bi * n * k;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) xb[i * k + j] = bc[size_t(j * n + i)];
    }
  });
}

// Row-major lower L (A = L L^T) is, read column-major, the upper factor U = L^T: so potrf is
// asked for 'U' to produce L, and for 'L' to produce U. Only A's lower triangle is read.
void cholesky_kernel(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  const bool upper = c.arg_bool(1);
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_lapack_size(c, n);
  if (n == 0 || batch == 0) return;
  dispatch_mask<kF32F64>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(A.data);
    T* dst = static_cast<T*>(O.data);
    for (int64_t b = 0; b < batch; ++b) {
      T* m = dst + b * n * n;
      const T* s = src + b * n * n;
      // Symmetric input from the lower triangle, so 'L' (which reads the row-major upper one)
      // sees the same matrix.
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) m[i * n + j] = j <= i ? s[i * n + j] : s[j * n + i];
      int info = 0;
      potrf(upper ? 'L' : 'U', int(n), m, &info);
      if (info > 0) fail_not_positive_definite(c, b, info);
      if (info < 0) fail_solver_argument(c, "potrf", info);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (upper ? j < i : j > i) m[i * n + j] = T(0);
    }
  });
}

// det / slogdet from LU of the row-major buffer (det(A^T) = det(A)). A singular matrix gives
// det 0 (sign 0, logabsdet -inf), as in PyTorch.
void det_kernel(KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const bool slog = c.num_outputs() == 2;
  int64_t batch, n, n2;
  batch_dims(A, &batch, &n, &n2);
  check_lapack_size(c, n);
  dispatch_mask<kF32F64>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(A.data);
    T* o0 = static_cast<T*>(c.output(0).data);
    T* o1 = slog ? static_cast<T*>(c.output(1).data) : nullptr;
    std::vector<T> m(static_cast<size_t>(n * n));
    std::vector<int> piv(static_cast<size_t>(std::max<int64_t>(1, n)));
    for (int64_t b = 0; b < batch; ++b) {
      if (n > 0) std::memcpy(m.data(), src + b * n * n, sizeof(T) * size_t(n * n));  // 0x0: no data pointer
      int info = 0;
      if (n > 0) getrf(int(n), m.data(), piv.data(), &info);
      if (info < 0) fail_solver_argument(c, "getrf", info);
      double sign = 1, logabs = 0, det = 1;
      if (info > 0) {
        sign = 0;
        logabs = -std::numeric_limits<double>::infinity();
        det = 0;
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const double d = double(m[size_t(i * n + i)]);
          if (piv[size_t(i)] != i + 1) sign = -sign;
          if (d < 0) sign = -sign;
          logabs += std::log(std::fabs(d));
          det *= d;
        }
        for (int64_t i = 0; i < n; ++i)
          if (piv[size_t(i)] != i + 1) det = -det;
      }
      if (slog) {
        o0[b] = T(sign);
        o1[b] = T(logabs);
      } else {
        o0[b] = T(det);
      }
    }
  });
}

}  // namespace

TSR_CPU_KERNELS(linalg) {
  r.kernel("det", "cpu::det", device_type, kF32F64, TSR_KERNEL(det_kernel));
  r.kernel("slogdet", "cpu::slogdet", device_type, kF32F64, TSR_KERNEL(det_kernel));
  r.kernel("inverse", "cpu::inverse", device_type, kF32F64, TSR_KERNEL(inverse_kernel));
  r.kernel("_linalg_solve", "cpu::linalg_solve", device_type, kF32F64, TSR_KERNEL(solve_kernel));
  r.kernel("cholesky", "cpu::cholesky", device_type, kF32F64, TSR_KERNEL(cholesky_kernel));
}

}  // namespace tsr::cpu
