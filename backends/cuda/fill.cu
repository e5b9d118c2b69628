// _fill and arange on CUDA: kernels::ConstantOp through the elementwise launcher, and
// kernels::ArangeOp (the CPU backend's per-element formula) over the output's elements.
#include "elementwise.cuh"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cuda {
namespace {

void fill_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  const CudaRun run(c);
  dispatch_castable(c.dtype(), "_fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = kernels::Elem<T>;
    kernels::ew<E>(run, kernels::ConstantOp<E>{static_cast<E>(c.arg_scalar<T>(1))});
  });
}

template <class T>
__global__ void __launch_bounds__(kBlock) arange_kernel_dev(T* p, int64_t n, int64_t stride, kernels::ArangeOp<T> op) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i * stride] = op(i);
}

void arange_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  int64_t n = 1;
  for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
  if (n == 0) return;
  const int64_t stride = out.ndim >= 1 ? out.strides[0] : 1;
  DeviceGuard guard(c.device().index);
  dispatch_numeric(c.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    arange_kernel_dev<T><<<grid_for(n, kBlock, 4), kBlock, 0, stream_of(c)>>>(static_cast<T*>(out.data), n, stride,
                                                                              kernels::make_arange_op<T>(c));
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(fill) {
  r.kernel("_fill", "cuda::fill", device_type, kCastableMask, TSR_KERNEL(fill_kernel));
  r.kernel("arange", "cuda::arange", device_type, kNumericMask, TSR_KERNEL(arange_kernel));
}

}  // namespace tsr::cuda
