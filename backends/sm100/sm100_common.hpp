// Internal to the sm100 backend library: what its kernel files share (host side; compiles with
// g++ and nvcc). Includes only abi/, sdk/ and CUDA toolkit headers, like every backend.
//
// Conventions (the cuda backend's, whose device type these kernels are registered on):
//  - a kernel call's tsr_stream_t* IS a cudaStream_t; kernels enqueue there and return;
//  - temporary device memory (the cuBLASLt workspace) comes from the core's caching allocator
//    as a u8 tensor, stream-ordered (Scratch);
//  - every kernel is registered with priority kPriority and the compute capability 10.x gate as
//    its predicate, so it replaces cuda's generic kernel for the same op on 10.x devices only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/compute_capability.hpp"
#include "tessera/plugin.hpp"
#include "tessera/scratch.hpp"  // tsr::Scratch: the cuBLASLt workspace

namespace tsr::sm100 {

// Above the cuda backend's kernels (priority 0): on a device the gate accepts, sm100's wins.
constexpr int32_t kPriority = 100;

// What every registration function receives.
struct Context {
  int32_t cuda_type;                   // the "cuda" device type's id
  tsr::ComputeCapabilityGate* gate;    // the predicate's user_data (lives until shutdown)
};

// Registers `fn` for `op` on cuda devices of compute capability 10.x when the runtime has the
// op (a core without it, e.g. one older than the low-precision ops, gets no kernel and no error).
void register_override(Registrar& r, const Context& ctx, const char* op, const char* kernel_name, uint32_t dtype_mask,
                       tsr_kernel_fn_t fn);

// The kernel families (one file each).
void register_scaled_mm(Registrar& r, const Context& ctx);  // scaled_mm.cpp
void register_quantize(Registrar& r, const Context& ctx);   // quantize.cu

inline cudaStream_t stream_of(const KernelCall& c) { return reinterpret_cast<cudaStream_t>(c.stream()); }

// Throws tsr::Error "OP: WHAT failed on cuda:DEV: <CUDA's message>".
[[noreturn]] void throw_cuda(cudaError_t err, const char* op, const char* what, int device);
#define TSR_SM100_CUDA_CHECK(expr, op, device)                                                      \
  do {                                                                                              \
    const cudaError_t tsr_sm100_err_ = (expr);                                                      \
    if (tsr_sm100_err_ != cudaSuccess) ::tsr::sm100::throw_cuda(tsr_sm100_err_, (op), #expr, (device)); \
  } while (0)

// Makes `device` current for the calling thread while alive.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

// Numel of a view (1 for a scalar).
inline int64_t numel_of(const tsr_tensor_view_t& v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v.ndim; ++d) n *= v.sizes[d];
  return n;
}

}  // namespace tsr::sm100
