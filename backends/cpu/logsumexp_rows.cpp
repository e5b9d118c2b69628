// _logsumexp_rows: log(sum(exp(x))) of each row of the last dim in one visit of the row (its max,
// then the sum of e^(x - max) from cache), instead of logsumexp's composite (amax, a shift,
// exp, sum, log, add: six passes and four temporaries). f16/bf16 compute in float.
#include <cmath>
#include <limits>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

// As the composite: a NaN anywhere gives NaN; a +inf max gives +inf; a row of -inf gives -inf
// (the composite shifts by 0 for an infinite max: log(0) or log(inf)). Otherwise every x - max is
// <= 0, the range of exp_no_overflow_c.
template <class T>
TSR_CPU_MULTIVERSION void lse_rows(const T* x, T* out, int64_t r0, int64_t r1, int64_t D) {
  using CT = compute_t<T>;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * D;
    const CT m = row_max<CT>(xr, D);
    CT v;
    if (std::isinf(m)) {  // row_max skips NaNs; here the max is the answer unless one is present
      v = m;
      for (int64_t k = 0; k < D; ++k)
        if (std::isnan(CT(xr[k]))) v = std::numeric_limits<CT>::quiet_NaN();
    } else {
      v = m + std::log(row_exp_sum<false, CT>(xr, D, m, nullptr));  // NaN if a NaN is present
    }
    out[r] = static_cast<T>(v);
  }
}

void lse_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const int64_t D = in.sizes[in.ndim - 1];
  const int64_t rows = D > 0 ? view_numel(in) / D : 0;
  if (rows == 0) return;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* out = static_cast<T*>(c.output(0).data);
    parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / D),
                 [&](int64_t r0, int64_t r1) { lse_rows<T>(x, out, r0, r1, D); });
  });
}

}  // namespace

TSR_CPU_KERNELS(logsumexp_rows) {
  r.kernel("_logsumexp_rows", "cpu::logsumexp_rows", device_type, kFloatingMask, TSR_KERNEL(lse_rows_kernel));
}

}  // namespace tsr::cpu
