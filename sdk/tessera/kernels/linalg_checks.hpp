// Tessera SDK: what the CPU (LAPACK) and CUDA (cuSOLVER) kernels of inverse, _linalg_solve,
// cholesky, det and slogdet share: the batch geometry of a [*, r, c] view, the solvers' int
// size limit, and the errors they report, so that both backends word them alike. Host only.
// The core checks shapes and dtypes before a kernel runs; these are the kernels' own errors.
#pragma once

#include <cstdint>

#include "tessera/plugin.hpp"

namespace tsr::kernels {

// Matrices in a [*, r, c] view: their number (the product of the leading sizes) and size.
inline void batch_dims(const tsr_tensor_view_t& v, int64_t* batch, int64_t* r, int64_t* c) {
  *r = v.sizes[v.ndim - 2];
  *c = v.sizes[v.ndim - 1];
  *batch = 1;
  for (int32_t d = 0; d < v.ndim - 2; ++d) *batch *= v.sizes[d];
}

// The solver library (`library`: "LAPACK", "cuSOLVER") takes int sizes.
inline void check_solver_size(const KernelCall& c, int64_t n, const char* library) {
  if (n > (int64_t(1) << 30))
    fail(TSR_INVALID_ARGUMENT, c.op_name(), ": matrix size ", n, " exceeds ", library, "'s int range");
}

// LU found a zero pivot: info (1-based, as getrf/gesv report it) names U's zero diagonal
// element. `what` follows "the matrix": "" or " A".
[[noreturn]] inline void fail_singular(const KernelCall& c, const char* what, int64_t b, int info) {
  fail(TSR_INVALID_ARGUMENT, c.op_name(), ": the matrix", what, " at batch index ", b, " is singular (U[", info - 1,
       ", ", info - 1, "] is exactly zero)");
}

// potrf's info > 0: the order of the first leading minor that is not positive.
[[noreturn]] inline void fail_not_positive_definite(const KernelCall& c, int64_t b, int info) {
  fail(TSR_INVALID_ARGUMENT, c.op_name(), ": the matrix at batch index ", b,
       " is not positive-definite (the leading minor of order ", info, " is not positive)");
}

// A solver routine's info < 0: argument -info was invalid (a bug in the kernel, not the input).
[[noreturn]] inline void fail_solver_argument(const KernelCall& c, const char* routine, int info) {
  fail(TSR_INTERNAL, c.op_name(), ": ", routine, " argument ", -info, " invalid");
}

}  // namespace tsr::kernels
