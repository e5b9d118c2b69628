// Device kernels around the cuSOLVER factorizations (see linalg_kernels.hpp).
#include <cmath>

#include "cuda_common.hpp"
#include "linalg_kernels.hpp"

namespace tsr::cuda {
namespace {

#define TSR_GRID_LOOP(i, total) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (total); i += int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void sym_from_lower_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t batch, int64_t n) {
  const int64_t nn = n * n;
  TSR_GRID_LOOP(idx, batch * nn) {
    const int64_t b = idx / nn, r = idx % nn, i = r / n, j = r % n;
    dst[idx] = j <= i ? src[idx] : src[b * nn + j * n + i];
  }
}

template <class T>
__global__ void zero_triangle_kernel(T* m, int64_t batch, int64_t n, bool upper) {
  const int64_t nn = n * n;
  TSR_GRID_LOOP(idx, batch * nn) {
    const int64_t r = idx % nn, i = r / n, j = r % n;
    if (upper ? j < i : j > i) m[idx] = T(0);
  }
}

template <class T>
__global__ void identity_kernel(T* m, int64_t batch, int64_t n) {
  const int64_t nn = n * n;
  TSR_GRID_LOOP(idx, batch * nn) {
    const int64_t r = idx % nn;
    m[idx] = (r / n == r % n) ? T(1) : T(0);
  }
}

// One output element per thread, writes coalesced (matrices here are small to moderate).
template <class T>
__global__ void transpose_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t batch, int64_t rows,
                                 int64_t cols) {
  const int64_t rc = rows * cols;
  TSR_GRID_LOOP(idx, batch * rc) {
    const int64_t b = idx / rc, r = idx % rc, j = r / rows, i = r % rows;  // dst[b][j][i]
    dst[idx] = src[b * rc + i * cols + j];
  }
}

template <class T>
__global__ void det_kernel(const T* __restrict__ lu, const int* __restrict__ ipiv, const int* __restrict__ info,
                           int64_t batch, int64_t n, T* out0, T* out1) {
  TSR_GRID_LOOP(b, batch) {
    double sign = 1, logabs = 0, det = 1;
    if (n > 0 && info[b] > 0) {
      sign = 0;
      logabs = -INFINITY;
      det = 0;
    } else {
      const T* m = lu + b * n * n;
      const int* piv = ipiv + b * n;
      for (int64_t i = 0; i < n; ++i) {
        const double d = double(m[i * n + i]);
        if (piv[i] != i + 1) {
          sign = -sign;
          det = -det;
        }
        if (d < 0) sign = -sign;
        logabs += log(fabs(d));
        det *= d;
      }
    }
    if (out1) {
      out0[b] = T(sign);
      out1[b] = T(logabs);
    } else {
      out0[b] = T(det);
    }
  }
}

}  // namespace

void launch_sym_from_lower(bool f64, const void* src, void* dst, int64_t batch, int64_t n, cudaStream_t s) {
  const unsigned g = grid_for(batch * n * n);
  if (f64)
    sym_from_lower_kernel<<<g, kBlock, 0, s>>>(static_cast<const double*>(src), static_cast<double*>(dst), batch, n);
  else
    sym_from_lower_kernel<<<g, kBlock, 0, s>>>(static_cast<const float*>(src), static_cast<float*>(dst), batch, n);
}

void launch_zero_triangle(bool f64, void* m, int64_t batch, int64_t n, bool upper, cudaStream_t s) {
  const unsigned g = grid_for(batch * n * n);
  if (f64)
    zero_triangle_kernel<<<g, kBlock, 0, s>>>(static_cast<double*>(m), batch, n, upper);
  else
    zero_triangle_kernel<<<g, kBlock, 0, s>>>(static_cast<float*>(m), batch, n, upper);
}

void launch_fill_identity(bool f64, void* m, int64_t batch, int64_t n, cudaStream_t s) {
  const unsigned g = grid_for(batch * n * n);
  if (f64)
    identity_kernel<<<g, kBlock, 0, s>>>(static_cast<double*>(m), batch, n);
  else
    identity_kernel<<<g, kBlock, 0, s>>>(static_cast<float*>(m), batch, n);
}

void launch_transpose(bool f64, const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols, cudaStream_t s) {
  const unsigned g = grid_for(batch * rows * cols);
  if (f64)
    transpose_kernel<<<g, kBlock, 0, s>>>(static_cast<const double*>(src), static_cast<double*>(dst), batch, rows,
                                          cols);
  else
    transpose_kernel<<<g, kBlock, 0, s>>>(static_cast<const float*>(src), static_cast<float*>(dst), batch, rows, cols);
}

void launch_det_from_lu(bool f64, const void* lu, const int* ipiv, const int* info, int64_t batch, int64_t n,
                        void* out0, void* out1, cudaStream_t s) {
  const unsigned g = grid_for(batch);
  if (f64)
    det_kernel<<<g, kBlock, 0, s>>>(static_cast<const double*>(lu), ipiv, info, batch, n, static_cast<double*>(out0),
                                    static_cast<double*>(out1));
  else
    det_kernel<<<g, kBlock, 0, s>>>(static_cast<const float*>(lu), ipiv, info, batch, n, static_cast<float*>(out0),
                                    static_cast<float*>(out1));
}

}  // namespace tsr::cuda
