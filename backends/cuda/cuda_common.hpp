// Internal to the CUDA backend: what every kernel file uses (host side; compiles with g++ and
// nvcc). Includes only abi/, sdk/ and CUDA toolkit headers.
//
// Conventions of this backend:
//  - A tsr_stream_t* that reaches the backend (kernel calls, copies, stream/event callbacks) IS
//    a cudaStream_t (NULL = the legacy default stream); a tsr_event_t* IS a cudaEvent_t.
//  - A kernel enqueues on stream_of(c) and returns without synchronizing; launch errors are
//    thrown at once, errors of the running kernel surface at the next synchronizing call,
//    naming the last op launched on that device (after_launch records it).
//  - Temporary device memory comes from the core's caching allocator (Scratch), which orders
//    reuse on the stream: releasing a scratch tensor right after enqueueing work is safe.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/dtype.hpp"
#include "tessera/plugin.hpp"
#include "tessera/scratch.hpp"
#include "tessera/self_register.hpp"

namespace tsr::cuda {

// ---- registration -------------------------------------------------------------------------

// device.cpp: registers the "cuda" device type, its raw allocators and the extensions; returns
// the device type id. `state` is the plugin's per-runtime state (plugin.cpp makes it, shutdown
// frees it).
int32_t register_device(Registrar& r, void* state);

// Every kernel file registers its family itself; plugin.cpp's init runs them all
// (CudaFamilies::all(), sorted by family name). A family is named like its file:
//   TSR_CUDA_KERNELS(softmax) { r.kernel("softmax", "cuda::softmax", device_type, mask, fn); }
struct CudaKernels {};  // this shared object's own FamilyList tag (see tessera/self_register.hpp)
using CudaFamilies = FamilyList<void (*)(Registrar& r, int32_t device_type), CudaKernels>;
#define TSR_CUDA_KERNELS(family) \
  TSR_FAMILY(::tsr::cuda::CudaFamilies, family, (::tsr::Registrar & r, [[maybe_unused]] int32_t device_type))

// ---- streams, devices, errors -------------------------------------------------------------

inline cudaStream_t stream_of(const KernelCall& c) { return reinterpret_cast<cudaStream_t>(c.stream()); }
inline cudaStream_t as_cuda(tsr_stream_t* s) { return reinterpret_cast<cudaStream_t>(s); }
inline cudaEvent_t as_cuda(tsr_event_t* e) { return reinterpret_cast<cudaEvent_t>(e); }

// Throws tsr::Error (code from the CUDA error: RESOURCE_EXHAUSTED for out of memory, INTERNAL
// otherwise) "OP: WHAT failed on cuda:DEV: <cudaGetErrorString>".
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* op, const char* what, int device);
#define TSR_CUDA_CHECK(expr, op, device)                                                                   \
  do {                                                                                                     \
    const cudaError_t tsr_cuda_err_ = (expr);                                                              \
    if (tsr_cuda_err_ != cudaSuccess) ::tsr::cuda::throw_cuda_error(tsr_cuda_err_, (op), #expr, (device)); \
  } while (0)

// Makes `device` the calling thread's current CUDA device while alive (restores the previous).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
  int device_ = -1;
};

// The properties of `device` (cached on first use; valid for the plugin's lifetime). Throws
// for an index outside [0, device count).
const cudaDeviceProp& device_prop(int device);

// Call right after launching a kernel for `c`: throws on a launch error (bad configuration,
// no kernel image for this GPU) naming the op, and records c.op_name() as the last op enqueued
// on the device, which the next failing synchronizing call names.
void after_launch(const KernelCall& c);

// For kernels that must see device data on the host (nonzero, masked_select, unique: a count
// decides the output size). refuse_during_capture throws FAILED_PRECONDITION naming the op when
// a stream of c's device is capturing a CUDA graph (a host sync would invalidate the capture).
// sync_for_host does that check, then waits for c's stream and reports errors exactly as a
// synchronizing call does (earlier asynchronous failures naming the op, device-side index
// errors); use it before reading a pinned/host result the kernel just copied back.
void refuse_during_capture(const KernelCall& c, const char* what);
void sync_for_host(const KernelCall& c);

// ---- device-side checks -------------------------------------------------------------------

// A device-side error (an index out of range or an integer divisor of zero, found by a kernel). Kernels write the first
// one into the device's record (mapped host memory, see device_error.cuh); the next synchronizing call on the device
// turns it into a status naming the op, the index and the bound.
struct DeviceErrorRecord {
  int32_t code;   // 0 = none, else a DeviceErrorCode
  int32_t op_id;  // error_op_id() of the op that found it
  int64_t value;  // the offending index
  int64_t bound;  // the size it was checked against
  int32_t dim;    // the dimension (or -1)
  int32_t reserved;
};
enum DeviceErrorCode : int32_t { kDeviceErrorIndex = 1, kDeviceErrorZeroDivisor = 2 };
// The device pointer of `device`'s record (valid for the plugin's lifetime).
DeviceErrorRecord* device_error_record(int device);
// A small integer naming op_name in error messages (interned; thread-safe).
int32_t error_op_id(const char* op_name);

// ---- scratch memory -----------------------------------------------------------------------
// tsr::Scratch (tessera/scratch.hpp): temporary device memory from the core's caching allocator,
// stream-ordered on the kernel's stream.

// ---- launch helpers -----------------------------------------------------------------------

constexpr int kBlock = 256;
// Blocks for n work items at `per_thread` items per thread, capped for grid-stride loops.
inline unsigned grid_for(int64_t n, int block = kBlock, int per_thread = 1) {
  const int64_t per_block = int64_t(block) * per_thread;
  int64_t g = (n + per_block - 1) / per_block;
  if (g < 1) g = 1;
  if (g > (int64_t(1) << 20)) g = int64_t(1) << 20;
  return static_cast<unsigned>(g);
}

// Precision switches of the runtime (read per call; one atomic load in the core).
inline bool allow_tf32_matmul(const KernelCall& c) {
  return c.api()->precision_get(c.runtime(), TSR_PRECISION_MATMUL_ALLOW_TF32) != 0;
}
inline bool allow_tf32_conv(const KernelCall& c) {
  return c.api()->precision_get(c.runtime(), TSR_PRECISION_CONV_ALLOW_TF32) != 0;
}

}  // namespace tsr::cuda
