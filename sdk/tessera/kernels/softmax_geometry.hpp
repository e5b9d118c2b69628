// Tessera SDK: softmax / log_softmax's geometry, shared by the CPU and CUDA kernels: a contiguous
// input viewed as [outer, D, inner] around the softmax dim (args: self, int dim; the backward
// kernels: grad_output, output, int dim). Host only (header-only).
#pragma once

#include <cstdint>

#include "tessera/plugin.hpp"

namespace tsr::kernels {

struct SoftmaxGeo {
  int64_t outer = 1, D = 1, inner = 1;
  bool empty() const { return outer == 0 || D == 0 || inner == 0; }
};

// Checks the dim (argument `dim_arg`; the core normalizes it; a 0-d input is one element) and
// splits `in` around it.
inline SoftmaxGeo softmax_geo(const KernelCall& c, const tsr_tensor_view_t& in, size_t dim_arg = 1) {
  const int64_t dim = c.arg_int(dim_arg);
  const int32_t ndim = in.ndim;
  if (ndim != 0 && (dim < 0 || dim >= ndim))
    fail(TSR_INVALID_ARGUMENT, c.op_name(), ": dim ", dim, " out of range for ", ndim, "-d input");
  SoftmaxGeo g;
  for (int32_t d = 0; d < ndim; ++d) {
    if (d < dim)
      g.outer *= in.sizes[d];
    else if (d == dim)
      g.D = in.sizes[d];
    else
      g.inner *= in.sizes[d];
  }
  return g;
}

}  // namespace tsr::kernels
