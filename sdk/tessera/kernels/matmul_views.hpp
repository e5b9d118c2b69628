// Tessera SDK: what the CPU (OpenBLAS) and CUDA (cuBLASLt) kernels of mm, bmm and _nn_linear
// share: their rank checks and the operand views of the product they compute,
// out[b] = a[b] @ b[b] for each of `batch` matrices. Host only (header-only). The core checks
// shapes and dtypes before a kernel runs; the rank checks are the kernels' own.
#pragma once

#include <cstdint>

#include "tessera/plugin.hpp"

namespace tsr::kernels {

// One logical row-major operand [rows, cols] with element strides (rs, cs); bs elements between
// the matrices of a batch.
struct MatView {
  const void* data;
  int64_t rows, cols, rs, cs, bs;
};

// The product: a [m, k] @ b [k, n] into the dense [m, n] matrices of out, out_bs elements apart.
struct MatmulViews {
  MatView a, b;
  void* out;
  int64_t out_bs, batch, m, n, k;
};

inline void check_rank(const KernelCall& c, const tsr_tensor_view_t& v, int32_t nd) {
  if (v.ndim != nd) fail(TSR_INVALID_ARGUMENT, c.op_name(), ": expected a ", nd, "-d tensor, got ", v.ndim, "-d");
}

// mm(a [m, k], b [k, n]) -> [m, n].
inline MatmulViews mm_views(const KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t& O = c.output(0);
  check_rank(c, A, 2);
  check_rank(c, B, 2);
  check_rank(c, O, 2);
  const int64_t m = A.sizes[0], k = A.sizes[1], n = B.sizes[1];
  return {{A.data, m, k, A.strides[0], A.strides[1], 0},
          {B.data, k, n, B.strides[0], B.strides[1], 0},
          O.data,
          m * n,
          1,
          m,
          n,
          k};
}

// bmm(a [batch, m, k], b [batch, k, n]) -> [batch, m, n].
inline MatmulViews bmm_views(const KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t& O = c.output(0);
  check_rank(c, A, 3);
  check_rank(c, B, 3);
  check_rank(c, O, 3);
  const int64_t batch = A.sizes[0], m = A.sizes[1], k = A.sizes[2], n = B.sizes[2];
  return {{A.data, m, k, A.strides[1], A.strides[2], A.strides[0]},
          {B.data, k, n, B.strides[1], B.strides[2], B.strides[0]},
          O.data,
          O.strides[0],
          batch,
          m,
          n,
          k};
}

// _nn_linear(x [M, K], w [N, K], bias [N]) -> [M, N] = x @ w^T + bias (dense operands: the core's
// kernel_op). b is w^T: w read column-major, so no copy.
inline MatmulViews linear_views(const KernelCall& c) {
  const tsr_tensor_view_t& X = c.input(0);
  const tsr_tensor_view_t& W = c.input(1);
  const tsr_tensor_view_t& O = c.output(0);
  check_rank(c, X, 2);
  check_rank(c, W, 2);
  check_rank(c, c.input(2), 1);
  check_rank(c, O, 2);
  const int64_t m = X.sizes[0], k = X.sizes[1], n = W.sizes[0];
  return {{X.data, m, k, X.strides[0], X.strides[1], 0},
          {W.data, k, n, W.strides[1], W.strides[0], 0},
          O.data,
          m * n,
          1,
          m,
          n,
          k};
}

}  // namespace tsr::kernels
