// Private to the CUDA backend's runtime files (device.cpp, errors.cpp, allocator.cpp,
// pinned_host.cpp, graphs.cpp, peer_topology.cpp): the process-wide device state and the helpers
// that turn CUDA errors into statuses. Kernel files use cuda_common.hpp only.
//
// Process-wide, not per runtime: CUDA devices, contexts, the error records and the captures in
// flight belong to the process, and several runtimes may share them. The state is created once
// (init_devices) and never destroyed: the plugin is not dlclosed before exit, and tearing down
// CUDA objects from static destructors races with cudart's own teardown.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_common.hpp"

namespace tsr::cuda {

// What a runtime's callbacks receive as `self` (the plugin's init state; freed by shutdown).
struct RuntimeState {
  const tsr_api_t* api = nullptr;
  tsr_runtime_t* runtime = nullptr;
  int32_t type = -1;  // the "cuda" device type id in this runtime
};

// The core's function table (the same static table for every runtime); set by init.
const tsr_api_t* core_api();
void set_core_api(const tsr_api_t* api);

// Number of CUDA devices (0 before init_devices). init_devices is idempotent and thread-safe.
int device_count();
void init_devices(int count);

// Throws INVALID_ARGUMENT unless 0 <= device < device_count().
void check_device_index(int device, const char* what);

// Runs f() and converts a thrown exception into a status made by the core (NULL on success).
template <class F>
tsr_status_t guarded(const char* where, F&& f) noexcept {
  try {
    f();
    return nullptr;
  } catch (...) {
    return status_from_current_exception(core_api(), where);
  }
}

// ---- errors (errors.cpp) ------------------------------------------------------------------

// True for errors that a running kernel or copy causes and that surface at a later call
// (illegal address, launch failure, device assert, ...): they are sticky, the context is dead.
bool is_async_error(cudaError_t err);
// The op last launched on the device ("" when none), as after_launch recorded it.
std::string last_op(int device);
void set_last_op(int device, const char* op_name);
// The name error_op_id handed out for `id` ("?" when unknown).
std::string op_name_of_id(int32_t id);

// What every synchronizing call does after its CUDA call returned `err`: throws for an error
// (naming the last op for asynchronous failures) and for a pending device-side error record
// (turned into OUT_OF_RANGE / INVALID_ARGUMENT naming the op, then reset). `what` names the
// call for errors of the call itself ("stream_synchronize: cudaStreamSynchronize").
void check_sync(int device, cudaError_t err, const char* what, const char* cuda_call);

// ---- captures (errors.cpp: they decide what synchronizing calls may do) ----------------------

// Registers / unregisters a stream of `device` as capturing a CUDA graph.
void capture_started(int device, cudaStream_t stream);
// Removes the stream; returns the first refusal or launch failure recorded during the capture
// ("" when none).
std::string capture_finished(int device, cudaStream_t stream);
bool stream_is_capturing(int device, cudaStream_t stream);
bool device_is_capturing(int device);
// Throws FAILED_PRECONDITION "cuda:D WHAT: not allowed while stream 0x... is capturing a CUDA
// graph" when a stream of the device is capturing, and records the refusal in every capture of
// the device (capture_end then reports it).
void refuse_if_capturing(int device, const char* what);
// Records a failure in the capture of `stream` (if it is capturing).
void capture_failed(int device, cudaStream_t stream, const std::string& message);
// throw_cuda_error, after recording the message as a failure of the capture of `stream`.
[[noreturn]] void throw_cuda_error_on(cudaStream_t stream, cudaError_t err, const char* op, const char* what,
                                      int device);

// While alive, the calling thread may make "potentially unsafe" CUDA calls (cudaMalloc,
// cudaHostAlloc) without invalidating a capture it runs: as PyTorch's allocator, memory
// allocated during a capture gets fresh addresses that the graph keeps, and is never freed
// before the graph's replays (the pool holds it).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// ---- allocators and pinned host memory ------------------------------------------------------

void register_allocators(Registrar& r, int32_t type);  // allocator.cpp
void register_pinned_host(Registrar& r);               // pinned_host.cpp
void register_graphs(Registrar& r);                    // graphs.cpp
void register_peer_topology(Registrar& r);             // peer_topology.cpp

// pinned_host.cpp: when [ptr, ptr+nbytes) lies in a live block of the pinned host allocator,
// records an event on `stream` (of `device`) so that the block is reused only after the work
// enqueued so far (the copy reading or writing it) has finished. Returns true when it did.
bool pinned_record_use(const void* ptr, int device, cudaStream_t stream);
// True when ptr lies in a block of the pinned host allocator.
bool pinned_contains(const void* ptr);

// Graph releases deferred while a capture was in flight (graphs.cpp); called when none is.
void graphs_process_deferred();

}  // namespace tsr::cuda
