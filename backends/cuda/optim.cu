// sgd_step_ and adam_step_ on CUDA: the CPU backend's per-element updates
// (tessera/kernels/optim_ops.hpp), one thread per element over the iteration (operands:
// param[, state...], grad).
#include "elementwise.cuh"
#include "tessera/kernels/optim_ops.hpp"

namespace tsr::cuda {
namespace {

template <class Op, class T>
struct StepAt {
  Op op;
  __device__ __forceinline__ void operator()(char* const* p) const {
    T* q[Op::N];
#pragma unroll
    for (int k = 0; k < Op::N; ++k) q[k] = reinterpret_cast<T*>(p[k]);
    op(q, 0);
  }
};

template <class Op, class T>
void step_typed(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  TSR_CHECK(it.noperands == Op::N, TSR_INTERNAL, c.op_name(), ": expected ", Op::N, " operands, got ", it.noperands);
  DeviceGuard guard(c.device().index);
  for_each_offset<Op::N>(c, it, StepAt<Op, T>{Op::make(c)});
}

// step_typed<Op, T> for the variant the call selects (tessera/kernels/optim_ops.hpp).
void sgd_step_kernel(KernelCall& c) {
  kernels::dispatch_sgd_step(
      c, [&c](auto op, auto t) { step_typed<typename decltype(op)::type, typename decltype(t)::type>(c); });
}
void adam_step_kernel(KernelCall& c) {
  kernels::dispatch_adam_step(
      c, [&c](auto op, auto t) { step_typed<typename decltype(op)::type, typename decltype(t)::type>(c); });
}

}  // namespace

TSR_CUDA_KERNELS(optim) {
  r.kernel("sgd_step_", "cuda::sgd_step_", device_type, kFloatingMask, TSR_KERNEL(sgd_step_kernel));
  r.kernel("adam_step_", "cuda::adam_step_", device_type, kFloatingMask, TSR_KERNEL(adam_step_kernel));
}

}  // namespace tsr::cuda
