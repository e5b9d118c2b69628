// @NAME@: mm (out = a @ b) for float32 and float64, the kernel behind matmul, linear layers and
// their gradients.
//
// Contract: a [m,k], b [k,n], out [m,n] contiguous, one dtype; each of a and b has a unit
// stride in one of its dims (row- or column-major), strides in ELEMENTS; k may be 0 (out = 0).
// A real backend calls its BLAS here; this loop is the reference.
#include "kernels.hpp"

namespace @NAME@ {
namespace {

template <class T>
void mm_typed(tsr::KernelCall& c) {
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t& C = c.output(0);
  const int64_t m = A.sizes[0], k = A.sizes[1], n = B.sizes[1];
  const T* a = static_cast<const T*>(A.data);
  const T* b = static_cast<const T*>(B.data);
  T* out = static_cast<T*>(C.data);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;  // accumulate in double: one rounding per output element
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<double>(a[i * A.strides[0] + p * A.strides[1]]) * b[p * B.strides[0] + j * B.strides[1]];
      out[i * C.strides[0] + j * C.strides[1]] = static_cast<T>(acc);
    }
}

void mm_kernel(tsr::KernelCall& c) {
  tsr::dispatch_mask<kFloatMask>(c.dtype(), c.op_name(), [&](auto tag) { mm_typed<typename decltype(tag)::type>(c); });
}

}  // namespace

void register_matmul_kernels(tsr::Registrar& r, int32_t type) {
  r.kernel("mm", "@NAME@::mm", type, kFloatMask, TSR_KERNEL(mm_kernel));
}

}  // namespace @NAME@
