// scaled_mm on compute capability 10.x through cuBLASLt: every scaling mode of torch._scaled_mm,
// including the two the generic cuda kernel does not have (MXFP8 and NVFP4, Blackwell's
// block-scaled MMAs). The implementation is tessera/cuda/cublaslt_scaled_mm.hpp, shared with the
// generic kernel; the algorithm is always cublasLtMatmulAlgoGetHeuristic's first answer for the
// exact problem (no architecture table).
//
// sm100 has the tensorwise and rowwise modes too (the shared code does them); a problem
// cuBLASLt has no algorithm for is UNIMPLEMENTED, which declines it to the generic kernel (the
// dispatcher's next kernel by priority, kernel.h).
#include <unordered_map>

#include "sm100_common.hpp"
#include "tessera/cuda/cublaslt_scaled_mm.hpp"

namespace tsr::sm100 {
namespace {

// The calling thread's cuBLASLt handle for `dev` (created on first use, kept until exit: tearing
// handles down in static destructors races with the CUDA context's teardown).
cublasLtHandle_t lt_handle(int dev) {
  thread_local std::unordered_map<int, cublasLtHandle_t> handles;
  auto it = handles.find(dev);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  TSR_CUBLASLT_CHECK(cublasLtCreate(&h), "scaled_mm", dev);
  handles.emplace(dev, h);
  return h;
}

void scaled_mm_kernel(KernelCall& c) {
  const int dev = c.device().index;
  DeviceGuard guard(dev);
  cublaslt::scaled_mm<Scratch>(c, lt_handle(dev), stream_of(c), /*allow_block_scaled=*/true);
}

}  // namespace

void register_scaled_mm(Registrar& r, const Context& ctx) {
  // Every dispatch dtype (mask 0): the kernel decides by the operand and scale dtypes.
  register_override(r, ctx, "scaled_mm", "sm100::scaled_mm_cublaslt", 0, TSR_KERNEL(scaled_mm_kernel));
}

}  // namespace tsr::sm100
