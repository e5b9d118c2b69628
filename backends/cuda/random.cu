// rand, randn on CUDA: one thread per Philox block (tessera/kernels/random_ops.hpp, the code the
// CPU backend runs), so a seed and offset give the CPU backend's numbers: rand bit for bit,
// randn up to the device libm's log/sin/cos (a few ulp).
#include "elementwise.cuh"
#include "tessera/kernels/random_ops.hpp"

namespace tsr::cuda {
namespace {

template <class T, bool NORMAL>
__global__ void __launch_bounds__(kBlock)
    random_kernel_dev(T* out, int64_t n, int64_t nblocks, uint64_t seed, uint64_t offset, float below_one) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < nblocks; j += int64_t(gridDim.x) * blockDim.x)
    kernels::random_block<T, NORMAL>(out, n, seed, offset, j, below_one);
}

template <bool NORMAL>
void random_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  int64_t n = 1;
  for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
  if (n == 0) return;
  const uint64_t seed = static_cast<uint64_t>(c.arg_int(3));
  const uint64_t offset = static_cast<uint64_t>(c.arg_int(4));
  DeviceGuard guard(c.device().index);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t nblocks = kernels::random_blocks<T, NORMAL>(n);
    const float below_one = is_reduced_float<T>::value ? kernels::rand_below_one<T>() : 1.0f;
    random_kernel_dev<T, NORMAL><<<grid_for(nblocks), kBlock, 0, stream_of(c)>>>(static_cast<T*>(out.data), n, nblocks,
                                                                                 seed, offset, below_one);
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(random) {
  r.kernel("rand", "cuda::rand", device_type, kFloatingMask, TSR_KERNEL(random_kernel<false>));
  r.kernel("randn", "cuda::randn", device_type, kFloatingMask, TSR_KERNEL(random_kernel<true>));
}

}  // namespace tsr::cuda
