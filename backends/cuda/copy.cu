// _copy on one CUDA device: same-dtype dense copies are cudaMemcpyAsync (device to device),
// everything else (dtype conversion, strided views) an elementwise launch of kernels::CastOp,
// the conversion the CPU backend uses.
#include "elementwise.cuh"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cuda {
namespace {

void copy_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  const CudaRun run(c);
  const int32_t out_dt = c.dtype();
  const int32_t src_dt = it.noperands > 1 ? it.dtypes[1] : out_dt;
  if (out_dt == src_dt && it.contiguous) {
    // The core refuses partially overlapping copies; a copy onto itself is nothing to do
    // (cudaMemcpy is undefined for overlapping ranges).
    if (it.data[0] == it.data[1]) return;
    TSR_CUDA_CHECK(cudaMemcpyAsync(it.data[0], it.data[1], size_t(it.numel) * itemsize(out_dt),
                                   cudaMemcpyDeviceToDevice, stream_of(c)),
                   c.op_name(), c.device().index);
    return;
  }
  if (out_dt == TSR_F4_E2M1FN_X2 || src_dt == TSR_F4_E2M1FN_X2) {  // packed pairs: bytes only
    kernels::check_packed_copy(out_dt, src_dt);
    kernels::ew<kernels::Elem<uint8_t>, kernels::Elem<uint8_t>>(run, kernels::CastOp<uint8_t, uint8_t>{});
    return;
  }
  dispatch_castable(out_dt, "_copy", [&](auto otag) {
    using T = typename decltype(otag)::type;
    dispatch_castable(src_dt, "_copy", [&](auto stag) {
      using S = typename decltype(stag)::type;
      kernels::ew<kernels::Elem<T>, kernels::Elem<S>>(run, kernels::CastOp<T, S>{});
    });
  });
}

}  // namespace

TSR_CUDA_KERNELS(copy) { r.kernel("_copy", "cuda::copy", device_type, kMovableMask, TSR_KERNEL(copy_kernel)); }

}  // namespace tsr::cuda
