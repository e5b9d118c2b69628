// The CUDA backend library's plugin entry: score (driver and device present?), init (device type,
// allocators, extensions, then every kernel family), shutdown. The loader does not load this
// library itself: it loads the thin shell (shell/plugin_shell.cpp), which scores the machine with
// the CUDA runtime alone and loads this library, with cuBLAS, cuBLASLt, cuSOLVER and cuDNN, only
// when there is a device to use.
#include <memory>

#include "device_internal.hpp"
#include "probe.hpp"

#ifndef TSR_CUDA_PLUGIN_VERSION
#define TSR_CUDA_PLUGIN_VERSION "0.0.0"
#endif

namespace tsr::cuda {

// device.cpp
void shutdown(const tsr_api_t* api, void* state);

}  // namespace tsr::cuda

namespace {

// Returns the per-runtime state handed back to shutdown (device type id, runtime, api).
void* cuda_init(tsr::Registrar& r) {
  std::unique_ptr<tsr::cuda::RuntimeState> state(new tsr::cuda::RuntimeState());
  const int32_t dt = tsr::cuda::register_device(r, state.get());
  for (const auto& f : tsr::cuda::CudaFamilies::all()) f.fn(r, dt);
  return state.release();
}

}  // namespace

TSR_DEFINE_PLUGIN("cuda", TSR_CUDA_PLUGIN_VERSION,
                  "Tessera CUDA backend: CUDA kernels, cuBLAS/cuBLASLt, cuDNN, streams, events, graphs",
                  tsr::cuda::score, cuda_init, tsr::cuda::shutdown)
