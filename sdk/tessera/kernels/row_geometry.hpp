// Tessera SDK: the row geometry and argument checks of the reduce family's row kernels
// (_sort_rows, _cumulative_rows, _prod_rows, _gather_rows, ...), shared by the CPU and CUDA
// backends: every operand is contiguous and the op works along the last dim. Host only
// (header-only).
#pragma once

#include <cstdint>

#include "tessera/dtype.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

struct Rows {
  int64_t rows = 0, n = 0;
};

// [rows, n] of a contiguous view along its last dim (a 0-d tensor is one row of one element).
inline Rows rows_of(const tsr_tensor_view_t& v) {
  Rows r;
  r.n = v.ndim == 0 ? 1 : v.sizes[v.ndim - 1];
  r.rows = 1;
  for (int32_t d = 0; d + 1 < v.ndim; ++d) r.rows *= v.sizes[d];
  return r;
}

// _cumulative_rows's scan kind (args: self, int kind: 0 cumsum, 1 cumprod, 2 logcumsumexp);
// logcumsumexp takes floating inputs only.
inline int64_t cumulative_kind(const KernelCall& c) {
  const int64_t kind = c.arg_int(1);
  if (kind == 2 && !is_floating(c.dtype()))
    fail(TSR_INVALID_ARGUMENT, "logcumsumexp: expected a floating point tensor");
  return kind;
}

}  // namespace tsr::kernels
